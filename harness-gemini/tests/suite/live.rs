//! Live runs (G12) against the fake `gemini` kept in `fixtures/fake-agent/`: a shell script
//! that records its argv, working directory and stdin, replays a recorded stream and its
//! recorded stderr, then exits as the recording did, hangs, or dies mid-line. No test runs the
//! real `gemini` (`cargo xtask record --backend gemini` does).
//!
//! The recordings' expected files assume `--cwd /home/gemini/project`, a directory that does
//! not exist here; the golden replay starts the fake in a temporary folder and gives the
//! normalizer that directory through `RunRequest::normalizer`.

use std::path::PathBuf;
use std::time::Duration;

use fixtures::live::{Fake, assert_missing_binary, run_by_name, wait_gone};

use harness_agents_core::{Event, Status};
use harness_agents_gemini::{GeminiHarness, LAUNCH};
use serde_json::{Value, json};

use super::{config, ok, result, tool_use};

/// `lines` as a stream file for `FAKE_STREAM`, in the fake's folder.
fn stream(fake: &Fake, lines: &[Value]) -> PathBuf {
    let path = fake.path("stream.jsonl");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).unwrap();
    path
}

fn json_events(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

#[test]
fn every_recording_replayed_live_gives_its_expected_events_and_exit_code() {
    let (checked, failures) =
        fixtures::live::replay_recordings(&GeminiHarness, "gemini", &["gemini"], &config());
    assert_eq!(checked, 40);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn g12_the_prompt_goes_to_stdin_never_argv_and_the_run_starts_in_its_directory() {
    let fake = Fake::new("gemini");
    let stream = stream(
        &fake,
        &[
            tool_use("read_file", "t1", json!({"file_path": "README.md"})),
            ok("t1"),
            result(),
        ],
    );
    let prompt = "--yolo\n-p evil\r\n\u{e9} -";
    let mut request = fake.recording_request(prompt, Some(&stream));
    request.model = Some("gemini-2.5-pro".into());
    request.permission_mode = Some("acceptEdits".into());
    request.extra_args = vec!["--debug".into()];
    let (events, outcome) = run_by_name(Box::new(GeminiHarness), request);

    assert_eq!(fake.stdin(), prompt);
    let dir = fake.dir().display().to_string();
    assert_eq!(fake.pwd(), dir);
    let argv = fake.argv();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "--output-format=stream-json",
            "--skip-trust",
            "--model=gemini-2.5-pro",
            "--approval-mode=auto_edit",
            "--debug"
        ]
    );
    assert!(!argv.contains("evil"), "{argv}");
    // Relative paths resolve against the run's directory (G8).
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "read", "path": format!("{dir}/README.md"), "success": true,
                "tool": "read_file", "tool_use_id": "t1", "line": 2})
        ]
    );
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn g13_a_resumed_run_passes_resume_with_the_id_and_the_prompt_on_stdin() {
    // The recorded resumed run: its `init` line repeats the id it resumed (G14).
    let id = "542db50e-c109-4806-b97e-639b315e66b7";
    let recording = fixtures::root().join("gemini/u_resume.jsonl");
    let fake = Fake::new("gemini");
    let prompt = "What number did I ask you to remember? Then read notes.txt.";
    let mut request = fake.recording_request(prompt, Some(&recording));
    request.resume = Some(id.into());
    request.permission_mode = Some("yolo".into());
    let (events, outcome) = run_by_name(Box::new(GeminiHarness), request);

    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "--output-format=stream-json",
            "--skip-trust",
            &format!("--resume={id}"),
            "--approval-mode=yolo"
        ]
    );
    assert_eq!(fake.stdin(), prompt);
    let dir = fake.dir().display().to_string();
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "read", "path": format!("{dir}/notes.txt"), "success": true,
                "tool": "read_file", "tool_use_id": "read_file__read_file_1796552972329_0",
                "line": 4}),
            json!({"kind": "agent", "text": "You asked me to remember 7; notes.txt has five lines.",
                "line": 5})
        ]
    );
    assert_eq!(outcome.session_id.as_deref(), Some(id));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn g12_an_error_exit_status_reaches_the_outcome_as_given() {
    // Gemini CLI exits 41 on bad auth, 55 in an untrusted folder, before printing anything.
    let fake = Fake::new("gemini");
    let stderr = fake.path("stderr");
    std::fs::write(&stderr, "Invalid auth method selected\n").unwrap();
    let code = PathBuf::from("41");
    let (events, outcome) = run_by_name(
        Box::new(GeminiHarness),
        fake.request("hi", &[("FAKE_EXIT", &code), ("FAKE_STDERR_FILE", &stderr)]),
    );
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "warning", "source": "stderr", "message": "Invalid auth method selected",
                   "stream": "stderr", "line": 1}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(outcome.status, Status::Incomplete);
    assert_eq!(outcome.exit_code, Some(Some(41)));
}

#[test]
fn g12_an_agent_dying_mid_line_gives_the_partial_line_its_pending_uses_and_no_exit_code() {
    let fake = Fake::new("gemini");
    let use_line = tool_use("run_shell_command", "sh", json!({"command": "sleep 100"}));
    let stream = stream(&fake, std::slice::from_ref(&use_line));
    let partial = PathBuf::from(r#"{"type":"mess"#);
    let (events, outcome) = run_by_name(
        Box::new(GeminiHarness),
        fake.request(
            "hi",
            &[("FAKE_STREAM", &stream), ("FAKE_PARTIAL", &partial)],
        ),
    );
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "warning", "source": "non_json", "message": r#"{"type":"mess"#, "line": 2}),
            json!({"kind": "unknown", "reason": "unresolved_tool_use",
                   "raw": {"tool_use": use_line, "tool_result": null},
                   "tool": "run_shell_command", "tool_use_id": "sh"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(outcome.exit_code, Some(None), "SIGKILL: no exit status");
}

#[test]
fn g12_a_timeout_kills_the_agent_and_its_children() {
    let fake = Fake::new("gemini");
    let pids = fake.path("pids");
    let stream = stream(&fake, &[tool_use("glob", "g", json!({"pattern": "*"}))]);
    let mut request = fake.request("hi", &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)]);
    request.timeout = Some(Duration::from_millis(500));
    let (events, outcome) = run_by_name(Box::new(GeminiHarness), request);
    let events = json_events(&events);
    let kinds: Vec<(&Value, &Value)> = events.iter().map(|e| (&e["kind"], &e["reason"])).collect();
    assert_eq!(
        kinds,
        [
            (&json!("error"), &Value::Null),
            (&json!("unknown"), &json!("unresolved_tool_use")),
            (&json!("error"), &Value::Null),
        ]
    );
    let message = events[0]["message"].as_str().unwrap();
    assert!(message.starts_with("the run timed out"), "{message}");
    assert_eq!(outcome.status, Status::Incomplete);
    assert_eq!(outcome.exit_code, Some(None));
    for pid in std::fs::read_to_string(&pids).unwrap().lines() {
        assert!(wait_gone(pid), "process {pid} is still there");
    }
}

#[test]
fn g12_a_missing_binary_is_binary_not_found_saying_it_does_not_exist() {
    assert_missing_binary(&GeminiHarness, "/nonexistent/gemini");
    assert_eq!(LAUNCH.install, "npm install -g @google/gemini-cli");
}
