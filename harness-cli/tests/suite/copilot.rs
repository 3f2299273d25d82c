//! The `copilot` backend through the binary: `harness normalize` on every Copilot recording,
//! with the backend named and detected (docs/copilot.md), `harness run --backend copilot`
//! against the fake `copilot` of `fixtures/fake-agent/` (its header lists the environment
//! variables it obeys), and `harness session --backend copilot` against the fake ACP agent
//! `fixtures/fake-agent/acp-session` (CP15-CP18). No test runs the real `copilot`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness;

/// The directory the recordings were made in (`cargo xtask record --backend copilot`).
const CWD: &str = "/home/copilot/project";

/// A prompt that reads like an option: CP14 gives it as one `--prompt=` word.
const PROMPT: &str = "--version is text, not an option";

fn normalize(fixture: &fixtures::Fixture, args: &[&str]) -> Output {
    let mut cmd = harness();
    cmd.arg("normalize").arg(&fixture.stream).args(args);
    if let Some(stderr) = &fixture.stderr {
        cmd.arg("--stderr").arg(stderr);
    }
    cmd.output().unwrap()
}

#[test]
fn every_copilot_recording_prints_its_expected_events_named_or_detected() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in fixtures::streams("copilot").unwrap() {
        let named = normalize(&fixture, &["--backend", "copilot", "--cwd", CWD]);
        let detected = normalize(&fixture, &["--cwd", CWD]);
        assert!(named.status.success(), "{}: {named:?}", fixture.name);
        assert!(detected.status.success(), "{}: {detected:?}", fixture.name);
        assert_eq!(named.stdout, detected.stdout, "{}", fixture.name);
        // The first line of every recording is Copilot's `session.skills_loaded`.
        assert_eq!(
            String::from_utf8(detected.stderr).unwrap(),
            "harness: detected a copilot stream (line 1); --backend NAME chooses another\n",
            "{}",
            fixture.name
        );
        let actual = String::from_utf8(named.stdout).unwrap();
        if let Err(problems) = fixtures::check_expected(&fixture.expected, &actual) {
            failures.push(format!("{}: {}", fixture.name, problems[0]));
        }
        checked += 1;
    }
    assert_eq!(checked, 31);
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        fixtures::UPDATE_HINT
    );
}

#[test]
fn backends_lists_copilot_with_exit_codes_and_no_plan() {
    let output = harness().arg("backends").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.lines().any(|l| super::backends::reports(
            l,
            r#"{"exit_codes":true,"name":"copilot","orchestration_source":"none"}"#
        )),
        "{text}"
    );
}

/// Runs `cmd` with `stdin` as its input, failing (not hanging) after a minute.
fn guarded(mut cmd: Command, stdin: &[u8]) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap()
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn argv(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn run_copilot_gives_the_prompt_as_one_flag_maps_the_options_and_a_failing_command_fails() {
    let dir = tempfile::tempdir().unwrap();
    let argv_file = dir.path().join("argv");
    let mut cmd = harness();
    cmd.args([
        "run",
        "--backend",
        "copilot",
        "--format",
        "jsonl",
        "--binary",
    ])
    .arg(fixtures::root().join("fake-agent").join("copilot"))
    .arg("--cwd")
    .arg(dir.path())
    .args(["--model=-m", "--permission-mode", "acceptEdits", "--"])
    .arg(PROMPT)
    .env_remove("COPILOT_BIN")
    .env("FAKE_ARGV", &argv_file)
    .env(
        "FAKE_STREAM",
        fixtures::root().join("copilot/g2_bash_exit_1.jsonl"),
    );
    let output = guarded(cmd, b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        argv(&argv_file),
        [
            "--output-format",
            "json",
            "--no-auto-update",
            "--model=-m",
            "--allow-tool=write",
            format!("--prompt={PROMPT}").as_str()
        ]
    );
    let events = lines(&output);
    // CP9: the command exited 1, so it failed, though Copilot calls the call a success.
    assert_eq!(events.len(), 3, "{events:?}");
    let command = &events[0];
    assert_eq!(command["kind"], "command");
    assert_eq!(command["command"], "echo to-stderr >&2; exit 1");
    assert_eq!(command["exit_code"], 1);
    assert_eq!(command["success"], false);
    assert_eq!(
        events[1],
        json!({"kind": "agent", "text": "It failed with 1.", "line": events[1]["line"]})
    );
    assert_eq!(events[2]["kind"], "outcome");
    assert_eq!(events[2]["status"], "success");
    assert_eq!(events[2]["exit_code"], 0);
}

#[test]
fn cp15_harness_session_backend_copilot_runs_turns_through_copilot_acp() {
    let dir = tempfile::tempdir().unwrap();
    let argv_file = dir.path().join("argv");
    let mut cmd = harness();
    cmd.args(["session", "--backend", "copilot", "--binary"])
        .arg(fixtures::root().join("fake-agent").join("acp-session"))
        .arg("--cwd")
        .arg(dir.path())
        .env_remove("COPILOT_BIN")
        .env_remove("NO_COLOR")
        .env("FAKE_ARGV", &argv_file)
        .env("FAKE_EARLY", "1")
        .env("FAKE_NAME", "Copilot");
    let output = guarded(
        cmd,
        b"{\"type\":\"prompt\",\"text\":\"plain\"}\n{\"type\":\"prompt\",\"text\":\"fail\"}\n",
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let outcome = |turn: u32, counts: Value, metrics: Value| {
        json!({"kind": "outcome", "turn": turn, "session_id": "s1", "status": "success",
               "final_output": if turn == 1 { "plain 1" } else { "failed" },
               "metrics": metrics, "counts": counts})
    };
    assert_eq!(
        lines(&output),
        [
            json!({"kind": "agent", "text": "plain 1", "line": 7}),
            outcome(
                1,
                json!({"agent": 1}),
                json!({"num_turns": 1, "cumulative": true})
            ),
            json!({"kind": "command", "command": "false", "exit_code": 1, "success": false,
                   "error": "<exit 1>", "tool": "execute", "tool_use_id": "f2", "line": 11}),
            json!({"kind": "agent", "text": "failed", "line": 12}),
            outcome(
                2,
                json!({"agent": 1, "command": 1}),
                json!({"input_tokens": 20, "output_tokens": 2, "num_turns": 2, "cumulative": true})
            ),
        ]
    );
    assert_eq!(argv(&argv_file), ["--acp", "--no-auto-update"]);
}
