//! Live opencode sessions through `opencode serve` (SPEC section 8, the PS rules of
//! `docs/opencode.md`) against `fixtures/fake-agent/opencode-serve`, a script that serves the
//! server's HTTP routes and its event stream on loopback: turns in order (I1-I3), permission
//! requests and their answers (I4), interrupts (abort), resume (I5), faults (I6) and the
//! transcript (I7). Each test compares every item of the session.

use std::time::Duration;

use fixtures::live::{Fake, agent_said as agent, ended, run_session, turn_end};
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{Backend, Decision, EventBody, RunRequest};
use harness_agents_opencode::OpencodeHarness;
use serde_json::{Value, json};

fn fake() -> Fake {
    Fake::new("opencode-serve")
}

/// A session request for the fake in its folder, logging its requests to `log`.
fn request(fake: &Fake) -> RunRequest {
    let (log, argv, pid, child) = (
        fake.path("log"),
        fake.path("argv"),
        fake.path("pid"),
        fake.path("child"),
    );
    let mut request = fake.request(
        "",
        &[
            ("FAKE_LOG", log.as_path()),
            ("FAKE_ARGV", argv.as_path()),
            ("FAKE_PID", pid.as_path()),
            ("FAKE_CHILD", child.as_path()),
        ],
    );
    // Bounds a test whose fake misbehaves; no turn here takes a second.
    request.timeout = Some(Duration::from_secs(20));
    request
}

/// Runs a session of `request`, sending `prompts` first, reacting with `react`.
fn session(
    request: RunRequest,
    prompts: &[&str],
    end_input: bool,
    react: impl FnMut(&SessionHandle, &SessionItem),
) -> Vec<Value> {
    run_session(&OpencodeHarness, request, prompts, end_input, react)
}

/// The requests the fake served: method, path and body, in order.
fn log(fake: &Fake) -> Vec<Value> {
    std::fs::read_to_string(fake.path("log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn post(path: &str, body: Value) -> Value {
    json!({"method": "POST", "path": path, "body": body})
}

fn get(path: &str) -> Value {
    json!({"method": "GET", "path": path, "body": null})
}

fn prompt(text: &str) -> Value {
    post(
        "/session/ses_fake/prompt_async",
        json!({"parts": [{"type": "text", "text": text}]}),
    )
}

fn permission(n: u32, line: u64) -> Value {
    json!({
        "kind": "permission", "id": format!("per_{n}"),
        "options": ["allow", "allow_always", "deny"],
        "command": "touch made.txt", "input": {"command": "touch made.txt"},
        "expect": [{"kind": "command"}],
        "tool": "bash", "tool_use_id": format!("call_{n}"), "line": line,
    })
}

fn touch(n: u32, line: u64, success: bool, error: Option<&str>) -> Value {
    let mut value = json!({
        "kind": "command", "command": "touch made.txt", "success": success,
        "tool": "bash", "tool_use_id": format!("call_{n}"), "line": line,
    });
    if success {
        value["exit_code"] = json!(0);
    }
    if let Some(error) = error {
        value["error"] = json!(error);
    }
    value
}

/// Whether process `pid` is alive (a zombie is not: it has ended).
fn alive(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    stat.is_ok_and(|s| !s.contains(") Z "))
}

#[test]
fn ps_turns_run_in_order_each_with_its_outcome() {
    let fake = fake();
    let items = session(request(&fake), &["plain", "plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 6),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            agent("plain 2", 16),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", None, json!({"agent": 2})),
        ]
    );
    assert_eq!(
        log(&fake),
        [
            post("/session", json!({})),
            get("/event"),
            prompt("plain"),
            prompt("plain"),
        ]
    );
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        ["serve", "--port", "0", "--hostname", "127.0.0.1"]
    );
}

#[test]
fn i4_permission_once_then_always_asks_no_more() {
    let fake = fake();
    let mut answers = vec![Decision::Allow, Decision::AllowAlways].into_iter();
    let items = session(
        request(&fake),
        &["ask", "ask", "ask"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) => {
                if let EventBody::Permission { id, .. } = &event.body {
                    let decision = answers.next().expect("two requests");
                    handle.answer(id.clone(), decision, None).expect("open");
                }
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(3) => {
                handle.end_input().expect("open");
            }
            _ => {}
        },
    );
    let counts = json!({"permission": 1, "command": 1, "agent": 1});
    assert_eq!(
        items,
        [
            permission(1, 5),
            touch(1, 8, true, None),
            agent("done 1", 14),
            turn_end(1, "success", counts.clone(), Some("done 1")),
            permission(2, 23),
            touch(2, 26, true, None),
            agent("done 2", 32),
            turn_end(2, "success", counts, Some("done 2")),
            touch(3, 42, true, None),
            agent("done 3", 48),
            turn_end(
                3,
                "success",
                json!({"command": 1, "agent": 1}),
                Some("done 3")
            ),
            ended(
                "Caller",
                None,
                json!({"permission": 2, "command": 3, "agent": 3})
            ),
        ]
    );
    let replies: Vec<Value> = log(&fake)
        .into_iter()
        .filter(|r| {
            r["path"]
                .as_str()
                .is_some_and(|p| p.starts_with("/permission/"))
        })
        .collect();
    assert_eq!(
        replies,
        [
            post("/permission/per_1/reply", json!({"reply": "once"})),
            post("/permission/per_2/reply", json!({"reply": "always"})),
        ]
    );
}

#[test]
fn i4_a_rejection_fails_the_tool_and_ends_the_turn() {
    let fake = fake();
    let items = session(request(&fake), &["ask"], false, |handle, item| match item {
        SessionItem::Event(event) => {
            if let EventBody::Permission { id, .. } = &event.body {
                let message = Some("not now".to_string());
                handle
                    .answer(id.clone(), Decision::Deny, message)
                    .expect("open");
            }
        }
        SessionItem::TurnEnd(_) => handle.end_input().expect("open"),
        SessionItem::Ended(_) => {}
    });
    let rejected = "The user rejected permission to use this specific tool call.";
    assert_eq!(
        items,
        [
            permission(1, 5),
            touch(1, 7, false, Some(rejected)),
            turn_end(
                1,
                "incomplete",
                json!({"permission": 1, "command": 1}),
                None
            ),
            // S9 at the end of a session none of whose turns had a terminal line.
            json!({"kind": "error", "message": "stream ended without a result"}),
            ended(
                "Caller",
                None,
                json!({"permission": 1, "command": 1, "error": 1})
            ),
        ]
    );
    assert!(log(&fake).contains(&post(
        "/permission/per_1/reply",
        json!({"reply": "reject", "message": "not now"})
    )));
}

#[test]
fn i2_an_interrupt_aborts_then_rejects_the_pending_request() {
    let fake = fake();
    let items = session(
        request(&fake),
        &["ask", "plain"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) => {
                if let EventBody::Permission { .. } = &event.body {
                    handle.interrupt().expect("open");
                }
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(2) => {
                handle.end_input().expect("open");
            }
            _ => {}
        },
    );
    let aborted = "Tool execution aborted";
    assert_eq!(
        items,
        [
            permission(1, 5),
            touch(1, 9, false, Some(aborted)),
            turn_end(
                1,
                "interrupted",
                json!({"permission": 1, "command": 1}),
                None
            ),
            agent("plain 2", 19),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended(
                "Caller",
                None,
                json!({"permission": 1, "command": 1, "agent": 1})
            ),
        ]
    );
    let calls: Vec<Value> = log(&fake).into_iter().skip(2).collect();
    assert_eq!(
        calls,
        [
            prompt("ask"),
            post("/session/ses_fake/abort", Value::Null),
            post("/permission/per_1/reply", json!({"reply": "reject"})),
            prompt("plain"),
        ]
    );
}

#[test]
fn i2_an_interrupt_aborts_a_running_command_and_the_next_turn_runs() {
    let fake = fake();
    let mut request = request(&fake);
    request.normalizer.started = true;
    let items = session(request, &["hang", "plain"], true, |handle, item| {
        if let SessionItem::Event(event) = item {
            if let EventBody::Started { .. } = &event.body {
                handle.interrupt().expect("open");
            }
        }
    });
    let output = "(no output)\n\n<shell_metadata>\nUser aborted the command\n</shell_metadata>";
    assert_eq!(
        items,
        [
            json!({"kind": "started", "command": "sleep 60", "expect": [{"kind": "command"}],
                   "tool": "bash", "tool_use_id": "call_1", "line": 5}),
            json!({"kind": "command", "command": "sleep 60", "success": false, "error": output,
                   "tool": "bash", "tool_use_id": "call_1", "line": 9}),
            // `started` is an announcement, which `counts` leave out (L1).
            turn_end(1, "interrupted", json!({"command": 1}), None),
            agent("plain 2", 18),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", None, json!({"command": 1, "agent": 1})),
        ]
    );
    let child = std::fs::read_to_string(fake.path("child")).expect("the command's pid");
    assert!(!alive(&child), "the aborted command is gone");
}

#[test]
fn i6_closing_kills_a_command_in_a_process_group_of_its_own() {
    let fake = fake();
    let mut request = request(&fake);
    request.normalizer.started = true;
    let items = session(request, &["orphan"], false, |handle, item| {
        if let SessionItem::Event(event) = item {
            if let EventBody::Started { .. } = &event.body {
                handle.close().expect("open");
            }
        }
    });
    let running = json!({"id": "prt_call_1", "type": "tool", "messageID": "msg_01a",
        "sessionID": "ses_fake", "callID": "call_1", "tool": "bash",
        "state": {"status": "running", "input": {"command": "sleep 60"}}});
    let counts = json!({"unknown": 1, "error": 1});
    assert_eq!(
        items,
        [
            json!({"kind": "started", "command": "sleep 60", "expect": [{"kind": "command"}],
                   "tool": "bash", "tool_use_id": "call_1", "line": 5}),
            // S9: the command never finished; the server was killed with it.
            json!({"kind": "unknown", "reason": "unresolved_tool_use", "raw": running,
                   "tool": "bash", "tool_use_id": "call_1"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            turn_end(1, "interrupted", counts.clone(), None),
            ended("Caller", None, counts),
        ]
    );
    let child = std::fs::read_to_string(fake.path("child")).expect("the command's pid");
    // The fake started it in a session of its own, as opencode does: only the run's mark
    // finds it once the server is gone.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while alive(&child) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(&child), "the command outlived its session");
}

#[test]
fn i6_a_server_that_never_says_where_it_listens_ends_the_session() {
    let fake = fake();
    let mut request = request(&fake);
    request.env.insert("FAKE_MODE".into(), "never-ready".into());
    request.timeout = Some(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let items = session(request, &[], false, |_, _| {});
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        items,
        [
            json!({"kind": "error",
                   "message": "opencode serve did not say where it listens within 1 s; the session has ended"}),
            // No turn started, so nothing can be missing: no end-of-input error.
            ended("AgentExited", None, json!({"error": 1})),
        ]
    );
}

#[test]
fn ps15_a_broken_event_stream_reconnects_once_and_catches_up() {
    let fake = fake();
    let items = session(request(&fake), &["break", "plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("after the break 1", 4),
            turn_end(1, "success", json!({"agent": 1}), Some("after the break 1")),
            agent("plain 2", 12),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", None, json!({"agent": 2})),
        ]
    );
    assert_eq!(
        log(&fake),
        [
            post("/session", json!({})),
            get("/event"),
            prompt("break"),
            get("/global/health"),
            get("/event"),
            get("/session/ses_fake/message"),
            get("/session/status"),
            prompt("plain"),
        ]
    );
    let pid = std::fs::read_to_string(fake.path("pid")).expect("the server's pid");
    assert!(!alive(&pid), "the server outlived its session");
}

#[test]
fn ps15_a_second_break_ends_the_turn_and_the_session() {
    let fake = fake();
    let items = session(request(&fake), &["break2", "plain"], false, |_, _| {});
    assert_eq!(
        items,
        [
            json!({"kind": "error",
                   "message": "opencode's event stream ended again while the server runs; the session has ended"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            turn_end(1, "error", json!({"error": 2}), None),
            ended("AgentExited", None, json!({"error": 2})),
        ]
    );
    assert_eq!(
        log(&fake),
        [
            post("/session", json!({})),
            get("/event"),
            prompt("break2"),
            get("/global/health"),
            get("/event"),
            get("/session/ses_fake/message"),
            get("/session/status"),
            get("/global/health"),
        ]
    );
    let pid = std::fs::read_to_string(fake.path("pid")).expect("the server's pid");
    assert!(!alive(&pid), "the server outlived its session");
}

#[test]
fn ps13_a_port_already_taken_ends_the_session_with_the_servers_words() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").port();
    let fake = fake();
    let mut request = request(&fake);
    request.extra_args = vec!["--port".into(), port.to_string()];
    let items = session(request, &["plain"], false, |_, _| {});
    let words = format!("error: Failed to start server. Is port {port} in use?");
    let counts = json!({"error": 2, "warning": 1});
    assert_eq!(
        items,
        [
            // S4: the server's own words, which name the port.
            json!({"kind": "warning", "line": 1, "message": words, "source": "stderr",
                   "stream": "stderr"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error",
                   "message": "the agent exited with status 1 during turn 1; the session has ended"}),
            turn_end(1, "error", counts.clone(), None),
            ended("AgentExited", Some(1), counts),
        ]
    );
    // Nothing was asked of a server that never listened.
    assert_eq!(log(&fake), Vec::<Value>::new());
    let pid = std::fs::read_to_string(fake.path("pid")).expect("the server's pid");
    assert!(!alive(&pid), "the server outlived its session");
}

#[test]
fn i6_a_server_that_dies_mid_turn_ends_the_session() {
    let fake = fake();
    let items = session(request(&fake), &["die"], false, |_, _| {});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error",
                   "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            turn_end(1, "error", json!({"error": 2}), None),
            ended("AgentExited", Some(3), json!({"error": 2})),
        ]
    );
}

#[test]
fn i5_resume_continues_the_stored_session_and_an_unknown_one_fails() {
    let fake = fake();
    let mut stored = request(&fake);
    stored.resume = Some("ses_stored".into());
    let items = session(stored, &["plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 6),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", None, json!({"agent": 1})),
        ]
    );
    assert_eq!(log(&fake)[0], get("/session/ses_stored"));

    let fake = self::fake();
    let mut unknown = request(&fake);
    unknown.resume = Some("ses_nope".into());
    let items = session(unknown, &["plain"], false, |_, _| {});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "opencode has no stored session ses_nope to resume"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            turn_end(1, "error", json!({"error": 2}), None),
            ended("AgentExited", None, json!({"error": 2})),
        ]
    );
}

/// PS16: the session names opencode's session as soon as `POST /session` (or the stored
/// one's `GET`) answers, before any prompt (I8); an unknown stored one names none.
#[test]
fn i8_ps16_the_session_is_named_before_any_prompt() {
    for (resume, named, asked) in [
        (None, "ses_fake", post("/session", json!({}))),
        (Some("ses_stored"), "ses_stored", get("/session/ses_stored")),
    ] {
        let fake = fake();
        let mut request = request(&fake);
        request.resume = resume.map(str::to_string);
        let (id, items) = fixtures::live::named_session(&OpencodeHarness, request);
        assert_eq!(id.as_deref(), Some(named));
        assert_eq!(items, [ended("Caller", None, json!({}))]);
        // No prompt went out.
        assert_eq!(log(&fake)[0], asked);
        assert!(log(&fake).iter().all(|r| r != &prompt("plain")));
    }
    let fake = fake();
    let mut unknown = request(&fake);
    unknown.resume = Some("ses_nope".into());
    let (id, items) = fixtures::live::named_session(&OpencodeHarness, unknown);
    assert_eq!(id, None);
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "opencode has no stored session ses_nope to resume"}),
            ended("AgentExited", None, json!({"error": 1})),
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
    assert!(header.session);
    // PS1: only the session's own events are kept: no server noise, no other session.
    let body = String::from_utf8_lossy(&text);
    assert!(!body.contains("plugin.added") && !body.contains("ses_other"));
    assert!(!body.contains("listening on"));
    let mut normalizer = OpencodeHarness.normalizer(header.config());
    let mut events = Vec::new();
    replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
    normalizer.finish(&mut events);
    let replayed: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(replayed, live);
}
