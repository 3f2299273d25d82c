//! Live ACP sessions (SPEC section 8, A16-A23 of `docs/acp.md`) against
//! `fixtures/fake-agent/acp-session`, a script that speaks ACP for many prompts on one
//! process: turns in order (I2, I3), permission requests answered by the caller (I4),
//! interrupts (I2), faults (I6), resume (I5) and the transcript (I7). Each test compares every
//! item of the session, and what the agent read.

use std::time::Duration;

use fixtures::live::{
    Fake, agent_said as agent, drive_session, ended, run_session, runtime, session_json, turn_end,
};
use harness_agents_acp::AcpHarness;
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{Backend, Decision, EventBody, RunError, RunRequest};
use serde_json::{Value, json};

fn fake() -> Fake {
    Fake::new("acp-session")
}

/// Runs a session of `request`, sending `prompts` first, reacting with `react`.
fn session(
    request: RunRequest,
    prompts: &[&str],
    end_input: bool,
    react: impl FnMut(&SessionHandle, &SessionItem),
) -> Vec<Value> {
    run_session(&AcpHarness, request, prompts, end_input, react)
}

fn prompt(id: u64, session: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": text}]}})
}

fn outcome_of(id: u64, outcome: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {"outcome": outcome}})
}

fn selected(option: &str) -> Value {
    json!({"outcome": "selected", "optionId": option})
}

/// The `permission` event of the fake's request in turn `turn` (A17).
fn permission_request(turn: u32, line: u64) -> Value {
    json!({
        "kind": "permission", "id": turn.to_string(),
        "options": ["allow", "allow_always", "deny"],
        "command": "touch made.txt", "input": {"command": "touch made.txt"},
        "expect": [{"kind": "command"}],
        "tool": "execute", "tool_use_id": format!("c{turn}"), "line": line,
    })
}

fn command(turn: u32, error: Option<&str>, line: u64) -> Value {
    let mut value = json!({
        "kind": "command", "command": "touch made.txt", "success": error.is_none(),
        "tool": "execute", "tool_use_id": format!("c{turn}"), "line": line,
    });
    if let Some(error) = error {
        value["error"] = json!(error);
    }
    value
}

#[test]
fn a16_prompts_run_one_at_a_time_on_one_process_each_with_its_outcome() {
    let fake = fake();
    let items = session(
        fake.acp_request("none"),
        &["plain", "plain"],
        true,
        |_, _| {},
    );
    // Lines: initialize and its answer, session/new and its answer (1-4); each turn its
    // prompt, its chunk and its answer.
    assert_eq!(
        items,
        [
            agent("plain 1", 6),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            agent("plain 2", 9),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", Some(0), json!({"agent": 2})),
        ]
    );
    let log = fake.acp_log();
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "session/prompt"
        ]
    );
    // Each prompt has an id of its own; the second went out when the first was answered.
    assert_eq!(log[2], prompt(2, "s1", "plain"));
    assert_eq!(log[3], prompt(3, "s1", "plain"));
}

#[test]
fn a17_permission_requests_wait_for_the_callers_answer_in_the_agents_options() {
    let fake = fake();
    let mut answers = [Decision::Deny, Decision::Allow, Decision::AllowAlways].into_iter();
    let items = session(
        fake.acp_request("none"),
        &["ask", "ask", "ask"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) => {
                if let EventBody::Permission { id, .. } = &event.body {
                    let decision = answers.next().expect("three requests");
                    // A message with a denial has no place in ACP: it is not sent.
                    handle
                        .answer(id.clone(), decision, Some("not that".into()))
                        .expect("open");
                }
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(3) => {
                handle.end_input().expect("open");
            }
            _ => {}
        },
    );
    let counts = json!({"agent": 1, "permission": 1, "command": 1});
    assert_eq!(
        items,
        [
            permission_request(1, 6),
            command(1, Some("rejected"), 8),
            agent("denied", 9),
            turn_end(1, "success", counts.clone(), Some("denied")),
            permission_request(2, 12),
            command(2, None, 14),
            agent("made it", 15),
            turn_end(2, "success", counts.clone(), Some("made it")),
            permission_request(3, 18),
            command(3, None, 20),
            agent("made it", 21),
            turn_end(3, "success", counts, Some("made it")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 3, "command": 3, "permission": 3})
            ),
        ]
    );
    let log = fake.acp_log();
    // The answers name the agent's request ids (numbers) and the options of each kind.
    assert_eq!(log[3], outcome_of(1, selected("cancel")));
    assert_eq!(log[5], outcome_of(2, selected("proceed_once")));
    assert_eq!(log[7], outcome_of(3, selected("proceed_always")));
}

#[test]
fn a18_bypass_permissions_answers_at_once_and_no_request_reaches_the_caller() {
    let fake = fake();
    let mut request = fake.acp_request("none");
    request.permission_mode = Some("bypassPermissions".into());
    let items = session(request, &["ask"], true, |_, _| {});
    let counts = json!({"agent": 1, "command": 1});
    assert_eq!(
        items,
        [
            command(1, None, 8),
            agent("made it", 9),
            turn_end(1, "success", counts.clone(), Some("made it")),
            ended("Caller", Some(0), counts),
        ]
    );
    assert_eq!(fake.acp_log()[3], outcome_of(1, selected("proceed_once")));
}

#[test]
fn a19_interrupt_cancels_the_waiting_request_then_the_prompt() {
    let fake = fake();
    let items = session(
        fake.acp_request("none"),
        &["ask"],
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
            permission_request(1, 6),
            // Lines: the client's `cancelled` answer (7) and `session/cancel` (8) go out
            // together, before the agent reports the call (9) and answers the prompt (10).
            command(1, Some("cancelled"), 9),
            json!({"kind": "error", "message": "the agent's turn ended: cancelled", "line": 10}),
            turn_end(
                1,
                "interrupted",
                json!({"command": 1, "error": 1, "permission": 1}),
                None
            ),
            agent("plain 2", 12),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 1, "command": 1, "error": 1, "permission": 1})
            ),
        ]
    );
    let log = fake.acp_log();
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "answer",
            "session/cancel",
            "session/prompt"
        ]
    );
    // ACP: a request pending when the turn is cancelled is answered `cancelled`, first.
    assert_eq!(log[3], outcome_of(1, json!({"outcome": "cancelled"})));
    assert_eq!(
        log[4],
        json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}})
    );
}

#[test]
fn a17_ended_input_rejects_a_request_nobody_can_answer() {
    let fake = fake();
    let items = session(fake.acp_request("none"), &["ask"], true, |_, _| {});
    let counts = json!({"agent": 1, "command": 1, "permission": 1});
    assert_eq!(
        items,
        [
            permission_request(1, 6),
            command(1, Some("rejected"), 8),
            agent("denied", 9),
            turn_end(1, "success", counts.clone(), Some("denied")),
            ended("Caller", Some(0), counts),
        ]
    );
    assert_eq!(fake.acp_log()[3], outcome_of(1, selected("cancel")));
}

#[test]
fn a22_an_agent_that_dies_mid_turn_ends_the_turn_and_the_session_with_an_error() {
    let fake = fake();
    let items = session(
        fake.acp_request("none"),
        &["die", "plain"],
        false,
        |_, _| {},
    );
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            agent("dying", 6),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            // A5: the last message is the turn's final output, however the turn ended.
            turn_end(1, "error", counts.clone(), Some("dying")),
            ended("AgentExited", Some(3), counts),
        ]
    );
    // The queued prompt never went out.
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/new", "session/prompt"]
    );
}

#[test]
fn i6_an_agent_that_never_answers_initialize_ends_within_the_timeout() {
    let fake = fake();
    let mut request = fake.acp_request("none");
    request.env.insert("FAKE_MODE".into(), "never-ready".into());
    request.timeout = Some(Duration::from_secs(1));
    let items = session(request, &["plain"], false, |_, _| {});
    let counts = json!({"error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "the turn timed out after 1 second; the session is closed"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            turn_end(1, "error", counts.clone(), None),
            ended("TimedOut", None, counts),
        ]
    );
    // The prompt never went out: only the handshake was sent.
    assert_eq!(fake.acp_methods(), ["initialize"]);
    let pid = std::fs::read_to_string(fake.path("pid")).expect("the agent's pid");
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    assert!(
        stat.is_err() || stat.is_ok_and(|s| s.contains(") Z ")),
        "the agent outlived its session"
    );
}

#[test]
fn i6_a_turn_past_its_timeout_is_cancelled_and_the_session_closes() {
    let fake = fake();
    let mut request = fake.acp_request("none");
    request.timeout = Some(Duration::from_millis(500));
    let items = session(request, &["hang", "plain"], false, |_, _| {});
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "the turn timed out after 0.5 seconds; the session is closed"}),
            agent("working", 6),
            json!({"kind": "error", "message": "the agent's turn ended: cancelled", "line": 8}),
            turn_end(1, "error", counts.clone(), Some("working")),
            ended("TimedOut", Some(0), counts),
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "session/cancel"
        ]
    );
}

#[test]
fn a21_resume_loads_the_stored_session_and_its_replay_gives_no_events() {
    let fake = fake();
    let mut request = fake.acp_request("load");
    request.resume = Some("stored-7".into());
    let items = session(request, &["plain"], true, |_, _| {});
    // Lines: initialize (1-2), session/load (3), the replay (4-5), its answer (6), the
    // prompt (7) and its chunk (8).
    assert_eq!(
        items,
        [
            agent("plain 1", 8),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
    let log = fake.acp_log();
    assert_eq!(
        log[1],
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/load",
            "params": {"sessionId": "stored-7", "cwd": fake.dir().canonicalize().unwrap(), "mcpServers": []}})
    );
    assert_eq!(log[2], prompt(2, "stored-7", "plain"));
}

/// A23: the session names the agent's `sessionId` as soon as `session/new` (or the load or
/// resume) answers, before any prompt (I8); a load the agent refuses names none.
#[test]
fn i8_a23_the_agents_session_id_is_named_before_any_prompt() {
    for (caps, resume, named, opened) in [
        ("none", None, "s1", "session/new"),
        ("load", Some("stored-7"), "stored-7", "session/load"),
        ("resume", Some("stored-8"), "stored-8", "session/resume"),
    ] {
        let fake = fake();
        let mut request = fake.acp_request(caps);
        request.resume = resume.map(str::to_string);
        let (id, items) = fixtures::live::named_session(&AcpHarness, request);
        assert_eq!(id.as_deref(), Some(named));
        assert_eq!(items, [ended("Caller", Some(0), json!({}))]);
        assert_eq!(fake.acp_methods(), ["initialize", opened], "{caps}");
    }
    let fake = fake();
    let mut request = fake.acp_request("load");
    request.resume = Some("gone".into());
    let (id, items) = fixtures::live::named_session(&AcpHarness, request);
    assert_eq!(id, None);
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "session/load failed: no stored session gone (code -32602)", "line": 4}),
            json!({"kind": "error", "message": "the agent exited with status 0; the session has ended"}),
            ended("AgentExited", Some(0), json!({"error": 2})),
        ]
    );
}

#[test]
fn a21_resume_prefers_session_resume_when_advertised() {
    let fake = fake();
    let mut request = fake.acp_request("resume");
    request.resume = Some("stored-8".into());
    let items = runtime().block_on(async {
        let session = AcpHarness.session(request).await.expect("starts");
        session.prompt("plain").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let Some(SessionItem::Ended(end)) = items.last() else {
        panic!("an end");
    };
    assert_eq!(end.outcome.session_id.as_deref(), Some("stored-8"));
    assert_eq!(
        session_json(&items),
        [
            agent("plain 1", 6),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/resume", "session/prompt"]
    );
}

#[test]
fn a21_a_run_that_resumes_is_one_turn_of_the_resumed_session() {
    let fake = fake();
    let mut request = fake.acp_request("resume");
    request.prompt = "plain".into();
    request.resume = Some("stored-8".into());
    let (events, outcome) = runtime().block_on(async {
        let stream = AcpHarness.run(request).await.expect("starts");
        fixtures::live::collect(stream).await
    });
    let events: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(events, [agent("plain 1", 6)]);
    assert_eq!(outcome.session_id.as_deref(), Some("stored-8"));
    assert_eq!(outcome.exit_code, Some(Some(0)));
    assert_eq!(outcome.final_output.as_deref(), Some("plain 1"));
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/resume", "session/prompt"]
    );
}

#[test]
fn a21_a_run_cannot_resume_with_an_agent_that_advertises_no_resume() {
    let fake = fake();
    let mut request = fake.acp_request("none");
    request.prompt = "plain".into();
    request.resume = Some("stored-9".into());
    let Err(err) = runtime().block_on(AcpHarness.run(request)) else {
        panic!("a run that cannot resume started");
    };
    assert!(matches!(err, RunError::CannotResume { .. }), "{err:?}");
    assert_eq!(fake.acp_methods(), ["initialize"]);
}

#[test]
fn i5_an_agent_that_advertises_no_resume_cannot_resume_before_any_prompt() {
    let fake = fake();
    let mut request = fake.acp_request("none");
    request.resume = Some("stored-9".into());
    let result = runtime().block_on(AcpHarness.session(request));
    let Err(err) = result else {
        panic!("a session that cannot resume started");
    };
    assert!(matches!(err, RunError::CannotResume { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        RunError::CannotResume {
            backend: "acp".into(),
            why: Some("the agent advertises neither `session/load` nor `session/resume`".into()),
        }
        .to_string()
    );
    // Nothing but `initialize` was asked.
    assert_eq!(fake.acp_methods(), ["initialize"]);
}

#[test]
fn i7_the_transcript_replays_to_the_sessions_events() {
    let fake = fake();
    let mut request = fake.acp_request("none");
    let transcript = fake.path("transcript");
    request.transcript = Some(transcript.clone());
    let items = session(
        request,
        &["plain", "ask"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) => {
                if let EventBody::Permission { id, .. } = &event.body {
                    handle
                        .answer(id.clone(), Decision::Allow, None)
                        .expect("open");
                }
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(2) => {
                handle.end_input().expect("open");
            }
            _ => {}
        },
    );
    let live: Vec<Value> = items
        .into_iter()
        .filter(|i| i.get("kind").is_some())
        .collect();
    assert_eq!(live.len(), 4, "{live:?}");
    let text = std::fs::read(&transcript).expect("the transcript");
    let first = text.split(|b| *b == b'\n').next().expect("a header");
    let header = Header::parse(first).expect("a header line").expect("valid");
    assert!(
        header.session,
        "I7: the header says the stream is a session's"
    );
    let mut normalizer = AcpHarness.normalizer(header.config());
    let mut events = Vec::new();
    replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
    normalizer.finish(&mut events);
    let replayed: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(replayed, live);
}

#[test]
fn a20_close_cancels_the_running_turn_then_closes_the_agents_input() {
    let fake = fake();
    let items = runtime().block_on(async {
        let session = AcpHarness
            .session(fake.acp_request("none"))
            .await
            .expect("starts");
        session.prompt("hang").expect("open");
        tokio::time::sleep(Duration::from_millis(300)).await;
        session.close().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let counts = json!({"agent": 1, "error": 1});
    assert_eq!(
        session_json(&items),
        [
            agent("working", 6),
            json!({"kind": "error", "message": "the agent's turn ended: cancelled", "line": 8}),
            turn_end(1, "interrupted", counts.clone(), Some("working")),
            ended("Caller", Some(0), counts),
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "session/cancel"
        ]
    );
}
