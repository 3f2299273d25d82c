//! `harness session` (SPEC section 8) against `fixtures/fake-agent/claude-session`, a script
//! that speaks Claude Code's session protocol: JSON commands in, events and a turn outcome per
//! turn out (I1-I3), the exit statuses, a signal, and the chat a person gets on a terminal
//! (through `script(1)`, which gives `harness` a terminal).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::{assert_gone, harness, read_when_written};

fn fake_session() -> PathBuf {
    fixtures::root().join("fake-agent").join("claude-session")
}

/// `harness session --binary FAKE ARGS` in a fresh folder, the fake's pid written to `pid`.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = harness();
    cmd.arg("session")
        .arg("--binary")
        .arg(fake_session())
        .arg("--cwd")
        .arg(dir)
        .args(args)
        .env("FAKE_PID", dir.join("pid"))
        .env_remove("CLAUDE_BIN")
        .env_remove("NO_COLOR");
    cmd
}

/// Runs a session with `stdin` as its commands, failing (not hanging) after a minute.
fn session(args: &[&str], stdin: &str) -> (Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = command(dir.path(), args);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    (output, dir)
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const SID: &str = "5e55a0e0-0000-4000-8000-000000000001";

fn outcome(turn: u32, status: &str, text: Option<&str>, counts: Value, turns: u32) -> Value {
    let mut value = json!({
        "kind": "outcome", "session_id": SID, "status": status,
        "metrics": {
            "input_tokens": 10, "output_tokens": 5, "total_cost_usd": 0.01,
            "duration_ms": 10 * turns, "num_turns": turns, "cumulative": true,
        },
        "counts": counts, "turn": turn,
    });
    if let Some(text) = text {
        value["final_output"] = json!(text);
    }
    value
}

#[test]
fn i1_i2_i3_commands_in_events_and_one_outcome_per_turn_out() {
    let (output, _dir) = session(
        &[],
        "{\"type\":\"prompt\",\"text\":\"plain\"}\nbogus\n{\"type\":\"prompt\",\"text\":\"plain\"}\n",
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        lines(&output),
        [
            json!({"kind": "warning", "message": "a command line is not JSON (expected value at line 1 column 1)", "source": "input"}),
            json!({"kind": "agent", "text": "plain 1", "line": 2}),
            outcome(1, "success", Some("plain 1"), json!({"agent": 1}), 1),
            json!({"kind": "agent", "text": "plain 2", "line": 5}),
            outcome(2, "success", Some("plain 2"), json!({"agent": 1}), 2),
        ]
    );
}

#[test]
fn i3_an_agent_that_dies_exits_1_after_the_turns_error_outcome() {
    let (output, _dir) = session(&[], "{\"type\":\"prompt\",\"text\":\"die\"}\n");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let lines = lines(&output);
    // The agent's last words first, then the error naming its exit.
    assert_eq!(
        lines[0],
        json!({"kind": "agent", "text": "dying", "line": 2})
    );
    assert_eq!(
        lines[1],
        json!({"kind": "error", "message": "stream ended without a result"})
    );
    assert_eq!(
        lines[2],
        json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"})
    );
    assert_eq!(lines[3]["turn"], 1);
    assert_eq!(lines[3]["status"], "error");
    assert_eq!(lines[3]["counts"], json!({"agent": 1, "error": 2}));
    assert_eq!(lines.len(), 4);
}

#[test]
fn i1_a_session_closed_before_any_prompt_ends_quietly() {
    let (output, _dir) = session(&[], "{\"type\":\"close\"}\n");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // Nothing was asked: no turn, no outcome, no end-of-input error.
    assert_eq!(lines(&output), Vec::<Value>::new());
}

#[test]
fn pr1_a_pi_session_runs_its_turns_through_pi_rpc() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = harness();
    cmd.arg("session")
        .arg("--backend")
        .arg("pi")
        .arg("--binary")
        .arg(fixtures::root().join("fake-agent").join("pi-rpc"))
        .arg("--cwd")
        .arg(dir.path())
        .env_remove("PI_BIN")
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"{\"type\":\"prompt\",\"text\":\"plain\"}\n{\"type\":\"prompt\",\"text\":\"plain\"}\n",
        )
        .unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    // PR2: the session id from Pi's state; PI11's sums, cumulative over the session.
    let outcome = |turn: u32, n: u64| {
        json!({
            "kind": "outcome", "session_id": "019b0000-0000-7000-8000-000000000001",
            "status": "success", "final_output": format!("plain {turn}"),
            "metrics": {
                "input_tokens": 10 * n, "output_tokens": 5 * n, "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0, "total_cost_usd": 0.001 * n as f64,
                "num_turns": n, "cumulative": true,
            },
            "counts": {"agent": 1}, "turn": turn,
        })
    };
    assert_eq!(
        lines(&output),
        [
            json!({"kind": "agent", "text": "plain 1", "line": 5}),
            outcome(1, 1),
            json!({"kind": "agent", "text": "plain 2", "line": 11}),
            outcome(2, 2),
        ]
    );
}

#[test]
fn i6_sigterm_during_a_turn_exits_143_and_stops_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = command(dir.path(), &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"type\":\"prompt\",\"text\":\"hang\"}\n")
        .unwrap();
    let pid = read_when_written(&dir.path().join("pid"));
    // The fake has started its turn: stop `harness` as a terminal's close or `kill` would.
    std::thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    drop(stdin);
    assert_eq!(output.status.code(), Some(143));
    let lines = lines(&output);
    assert_eq!(
        lines[0],
        json!({"kind": "error", "message": "the session was stopped; the agent is being stopped"})
    );
    // The fake answers the interrupt: the turn ends as the caller stopped it.
    let last = lines.last().unwrap();
    assert_eq!(last["turn"], 1);
    assert_eq!(last["status"], "error");
    assert_gone(&pid);
}

/// Reads what `script(1)` shows until `text` appears (a minute at most).
fn read_until(out: &mpsc::Receiver<u8>, seen: &mut String, text: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !seen.contains(text) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match out.recv_timeout(left) {
            Ok(byte) => seen.push(byte as char),
            Err(_) => panic!("`{text}` never appeared in {seen:?}"),
        }
    }
}

#[test]
fn i1_on_a_terminal_it_is_a_chat_that_asks_for_permission() {
    let dir = tempfile::tempdir().unwrap();
    let inner = format!(
        "{} session --binary {} --cwd {} --color never",
        env!("CARGO_BIN_EXE_harness"),
        fake_session().display(),
        dir.path().display()
    );
    let mut child = Command::new("script")
        .args(["-qefc", &inner, "/dev/null"])
        .env("FAKE_PID", dir.path().join("pid"))
        .env("COLUMNS", "200")
        .env_remove("CLAUDE_BIN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (tx, bytes) = mpsc::channel();
    std::thread::spawn(move || {
        let mut byte = [0u8];
        while let Ok(1) = stdout.read(&mut byte) {
            if tx.send(byte[0]).is_err() {
                return;
            }
        }
    });
    let mut seen = String::new();
    read_until(&bytes, &mut seen, "type a prompt");
    stdin.write_all(b"ask\n").unwrap();
    read_until(&bytes, &mut seen, "allow? [y]es / [a]lways / [n]o");
    stdin.write_all(b"y\n").unwrap();
    read_until(&bytes, &mut seen, "made it");
    read_until(&bytes, &mut seen, "success");
    // Ctrl-D: the end of the person's input ends the session.
    stdin.write_all(&[4]).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    assert!(status.success(), "{status:?}: {seen}");
    // The human view shows the request and the command it asked for.
    assert!(seen.contains("touch made.txt"), "{seen}");
    assert_gone(&read_when_written(&dir.path().join("pid")));
}
