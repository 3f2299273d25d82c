//! The `pi` backend through the binary: `harness normalize` on every Pi recording, with the
//! backend named and detected (docs/pi.md), and `harness run --backend pi` against the fake
//! `pi` of `fixtures/fake-agent/` (its header lists the environment variables it obeys). No
//! test runs the real `pi`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::harness;

/// The directory the recordings were made in (`cargo xtask record --backend pi`).
const CWD: &str = "/home/pi/project";

fn normalize(fixture: &fixtures::Fixture, args: &[&str]) -> Output {
    let mut cmd = harness();
    cmd.arg("normalize").arg(&fixture.stream).args(args);
    if let Some(stderr) = &fixture.stderr {
        cmd.arg("--stderr").arg(stderr);
    }
    cmd.output().unwrap()
}

#[test]
fn every_pi_recording_prints_its_expected_events_named_or_detected() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in fixtures::streams("pi").unwrap() {
        let named = normalize(&fixture, &["--backend", "pi", "--cwd", CWD]);
        let detected = normalize(&fixture, &["--cwd", CWD]);
        assert!(named.status.success(), "{}: {named:?}", fixture.name);
        assert!(detected.status.success(), "{}: {detected:?}", fixture.name);
        assert_eq!(named.stdout, detected.stdout, "{}", fixture.name);
        // The first line of every recording is Pi's `session` header.
        assert_eq!(
            String::from_utf8(detected.stderr).unwrap(),
            "harness: detected a pi stream (line 1); --backend NAME chooses another\n",
            "{}",
            fixture.name
        );
        let actual = String::from_utf8(named.stdout).unwrap();
        if let Err(problems) = fixtures::check_expected(&fixture.expected, &actual) {
            failures.push(format!("{}: {}", fixture.name, problems[0]));
        }
        checked += 1;
    }
    assert_eq!(checked, 32);
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        fixtures::UPDATE_HINT
    );
}

#[test]
fn backends_lists_pi_with_exit_codes_and_no_plan() {
    let output = harness().arg("backends").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.lines().any(|l| super::backends::reports(
            l,
            r#"{"exit_codes":true,"name":"pi","orchestration_source":"none"}"#
        )),
        "{text}"
    );
}

/// `harness run --backend pi --binary FAKE --cwd DIR ARGS -- PROMPT` with the fake's
/// environment, `PI_BIN` not inherited; fails (not hangs) after a minute.
fn run(dir: &Path, args: &[&str], prompt: &str, env: &[(&str, &Path)]) -> Output {
    let mut cmd = harness();
    cmd.args(["run", "--backend", "pi", "--format", "jsonl", "--binary"])
        .arg(fixtures::root().join("fake-agent").join("pi"))
        .arg("--cwd")
        .arg(dir)
        .args(args)
        .arg("--")
        .arg(prompt)
        .env_remove("PI_BIN")
        .stdin(Stdio::null());
    for (key, value) in env {
        cmd.env(key, value);
    }
    guarded(cmd)
}

fn guarded(mut cmd: Command) -> Output {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap()
}

#[test]
fn run_pi_sends_the_prompt_to_stdin_maps_the_options_and_a_failed_request_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let (argv, stdin) = (dir.path().join("argv"), dir.path().join("stdin"));
    // Pi exits 0 after giving up on the API; the outcome is `error`, so `harness` exits 1.
    let recording: PathBuf = fixtures::root().join("pi/m_api_error_500.jsonl");
    let prompt = "--tools bash is text, not an option";
    let output = run(
        dir.path(),
        &["--model=-x", "--permission-mode", "plan"],
        prompt,
        &[
            ("FAKE_ARGV", &argv),
            ("FAKE_STDIN", &stdin),
            ("FAKE_STREAM", &recording),
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), prompt);
    assert_eq!(
        std::fs::read_to_string(&argv)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        [
            "--mode",
            "json",
            "--model",
            "-x",
            "--tools",
            "read,grep,find,ls"
        ]
    );
    let events: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "error", "warning", "error", "warning", "error", "warning", "error", "outcome"
        ]
    );
    let outcome = &events[7];
    assert_eq!(outcome["status"], "error");
    assert_eq!(outcome["exit_code"], 0);
}
