//! Live Codex sessions (SPEC section 8, XA14-XA22 of `docs/codex-app-server.md`) against
//! `fixtures/fake-agent/codex-app-server`, a script that speaks the app-server's JSON-RPC: the
//! caller's commands (I2), turn ends (I3), approval requests and their answers (I4), resume
//! (I5), faults (I6), the transcript (I7). Each test compares every item of the session, and
//! what the fake read.

use fixtures::live::{
    Fake, agent_said as agent, drive_session, ended, run_session, runtime, session_json, turn_end,
};
use harness_agents_codex::CodexHarness;
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{Backend, Decision, EventBody, RunRequest};
use serde_json::{Value, json};

fn fake() -> Fake {
    Fake::new("codex-app-server")
}

/// A session request for the fake in its folder, logging what it reads.
fn request(fake: &Fake) -> RunRequest {
    let (log, argv) = (fake.path("log"), fake.path("argv"));
    let mut request = fake.request(
        "",
        &[("FAKE_LOG", log.as_path()), ("FAKE_ARGV", argv.as_path())],
    );
    request.permission_mode = Some("untrusted".into());
    request
}

/// Runs a session of `request`, sending `prompts` first (then the end of input when
/// `end_input`), reacting to each item with `react`.
fn session(
    request: RunRequest,
    prompts: &[&str],
    end_input: bool,
    react: impl FnMut(&SessionHandle, &SessionItem),
) -> Vec<Value> {
    run_session(&CodexHarness, request, prompts, end_input, react)
}

/// Answers each permission request with the next of `answers`, and ends the input after
/// turn `last`.
fn answering(answers: Vec<Decision>, last: u32) -> impl FnMut(&SessionHandle, &SessionItem) {
    let mut answers = answers.into_iter();
    move |handle, item| match item {
        SessionItem::Event(event) => {
            if let EventBody::Permission { id, .. } = &event.body {
                let decision = answers.next().expect("an answer for each request");
                handle.answer(id.clone(), decision, None).expect("open");
            }
        }
        SessionItem::TurnEnd(outcome) if outcome.turn == Some(last) => {
            handle.end_input().expect("open");
        }
        _ => {}
    }
}

/// What the fake read, one JSON value a line.
fn log(fake: &Fake) -> Vec<Value> {
    std::fs::read_to_string(fake.path("log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// The handshake the session writes first, for a new thread in `dir` (XA14, XA15).
fn handshake(dir: &str) -> Vec<Value> {
    vec![
        json!({"id": "initialize#1", "method": "initialize",
            "params": {"clientInfo": {"name": "harness", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"method": "initialized"}),
        json!({"id": "thread/start#2", "method": "thread/start",
            "params": {"cwd": dir, "approvalPolicy": "untrusted"}}),
    ]
}

fn turn_start(n: u64, thread: &str, text: &str) -> Value {
    json!({"id": format!("turn/start#{n}"), "method": "turn/start",
        "params": {"threadId": thread, "input": [{"type": "text", "text": text}]}})
}

fn decision(id: u64, decision: &str) -> Value {
    json!({"id": id, "result": {"decision": decision}})
}

/// The `permission` event of the fake's command request `id` in turn `turn` (XA9).
fn command_request(id: u64, turn: u32, line: u64) -> Value {
    json!({
        "kind": "permission", "id": id.to_string(),
        "options": ["allow", "allow_always", "deny"],
        "command": "touch made.txt", "expect": [{"kind": "command"}],
        "input": {"threadId": "th-new", "turnId": format!("turn-{turn}"),
            "itemId": format!("cmd-{turn}"), "command": "/bin/bash -lc 'touch made.txt'",
            "cwd": "/w", "reason": null},
        "tool": "command_execution", "tool_use_id": format!("cmd-{turn}"), "line": line,
    })
}

fn command(turn: u32, success: bool, exit_code: Option<i64>, line: u64) -> Value {
    let mut value = json!({
        "kind": "command", "command": "touch made.txt", "success": success,
        "tool": "command_execution", "tool_use_id": format!("cmd-{turn}"), "line": line,
    });
    if let Some(code) = exit_code {
        value["exit_code"] = json!(code);
    }
    value
}

#[test]
fn i1_i2_i3_prompts_run_one_at_a_time_in_order_each_with_its_outcome() {
    let fake = fake();
    let items = session(request(&fake), &["plain", "plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 8),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            agent("plain 2", 15),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", Some(0), json!({"agent": 2})),
        ]
    );
    let dir = fake.dir().display().to_string();
    let mut expected = handshake(&dir);
    expected.push(turn_start(3, "th-new", "plain"));
    expected.push(turn_start(4, "th-new", "plain"));
    assert_eq!(log(&fake), expected);
    assert_eq!(fake.argv(), "app-server\n");
}

#[test]
fn i4_xa17_accept_decline_and_accept_for_session_are_the_servers_decisions() {
    let fake = fake();
    let answers = vec![Decision::Allow, Decision::Deny, Decision::AllowAlways];
    let items = session(
        request(&fake),
        &["ask", "ask", "ask"],
        false,
        answering(answers, 3),
    );
    let counts = json!({"agent": 1, "command": 1, "permission": 1});
    assert_eq!(
        items,
        [
            command_request(0, 1, 8),
            command(1, true, Some(0), 10),
            agent("made it", 11),
            turn_end(1, "success", counts.clone(), Some("made it")),
            command_request(1, 2, 17),
            command(2, false, None, 19),
            agent("declined", 20),
            turn_end(2, "success", counts.clone(), Some("declined")),
            command_request(2, 3, 26),
            command(3, true, Some(0), 28),
            agent("made it", 29),
            turn_end(3, "success", counts, Some("made it")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 3, "command": 3, "permission": 3})
            ),
        ]
    );
    let log = log(&fake);
    assert_eq!(log[4], decision(0, "accept"));
    assert_eq!(log[6], decision(1, "decline"));
    assert_eq!(log[8], decision(2, "acceptForSession"));
}

#[test]
fn i4_xa9_a_file_change_request_names_the_started_items_paths() {
    let fake = fake();
    let items = session(
        request(&fake),
        &["file", "file"],
        false,
        answering(vec![Decision::Allow, Decision::Deny], 2),
    );
    let asked = |id: u64, turn: u32, line: u64| {
        json!({
            "kind": "permission", "id": id.to_string(),
            "options": ["allow", "allow_always", "deny"],
            "path": "/w/new.txt", "expect": [{"kind": "write", "path": "/w/new.txt"}],
            "input": {"threadId": "th-new", "turnId": format!("turn-{turn}"),
                "itemId": format!("patch-{turn}"), "startedAtMs": 1, "reason": null,
                "grantRoot": null},
            "tool": "file_change", "tool_use_id": format!("patch-{turn}"), "line": line,
        })
    };
    let write = |turn: u32, success: bool, line: u64| {
        json!({
            "kind": "write", "path": "/w/new.txt", "change": "add", "success": success,
            "tool": "file_change", "tool_use_id": format!("patch-{turn}"), "line": line,
        })
    };
    let counts = json!({"agent": 1, "permission": 1, "write": 1});
    assert_eq!(
        items,
        [
            asked(0, 1, 8),
            write(1, true, 9),
            agent("wrote it", 10),
            turn_end(1, "success", counts.clone(), Some("wrote it")),
            asked(1, 2, 16),
            write(2, false, 17),
            agent("did not write", 18),
            turn_end(2, "success", counts, Some("did not write")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 2, "permission": 2, "write": 2})
            ),
        ]
    );
}

#[test]
fn i2_xa18_xa19_interrupt_declines_the_waiting_request_then_interrupts_the_turn() {
    let fake = fake();
    let items = session(
        request(&fake),
        &["hold"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) if matches!(event.body, EventBody::Permission { .. }) => {
                handle.interrupt().expect("open");
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(1) => {
                // The session stays usable after an interrupted turn.
                handle.prompt("plain").expect("open");
                handle.end_input().expect("open");
            }
            _ => {}
        },
    );
    assert_eq!(
        items,
        [
            command_request(0, 1, 8),
            command(1, false, None, 10),
            turn_end(
                1,
                "interrupted",
                json!({"command": 1, "permission": 1}),
                None
            ),
            agent("plain 2", 18),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 1, "command": 1, "permission": 1})
            ),
        ]
    );
    let log = log(&fake);
    assert_eq!(log[4], decision(0, "decline"));
    assert_eq!(
        log[5],
        json!({"id": "turn/interrupt#4", "method": "turn/interrupt",
            "params": {"threadId": "th-new", "turnId": "turn-1"}})
    );
    assert_eq!(log[6], turn_start(5, "th-new", "plain"));
    assert_eq!(log.len(), 7);
}

#[test]
fn i2_xa6_an_interrupted_command_never_completed_is_unresolved_at_the_turns_end() {
    let fake = fake();
    let items = runtime().block_on(async {
        let session = CodexHarness.session(request(&fake)).await.expect("starts");
        session.prompt("hang").expect("open");
        // Nothing comes out before the turn's end: the interrupt goes once the turn was asked
        // for (the fake reads nothing more before its command runs).
        wait_for_line(&fake, "turn/start").await;
        session.interrupt().expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let unresolved = json!({
        "kind": "unknown", "reason": "unresolved_tool_use",
        "raw": {"type": "commandExecution", "id": "cmd-1",
            "command": "/bin/bash -lc 'sleep 20'", "cwd": "/w", "processId": null,
            "source": "agent", "status": "inProgress", "commandActions": [],
            "aggregatedOutput": null, "exitCode": null},
        "tool": "command_execution", "tool_use_id": "cmd-1", "line": 10,
    });
    assert_eq!(
        session_json(&items),
        [
            unresolved,
            turn_end(1, "interrupted", json!({"unknown": 1}), None),
            ended("Caller", Some(0), json!({"unknown": 1})),
        ]
    );
}

/// Waits (at most five seconds, on the session's runtime) until the fake has read `text`.
async fn wait_for_line(fake: &Fake, text: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < deadline {
        let written = std::fs::read_to_string(fake.path("log")).unwrap_or_default();
        if written.contains(text) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("the fake never wrote {text}");
}

#[test]
fn xa20_a_server_request_the_harness_does_not_handle_gets_an_error_answer() {
    let fake = fake();
    let items = session(request(&fake), &["elicit"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("elicited", 8),
            turn_end(1, "success", json!({"agent": 1}), Some("elicited")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
    assert_eq!(
        log(&fake)[4],
        json!({"id": 0, "error": {"code": -32601,
            "message": "harness does not handle server requests of method `mcpServer/elicitation/request`"}})
    );
}

#[test]
fn xa6_xa7_a_failed_turn_is_an_error_and_the_session_goes_on() {
    let fake = fake();
    let items = session(request(&fake), &["fail", "plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            json!({"kind": "warning", "message": "stream disconnected", "source": "stream", "line": 7}),
            json!({"kind": "error", "message": "stream disconnected", "line": 8}),
            turn_end(1, "error", json!({"error": 1, "warning": 1}), None),
            agent("plain 2", 13),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 1, "error": 1, "warning": 1})
            ),
        ]
    );
}

#[test]
fn i6_an_agent_that_dies_mid_turn_ends_the_turn_and_the_session_with_an_error() {
    let fake = fake();
    let items = session(request(&fake), &["die", "plain"], false, |_, _| {});
    let counts = json!({"error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            turn_end(1, "error", counts.clone(), None),
            ended("AgentExited", Some(3), counts),
        ]
    );
    // The queued prompt never went out.
    assert_eq!(log(&fake).len(), 4);
}

#[test]
fn i6_a_server_that_never_answers_the_handshake_ends_within_the_timeout() {
    let fake = fake();
    let mut request = request(&fake);
    let pid = fake.path("pid");
    request
        .env
        .insert("FAKE_PID".into(), pid.display().to_string());
    request.env.insert("FAKE_MODE".into(), "never-ready".into());
    request.timeout = Some(std::time::Duration::from_secs(1));
    let items = session(request, &["plain"], false, |_, _| {});
    // No default bound on the handshake (unlike opencode's PS13): the request's timeout
    // bounds the turn whose prompt waits for it.
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "the turn timed out after 1 second; the session is closed"}),
            turn_end(1, "error", json!({"error": 1}), None),
            json!({"kind": "error", "message": "stream ended without a result"}),
            ended("TimedOut", Some(0), json!({"error": 2})),
        ]
    );
    // The prompt never went out: only the handshake was sent.
    let methods: Vec<Value> = log(&fake).iter().map(|l| l["method"].clone()).collect();
    assert_eq!(methods, [json!("initialize"), json!("initialized")]);
    let pid = std::fs::read_to_string(pid).expect("the server's pid");
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    assert!(
        stat.is_err() || stat.is_ok_and(|s| s.contains(") Z ")),
        "the server outlived its session"
    );
}

#[test]
fn i5_xa14_resume_continues_the_thread_without_its_earlier_turns() {
    let fake = fake();
    let mut request = request(&fake);
    request.resume = Some("th-old".into());
    request.model = Some("gpt-test".into());
    request.permission_mode = Some("acceptEdits".into());
    let transcript = fake.path("transcript");
    request.transcript = Some(transcript.clone());
    let items = session(request, &["plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 8),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
    let dir = fake.dir().display().to_string();
    assert_eq!(
        log(&fake)[2],
        json!({"id": "thread/resume#2", "method": "thread/resume", "params": {
            "threadId": "th-old", "excludeTurns": true, "cwd": dir, "model": "gpt-test",
            "approvalPolicy": "on-request", "sandbox": "workspace-write"}})
    );
    assert_eq!(log(&fake)[3], turn_start(3, "th-old", "plain"));
    // XA2: the resumed thread is the session's id.
    let text = std::fs::read(&transcript).expect("the transcript");
    let header = Header::parse(text.split(|b| *b == b'\n').next().expect("a header"))
        .expect("a header line")
        .expect("a valid header");
    let mut normalizer = CodexHarness.normalizer(header.config());
    let mut events = Vec::new();
    replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
    let outcome = normalizer.finish(&mut events);
    assert_eq!(outcome.session_id.as_deref(), Some("th-old"));
}

#[test]
fn i5_xa21_a_thread_that_cannot_be_resumed_ends_the_session() {
    let fake = fake();
    let mut request = request(&fake);
    request.resume = Some("gone".into());
    let items = session(request, &["plain"], false, |_, _| {});
    // The agent ends once its input is closed: S9's error says no turn ended, then the
    // harness's error names the exit.
    let counts = json!({"error": 3});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "thread/resume: no rollout found for thread id gone", "line": 2}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 0 during turn 1; the session has ended"}),
            turn_end(1, "error", counts.clone(), None),
            ended("AgentExited", Some(0), counts),
        ]
    );
}

/// XA22: the session names the thread as soon as `thread/start` or `thread/resume` answers,
/// before any prompt (I8); a thread that cannot be resumed names none, and the session ends.
#[test]
fn i8_xa22_the_thread_is_named_before_any_prompt() {
    for (resume, named) in [(None, Some("th-new")), (Some("th-old"), Some("th-old"))] {
        let fake = fake();
        let mut request = request(&fake);
        request.resume = resume.map(str::to_string);
        let (id, items) = fixtures::live::named_session(&CodexHarness, request);
        assert_eq!(id.as_deref(), named);
        assert_eq!(items, [ended("Caller", Some(0), json!({}))]);
        // Nothing but the handshake went out.
        assert_eq!(log(&fake).len(), 3);
    }
    let fake = fake();
    let mut request = request(&fake);
    request.resume = Some("gone".into());
    let (id, items) = fixtures::live::named_session(&CodexHarness, request);
    assert_eq!(id, None);
    let counts = json!({"error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "thread/resume: no rollout found for thread id gone", "line": 2}),
            json!({"kind": "error", "message": "the agent exited with status 0; the session has ended"}),
            ended("AgentExited", Some(0), counts),
        ]
    );
}

#[test]
fn i7_the_transcript_replays_to_the_sessions_events() {
    let fake = fake();
    let mut request = request(&fake);
    let transcript = fake.path("transcript");
    request.transcript = Some(transcript.clone());
    let items = session(
        request,
        &["plain", "ask", "file"],
        false,
        answering(vec![Decision::AllowAlways, Decision::Deny], 3),
    );
    let live: Vec<Value> = items
        .into_iter()
        .filter(|i| i.get("kind").is_some())
        .collect();
    assert_eq!(live.len(), 7, "{live:?}");
    let text = std::fs::read(&transcript).expect("the transcript");
    let first = text.split(|b| *b == b'\n').next().expect("a header");
    let header = Header::parse(first)
        .expect("a header line")
        .expect("a valid header");
    assert!(
        header.session,
        "I7: the header says the stream is a session's"
    );
    assert_eq!(header.backend.as_deref(), Some("codex"));
    let mut normalizer = CodexHarness.normalizer(header.config());
    let mut events = Vec::new();
    replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
    let outcome = normalizer.finish(&mut events);
    let replayed: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(replayed, live);
    assert_eq!(outcome.session_id.as_deref(), Some("th-new"));
    // XA8: the thread's token totals, as the server last reported them.
    assert_eq!(outcome.metrics.input_tokens, Some(10.into()));
}
