//! Live runs (QW12) against the fake `qwen` kept in `fixtures/fake-agent/`: a shell script
//! that records its argv, working directory and stdin, replays a recorded stream and its
//! recorded stderr, then exits as the recording did. No test runs the real `qwen` (`cargo
//! xtask record --backend qwen` does).

use std::path::PathBuf;

use fixtures::live::{Fake, run_by_name};

use harness_agents_core::{Event, Status};
use harness_agents_qwen::QwenHarness;
use serde_json::{Value, json};

use super::{assistant, config, init, result_ok, text, tool_result, tool_use};

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
        fixtures::live::replay_recordings(&QwenHarness, "qwen", &["qwen"], &config());
    assert_eq!(checked, super::golden::RECORDINGS);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn qw12_the_prompt_goes_to_stdin_and_values_stay_with_their_flags() {
    let fake = Fake::new("qwen");
    let stream = stream(
        &fake,
        &[
            assistant(json!([tool_use(
                "c1",
                "read_file",
                json!({"file_path": "README.md"})
            )])),
            tool_result("c1", "# hi", false),
            assistant(json!([text("Read.")])),
            result_ok("Read."),
        ],
    );
    let prompt = "--yolo\n-p evil\r\n@secret.txt \u{e9} -";
    let mut request = fake.recording_request(prompt, Some(&stream));
    request.model = Some("-qwen3-coder-plus".into());
    request.permission_mode = Some("bypassPermissions".into());
    request.resume = Some("0b0e6c52-1111-4222-8333-444455556666".into());
    request.extra_args = vec!["--include-partial-messages".into()];
    let (events, outcome) = run_by_name(Box::new(QwenHarness), request);

    assert_eq!(fake.stdin(), prompt);
    let dir = fake.dir().display().to_string();
    assert_eq!(fake.pwd(), dir);
    let argv = fake.argv();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "--output-format",
            "stream-json",
            "--model=-qwen3-coder-plus",
            "--resume=0b0e6c52-1111-4222-8333-444455556666",
            "--approval-mode=yolo",
            "--include-partial-messages"
        ]
    );
    assert!(!argv.contains("evil"), "{argv}");
    // Without an init line naming one, relative paths resolve against the run's directory.
    assert_eq!(
        json_events(&events),
        [
            json!({"kind": "read", "path": format!("{dir}/README.md"), "success": true,
                "tool": "read_file", "tool_use_id": "c1", "line": 2}),
            json!({"kind": "agent", "text": "Read.", "line": 3}),
        ]
    );
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn qw12_a_failed_request_exits_1_with_an_error_outcome() {
    let fake = Fake::new("qwen");
    let stream = stream(
        &fake,
        &[
            init("s", "/p"),
            assistant(json!([text("[API Error: 401 invalid key]")])),
            json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
                   "num_turns": 1, "usage": {"input_tokens": 0, "output_tokens": 0},
                   "permission_denials": [], "error": {"message": "[API Error: 401 invalid key]"}}),
        ],
    );
    let mut request = fake.recording_request("hi", Some(&stream));
    request.env.insert("FAKE_EXIT".into(), "1".into());
    let (events, outcome) = run_by_name(Box::new(QwenHarness), request);
    assert_eq!(
        json_events(&events),
        [json!({"kind": "error", "message": "[API Error: 401 invalid key]", "line": 3})]
    );
    assert_eq!(outcome.status, Status::Error);
    assert_eq!(outcome.exit_code, Some(Some(1)));
}
