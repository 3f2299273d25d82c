//! `cargo xtask session-bench [--turns N] [--debug]`: the latency a session adds and its
//! throughput (SPEC section 8), measured through the release `harness session` binary against
//! a scripted Claude Code session agent.
//!
//! The agent is this very binary, started by `harness` with `XTASK_SESSION_AGENT=1` in its
//! environment ([`agent`]): for each user message on its standard input it writes an `init`
//! line, an assistant message and a `result` line whose `result` is the CLOCK_MONOTONIC time
//! taken just before the write. The bench reads `harness`'s outcome line for the turn, takes
//! the clock again, and the difference is what the session added between the agent's last
//! line and the caller's: reading the pipe, normalizing, ending the turn, writing the outcome
//! (both pipes included). Then it sends the next prompt, so the turns per second are the whole
//! loop's. The harness process's resident memory (VmRSS) is read after turn 100 and after the
//! last, to show it stays flat.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The variable that makes this binary the scripted agent.
pub const AGENT_VAR: &str = "XTASK_SESSION_AGENT";

/// The bench's options.
#[derive(Debug, clap::Args)]
pub struct Args {
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

/// The scripted agent: answers each user line with a turn, until its input ends.
pub fn agent() -> Result<()> {
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

/// Runs the bench and prints its figures.
pub fn session_bench(args: Args) -> Result<()> {
    if args.turns == 0 {
        bail!("--turns must be at least 1");
    }
    let harness = crate::build(args.debug, &["-p", crate::packages::CLI])?.join("harness");
    let me = std::env::current_exe()?;
    let mut child = Command::new(&harness)
        .args(["session", "--format", "jsonl", "--binary"])
        .arg(&me)
        .arg(format!("--env={AGENT_VAR}=1"))
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
            bail!("turn {} did not succeed: {line}", latencies.len() + 1);
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
                bail!("harness session exited with {status}");
            }
            latencies.sort_unstable();
            let us = |ns: u128| ns as f64 / 1000.0;
            println!(
                "session-bench: {} turns through {} ({} build)",
                args.turns,
                harness.display(),
                if args.debug { "debug" } else { "release" }
            );
            println!(
                "added latency (agent's result line to the caller's outcome line): p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs",
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
        "harness session ended after {} of {} turns",
        latencies.len(),
        args.turns
    )
}
