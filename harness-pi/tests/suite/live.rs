//! Live runs (PI15) against the fake `pi` kept in `fixtures/fake-agent/`: a shell script that
//! records its argv, working directory and stdin, replays a recorded stream and its recorded
//! stderr, then exits as the recording did, hangs, or dies mid-line. No test runs the real
//! `pi` (`cargo xtask record --backend pi` does).

use std::path::PathBuf;
use std::time::Duration;

use fixtures::live::{Fake, assert_missing_binary, run_by_name, wait_gone};

use harness_agents_core::{Event, Status};
use harness_agents_pi::{LAUNCH, PiHarness};
use serde_json::{Value, json};

use super::{agent_end, assistant, config, end, session, start, text};

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
        fixtures::live::replay_recordings(&PiHarness, "pi", &["pi"], &config());
    assert_eq!(checked, super::golden::RECORDINGS);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn pi15_the_prompt_goes_to_stdin_never_argv_and_values_go_as_the_next_word() {
    let fake = Fake::new("pi");
    let stream = stream(
        &fake,
        &[
            start("t1", "read", json!({"path": "README.md"})),
            end("t1", "read", "# hi", false),
            agent_end(),
        ],
    );
    let prompt = "--tools bash\n-p evil\r\n@secret.txt \u{e9} -";
    let mut request = fake.recording_request(prompt, Some(&stream));
    request.model = Some("-anthropic/claude-sonnet-4-5".into());
    request.permission_mode = Some("acceptEdits".into());
    request.extra_args = vec!["--thinking".into(), "high".into()];
    let (events, outcome) = run_by_name(Box::new(PiHarness), request);

    assert_eq!(fake.stdin(), prompt);
    let dir = fake.dir().display().to_string();
    assert_eq!(fake.pwd(), dir);
    let argv = fake.argv();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "--mode",
            "json",
            "--model",
            "-anthropic/claude-sonnet-4-5",
            "--tools",
            "read,edit,write,grep,find,ls",
            "--thinking",
            "high"
        ]
    );
    assert!(!argv.contains("evil"), "{argv}");
    // Without a header naming one, relative paths resolve against the run's directory (PI10).
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "read", "path": format!("{dir}/README.md"), "success": true,
                "tool": "read", "tool_use_id": "t1", "line": 2})
        ]
    );
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn pi15_a_failed_request_with_exit_0_is_an_error_outcome_with_exit_code_0() {
    let fake = Fake::new("pi");
    let stream = stream(
        &fake,
        &[
            session("s", "/p"),
            json!({"type": "message_end", "message": {"role": "assistant", "content": [],
                   "stopReason": "error", "errorMessage": "401 invalid x-api-key"}}),
            agent_end(),
        ],
    );
    let (events, outcome) = run_by_name(
        Box::new(PiHarness),
        fake.recording_request("hi", Some(&stream)),
    );
    assert_eq!(
        json_events(&events),
        [json!({"kind": "error", "message": "401 invalid x-api-key", "line": 2})]
    );
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn pi15_an_agent_dying_mid_line_gives_the_partial_line_its_running_tools_and_no_exit_code() {
    let fake = Fake::new("pi");
    let use_line = start("sh", "bash", json!({"command": "sleep 100"}));
    let stream = stream(
        &fake,
        &[
            assistant(json!([text("Waiting.")]), "toolUse"),
            use_line.clone(),
        ],
    );
    let partial = PathBuf::from(r#"{"type":"tool_exec"#);
    let (events, outcome) = run_by_name(
        Box::new(PiHarness),
        fake.request(
            "hi",
            &[("FAKE_STREAM", &stream), ("FAKE_PARTIAL", &partial)],
        ),
    );
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "agent", "text": "Waiting.", "line": 1}),
            json!({"kind": "warning", "source": "non_json", "message": r#"{"type":"tool_exec"#, "line": 3}),
            json!({"kind": "unknown", "reason": "unresolved_tool_use",
                   "raw": {"tool_use": use_line, "tool_result": null},
                   "tool": "bash", "tool_use_id": "sh"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(outcome.status, Status::Incomplete);
    assert_eq!(outcome.exit_code, Some(None), "SIGKILL: no exit status");
}

#[test]
fn pi15_a_timeout_kills_the_agent_and_its_children() {
    let fake = Fake::new("pi");
    let pids = fake.path("pids");
    let stream = stream(&fake, &[start("g", "find", json!({"pattern": "*"}))]);
    let mut request = fake.request("hi", &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)]);
    request.timeout = Some(Duration::from_millis(500));
    let (events, outcome) = run_by_name(Box::new(PiHarness), request);
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
fn pi15_a_missing_binary_is_binary_not_found_saying_it_does_not_exist() {
    assert_missing_binary(&PiHarness, "/nonexistent/pi");
    assert_eq!(
        LAUNCH.install,
        "npm install -g @mariozechner/pi-coding-agent"
    );
}
