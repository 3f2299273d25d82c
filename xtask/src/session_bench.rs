//! `cargo xtask session-bench [--backend B]... [--turns N] [--debug]`: the latency a session
//! adds and its throughput (SPEC section 8), measured through the release `harness session`
//! binary against a scripted agent of each backend: Claude Code's stream-json session, Codex's
//! `app-server`, opencode's `serve` (HTTP and server-sent events on loopback) and Gemini CLI's
//! ACP mode. Without `--backend`, all four run, one after the other.
//!
//! The agent is this very binary, started by `harness` with `XTASK_SESSION_AGENT=BACKEND` in
//! its environment ([`agent`]): for each prompt it writes the turn the backend's protocol
//! carries, whose last agent message is the CLOCK_MONOTONIC time taken just before the turn's
//! last lines (or frames) are written. The bench reads `harness`'s outcome line for the turn
//! (its `final_output` is that message), takes the clock again, and the difference is what
//! the session added between the agent's last words and the caller's: reading the pipe or the
//! socket (opencode's event stream through hyper and the SSE parser), normalizing, ending the
//! turn, writing the outcome (both ends included). Then it sends the next prompt, so the turns per second are the whole
//! loop's. The harness process's resident memory (VmRSS) is read after turn 100 and after the
//! last, to show it stays flat.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// The variable that makes this binary the scripted agent.
pub const AGENT_VAR: &str = "XTASK_SESSION_AGENT";

/// A backend the bench drives, with its scripted agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Bench {
    /// Claude Code's stream-json session (one process, stdio).
    Claude,
    /// `codex app-server` (JSON-RPC over stdio).
    Codex,
    /// `opencode serve` (HTTP calls and the `/event` stream on loopback).
    Opencode,
    /// `gemini --acp` (ACP: JSON-RPC over stdio).
    Gemini,
}

impl Bench {
    fn name(self) -> &'static str {
        match self {
            Bench::Claude => "claude",
            Bench::Codex => "codex",
            Bench::Opencode => "opencode",
            Bench::Gemini => "gemini",
        }
    }
}

/// The bench's options.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The backends to measure (repeatable); all four when not given.
    #[arg(long, value_enum)]
    backend: Vec<Bench>,
    /// How many turns the session holds.
    #[arg(long, default_value_t = 1000)]
    turns: u32,
    /// Use the debug build: a smoke run (CI), whose figures mean nothing.
    #[arg(long)]
    debug: bool,
}

/// Nanoseconds of CLOCK_MONOTONIC, which two processes of one machine share.
fn now_ns() -> u128 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    // Both fields are non-negative for the monotonic clock.
    u128::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u128::try_from(t.tv_nsec).unwrap_or(0)
}

/// The scripted agent named by the variable's value, until its input ends.
pub fn agent() -> Result<()> {
    match std::env::var(AGENT_VAR).unwrap_or_default().as_str() {
        "codex" => codex_agent(),
        "opencode" => opencode_agent(),
        "gemini" => gemini_agent(),
        _ => claude_agent(),
    }
}

/// Claude Code: each user message gets an `init` line, an assistant message and a `result`
/// whose `result` is the time.
fn claude_agent() -> Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let mut turn = 0u64;
    for line in stdin.lock().lines() {
        let line = line?;
        if !line.contains("\"type\":\"user\"") {
            continue;
        }
        turn += 1;
        let session = "5e55a0e0-0000-4000-8000-00000000beec";
        let lines = format!(
            "{{\"type\":\"system\",\"subtype\":\"init\",\"cwd\":\"/p\",\"session_id\":\"{session}\"}}\n\
             {{\"type\":\"assistant\",\"message\":{{\"id\":\"m{turn}\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"turn {turn}\"}}]}},\"session_id\":\"{session}\"}}\n"
        );
        out.write_all(lines.as_bytes())?;
        let result = format!(
            "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"{}\",\"num_turns\":1,\"session_id\":\"{session}\"}}\n",
            now_ns()
        );
        out.write_all(result.as_bytes())?;
        out.flush()?;
    }
    Ok(())
}

/// Writes JSON lines to standard output at once.
fn send(out: &mut impl Write, values: &[Value]) -> Result<()> {
    let mut bytes = Vec::new();
    for value in values {
        bytes.extend(value.to_string().into_bytes());
        bytes.push(b'\n');
    }
    out.write_all(&bytes)?;
    out.flush()?;
    Ok(())
}

/// Codex's app-server: the handshake and the thread, then for each `turn/start` its answer,
/// `turn/started`, the final agent message (the time) and `turn/completed`.
fn codex_agent() -> Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let thread = "th-bench";
    let mut turn = 0u64;
    for line in stdin.lock().lines() {
        let message: Value = serde_json::from_str(&line?)?;
        let id = message["id"].clone();
        let note = |method: &str, params: Value| json!({"method": method, "params": params});
        match message["method"].as_str() {
            Some("initialize") => send(
                &mut out,
                &[
                    json!({"id": id, "result": {"userAgent": "bench/0.171.0", "codexHome": "/h",
                    "platformFamily": "unix", "platformOs": "linux"}}),
                ],
            )?,
            Some("thread/start") => {
                let body = json!({"id": thread, "sessionId": thread, "turns": []});
                send(
                    &mut out,
                    &[
                        json!({"id": id, "result": {"thread": body, "approvalPolicy": "never",
                            "sandbox": {"type": "workspaceWrite"}}}),
                        note("thread/started", json!({"thread": body})),
                    ],
                )?;
            }
            Some("turn/start") => {
                turn += 1;
                let body = json!({"id": format!("turn-{turn}"), "items": [],
                    "status": "inProgress", "error": null});
                send(
                    &mut out,
                    &[
                        json!({"id": id, "result": {"turn": body}}),
                        note("turn/started", json!({"threadId": thread, "turn": body})),
                    ],
                )?;
                let said = json!({"type": "agentMessage", "id": format!("msg-{turn}"),
                    "text": now_ns().to_string(), "phase": "final_answer"});
                let mut done = body;
                done["status"] = json!("completed");
                send(
                    &mut out,
                    &[
                        note(
                            "item/completed",
                            json!({"threadId": thread, "turnId": format!("turn-{turn}"), "item": said}),
                        ),
                        note("turn/completed", json!({"threadId": thread, "turn": done})),
                    ],
                )?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// Gemini CLI's ACP mode: `initialize`, `session/new`, then for each `session/prompt` an
/// agent message chunk (the time) and the prompt's answer `end_turn`.
fn gemini_agent() -> Result<()> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let message: Value = serde_json::from_str(&line?)?;
        let id = message["id"].clone();
        let answer = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
        match message["method"].as_str() {
            Some("initialize") => send(
                &mut out,
                &[answer(
                    json!({"protocolVersion": 1, "agentCapabilities": {},
                    "agentInfo": {"name": "bench", "version": "1"}}),
                )],
            )?,
            Some("session/new") => send(&mut out, &[answer(json!({"sessionId": "s1"}))])?,
            Some("session/prompt") => {
                let chunk = json!({"jsonrpc": "2.0", "method": "session/update", "params": {
                    "sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": now_ns().to_string()}}}});
                send(
                    &mut out,
                    &[chunk, answer(json!({"stopReason": "end_turn"}))],
                )?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// The session id of the opencode bench server.
const OPENCODE_SESSION: &str = "ses_bench";

/// opencode's server: prints where it listens, then serves `POST /session`, `GET /event`
/// (server-sent events), `POST /session/ID/prompt_async` (204, then the turn's events:
/// the user message, a step, a text part whose text is the time, the step's end, idle) and
/// `GET /global/health`, one thread a connection. It ends when its input does (the harness
/// kills it then).
fn opencode_agent() -> Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    println!("opencode server listening on http://127.0.0.1:{port}");
    std::io::stdout().flush()?;
    let streams: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
    std::thread::spawn(|| {
        // The harness never writes to the server; its input's end is the session's.
        let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        std::process::exit(0);
    });
    let mut turn = 0u64;
    for stream in listener.incoming() {
        let mut stream = stream?;
        let Some((method, path)) = read_request(&mut stream)? else {
            continue;
        };
        let prompt = format!("/session/{OPENCODE_SESSION}/prompt_async");
        match (method.as_str(), path.as_str()) {
            ("POST", "/session") => respond(
                &mut stream,
                "200 OK",
                &json!({"id": OPENCODE_SESSION}).to_string(),
            )?,
            ("GET", "/global/health") => respond(&mut stream, "200 OK", r#"{"healthy":true}"#)?,
            ("GET", "/event") => {
                let connected = json!({"type": "server.connected", "properties": {}});
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\ndata: {connected}\n\n"
                );
                stream.write_all(head.as_bytes())?;
                streams
                    .lock()
                    .map_err(|_| anyhow::anyhow!("poisoned"))?
                    .push(stream);
            }
            ("POST", p) if p == prompt => {
                respond(&mut stream, "204 No Content", "")?;
                drop(stream);
                turn += 1;
                let mut subscribers = streams.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
                for subscriber in subscribers.iter_mut() {
                    opencode_turn(subscriber, turn)?;
                }
            }
            _ => respond(&mut stream, "404 Not Found", "{}")?,
        }
    }
    Ok(())
}

/// One turn's events on one event stream.
fn opencode_turn(stream: &mut TcpStream, turn: u64) -> Result<()> {
    let s = OPENCODE_SESSION;
    let msg = format!("msg_{turn}a");
    let event = |kind: &str, props: Value| json!({"type": kind, "properties": props});
    let part = |p: Value| event("message.part.updated", json!({"sessionID": s, "part": p}));
    let frames = |events: &[Value]| {
        let mut bytes = Vec::new();
        for e in events {
            bytes.extend(format!("data: {e}\n\n").into_bytes());
        }
        bytes
    };
    let opening = [
        event(
            "message.updated",
            json!({"sessionID": s, "info": {"id": format!("msg_{turn}u"), "sessionID": s, "role": "user"}}),
        ),
        event(
            "session.status",
            json!({"sessionID": s, "status": {"type": "busy"}}),
        ),
        part(
            json!({"id": format!("prt_s{turn}"), "type": "step-start", "messageID": msg, "sessionID": s}),
        ),
    ];
    stream.write_all(&frames(&opening))?;
    let said = now_ns().to_string();
    let closing = [
        part(
            json!({"id": format!("prt_t{turn}"), "type": "text", "messageID": msg, "sessionID": s,
            "text": said, "time": {"start": 1, "end": 2}}),
        ),
        part(
            json!({"id": format!("prt_f{turn}"), "type": "step-finish", "messageID": msg,
            "sessionID": s, "reason": "stop", "cost": 0.0,
            "tokens": {"total": 15, "input": 10, "output": 5, "reasoning": 0,
                "cache": {"write": 0, "read": 0}}}),
        ),
        event(
            "session.status",
            json!({"sessionID": s, "status": {"type": "idle"}}),
        ),
        event("session.idle", json!({"sessionID": s})),
    ];
    stream.write_all(&frames(&closing))?;
    stream.flush()?;
    Ok(())
}

/// Reads one HTTP/1.1 request's line, head and body; `None` for a connection that closed.
fn read_request(stream: &mut TcpStream) -> Result<Option<(String, String)>> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte)? == 0 {
            return Ok(None);
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let mut words = head.split_whitespace();
    let method = words.next().unwrap_or_default().to_string();
    let path = words.next().unwrap_or_default().to_string();
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body)?;
    Ok(Some((method, path)))
}

/// Writes a whole response and lets the connection close.
fn respond(stream: &mut TcpStream, status: &str, body: &str) -> Result<()> {
    // A 204 has no body and so no length.
    let length = if body.is_empty() {
        String::new()
    } else {
        format!(
            "content-type: application/json\r\ncontent-length: {}\r\n",
            body.len()
        )
    };
    let response = format!("HTTP/1.1 {status}\r\n{length}connection: close\r\n\r\n{body}");
    stream.write_all(response.as_bytes())?;
    Ok(())
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmRSS")
}

/// The value at quantile `q` of sorted `values`.
fn quantile(values: &[u128], q: f64) -> u128 {
    let at = ((values.len() as f64 - 1.0) * q).round() as usize;
    values[at.min(values.len() - 1)]
}

/// Runs the bench for each backend asked for and prints its figures.
pub fn session_bench(args: Args) -> Result<()> {
    if args.turns == 0 {
        bail!("--turns must be at least 1");
    }
    let harness = crate::build(args.debug, &["-p", crate::packages::CLI])?.join("harness");
    let backends = if args.backend.is_empty() {
        vec![Bench::Claude, Bench::Codex, Bench::Opencode, Bench::Gemini]
    } else {
        args.backend.clone()
    };
    for backend in backends {
        bench_one(&harness, backend, &args)?;
    }
    Ok(())
}

/// One backend's session of `args.turns` turns.
fn bench_one(harness: &std::path::Path, backend: Bench, args: &Args) -> Result<()> {
    let me = std::env::current_exe()?;
    let mut child = Command::new(harness)
        .args([
            "session",
            "--format",
            "jsonl",
            "--backend",
            backend.name(),
            "--binary",
        ])
        .arg(&me)
        .arg(format!("--env={AGENT_VAR}={}", backend.name()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", harness.display()))?;
    let pid = child.id();
    let mut stdin = child.stdin.take().context("stdin")?;
    let stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let prompt = b"{\"type\":\"prompt\",\"text\":\"go\"}\n";
    let started = Instant::now();
    stdin.write_all(prompt)?;
    stdin.flush()?;
    let mut latencies = Vec::with_capacity(args.turns as usize);
    let mut rss_at_100 = None;
    for line in stdout.lines() {
        let line = line?;
        let arrived = now_ns();
        let value: Value = serde_json::from_str(&line)?;
        if value["kind"] != "outcome" {
            continue;
        }
        if value["status"] != "success" {
            bail!(
                "{}: turn {} did not succeed: {line}",
                backend.name(),
                latencies.len() + 1
            );
        }
        let sent: u128 = value["final_output"]
            .as_str()
            .and_then(|t| t.parse().ok())
            .context("the outcome carries the agent's time")?;
        latencies.push(arrived.saturating_sub(sent));
        let done = latencies.len() as u32;
        if done == 100 {
            rss_at_100 = Some(rss_kib(pid)?);
        }
        if done == args.turns {
            let rss_last = rss_kib(pid)?;
            drop(stdin);
            let elapsed = started.elapsed();
            let status = child.wait()?;
            if !status.success() {
                bail!("{}: harness session exited with {status}", backend.name());
            }
            latencies.sort_unstable();
            let us = |ns: u128| ns as f64 / 1000.0;
            println!(
                "session-bench {}: {} turns through {} ({} build)",
                backend.name(),
                args.turns,
                harness.display(),
                if args.debug { "debug" } else { "release" }
            );
            println!(
                "added latency (the agent's last words to the caller's outcome line): p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
                us(quantile(&latencies, 0.5)),
                us(quantile(&latencies, 0.99)),
                us(*latencies.last().unwrap_or(&0)),
            );
            println!(
                "throughput: {:.0} turns/s ({:.2} s in all)",
                f64::from(args.turns) / elapsed.as_secs_f64(),
                elapsed.as_secs_f64()
            );
            match rss_at_100 {
                Some(at_100) => println!(
                    "harness VmRSS: {at_100} KiB after turn 100, {rss_last} KiB after turn {}",
                    args.turns
                ),
                None => println!("harness VmRSS: {rss_last} KiB after turn {}", args.turns),
            }
            return Ok(());
        }
        stdin.write_all(prompt)?;
        stdin.flush()?;
    }
    let _ = child.kill();
    bail!(
        "{}: harness session ended after {} of {} turns",
        backend.name(),
        latencies.len(),
        args.turns
    )
}
