//! `harness acp` (AA1-AA16 of `docs/acp-agent.md`) driven as an ACP client would drive it,
//! with `fixtures/fake-agent/claude-session` as Claude Code: exact messages, every wait
//! bounded. The conversation of the first test is kept in `fixtures/acp-agent/conversation.jsonl`
//! (`UPDATE_EXPECT=1` rewrites it), which `acp-schema-check` validates with the official types.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{assert_gone, harness, read_when_written};

fn fake_session() -> PathBuf {
    fixtures::root().join("fake-agent").join("claude-session")
}

/// A `harness acp` process and what it wrote, line by line; every message both ways is kept
/// as a transcript (A1's format) for the schema check.
struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    next: u64,
    transcript: Vec<Value>,
    dir: tempfile::TempDir,
}

impl Client {
    fn start(args: &[&str]) -> Client {
        let binary = fake_session().display().to_string();
        let mut all = vec!["--binary", binary.as_str()];
        all.extend_from_slice(args);
        Client::start_agent(&all)
    }

    /// `harness acp` with `args` alone: the backend and its agent.
    fn start_agent(args: &[&str]) -> Client {
        Client::start_with(args, &[])
    }

    /// `harness acp` with `args`, its agent given `env` besides the fakes' files in the
    /// client's folder (`pid`, `argv`, `log`).
    fn start_with(args: &[&str], env: &[(&str, &std::ffi::OsStr)]) -> Client {
        let dir = tempfile::tempdir().unwrap();
        let mut child = harness()
            .arg("acp")
            .args(args)
            .envs(env.iter().copied())
            .env("FAKE_LOG", dir.path().join("log"))
            .env("FAKE_PID", dir.path().join("pid"))
            .env("FAKE_ARGV", dir.path().join("argv"))
            .env("CLAUDE_CONFIG_DIR", dir.path().join("claude"))
            .env_remove("CLAUDE_BIN")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next: 0,
            transcript: Vec::new(),
            dir,
        }
    }

    fn write(&mut self, message: Value) {
        self.transcript
            .push(json!({"from": "client", "message": message.clone()}));
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next;
        self.next += 1;
        self.write(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// The next message, within ten seconds.
    fn read(&mut self) -> Value {
        let message = self
            .lines
            .recv_timeout(Duration::from_secs(10))
            .expect("harness acp wrote nothing in 10 s");
        self.transcript
            .push(json!({"from": "agent", "message": message.clone()}));
        message
    }

    /// Messages until the answer to request `id`, which is last.
    fn until_answer(&mut self, id: u64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.read();
            let done = message.get("id") == Some(&json!(id)) && message.get("method").is_none();
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    fn new_session(&mut self) -> String {
        self.initialize();
        self.new_session_after_initialize()
    }

    /// `initialize`; its answer's `agentCapabilities`.
    fn initialize(&mut self) -> Value {
        self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        self.read()["result"]["agentCapabilities"].clone()
    }

    /// The methods of the requests the fake agent read, in order (`answer` for an answer).
    fn agent_methods(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .map(|m| m["method"].as_str().unwrap_or("answer").to_string())
            .collect()
    }

    fn new_session_after_initialize(&mut self) -> String {
        let id = self.request(
            "session/new",
            json!({"cwd": self.dir.path(), "mcpServers": []}),
        );
        let answer = self.until_answer(id).pop().unwrap();
        answer["result"]["sessionId"].as_str().unwrap().to_string()
    }

    fn prompt(&mut self, session: &str, text: &str) -> u64 {
        self.request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
        )
    }

    /// Closes standard input: the process must exit 0 within ten seconds.
    fn finish(mut self) -> (Vec<Value>, tempfile::TempDir) {
        drop(self.stdin.take());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "{status}");
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "no exit in 10 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        (self.transcript, self.dir)
    }
}

/// The update payloads among `messages`, without their `_meta`.
fn updates(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| {
            let mut update = m["params"]["update"].clone();
            update.as_object_mut().unwrap().remove("_meta");
            update
        })
        .collect()
}

fn metas(messages: &[Value]) -> Vec<String> {
    messages
        .iter()
        .filter(|m| m["method"] == "session/update")
        .map(|m| m["params"]["update"]["_meta"]["harness/event"]["kind"].to_string())
        .collect()
}

#[test]
fn aa2_aa3_aa5_aa8_a_session_takes_prompts_and_sends_the_events_as_updates() {
    let mut client = Client::start(&[]);
    let init = client.request("initialize", json!({"protocolVersion": 1}));
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": init, "result": {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": false, "audio": false, "embeddedContext": false},
                "sessionCapabilities": {"resume": {}},
            },
            "authMethods": [],
            "agentInfo": {"name": "harness", "version": env!("CARGO_PKG_VERSION")},
        }})
    );
    let new = client.request(
        "session/new",
        json!({"cwd": client.dir.path(), "mcpServers": []}),
    );
    let answer = client.read();
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
    assert_eq!(session.len(), 36, "{answer}");
    assert_eq!(answer["id"], json!(new));
    assert_eq!(answer["result"]["modes"]["currentModeId"], "default");

    let first = client.prompt(&session, "plain");
    let turn = client.until_answer(first);
    assert_eq!(
        updates(&turn),
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "plain 1"}}),
            json!({"sessionUpdate": "usage_update", "used": 15, "size": 0, "cost": {"amount": 0.01, "currency": "USD"}}),
        ]
    );
    assert_eq!(metas(&turn)[0], r#""agent""#);
    let answer = turn.last().unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(answer["result"]["_meta"]["harness/outcome"]["turn"], 1);
    // The session id is the backend's own: Claude Code was given it.
    let argv = read_when_written(&client.dir.path().join("argv"));
    assert!(
        argv.lines().any(|a| a == format!("--session-id={session}")),
        "{argv}"
    );

    // A permission request goes to the client; its answer goes back.
    let second = client.prompt(&session, "ask");
    let mut asked = Vec::new();
    let request = loop {
        let message = client.read();
        if message["method"] == "session/request_permission" {
            break message;
        }
        asked.push(message);
    };
    assert_eq!(
        updates(&asked),
        [
            json!({"sessionUpdate": "tool_call", "toolCallId": "toolu_2", "title": "Run touch made.txt",
            "kind": "execute", "status": "in_progress", "rawInput": {"command": "touch made.txt"}})
        ]
    );
    let mut params = request["params"].clone();
    params["toolCall"].as_object_mut().unwrap().remove("_meta");
    assert_eq!(
        params,
        json!({"sessionId": session, "toolCall": {"toolCallId": "toolu_2", "title": "Run touch made.txt",
        "kind": "execute", "status": "pending", "rawInput": {"command": "touch made.txt"}},
        "options": [
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"},
            {"optionId": "deny", "name": "Deny", "kind": "reject_once"},
        ]})
    );
    let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {"outcome": "selected", "optionId": "allow"}}});
    client.write(answer);
    let turn = client.until_answer(second);
    assert_eq!(
        updates(&turn)[..2],
        [
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_2", "title": "Run touch made.txt",
                "kind": "execute", "status": "completed", "rawInput": {"command": "touch made.txt"}}),
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "made it"}}),
        ]
    );
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");

    // Cancelled, then a mode change, then a turn whose agent dies: the recorded conversation
    // holds each kind of answer.
    let third = client.prompt(&session, "hang");
    client.write(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let turn = client.until_answer(third);
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "cancelled");
    let set = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    client.until_answer(set);
    let fourth = client.prompt(&session, "die");
    let turn = client.until_answer(fourth);
    assert_eq!(turn.last().unwrap()["error"]["code"], -32603);

    let (transcript, _dir) = client.finish();
    let text: String = transcript
        .iter()
        .map(|line| format!("{}\n", scrub(line, Some(&session))))
        .collect();
    let path = fixtures::root()
        .join("acp-agent")
        .join("conversation.jsonl");
    if let Err(problems) = fixtures::check_expected(&path, &text) {
        panic!("{}:\n{}", path.display(), problems.join("\n"));
    }
}

/// The recorded conversation without what changes from run to run: the session id harness
/// minted (`session`), the temporary folders.
fn scrub(line: &Value, session: Option<&str>) -> String {
    let mut line = line.to_string();
    if let Some(session) = session {
        line = line.replace(session, "5e55a0e0-0000-4000-8000-0000000000aa");
    }
    line.replace(&std::env::temp_dir().display().to_string(), "/tmp")
        .split("/tmp/.tmp")
        .enumerate()
        .map(|(n, part)| {
            if n == 0 {
                part.to_string()
            } else {
                // `/tmp/.tmpXXXXXX` -> `/tmp/project`.
                format!(
                    "/tmp/project{}",
                    &part[part.find(['"', '/']).unwrap_or(part.len())..]
                )
            }
        })
        .collect()
}

#[test]
fn aa13_a_cancelled_permission_request_denies() {
    let mut client = Client::start(&[]);
    let session = client.new_session();
    let prompt = client.prompt(&session, "ask");
    let request = loop {
        let message = client.read();
        if message["method"] == "session/request_permission" {
            break message;
        }
    };
    client.write(json!({"jsonrpc": "2.0", "id": request["id"], "result": {"outcome": {"outcome": "cancelled"}}}));
    let turn = client.until_answer(prompt);
    assert_eq!(
        updates(&turn)[0],
        json!({"sessionUpdate": "tool_call_update", "toolCallId": "toolu_1", "title": "Run touch made.txt",
            "kind": "execute", "status": "failed", "rawInput": {"command": "touch made.txt"},
            "content": [{"type": "content", "content": {"type": "text", "text": "The user denied this tool use."}}]})
    );
    client.finish();
}

#[test]
fn aa14_cancel_answers_the_prompt_cancelled_and_the_session_goes_on() {
    let mut client = Client::start(&[]);
    let session = client.new_session();
    // Claude's message is flushed by its next line (C4): nothing comes before the cancel.
    let prompt = client.prompt(&session, "hang");
    client.write(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let answer = client.until_answer(prompt).pop().unwrap();
    assert_eq!(answer["result"]["stopReason"], "cancelled");
    let next = client.prompt(&session, "plain");
    let answer = client.until_answer(next).pop().unwrap();
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    client.finish();
}

#[test]
fn aa14_cancel_is_answered_in_time_when_the_backend_ignores_it() {
    let mut client = Client::start(&[]);
    let session = client.new_session();
    let prompt = client.prompt(&session, "ignore");
    let pid = read_when_written(&client.dir.path().join("pid"));
    let start = Instant::now();
    client.write(
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}),
    );
    let answer = client.until_answer(prompt).pop().unwrap();
    assert_eq!(
        answer,
        json!({"jsonrpc": "2.0", "id": prompt, "result": {"stopReason": "cancelled"}})
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
    client.finish();
    assert_gone(&pid);
}

#[test]
fn aa15_the_backend_dying_mid_turn_is_an_error_and_the_session_stays_usable() {
    let mut client = Client::start(&[]);
    let session = client.new_session();
    let prompt = client.prompt(&session, "die");
    let answer = client.until_answer(prompt).pop().unwrap();
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(
        answer["error"]["message"],
        "the agent exited with status 3 during turn 1; the session has ended"
    );
    let next = client.prompt(&session, "plain");
    let turn = client.until_answer(next);
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");
    // The new process continues the stored session.
    let argv = read_when_written(&client.dir.path().join("argv"));
    assert!(
        argv.lines().any(|a| a == format!("--resume={session}")),
        "{argv}"
    );
    client.finish();
}

#[test]
fn aa16_end_of_input_mid_turn_ends_every_session_and_exits_0() {
    let mut client = Client::start(&[]);
    let session = client.new_session();
    client.prompt(&session, "ignore");
    let pid = read_when_written(&client.dir.path().join("pid"));
    let start = Instant::now();
    client.finish();
    assert!(start.elapsed() < Duration::from_secs(9));
    assert_gone(&pid);
}

/// AA16 for every backend with sessions: the client's input ends mid-turn, `harness acp`
/// exits 0 and the agent's process is gone.
#[test]
fn aa16_a_client_gone_mid_turn_stops_every_backends_agent() {
    let fake = |name: &str| {
        fixtures::root()
            .join("fake-agent")
            .join(name)
            .display()
            .to_string()
    };
    let cases = [
        ("claude", "--binary", fake("claude-session"), "ignore"),
        ("codex", "--binary", fake("codex-app-server"), "hang"),
        ("opencode", "--binary", fake("opencode-serve"), "hang"),
        ("gemini", "--binary", fake("acp-session"), "hang"),
        ("qwen", "--binary", fake("acp-session"), "hang"),
        ("copilot", "--binary", fake("acp-session"), "hang"),
        ("acp", "--agent", fake("acp-session"), "hang"),
    ];
    for (name, flag, agent, prompt) in cases {
        let mut client = Client::start_agent(&["--backend", name, flag, &agent]);
        let session = client.new_session();
        client.prompt(&session, prompt);
        let pid = read_when_written(&client.dir.path().join("pid"));
        let start = Instant::now();
        client.finish();
        assert!(start.elapsed() < Duration::from_secs(9), "{name}");
        assert_gone(&pid);
    }
}

#[test]
fn aa1_bad_lines_get_the_json_rpc_errors() {
    let mut client = Client::start(&[]);
    client.raw("{not json");
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}})
    );
    client.raw("[1,2]");
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": "Invalid Request"}})
    );
    client.raw(r#"{"jsonrpc":"1.0","id":4,"method":"initialize"}"#);
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32600, "message": "Invalid Request"}})
    );
    let id = client.request("fs/read_text_file", json!({}));
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
    );
    let id = client.request(
        "session/prompt",
        json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
    );
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "unknown session nope"}})
    );
    let id = client.request("session/new", json!({"cwd": "relative", "mcpServers": []}));
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "`cwd` must be an absolute path"}})
    );
    // Unknown notifications are ignored; the connection goes on.
    client.raw(r#"{"jsonrpc":"2.0","method":"nope"}"#);
    let id = client.request("initialize", json!({"protocolVersion": 1}));
    assert_eq!(client.read()["id"], json!(id));
    client.finish();
}

#[test]
fn aa4_loading_a_session_never_prompted_opens_it_as_new() {
    let mut client = Client::start(&[]);
    client.new_session();
    let id = "5e55a0e0-0000-4000-8000-0000000000bb";
    let load = client.request(
        "session/load",
        json!({"sessionId": id, "cwd": client.dir.path(), "mcpServers": []}),
    );
    let answer = client.until_answer(load).pop().unwrap();
    assert_eq!(answer["result"]["modes"]["currentModeId"], "default");
    let prompt = client.prompt(id, "plain");
    client.until_answer(prompt);
    let argv = read_when_written(&client.dir.path().join("argv"));
    assert!(
        argv.lines().any(|a| a == format!("--session-id={id}")),
        "{argv}"
    );
    client.finish();
}

#[test]
fn aa4_loading_a_stored_session_replays_it_then_resumes_it() {
    let mut client = Client::start(&[]);
    client.new_session();
    let id = "5e55a0e0-0000-4000-8000-0000000000cc";
    let project = client.dir.path().join("claude/projects/-p");
    std::fs::create_dir_all(&project).unwrap();
    let stored = [
        json!({"type": "user", "sessionId": id, "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content": "hi"}}),
        json!({"type": "assistant", "sessionId": id, "timestamp": "2026-01-01T00:00:01Z", "message": {"id": "m1", "role": "assistant", "model": "fake", "content": [{"type": "text", "text": "stored answer"}]}}),
    ];
    let text: String = stored.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(project.join(format!("{id}.jsonl")), text).unwrap();
    let load = client.request(
        "session/load",
        json!({"sessionId": id, "cwd": client.dir.path(), "mcpServers": []}),
    );
    let replay = client.until_answer(load);
    assert_eq!(
        updates(&replay),
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "stored answer"}})
        ]
    );
    let prompt = client.prompt(id, "plain");
    client.until_answer(prompt);
    let argv = read_when_written(&client.dir.path().join("argv"));
    assert!(
        argv.lines().any(|a| a == format!("--resume={id}")),
        "{argv}"
    );
    client.finish();
}

/// The backends that name their sessions themselves, each with its fake agent: the name,
/// the options after it, and the id its fake names for a new session without FAKE_STATE.
fn naming_backends() -> Vec<(&'static str, Vec<String>, &'static str)> {
    let fake = |name: &str| {
        fixtures::root()
            .join("fake-agent")
            .join(name)
            .display()
            .to_string()
    };
    vec![
        (
            "codex",
            vec!["--binary".into(), fake("codex-app-server")],
            "th-new",
        ),
        (
            "opencode",
            vec!["--binary".into(), fake("opencode-serve")],
            "ses_fake",
        ),
        ("gemini", vec!["--binary".into(), fake("acp-session")], "s1"),
        ("acp", vec!["--agent".into(), fake("acp-session")], "s1"),
        (
            "pi",
            vec!["--binary".into(), fake("pi-rpc")],
            "019b0000-0000-7000-8000-000000000001",
        ),
    ]
}

fn start_backend(name: &str, agent: &[String], env: &[(&str, &std::ffi::OsStr)]) -> Client {
    let mut args = vec!["--backend", name];
    args.extend(agent.iter().map(String::as_str));
    Client::start_with(&args, env)
}

/// AA2, AA3: every backend that names its sessions itself offers `session/load`, and
/// `session/new` answers the id its agent named as the session opened, before any prompt.
#[test]
fn aa3_session_new_answers_the_id_the_backend_named() {
    for (name, agent, id) in naming_backends() {
        let mut client = start_backend(name, &agent, &[]);
        let capabilities = client.initialize();
        assert_eq!(capabilities["loadSession"], true, "{name}");
        assert_eq!(
            capabilities["sessionCapabilities"],
            json!({"resume": {}}),
            "{name}"
        );
        assert_eq!(client.new_session_after_initialize(), id, "{name}");
        // Nothing was prompted; the agent is already running.
        let pid = read_when_written(&client.dir.path().join("pid"));
        client.finish();
        assert_gone(&pid);
    }
}

/// AA4: a fresh `harness acp` loads (for Codex: resumes) the session another one opened and
/// prompted: the backend's session resumes that id (the fakes keep a session's turn count in FAKE_STATE,
/// so its next turn is its second), and the prompt goes to it.
#[test]
fn aa4_a_fresh_harness_acp_loads_and_resumes_the_backends_session() {
    for (name, agent, _) in naming_backends() {
        let state = tempfile::tempdir().unwrap();
        let env = [
            ("FAKE_STATE", state.path().as_os_str()),
            ("FAKE_CAPS", std::ffi::OsStr::new("load")),
        ];
        let mut first = start_backend(name, &agent, &env);
        let session = first.new_session();
        let prompt = first.prompt(&session, "plain");
        let turn = first.until_answer(prompt);
        assert_eq!(
            turn.last().unwrap()["result"]["stopReason"],
            "end_turn",
            "{name}"
        );
        first.finish();

        // `session/resume` is `session/load` without the replay: both reach the backend.
        let method = if name == "codex" {
            "session/resume"
        } else {
            "session/load"
        };
        let mut second = start_backend(name, &agent, &env);
        second.initialize();
        let load = second.request(
            method,
            json!({"sessionId": session, "cwd": second.dir.path(), "mcpServers": []}),
        );
        let answer = second.until_answer(load);
        assert_eq!(
            answer.len(),
            1,
            "{name}: no replay of what harness cannot read"
        );
        assert_eq!(
            answer[0]["result"]["modes"]["currentModeId"], "default",
            "{name}"
        );
        let prompt = second.prompt(&session, "plain");
        let turn = second.until_answer(prompt);
        let said: Vec<Value> = updates(&turn)
            .into_iter()
            .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
            .collect();
        assert_eq!(
            said,
            [
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "plain 2"}})
            ],
            "{name}"
        );
        second.finish();
    }
}

/// AA3, AA4: Codex's `session/new` answers its thread, and an id it cannot resume (never
/// stored: minted and never prompted, for a backend that stores a session at its first turn)
/// opens as new: Codex refuses `thread/resume` of it, and a new thread carries the ACP session
/// from then on. The conversation is kept in `fixtures/acp-agent/named.jsonl`
/// (`UPDATE_EXPECT=1` rewrites it), which `acp-schema-check` validates.
#[test]
fn aa4_an_id_the_backend_cannot_resume_opens_as_new() {
    let (name, agent, _) = naming_backends().remove(0);
    let mut client = start_backend(name, &agent, &[]);
    client.initialize();
    assert_eq!(client.new_session_after_initialize(), "th-new");
    let load = client.request(
        "session/load",
        json!({"sessionId": "gone", "cwd": client.dir.path(), "mcpServers": []}),
    );
    let answer = client.until_answer(load).pop().unwrap();
    assert_eq!(answer["result"]["modes"]["currentModeId"], "default");
    let prompt = client.prompt("gone", "plain");
    let turn = client.until_answer(prompt);
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");
    assert_eq!(
        updates(&turn)[0],
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "plain 1"}})
    );
    // The new session's process, the refused resume's, then the new thread's.
    assert_eq!(
        client.agent_methods(),
        [
            "initialize",
            "initialized",
            "thread/start",
            "initialize",
            "initialized",
            "thread/resume",
            "initialize",
            "initialized",
            "thread/start",
            "turn/start"
        ]
    );
    let (transcript, _dir) = client.finish();
    let text: String = transcript
        .iter()
        .map(|line| format!("{}\n", scrub(line, None)))
        .collect();
    let path = fixtures::root().join("acp-agent").join("named.jsonl");
    if let Err(problems) = fixtures::check_expected(&path, &text) {
        panic!("{}:\n{}", path.display(), problems.join("\n"));
    }
}

/// AA4: loading a session harness can read (Pi's session file, as `harness sessions` reads
/// it) replays it before the answer, and Pi's new process resumes it (`--session ID`).
#[test]
fn aa4_a_stored_pi_session_is_replayed_then_resumed() {
    let (name, agent, _) = naming_backends().remove(4);
    assert_eq!(name, "pi");
    let id = "01a24b6e-804c-73c3-88af-51b2c02b478f";
    let recorded = fixtures::root().join("sessions/pi/a_plain_text/sessions/--home-pi-project--");
    let home = tempfile::tempdir().unwrap();
    let folder = home.path().join("sessions/--home-pi-project--");
    std::fs::create_dir_all(&folder).unwrap();
    for file in std::fs::read_dir(&recorded).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, folder.join(file.file_name().unwrap())).unwrap();
    }
    let env = [("PI_CODING_AGENT_DIR", home.path().as_os_str())];
    let mut client = start_backend(name, &agent, &env);
    client.initialize();
    let load = client.request(
        "session/load",
        json!({"sessionId": id, "cwd": client.dir.path(), "mcpServers": []}),
    );
    let replay = client.until_answer(load);
    assert_eq!(
        updates(&replay),
        [
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Hello."}})
        ]
    );
    assert_eq!(
        replay.last().unwrap()["result"]["modes"]["currentModeId"],
        "default"
    );
    let argv = read_when_written(&client.dir.path().join("argv"));
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        ["--mode", "rpc", "--session", id]
    );
    let prompt = client.prompt(id, "plain");
    let turn = client.until_answer(prompt);
    assert_eq!(turn.last().unwrap()["result"]["stopReason"], "end_turn");
    client.finish();
}

/// AA6, AA17: a mode change reopens a backend that names its sessions itself on the same
/// backend id: Codex's new process resumes the thread, whose next turn is its second.
#[test]
fn aa6_a_mode_change_resumes_the_same_backend_session() {
    let (name, agent, _) = naming_backends().remove(0);
    let state = tempfile::tempdir().unwrap();
    let mut client = start_backend(name, &agent, &[("FAKE_STATE", state.path().as_os_str())]);
    let session = client.new_session();
    let prompt = client.prompt(&session, "plain");
    client.until_answer(prompt);
    let set = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "acceptEdits"}),
    );
    client.until_answer(set);
    let prompt = client.prompt(&session, "plain");
    let turn = client.until_answer(prompt);
    assert_eq!(
        updates(&turn)[0],
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "plain 2"}})
    );
    let log = std::fs::read_to_string(client.dir.path().join("log")).unwrap();
    let resumed: Vec<Value> = log
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "thread/resume")
        .map(|m| m["params"]["threadId"].clone())
        .collect();
    assert_eq!(resumed, [json!(session)]);
    client.finish();
}

/// AA3: a backend that never names its session answers `session/new` with an error once
/// `--timeout` has passed, and nothing of it is left running.
#[test]
fn aa3_a_backend_that_never_names_its_session_is_an_error_in_time() {
    let (name, agent, _) = naming_backends().remove(0);
    let mut args = vec!["--backend", name, "--timeout", "1s"];
    args.extend(agent.iter().map(String::as_str));
    let mut client = Client::start_with(&args, &[("FAKE_MODE", "never-ready".as_ref())]);
    client.initialize();
    let id = client.request(
        "session/new",
        json!({"cwd": client.dir.path(), "mcpServers": []}),
    );
    let start = Instant::now();
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603,
            "message": "the codex backend did not name its session within 1 second"}})
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    let pid = read_when_written(&client.dir.path().join("pid"));
    assert_gone(&pid);
    client.finish();
}

#[test]
fn aa6_set_mode_restarts_the_backend_in_that_mode_for_the_next_turn() {
    let mut client = Client::start(&[]);
    let session = client.new_session();
    let prompt = client.prompt(&session, "plain");
    client.until_answer(prompt);
    let set = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "acceptEdits"}),
    );
    let answer = client.until_answer(set);
    assert_eq!(
        updates(&answer),
        [json!({"sessionUpdate": "current_mode_update", "currentModeId": "acceptEdits"})]
    );
    assert_eq!(answer.last().unwrap()["result"], json!({}));
    let prompt = client.prompt(&session, "plain");
    client.until_answer(prompt);
    // The new process: the stored session, in the new mode.
    let path = client.dir.path().join("argv");
    let argv = read_when_written(&path);
    assert!(
        argv.lines().any(|a| a == "--permission-mode=acceptEdits"),
        "{argv}"
    );
    assert!(
        argv.lines().any(|a| a == format!("--resume={session}")),
        "{argv}"
    );
    let bad = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "yolo"}),
    );
    assert_eq!(
        client.read(),
        json!({"jsonrpc": "2.0", "id": bad, "error": {"code": -32602, "message": "unknown mode `yolo`"}})
    );
    client.finish();
}

/// What two backends' events must agree on: everything but the backend's own tool name, the
/// line numbers, what only a session shows (its permission requests) and a command's exit
/// code, which ACP's `tool_call_update` has no field for (Codex reports one; its `success`
/// still comes through).
fn comparable(events: &[harness_agents::Event]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| !matches!(e.body, harness_agents::EventBody::Permission { .. }))
        .map(|e| {
            let mut value = serde_json::to_value(e).unwrap();
            let object = value.as_object_mut().unwrap();
            object.remove("tool");
            object.remove("line");
            object.remove("exit_code");
            value
        })
        .collect()
}

/// This project's own `acp` backend drives `harness acp --backend B` for every backend with
/// sessions, its scripted agent behind it: the events that come out are backend B's own
/// session's, permission answered on the way (A13, AA13).
#[test]
fn the_acp_backend_through_harness_acp_gives_the_backends_own_events() {
    let fake = |name: &str| fixtures::root().join("fake-agent").join(name);
    let made = |tool: &str, text: &str| {
        vec![
            json!({"kind": "command", "command": "touch made.txt", "success": true, "tool_use_id": tool}),
            json!({"kind": "agent", "text": text}),
        ]
    };
    let cases = [
        ("claude", fake("claude-session"), made("toolu_1", "made it")),
        ("codex", fake("codex-app-server"), made("cmd-1", "made it")),
        ("opencode", fake("opencode-serve"), made("call_1", "done 1")),
        ("gemini", fake("acp-session"), made("c1", "made it")),
        ("copilot", fake("acp-session"), made("c1", "made it")),
        ("qwen", fake("acp-session"), made("c1", "made it")),
        ("acp", fake("acp-session"), made("c1", "made it")),
    ];
    for (name, binary, expected) in cases {
        let (direct, through) = round_trip(name, &binary);
        assert_eq!(comparable(&through), comparable(&direct), "{name}");
        assert_eq!(comparable(&direct), expected, "{name}");
    }
}

/// Backend `name`'s session with `binary` as its agent, prompted `ask` and allowed; then the
/// `acp` backend's run of `ask` through `harness acp --backend name`: both events.
fn round_trip(
    name: &str,
    binary: &std::path::Path,
) -> (Vec<harness_agents::Event>, Vec<harness_agents::Event>) {
    use futures::StreamExt;
    use harness_agents::session::SessionItem;
    use harness_agents::{Decision, EventBody, RunItem, RunRequest};

    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = harness_agents::registry();
    runtime.block_on(async {
        let bounded = Duration::from_secs(30);
        let mut request = RunRequest::default();
        if name == "acp" {
            request.agent = Some(vec![binary.display().to_string()]);
        } else {
            request.binary = Some(binary.to_path_buf());
        }
        request.cwd = Some(dir.path().to_path_buf());
        let backend = registry.get(name).unwrap();
        let mut session = backend.session(request).await.unwrap();
        session.prompt("ask").unwrap();
        let mut direct = Vec::new();
        let collect = async {
            while let Some(item) = session.next().await {
                match item {
                    SessionItem::Event(event) => {
                        if let EventBody::Permission { id, .. } = &event.body {
                            session.answer(id.clone(), Decision::Allow, None).unwrap();
                        }
                        direct.push(event);
                    }
                    SessionItem::TurnEnd(_) => session.end_input().unwrap(),
                    SessionItem::Ended(_) => {}
                }
            }
        };
        tokio::time::timeout(bounded, collect).await.unwrap();

        let mut request = RunRequest::new("ask");
        let flag = if name == "acp" { "--agent" } else { "--binary" };
        request.agent = Some(vec![
            env!("CARGO_BIN_EXE_harness").to_string(),
            "acp".into(),
            "--backend".into(),
            name.into(),
            flag.into(),
            binary.display().to_string(),
        ]);
        request.cwd = Some(dir.path().to_path_buf());
        request.permission_mode = Some("bypassPermissions".into());
        request.timeout = Some(bounded);
        let acp = registry.get("acp").unwrap();
        let mut stream = acp.run(request).await.unwrap();
        let mut through = Vec::new();
        let mut outcome = None;
        while let Some(item) = stream.next().await {
            match item {
                RunItem::Event(event) => through.push(event),
                RunItem::Outcome(o) => outcome = Some(o),
            }
        }
        let outcome = outcome.unwrap();
        assert_eq!(
            outcome.status,
            harness_agents::Status::Success,
            "{name}: {through:?}"
        );
        assert_eq!(outcome.exit_code, Some(Some(0)), "{name}");
        (direct, through)
    })
}

/// How `acpx` starts `harness acp` for one session backend, with its scripted agent behind
/// it, and what that agent says where the backends differ.
struct AcpxBackend {
    name: &'static str,
    /// The options after `--backend NAME`: the fake agent.
    agent: String,
    /// The end of `exec ask` under `--approve-all`, for an agent that asks permissions.
    approved: Option<&'static str>,
    /// `exec ask` under `--deny-all`: acpx's exit status and a part of its output.
    denied: Option<(i32, &'static str)>,
    /// The prompt that runs until it is cancelled.
    hang: &'static str,
    /// The end of that prompt, cancelled.
    cancelled: &'static str,
    /// The end of `prompt die`.
    died: &'static str,
    /// What the `plain` prompt after it says: the turn the session has reached (the Claude
    /// fake stores only its `plain` turns, the others every turn).
    after: &'static str,
}

fn acpx_backends() -> Vec<AcpxBackend> {
    let fake = |name: &str| fixtures::root().join("fake-agent").join(name);
    let died =
        "\n[error] RUNTIME: the agent exited with status 3 during turn 1; the session has ended\n";
    let acp_died = "dying\n\n[error] RUNTIME: the agent exited with status 3 during turn 1; the session has ended\n";
    vec![
        AcpxBackend {
            name: "claude",
            agent: format!("--binary {}", fake("claude-session").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\nmade it\n\n[done] end_turn\n",
            ),
            denied: Some((5, "    The user denied this tool use.\ndenied\n")),
            hang: "hang",
            cancelled: "working\n\n[done] cancelled\n",
            died: acp_died,
            after: "plain 3",
        },
        AcpxBackend {
            name: "codex",
            agent: format!("--binary {}", fake("codex-app-server").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\nmade it\n\n[done] end_turn\n",
            ),
            denied: Some((
                5,
                "[tool] Run touch made.txt (failed)\n  kind: execute\n  input: touch made.txt\ndeclined\n",
            )),
            hang: "hang",
            cancelled: "[tool] command_execution (failed)\n  kind: other\n  input: /bin/bash -lc 'sleep 20'\n\n[done] cancelled\n",
            died,
            after: "plain 5",
        },
        AcpxBackend {
            name: "opencode",
            agent: format!("--binary {}", fake("opencode-serve").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\ndone 1\n\n[done] end_turn\n",
            ),
            // opencode ends the turn at a rejected tool without a result: AA7's error.
            denied: Some((
                1,
                "    The user rejected permission to use this specific tool call.\n\n[error] RUNTIME: the turn ended without its result\n",
            )),
            hang: "hang",
            cancelled: "    User aborted the command\n    </shell_metadata>\n\n[done] cancelled\n",
            died,
            after: "plain 5",
        },
        AcpxBackend {
            name: "gemini",
            agent: format!("--binary {}", fake("acp-session").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\nmade it\n\n[done] end_turn\n",
            ),
            denied: Some((5, "  output:\n    rejected\ndenied\n")),
            hang: "hang",
            cancelled: "working\n\n[done] cancelled\n",
            died: acp_died,
            after: "plain 5",
        },
        AcpxBackend {
            name: "qwen",
            agent: format!("--binary {}", fake("acp-session").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\nmade it\n\n[done] end_turn\n",
            ),
            denied: Some((5, "  output:\n    rejected\ndenied\n")),
            hang: "hang",
            cancelled: "working\n\n[done] cancelled\n",
            died: acp_died,
            after: "plain 5",
        },
        AcpxBackend {
            name: "copilot",
            agent: format!("--binary {}", fake("acp-session").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\nmade it\n\n[done] end_turn\n",
            ),
            denied: Some((5, "  output:\n    rejected\ndenied\n")),
            hang: "hang",
            cancelled: "working\n\n[done] cancelled\n",
            died: acp_died,
            after: "plain 5",
        },
        AcpxBackend {
            name: "acp",
            agent: format!("--agent {}", fake("acp-session").display()),
            approved: Some(
                "[tool] Run touch made.txt (completed)\n  kind: execute\n  input: touch made.txt\nmade it\n\n[done] end_turn\n",
            ),
            denied: Some((5, "  output:\n    rejected\ndenied\n")),
            hang: "hang",
            cancelled: "working\n\n[done] cancelled\n",
            died: acp_died,
            after: "plain 5",
        },
        // Pi asks no permissions (PR6): no `exec ask`.
        AcpxBackend {
            name: "pi",
            agent: format!("--binary {}", fake("pi-rpc").display()),
            approved: None,
            denied: None,
            hang: "tool",
            cancelled: "[tool] Run sleep 100 (failed)\n  kind: execute\n  input: sleep 100\n  output:\n    Command aborted\n\n[done] cancelled\n",
            died: acp_died,
            after: "plain 5",
        },
    ]
}

/// A third-party ACP client, `acpx` (npm, pinned to 0.1.15 by `.ci/run`: the last release
/// whose engines accept Node 18-21), drives `harness acp` for every backend with sessions,
/// its scripted agent behind it: one-shot `exec` under both permission policies, a persistent
/// session with two prompts, a cancel, and the agent dying mid-turn (AA15: an error, then the
/// next prompt is served). `ACPX` names its `dist/cli.js`; without it the test says so and
/// checks nothing (CI sets it wherever Node is installed).
#[test]
fn acpx_drives_harness_acp() {
    let Some(acpx) = std::env::var_os("ACPX") else {
        eprintln!("skipped: set ACPX to acpx's dist/cli.js (npm install acpx@0.1.15)");
        return;
    };
    for backend in acpx_backends() {
        acpx_drives(&acpx, &backend);
    }
}

fn acpx_drives(acpx: &std::ffi::OsStr, backend: &AcpxBackend) {
    let name = backend.name;
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let agent = format!(
        "{} acp --backend {name} {}",
        env!("CARGO_BIN_EXE_harness"),
        backend.agent
    );
    let acpx = |args: &[&str]| -> (Option<i32>, String) {
        let mut child = std::process::Command::new("node")
            .arg(acpx)
            .arg("--cwd")
            .arg(project.path())
            .arg("--agent")
            .arg(&agent)
            .args(args)
            .env("HOME", home.path())
            .env("CLAUDE_CONFIG_DIR", home.path().join("claude"))
            .env("FAKE_STATE", state.path())
            // The ACP fake loads sessions as Gemini CLI does (`loadSession`).
            .env("FAKE_CAPS", "load")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut text);
            let _ = tx.send(text);
        });
        let text = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("{name}: acpx hung"));
        (child.wait().unwrap().code(), text)
    };
    if let Some(approved) = backend.approved {
        let (code, out) = acpx(&["--approve-all", "--format", "text", "exec", "ask"]);
        assert_eq!(code, Some(0), "{name}: {out}");
        assert!(out.ends_with(approved), "{name}: {out}");
    }
    if let Some((status, part)) = backend.denied {
        let (code, out) = acpx(&["--deny-all", "--format", "text", "exec", "ask"]);
        // 5 is acpx's own status for a denied permission.
        assert_eq!(code, Some(status), "{name}: {out}");
        assert!(out.contains(part), "{name}: {out}");
    }

    let (code, id) = acpx(&["sessions", "new"]);
    assert_eq!(code, Some(0), "{name}: {id}");
    assert!(!id.trim().is_empty(), "{name}: {id}");
    // AA2, AA3: every backend's `session/new` answers its own session id, so each `prompt`
    // (a new `harness acp`) loads the same session, and its conversation goes on: the fake
    // counts the session's turns across processes (FAKE_STATE).
    for turn in 1..=2 {
        let (code, out) = acpx(&["--format", "text", "prompt", "plain"]);
        assert_eq!(code, Some(0), "{name}: {out}");
        assert!(
            out.contains("[client] session/load (running)"),
            "{name}: {out}"
        );
        assert!(
            out.ends_with(&format!("plain {turn}\n\n[done] end_turn\n")),
            "{name}: {out}"
        );
    }

    let (tx, hung) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let _ = tx.send(acpx(&["--format", "text", "prompt", backend.hang]));
        });
        std::thread::sleep(Duration::from_secs(3));
        let (code, out) = acpx(&["cancel"]);
        assert_eq!(
            (code, out.as_str()),
            (Some(0), "cancel requested\n"),
            "{name}"
        );
        let (code, out) = hung
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{name}: no answer"));
        assert_eq!(code, Some(0), "{name}: {out}");
        assert!(out.ends_with(backend.cancelled), "{name}: {out}");
    });

    let (code, out) = acpx(&["--format", "text", "prompt", "die"]);
    assert_eq!(code, Some(1), "{name}: {out}");
    assert!(out.ends_with(backend.died), "{name}: {out}");
    let (code, out) = acpx(&["--format", "text", "prompt", "plain"]);
    assert_eq!(code, Some(0), "{name}: {out}");
    assert!(
        out.ends_with(&format!("{}\n\n[done] end_turn\n", backend.after)),
        "{name}: {out}"
    );
}

/// AA17: every registered backend has sessions (Qwen Code and the Copilot CLI through their ACP
/// modes were the last), so `harness acp` refuses none: with its input empty, each exits 0 at
/// once and writes nothing. The refusal itself (exit status 2, a message naming the backends
/// served) is there for a backend without sessions, which the registry no longer holds.
#[test]
fn aa17_every_registered_backend_is_served() {
    let registry = harness_agents::registry();
    for name in registry.names() {
        assert!(
            registry.get(name).is_some_and(|b| b.has_sessions()),
            "{name} has no sessions"
        );
        let out = harness()
            .args(["acp", "--backend", name])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{name}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "", "{name}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{name}");
    }
}
