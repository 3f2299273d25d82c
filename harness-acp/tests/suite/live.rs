//! Live runs of the fake ACP agent (`fixtures/fake-agent/acp`): the client's side of the
//! protocol and the faults a live run must survive. Every run also saves its transcript, which must
//! normalize offline to exactly the events and outcome of the live run (A1).

use std::path::Path;
use std::time::Duration;

use fixtures::live::{Fake, collect, runtime};
use harness_agents_acp::AcpHarness;
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{
    Backend, Event, NormalizerConfig, Outcome, OutcomeLine, RunError, RunRequest, Status,
};

/// A run of the fake in `mode`: its events and outcome as JSON lines, and the lines it read.
struct Run {
    lines: Vec<String>,
    outcome: Outcome,
    read: Vec<String>,
}

fn json_lines(events: &[Event], outcome: &Outcome) -> Vec<String> {
    let mut lines: Vec<String> = events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap())
        .collect();
    lines.push(serde_json::to_string(&OutcomeLine::new(outcome)).unwrap());
    lines
}

fn run_with(mode: &str, change: impl FnOnce(&mut RunRequest)) -> Run {
    let fake = Fake::new("acp");
    let log = fake.path("log");
    let transcript = fake.path("transcript.jsonl");
    let mode_path = Path::new(mode);
    let mut request = fake.request(
        "Read notes.txt",
        &[("FAKE_MODE", mode_path), ("FAKE_LOG", &log)],
    );
    request.transcript = Some(transcript.clone());
    change(&mut request);
    let (events, outcome) =
        runtime().block_on(async { collect(AcpHarness.run(request).await.unwrap()).await });
    let lines = json_lines(&events, &outcome);
    // A1: the transcript normalizes offline to the live run's events and outcome (the exit
    // code is the live runner's alone), from its records alone: its header names the backend
    // and the directory (TR2, TR4).
    let text = std::fs::read_to_string(&transcript).unwrap();
    let (header, records) = text.split_once('\n').unwrap();
    let header = Header::parse(header.as_bytes()).unwrap().unwrap();
    assert_eq!(header.backend.as_deref(), Some("acp"));
    let mut config = NormalizerConfig::default();
    config.cwd = Some(fake.dir().display().to_string());
    assert_eq!(header.config(), config);
    let mut normalizer = AcpHarness.normalizer(header.config());
    let mut offline = Vec::new();
    replay(records.as_bytes(), normalizer.as_mut(), &mut offline).unwrap();
    let mut offline_outcome = normalizer.finish(&mut offline);
    offline_outcome.exit_code = outcome.exit_code;
    // Errors the live runner adds itself (a timeout, a stop) are not in the transcript.
    let live_only = |l: &String| l.contains("its process group was killed");
    let live: Vec<String> = lines.iter().filter(|l| !live_only(l)).cloned().collect();
    let mut offline_lines = json_lines(&offline, &offline_outcome);
    if lines.len() != live.len() {
        let last = offline_lines.len() - 1;
        offline_lines[last] = lines[lines.len() - 1].clone();
    }
    assert_eq!(offline_lines, live, "the transcript:\n{text}");
    let read: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let dir = fake.dir().display().to_string();
    let strip = |l: &String| l.replace(&dir, "DIR");
    Run {
        lines: lines.iter().map(strip).collect(),
        outcome,
        read: read.iter().map(strip).collect(),
    }
}

fn run(mode: &str) -> Run {
    run_with(mode, |_| {})
}

#[test]
fn a12_the_client_starts_a_session_in_the_cwd_prompts_and_closes_the_input_after_the_answer() {
    let run = run("ok");
    assert_eq!(run.read.len(), 3, "{:?}", run.read);
    assert!(
        run.read[0].contains(r#""method":"initialize""#),
        "{}",
        run.read[0]
    );
    assert_eq!(
        run.read[1],
        r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"DIR","mcpServers":[]}}"#
    );
    assert_eq!(
        run.read[2],
        r#"{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"Read notes.txt"}]}}"#
    );
    assert_eq!(run.outcome.exit_code, Some(Some(0)));
    assert_eq!(run.lines, EXPECTED_OK);
}

const EXPECTED_OK: [&str; 6] = [
    r#"{"kind":"reasoning","text":"Reading it.","line":6}"#,
    r#"{"kind":"agent","text":"Let me look.","line":8}"#,
    r#"{"kind":"read","path":"DIR/notes.txt","success":true,"tool":"read","tool_use_id":"r1","line":10}"#,
    r#"{"kind":"plan","items":[{"text":"Read","completed":true},{"text":"Answer","completed":false}],"line":11}"#,
    r#"{"kind":"agent","text":"Done.","line":13}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"success","final_output":"Done.","metrics":{"input_tokens":100,"output_tokens":30,"cache_read_input_tokens":60,"total_cost_usd":0.25,"num_turns":1},"counts":{"agent":2,"reasoning":1,"read":1,"plan":1},"exit_code":0}"#,
];

/// The agent's command given as `RunRequest::agent` (the CLI's `--agent`), with the extra
/// arguments after it.
#[test]
fn a12_the_agents_command_line_is_the_requests() {
    let fake = Fake::new("acp");
    let argv = fake.path("argv");
    let mut request = fake.request("hi", &[("FAKE_ARGV", &argv)]);
    let script = request.binary.take().unwrap();
    request.agent = Some(vec![
        "sh".into(),
        script.display().to_string(),
        "--acp".into(),
    ]);
    request.extra_args = vec!["--yolo".into()];
    let (_, outcome) =
        runtime().block_on(async { collect(AcpHarness.run(request).await.unwrap()).await });
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(std::fs::read_to_string(&argv).unwrap(), "--acp\n--yolo\n");
}

#[test]
fn a12_a_request_without_an_agent_command_is_refused() {
    let request = RunRequest::new("hi");
    let error = runtime().block_on(async { AcpHarness.run(request).await.err().unwrap() });
    assert!(
        matches!(error, RunError::NoAgentCommand { .. }),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the acp backend needs the agent's command (`--agent 'gemini --acp'`)"
    );
}

#[test]
fn s9_an_agent_that_exits_mid_prompt_gives_what_it_said_and_an_incomplete_run() {
    let run = run("exit");
    assert_eq!(run.outcome.exit_code, Some(Some(3)));
    assert_eq!(run.lines, EXPECTED_EXIT);
}

const EXPECTED_EXIT: [&str; 3] = [
    r#"{"kind":"agent","text":"Starting","line":6}"#,
    r#"{"kind":"error","message":"stream ended without a result"}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"incomplete","final_output":"Starting","metrics":{},"counts":{"agent":1,"error":1},"exit_code":3}"#,
];

#[test]
fn a1_malformed_json_rpc_is_a_warning_or_unknown_and_the_run_goes_on() {
    let run = run("malformed");
    assert_eq!(run.lines, EXPECTED_MALFORMED);
}

const EXPECTED_MALFORMED: [&str; 4] = [
    r#"{"kind":"warning","message":"this is not JSON","source":"non_json","line":6}"#,
    r#"{"kind":"unknown","reason":"malformed_tool_use","raw":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":7}}},"line":7}"#,
    r#"{"kind":"unknown","reason":"not_an_event","raw":{"from":"agent","message":[1,2]},"line":8}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"success","metrics":{"input_tokens":100,"output_tokens":30,"cache_read_input_tokens":60,"num_turns":1},"counts":{"warning":1,"unknown":2},"exit_code":0}"#,
];

#[test]
fn a14_an_unknown_method_from_the_agent_is_answered_with_32601() {
    let run = run("unknown");
    assert_eq!(
        run.read[3],
        r#"{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}"#
    );
    assert_eq!(run.lines, EXPECTED_UNKNOWN);
}

const EXPECTED_UNKNOWN: [&str; 2] = [
    // `raw` is the message as a JSON value: its keys print sorted, as every backend's do.
    r#"{"kind":"unknown","reason":"unknown_type","raw":{"id":0,"jsonrpc":"2.0","method":"fs/read_text_file","params":{"path":"/etc/hostname","sessionId":"s1"}},"line":6}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"success","metrics":{"input_tokens":100,"output_tokens":30,"cache_read_input_tokens":60,"num_turns":1},"counts":{"unknown":1},"exit_code":0}"#,
];

#[test]
fn a13_a_permission_request_is_allowed_by_a_mode_that_allows() {
    let run = run_with("permission", |r| {
        r.permission_mode = Some("acceptEdits".into())
    });
    assert_eq!(
        run.read[3],
        r#"{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"proceed_once"}}}"#
    );
    assert_eq!(run.lines, EXPECTED_ALLOWED);
}

const EXPECTED_ALLOWED: [&str; 2] = [
    r#"{"kind":"write","path":"DIR/notes.txt","change":"update","success":true,"tool":"edit","tool_use_id":"e1","line":8}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"success","metrics":{"input_tokens":100,"output_tokens":30,"cache_read_input_tokens":60,"num_turns":1},"counts":{"write":1},"exit_code":0}"#,
];

#[test]
fn a13_a_permission_request_is_rejected_without_a_mode_that_allows() {
    let run = run("permission");
    assert_eq!(
        run.read[3],
        r#"{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"selected","optionId":"cancel"}}}"#
    );
    assert_eq!(run.lines, EXPECTED_REJECTED);
}

const EXPECTED_REJECTED: [&str; 2] = [
    r#"{"kind":"write","path":"DIR/notes.txt","success":false,"error":"The user rejected this edit.","tool":"edit","tool_use_id":"e1","line":8}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"success","metrics":{"input_tokens":100,"output_tokens":30,"cache_read_input_tokens":60,"num_turns":1},"counts":{"write":1},"exit_code":0}"#,
];

/// A flood of notifications streams through (the runner holds one line at a time, and the
/// decoder keeps nothing of a usage update but the cost) and the run ends.
#[test]
fn a10_a_notification_flood_is_consumed_and_the_run_ends() {
    let run = run_with("flood", |r| {
        r.env.insert("FAKE_FLOOD".into(), "20000".into());
    });
    assert_eq!(run.lines, EXPECTED_FLOOD);
}

const EXPECTED_FLOOD: [&str; 1] = [
    r#"{"kind":"outcome","session_id":"s1","status":"success","metrics":{"input_tokens":100,"output_tokens":30,"cache_read_input_tokens":60,"num_turns":1},"counts":{},"exit_code":0}"#,
];

#[test]
fn a15_a_timeout_sends_session_cancel_and_the_agent_answers_cancelled() {
    let run = run_with("hang", |r| r.timeout = Some(Duration::from_secs(2)));
    assert_eq!(
        run.read[3],
        r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}"#
    );
    assert_eq!(run.lines, EXPECTED_CANCELLED);
}

const EXPECTED_CANCELLED: [&str; 3] = [
    r#"{"kind":"error","message":"the run timed out after 2 seconds; its process group was killed"}"#,
    r#"{"kind":"error","message":"the agent's turn ended: cancelled","line":7}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"error","metrics":{"num_turns":1},"counts":{"error":2},"exit_code":0}"#,
];

#[test]
fn a15_an_agent_that_ignores_the_cancel_is_killed_after_the_grace() {
    let run = run_with("ignore", |r| r.timeout = Some(Duration::from_secs(1)));
    assert_eq!(run.lines, EXPECTED_KILLED);
}

const EXPECTED_KILLED: [&str; 3] = [
    r#"{"kind":"error","message":"the run timed out after 1 second; its process group was killed"}"#,
    r#"{"kind":"error","message":"stream ended without a result"}"#,
    r#"{"kind":"outcome","session_id":"s1","status":"incomplete","metrics":{},"counts":{"error":2},"exit_code":null}"#,
];
