//! Live runs against the fake `opencode` in `fixtures/fake-agent/`: a shell script that records
//! its argv and working directory, replays a recorded stream and its stderr, then exits as the
//! recording did, or hangs with a grandchild. No test runs the real `opencode` (the recorder
//! does: `cargo xtask record --backend opencode` starts it with this very command line).

use std::time::Duration;

use fixtures::live::{Fake, assert_missing_binary, run_by_name, wait_gone};

use harness_agents_opencode::{LAUNCH, OpencodeHarness};
use serde_json::json;

#[test]
fn every_recording_replayed_live_gives_its_expected_events_and_exit_code() {
    let (checked, failures) = fixtures::live::replay_recordings(
        &OpencodeHarness,
        "opencode",
        &["opencode"],
        &super::config(),
    );
    assert!(checked == 46, "{checked} recordings");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn p14_the_prompt_goes_last_after_a_double_dash_and_the_flags_are_opencode_s() {
    let fake = Fake::new("opencode");
    let prompt = "--auto\n-m evil\r\n\u{e9} -";
    let mut request = fake.recording_request(prompt, None);
    request.model = Some("anthropic/claude-sonnet-4-5".into());
    request.permission_mode = Some("plan".into());
    request.extra_args = vec!["--pure".into()];
    let (events, outcome) = run_by_name(Box::new(OpencodeHarness), request);

    let argv = fake.argv();
    let argv: Vec<&str> = argv.split_inclusive('\n').collect();
    // The prompt is one argument: its own newlines make it several lines of the file.
    let joined: String = argv[7..].concat();
    assert_eq!(
        argv[..7],
        [
            "run\n",
            "--format=json\n",
            "--thinking\n",
            "--model=anthropic/claude-sonnet-4-5\n",
            "--agent=plan\n",
            "--pure\n",
            "--\n",
        ]
    );
    assert_eq!(joined, format!("{prompt}\n"));
    assert_eq!(fake.stdin(), "");
    assert_eq!(fake.pwd(), fake.dir().display().to_string());
    // No stream at all: S9's error, incomplete, exit 0.
    assert_eq!(
        serde_json::to_value(&events).unwrap(),
        json!([{"kind": "error", "message": "stream ended without a result"}])
    );
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn p15_a_resumed_run_names_the_session_and_keeps_the_prompt_after_a_double_dash() {
    // The recorded resumed run: its lines carry the session id it continued (P15).
    let id = "ses_db5184afbffea9eB6ctneJmJFh";
    let recording = fixtures::root().join("opencode/l01_resume.jsonl");
    let fake = Fake::new("opencode");
    let prompt = "--session=ses_other";
    let mut request = fake.recording_request(prompt, Some(&recording));
    request.resume = Some(id.into());
    let (events, outcome) = run_by_name(Box::new(OpencodeHarness), request);

    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "run",
            "--format=json",
            "--thinking",
            &format!("--session={id}"),
            "--",
            prompt
        ]
    );
    let events: Vec<_> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    assert_eq!(
        events,
        [
            json!({"kind": "agent", "text": "You asked for 7. Let me read it.", "line": 2}),
            json!({"kind": "read", "path": "/home/oc/project/notes.txt", "success": true,
                "tool": "read", "tool_use_id": "toolu_01resume", "line": 3}),
            json!({"kind": "agent", "text": "It lists alpha, beta and gamma.", "line": 6})
        ]
    );
    assert_eq!(outcome.session_id.as_deref(), Some(id));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn relative_paths_resolve_against_the_run_s_directory() {
    let fake = Fake::new("opencode");
    let stream = fake.path("stream");
    let line = json!({"type": "tool_use", "sessionID": "ses_1", "part": {"type": "tool",
        "tool": "bash", "callID": "t1", "state": {"status": "completed",
        "input": {"command": "cat README.md"}, "output": "", "metadata": {"exit": 0}}}});
    std::fs::write(&stream, format!("{line}\n")).unwrap();
    let (events, outcome) = run_by_name(
        Box::new(OpencodeHarness),
        fake.request("hi", &[("FAKE_STREAM", &stream)]),
    );
    let event = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(event["kind"], "read");
    assert_eq!(event["path"], format!("{}/README.md", fake.dir().display()));
    assert_eq!(outcome.session_id.as_deref(), Some("ses_1"));
}

#[test]
fn a_hanging_agent_is_killed_with_its_grandchild_at_the_timeout() {
    let fake = Fake::new("opencode");
    let (pids, stream) = (fake.path("pids"), fake.path("stream"));
    let fixture = fixtures::root().join("opencode/c01_read.jsonl");
    let first = std::fs::read_to_string(&fixture).unwrap();
    let first = first.lines().take(3).collect::<Vec<_>>().join("\n");
    std::fs::write(&stream, format!("{first}\n")).unwrap();
    let mut request = fake.request("hi", &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)]);
    // Long enough for a loaded machine to start the fake and its grandchild.
    request.timeout = Some(Duration::from_secs(5));
    let (events, outcome) = run_by_name(Box::new(OpencodeHarness), request);

    let kinds: Vec<&str> = events.iter().map(|e| e.kind().as_str()).collect();
    assert_eq!(kinds, ["agent", "read", "error", "error"]);
    let timeout = serde_json::to_value(&events[2]).unwrap();
    assert!(
        timeout["message"].as_str().unwrap().contains("timed out"),
        "{timeout}"
    );
    assert_eq!(
        serde_json::to_value(&events[3]).unwrap()["message"],
        "stream ended without a result"
    );
    assert_eq!(outcome.exit_code, Some(None), "ended by a signal");
    let pids = std::fs::read_to_string(&pids).unwrap();
    // The group is killed at the timeout; the kernel takes a moment to finish the processes,
    // so wait for them (bounded) rather than assume they are gone at once.
    for pid in pids.lines() {
        assert!(wait_gone(pid), "process {pid} survived the timeout");
    }
}

#[test]
fn a_missing_binary_is_binary_not_found_saying_it_does_not_exist() {
    assert_missing_binary(&OpencodeHarness, "/nonexistent/opencode");
    assert_eq!(LAUNCH.install, "npm install -g opencode-ai");
}
