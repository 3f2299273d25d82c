//! Live Claude Code sessions (SPEC section 8, CS5-CS11 of `docs/claude-session.md`) against
//! `fixtures/fake-agent/claude-session`, a script that speaks the session protocol: the
//! caller's commands (I2), turn ends (I3), permission requests and their answers (I4), faults
//! and time limits (I6), the transcript (I7). Each test compares every item of the session.

use std::path::Path;
use std::time::{Duration, Instant};

use fixtures::live::{
    Fake, agent_said as agent, drive_session, ended, run_session, runtime, session_json, turn_end,
};
use harness_agents_claude::ClaudeHarness;
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{Backend, Decision, EventBody, RunRequest};
use serde_json::{Value, json};

/// A session request for the fake in its folder, logging what it reads to `log`.
fn request(fake: &Fake) -> RunRequest {
    let (log, argv, pid) = (fake.path("log"), fake.path("argv"), fake.path("pid"));
    fake.request(
        "",
        &[
            ("FAKE_LOG", log.as_path()),
            ("FAKE_ARGV", argv.as_path()),
            ("FAKE_PID", pid.as_path()),
        ],
    )
}

/// A command to a session that is still open.
fn open(sent: Result<(), harness_agents_core::session::SessionGone>) {
    sent.unwrap_or_else(|e| panic!("the session is open: {e}"));
}

fn fake() -> Fake {
    Fake::new("claude-session")
}

/// Runs a session of `request`, sending `prompts` first, reacting with `react`.
fn session(
    request: RunRequest,
    prompts: &[&str],
    end_input: bool,
    react: impl FnMut(&SessionHandle, &SessionItem),
) -> Vec<Value> {
    run_session(&ClaudeHarness, request, prompts, end_input, react)
}

/// What the fake read on its standard input, one JSON value a line.
fn log(fake: &Fake) -> Vec<Value> {
    std::fs::read_to_string(fake.path("log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn user(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text}})
}

fn permission_request(turn: u32, line: u64) -> Value {
    json!({
        "kind": "permission", "id": format!("perm-{turn}"),
        "options": ["allow", "allow_always", "deny"],
        "command": "touch made.txt", "input": {"command": "touch made.txt"},
        "expect": [{"kind": "command"}],
        "tool": "Bash", "tool_use_id": format!("toolu_{turn}"), "line": line,
    })
}

/// CS11: the session's id is named as it opens when Claude Code is given one (`--session-id`,
/// or the session it resumes), before any prompt and with nothing written (I1, I8).
#[test]
fn i8_cs11_the_id_given_is_named_before_any_prompt() {
    let id = "5e55a0e0-0000-4000-8000-0000000000aa";
    for (session_id, resume) in [(Some(id), None), (None, Some(id))] {
        let fake = fake();
        let mut request = request(&fake);
        request.session_id = session_id.map(str::to_string);
        request.resume = resume.map(str::to_string);
        let (named, items) = fixtures::live::named_session(&ClaudeHarness, request);
        assert_eq!(named.as_deref(), Some(id));
        assert_eq!(items, [ended("Caller", Some(0), json!({}))]);
        assert_eq!(log(&fake), Vec::<Value>::new());
    }
}

/// CS11: given no id, the session learns Claude Code's from the first turn's `init` line.
#[test]
fn i8_cs11_without_an_id_the_first_init_names_it() {
    let fake = fake();
    let mut seen = Vec::new();
    let items = session(request(&fake), &["plain", "plain"], true, |handle, item| {
        if let SessionItem::TurnEnd(_) = item {
            seen.push(handle.session_id());
        }
    });
    assert_eq!(items.len(), 5, "{items:?}");
    let id = Some("5e55a0e0-0000-4000-8000-000000000001".to_string());
    assert_eq!(seen, [id.clone(), id]);
}

#[test]
fn i1_i2_i3_prompts_run_one_at_a_time_in_order_each_with_its_outcome() {
    let fake = fake();
    let items = session(request(&fake), &["plain", "plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 2),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            agent("plain 2", 5),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", Some(0), json!({"agent": 2})),
        ]
    );
    // CS5: the second prompt went out when the first turn had ended, as a user message.
    assert_eq!(log(&fake), [user("plain"), user("plain")]);
    let argv = fake.argv();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "--print",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-prompt-tool",
            "stdio",
        ]
    );
}

#[test]
fn i4_cs6_cs7_permission_requests_wait_for_the_callers_answer() {
    let fake = fake();
    let mut answers = vec![
        (Decision::Deny, Some("not that file".to_string())),
        (Decision::Allow, None),
    ]
    .into_iter();
    let items = session(
        request(&fake),
        &["ask", "ask"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) => {
                if let EventBody::Permission { id, .. } = &event.body {
                    let (decision, message) = answers.next().expect("two requests");
                    handle.answer(id.clone(), decision, message).expect("open");
                }
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(2) => {
                handle.end_input().expect("open");
            }
            _ => {}
        },
    );
    let failed = json!({
        "kind": "command", "command": "touch made.txt", "success": false,
        "error": "not that file", "tool": "Bash", "tool_use_id": "toolu_1", "line": 4,
    });
    let ran = json!({
        "kind": "command", "command": "touch made.txt", "success": true,
        "tool": "Bash", "tool_use_id": "toolu_2", "line": 10,
    });
    let counts = |kind: &str| json!({"agent": 1, "permission": 1, kind: 1});
    assert_eq!(
        items,
        [
            permission_request(1, 3),
            failed,
            agent("denied", 5),
            turn_end(1, "success", counts("command"), Some("denied")),
            permission_request(2, 9),
            ran,
            agent("made it", 11),
            turn_end(2, "success", counts("command"), Some("made it")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 2, "command": 2, "permission": 2})
            ),
        ]
    );
    let log = log(&fake);
    assert_eq!(log[1]["response"]["request_id"], "perm-1");
    assert_eq!(
        log[1]["response"]["response"],
        json!({"behavior": "deny", "message": "not that file"})
    );
    assert_eq!(
        log[3]["response"]["response"],
        json!({"behavior": "allow", "updatedInput": {"command": "touch made.txt"}})
    );
}

#[test]
fn i2_interrupt_withdraws_the_waiting_request_and_the_turn_ends_interrupted() {
    let fake = fake();
    let items = session(request(&fake), &["ask"], false, |handle, item| match item {
        SessionItem::Event(event) if matches!(event.body, EventBody::Permission { .. }) => {
            handle.interrupt().expect("open");
        }
        SessionItem::TurnEnd(outcome) if outcome.turn == Some(1) => {
            // The session stays usable after an interrupted turn.
            handle.prompt("plain").expect("open");
            handle.end_input().expect("open");
        }
        _ => {}
    });
    let withdrawn = json!({
        "kind": "command", "command": "touch made.txt", "success": false,
        "error": "The turn was interrupted before this tool use was answered.",
        "tool": "Bash", "tool_use_id": "toolu_1", "line": 4,
    });
    assert_eq!(
        items,
        [
            permission_request(1, 3),
            withdrawn,
            agent("denied", 5),
            turn_end(
                1,
                "interrupted",
                json!({"agent": 1, "command": 1, "permission": 1}),
                Some("denied")
            ),
            agent("plain 2", 8),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 2, "command": 1, "permission": 1})
            ),
        ]
    );
    // The caller's side: the request denied as withdrawn, then the interrupt, then turn 2.
    let log = log(&fake);
    assert_eq!(log.len(), 4);
    assert_eq!(log[0], user("ask"));
    assert_eq!(log[1]["response"]["request_id"], "perm-1");
    assert_eq!(log[1]["response"]["response"]["behavior"], "deny");
    assert_eq!(log[2]["type"], "control_request");
    assert_eq!(log[2]["request"], json!({"subtype": "interrupt"}));
    assert_eq!(log[3], user("plain"));
}

#[test]
fn i2_bad_commands_are_input_warnings_and_the_session_goes_on() {
    let fake = fake();
    let items = runtime().block_on(async {
        let session = ClaudeHarness.session(request(&fake)).await.expect("starts");
        session.send_line(b"not json").expect("open");
        session.interrupt().expect("open");
        session.answer("nope", Decision::Allow, None).expect("open");
        session
            .send_line(br#"{"type":"prompt","text":"plain"}"#)
            .expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let warning = |message: &str| json!({"kind": "warning", "message": message, "source": "input"});
    let items = session_json(&items);
    assert_eq!(
        items,
        [
            warning("a command line is not JSON (expected ident at line 1 column 2)"),
            warning("interrupt: no turn is running"),
            warning("permission: no request `nope` is waiting for an answer"),
            agent("plain 1", 2),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
}

#[test]
fn cs8_a_control_request_the_harness_did_not_ask_for_gets_an_error_answer() {
    let fake = fake();
    let items = session(request(&fake), &["hook"], true, |_, _| {});
    assert_eq!(
        items,
        [
            turn_end(1, "success", json!({}), Some("hooked")),
            ended("Caller", Some(0), json!({})),
        ]
    );
    assert_eq!(
        log(&fake)[1],
        json!({"type": "control_response", "response": {"subtype": "error", "request_id": "hook-1",
            "error": "harness answers no control request of subtype `hook_callback`"}})
    );
}

#[test]
fn i2_ended_input_denies_a_request_nobody_can_answer() {
    let fake = fake();
    let items = session(request(&fake), &["ask"], true, |_, _| {});
    let denied = json!({
        "kind": "command", "command": "touch made.txt", "success": false,
        "error": "Nobody is left to answer this permission request (the session's input has \
                  ended), so it is denied.",
        "tool": "Bash", "tool_use_id": "toolu_1", "line": 4,
    });
    let counts = json!({"agent": 1, "command": 1, "permission": 1});
    assert_eq!(
        items,
        [
            permission_request(1, 3),
            denied,
            agent("denied", 5),
            turn_end(1, "success", counts.clone(), Some("denied")),
            ended("Caller", Some(0), counts),
        ]
    );
}

#[test]
fn i6_an_agent_that_dies_mid_turn_ends_the_turn_and_the_session_with_an_error() {
    let fake = fake();
    let items = session(request(&fake), &["die", "plain"], false, |_, _| {});
    // The agent's last words first: the message it was writing, which its end completes
    // (C4), and the end-of-input error (S9); then the error naming its exit, then the turn's
    // outcome.
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            agent("dying", 2),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            turn_end(1, "error", counts.clone(), None),
            ended("AgentExited", Some(3), counts),
        ]
    );
    // The queued prompt never went out.
    assert_eq!(log(&fake), [user("die")]);
}

#[test]
fn i6_a_turn_past_its_timeout_is_interrupted_and_the_session_closes() {
    let fake = fake();
    let mut request = request(&fake);
    request.timeout = Some(Duration::from_millis(500));
    let items = session(request, &["hang", "plain"], false, |_, _| {});
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "the turn timed out after 0.5 seconds; the session is closed"}),
            agent("working", 2),
            json!({"kind": "error", "message": "error_during_execution", "line": 4}),
            turn_end(1, "error", counts.clone(), None),
            ended("TimedOut", Some(0), counts),
        ]
    );
    // The queued prompt was dropped: only the interrupt followed the first prompt.
    let log = log(&fake);
    assert_eq!(log.len(), 2);
    assert_eq!(log[1]["request"], json!({"subtype": "interrupt"}));
}

#[test]
fn i6_an_idle_turn_closes_the_session() {
    let fake = fake();
    let mut request = request(&fake);
    request.idle_timeout = Some(Duration::from_millis(300));
    let items = session(request, &["hang"], false, |_, _| {});
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "the agent was silent for 0.3 seconds during the turn; the session is closed"}),
            agent("working", 2),
            json!({"kind": "error", "message": "error_during_execution", "line": 4}),
            turn_end(1, "error", counts.clone(), None),
            ended("TimedOut", Some(0), counts),
        ]
    );
}

/// Starts a session of `request` with `prompt`, and after `delay` either closes it (then reads
/// it to its end) or drops it.
fn later(request: RunRequest, prompt: &str, delay: Duration, close: bool) -> Vec<Value> {
    let items = runtime().block_on(async {
        let session = ClaudeHarness
            .session(request)
            .await
            .unwrap_or_else(|e| panic!("the session starts: {e}"));
        open(session.prompt(prompt));
        tokio_sleep(delay).await;
        if !close {
            drop(session);
            return Vec::new();
        }
        open(session.close());
        drive_session(session, |_, _| {}).await
    });
    session_json(&items)
}

/// A timer on the tests' runtime, without naming the runtime's crate.
async fn tokio_sleep(delay: Duration) {
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        let _ = tx.send(());
    });
    let _ = rx.await;
}

#[test]
fn i6_close_ends_a_session_whose_agent_ignores_the_interrupt_within_the_grace() {
    let fake = fake();
    let start = Instant::now();
    let items = later(request(&fake), "ignore", Duration::from_millis(300), true);
    let took = start.elapsed();
    // The grace is 5 seconds from the close.
    assert!(took >= Duration::from_secs(5), "{took:?}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    // The agent was killed before its `result`: the end of its output is S9's.
    let counts = json!({"agent": 1, "error": 1});
    assert_eq!(
        items,
        [
            agent("not listening", 2),
            json!({"kind": "error", "message": "stream ended without a result"}),
            turn_end(1, "interrupted", counts.clone(), None),
            ended("Caller", None, counts),
        ]
    );
    assert_gone(&fake.path("pid"));
}

#[test]
fn i6_dropping_the_session_stops_the_agent() {
    let fake = fake();
    let items = later(request(&fake), "ignore", Duration::from_millis(300), false);
    assert_eq!(items, Vec::<Value>::new());
    assert_gone(&fake.path("pid"));
}

#[test]
fn i7_the_transcript_replays_to_the_sessions_events() {
    let fake = fake();
    let mut request = request(&fake);
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
                        .answer(id.clone(), Decision::AllowAlways, None)
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
    let header = Header::parse(first)
        .expect("a header line")
        .expect("a valid header");
    assert!(
        header.session,
        "I7: the header says the stream is a session's"
    );
    let mut normalizer = ClaudeHarness.normalizer(header.config());
    let mut events = Vec::new();
    replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
    normalizer.finish(&mut events);
    let replayed: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(replayed, live);
    // CS6: allow_always sent a session rule for the tool.
    assert_eq!(
        log(&fake)[2]["response"]["response"]["updatedPermissions"][0]["rules"],
        json!([{"toolName": "Bash"}])
    );
}

/// The process whose pid the fake wrote is gone.
fn assert_gone(pid_file: &Path) {
    let pid =
        std::fs::read_to_string(pid_file).unwrap_or_else(|e| panic!("the fake wrote its pid: {e}"));
    let proc = Path::new("/proc").join(pid.trim());
    let deadline = Instant::now() + Duration::from_secs(5);
    while proc.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !proc.exists(),
        "the agent {} outlived its session",
        pid.trim()
    );
}
