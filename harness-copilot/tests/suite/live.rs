//! Live runs (CP14) against the fake `copilot` kept in `fixtures/fake-agent/`: a shell script
//! that records its argv and working directory, replays a recorded stream and its recorded
//! stderr, then exits as the recording did, hangs, or dies mid-line. No test runs the real
//! `copilot` (`cargo xtask record --backend copilot` does).

use std::path::PathBuf;
use std::time::Duration;

use fixtures::live::{Fake, assert_missing_binary, run_by_name, wait_gone};

use harness_agents_copilot::{CopilotHarness, LAUNCH};
use harness_agents_core::{Event, Status};
use serde_json::{Value, json};

use super::{config, done, line, message, result, start};

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
        fixtures::live::replay_recordings(&CopilotHarness, "copilot", &["copilot"], &config());
    assert_eq!(checked, super::golden::RECORDINGS);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn cp14_the_prompt_is_one_prompt_word_and_every_value_one_word() {
    let fake = Fake::new("copilot");
    let stream = stream(
        &fake,
        &[
            start("t1", "view", json!({"path": "README.md"})),
            done("t1", "# hi"),
            result("s-1", 0),
        ],
    );
    let prompt = "--allow-all-tools\n-p evil\r\n\u{e9} -";
    let mut request = fake.recording_request(prompt, Some(&stream));
    request.model = Some("-gpt-4.1".into());
    request.resume = Some("--s".into());
    request.permission_mode = Some("plan".into());
    request.extra_args = vec!["--silent".into()];
    let (events, outcome) = run_by_name(Box::new(CopilotHarness), request);

    let dir = fake.dir().display().to_string();
    assert_eq!(fake.pwd(), dir);
    // One argument a line: the prompt is the last argument, whole, its newlines included.
    assert_eq!(
        fake.argv(),
        "--output-format\njson\n--no-auto-update\n--model=-gpt-4.1\n--resume=--s\n\
         --deny-tool=write\n--deny-tool=shell\n--silent\n\
         --prompt=--allow-all-tools\n-p evil\r\n\u{e9} -\n"
    );
    // Copilot's stdout never names its directory: relative paths resolve against the run's
    // (CP10).
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "read", "path": format!("{dir}/README.md"), "success": true,
                "tool": "view", "tool_use_id": "t1", "line": 2})
        ]
    );
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn cp14_an_api_failure_exits_1_with_an_error_outcome() {
    let fake = Fake::new("copilot");
    let stream = stream(
        &fake,
        &[
            line(
                "session.error",
                json!({"errorType": "query", "message": "gave up"}),
            ),
            result("s-2", 1),
        ],
    );
    let mut request = fake.recording_request("hi", Some(&stream));
    request.env.insert("FAKE_EXIT".into(), "1".into());
    let (events, outcome) = run_by_name(Box::new(CopilotHarness), request);
    assert_eq!(
        json_events(&events),
        [json!({"kind": "error", "message": "gave up", "line": 1})]
    );
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.exit_code, Some(Some(1)));
}

#[test]
fn cp14_an_agent_dying_mid_line_gives_the_partial_line_its_running_tools_and_no_exit_code() {
    let fake = Fake::new("copilot");
    let use_line = start("sh", "bash", json!({"command": "sleep 100"}));
    let stream = stream(&fake, &[message("Waiting.", None), use_line.clone()]);
    let partial = PathBuf::from(r#"{"type":"tool.exec"#);
    let (events, outcome) = run_by_name(
        Box::new(CopilotHarness),
        fake.request(
            "hi",
            &[("FAKE_STREAM", &stream), ("FAKE_PARTIAL", &partial)],
        ),
    );
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "agent", "text": "Waiting.", "line": 1}),
            json!({"kind": "warning", "source": "non_json", "message": r#"{"type":"tool.exec"#, "line": 3}),
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
fn cp14_a_timeout_kills_the_agent_and_its_children() {
    let fake = Fake::new("copilot");
    let pids = fake.path("pids");
    let stream = stream(&fake, &[start("g", "glob", json!({"pattern": "*"}))]);
    let mut request = fake.request("hi", &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)]);
    request.timeout = Some(Duration::from_millis(500));
    let (events, outcome) = run_by_name(Box::new(CopilotHarness), request);
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
fn cp14_a_missing_binary_is_binary_not_found_saying_it_does_not_exist() {
    assert_missing_binary(&CopilotHarness, "/nonexistent/copilot");
    assert_eq!(LAUNCH.install, "npm install -g @github/copilot");
}
