//! Qwen Code's session (QW13-QW16): its ACP mode, `qwen --acp`, driven by the ACP session of
//! `harness-agents-acp`, here against `fixtures/fake-agent/acp-session` as the `qwen` binary.
//! The ACP behaviour itself is tested in `harness-acp`; these tests prove the command line
//! and its approval mode, that turns, permission requests, interrupts and closes come through
//! with ACP's tool names, that `resume` goes through `session/resume`, and what Qwen adds to
//! ACP (a vendor request, a vendor notification, an empty usage chunk) gives.

use fixtures::live::{
    Fake, agent_said as agent, drive_session, ended, run_session, runtime, session_json, turn_end,
};
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::{Backend, Decision, EventBody, RunError, RunRequest};
use harness_agents_qwen::QwenHarness;
use serde_json::{Value, json};

/// Runs a session of `request`, sending `prompts` first, reacting with `react`.
fn session(
    request: RunRequest,
    prompts: &[&str],
    end_input: bool,
    react: impl FnMut(&SessionHandle, &SessionItem),
) -> Vec<Value> {
    run_session(&QwenHarness, request, prompts, end_input, react)
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

/// The `command` event of the call of turn `turn`, failed with `error` when given.
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

/// Whether process `pid` (as written to a file) is gone: no such process, or a zombie.
fn gone(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    stat.is_err() || stat.is_ok_and(|s| s.contains(") Z "))
}

#[test]
fn qw13_a_session_is_qwen_acp_in_its_approval_mode_with_the_callers_answers() {
    let fake = Fake::new("acp-session");
    let mut request = fake.acp_request("load");
    request.model = Some("qwen3-coder-plus".into());
    request.permission_mode = Some("acceptEdits".into());
    request.extra_args = vec!["--debug".into()];
    let mut answers = [Decision::Allow, Decision::Deny].into_iter();
    let items = session(request, &["ask", "ask"], false, |handle, item| match item {
        SessionItem::Event(event) => {
            if let EventBody::Permission { id, .. } = &event.body {
                let decision = answers.next().expect("two requests");
                handle.answer(id.clone(), decision, None).expect("open");
            }
        }
        SessionItem::TurnEnd(outcome) if outcome.turn == Some(2) => {
            handle.end_input().expect("open")
        }
        _ => {}
    });
    assert_eq!(
        items,
        [
            permission_request(1, 6),
            command(1, None, 8),
            agent("made it", 9),
            turn_end(
                1,
                "success",
                json!({"agent": 1, "command": 1, "permission": 1}),
                Some("made it")
            ),
            permission_request(2, 12),
            command(2, Some("rejected"), 14),
            agent("denied", 15),
            turn_end(
                2,
                "success",
                json!({"agent": 1, "command": 1, "permission": 1}),
                Some("denied")
            ),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 2, "command": 2, "permission": 2})
            ),
        ]
    );
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "--acp",
            "--model=qwen3-coder-plus",
            "--approval-mode=auto-edit",
            "--debug"
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "answer",
            "session/prompt",
            "answer"
        ]
    );
    // A17: the caller's decisions select Qwen's own options of the matching kinds.
    let log = fake.acp_log();
    assert_eq!(
        log[3]["result"],
        json!({"outcome": {"outcome": "selected", "optionId": "proceed_once"}})
    );
    assert_eq!(
        log[5]["result"],
        json!({"outcome": {"outcome": "selected", "optionId": "cancel"}})
    );
}

#[test]
fn qw13_without_a_permission_mode_qwen_keeps_its_own() {
    let fake = Fake::new("acp-session");
    let items = session(fake.acp_request("none"), &["plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 6),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
    assert_eq!(fake.argv().lines().collect::<Vec<_>>(), ["--acp"]);
}

#[test]
fn qw14_interrupt_cancels_a_waiting_request_and_the_session_goes_on() {
    let fake = Fake::new("acp-session");
    let items = session(
        fake.acp_request("none"),
        &["ask"],
        false,
        |handle, item| match item {
            SessionItem::Event(event) if matches!(event.body, EventBody::Permission { .. }) => {
                handle.interrupt().expect("open");
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(1) => {
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
            // The client's `cancelled` answer (7) and `session/cancel` (8) go out together,
            // before the agent reports the call (9) and answers the prompt (10).
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
    assert_eq!(
        fake.acp_log()[3]["result"],
        json!({"outcome": {"outcome": "cancelled"}})
    );
}

#[test]
fn qw14_interrupt_stops_a_running_turn_through_session_cancel() {
    let fake = Fake::new("acp-session");
    let items = runtime().block_on(async {
        let session = QwenHarness
            .session(fake.acp_request("none"))
            .await
            .expect("starts");
        session.prompt("hang").expect("open");
        // The agent has said `working` and waits; the turn is under way.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        session.interrupt().expect("open");
        session.prompt("plain").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    assert_eq!(
        session_json(&items),
        [
            // `working` (6) is flushed by the answer to the prompt (8), after the client's
            // `session/cancel` (7).
            agent("working", 6),
            json!({"kind": "error", "message": "the agent's turn ended: cancelled", "line": 8}),
            turn_end(
                1,
                "interrupted",
                json!({"agent": 1, "error": 1}),
                Some("working")
            ),
            agent("plain 2", 10),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", Some(0), json!({"agent": 2, "error": 1})),
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "session/cancel",
            "session/prompt"
        ]
    );
}

#[test]
fn qw14_close_while_a_request_waits_cancels_it_and_stops_qwen() {
    let fake = Fake::new("acp-session");
    let items = session(fake.acp_request("none"), &["ask"], false, |handle, item| {
        if let SessionItem::Event(event) = item
            && matches!(event.body, EventBody::Permission { .. })
        {
            handle.close().expect("open");
        }
    });
    let counts = json!({"command": 1, "error": 1, "permission": 1});
    assert_eq!(
        items,
        [
            permission_request(1, 6),
            command(1, Some("cancelled"), 9),
            json!({"kind": "error", "message": "the agent's turn ended: cancelled", "line": 10}),
            turn_end(1, "interrupted", counts.clone(), None),
            ended("Caller", Some(0), counts),
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        [
            "initialize",
            "session/new",
            "session/prompt",
            "answer",
            "session/cancel"
        ]
    );
    assert!(gone(
        &std::fs::read_to_string(fake.path("pid")).expect("its pid")
    ));
}

#[test]
fn qw15_resume_goes_through_session_resume_or_cannot_resume() {
    let fake = Fake::new("acp-session");
    let mut resumed = fake.acp_request("resume");
    resumed.resume = Some("stored-1".into());
    let items = runtime().block_on(async {
        let session = QwenHarness.session(resumed).await.expect("starts");
        session.prompt("plain").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    assert_eq!(
        session_json(&items),
        [
            agent("plain 1", 6),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            ended("Caller", Some(0), json!({"agent": 1})),
        ]
    );
    let Some(SessionItem::Ended(end)) = items.last() else {
        panic!("an end");
    };
    assert_eq!(end.outcome.session_id.as_deref(), Some("stored-1"));
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/resume", "session/prompt"]
    );
    // Qwen's `--resume` flag is its headless mode's: the session never passes it.
    assert_eq!(fake.argv().lines().collect::<Vec<_>>(), ["--acp"]);

    // An agent that advertises no way to resume is refused before any prompt.
    let fake = Fake::new("acp-session");
    let mut refused = fake.acp_request("none");
    refused.resume = Some("stored-1".into());
    let Err(err) = runtime().block_on(QwenHarness.session(refused)) else {
        panic!("a session that cannot resume started");
    };
    assert!(
        matches!(&err, RunError::CannotResume { backend, .. } if backend == "qwen"),
        "{err:?}"
    );
}

#[test]
fn qw16_qwens_vendor_request_notification_and_usage_chunk() {
    let fake = Fake::new("acp-session");
    let items = session(fake.acp_request("none"), &["vendor"], true, |_, _| {});
    let drain = json!({"jsonrpc": "2.0", "id": 0, "method": "craft/drainMidTurnQueue",
        "params": {"sessionId": "s1"}});
    let mode = json!({"jsonrpc": "2.0", "method": "qwen/notify/session/mode-update",
        "params": {"sessionId": "s1", "mode": "default"}});
    let counts = json!({"agent": 1, "unknown": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "unknown", "reason": "unknown_type", "raw": drain, "line": 6}),
            json!({"kind": "unknown", "reason": "unknown_type", "raw": mode, "line": 8}),
            // The empty chunk with Qwen's usage (10) adds no text and is the message's last
            // line (A5).
            agent("vendor 1", 10),
            turn_end(1, "success", counts.clone(), Some("vendor 1")),
            ended("Caller", Some(0), counts),
        ]
    );
    // A14: the vendor request numbered 0, as the client's `initialize` was, is answered
    // "Method not found" under its own id.
    let log = fake.acp_log();
    assert_eq!(
        log[3],
        json!({"jsonrpc": "2.0", "id": 0,
            "error": {"code": -32601, "message": "Method not found"}})
    );
}

#[test]
fn qw13_i6_qwen_dying_mid_turn_ends_the_session() {
    let fake = Fake::new("acp-session");
    let items = session(fake.acp_request("none"), &["die"], false, |_, _| {});
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            agent("dying", 6),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            turn_end(1, "error", counts.clone(), Some("dying")),
            ended("AgentExited", Some(3), counts),
        ]
    );
    assert!(gone(
        &std::fs::read_to_string(fake.path("pid")).expect("its pid")
    ));
}
