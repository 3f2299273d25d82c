//! Copilot's session (CP15-CP18): its ACP mode, `copilot --acp --no-auto-update`, driven by the
//! ACP session of `harness-agents-acp`, here against `fixtures/fake-agent/acp-session` as the
//! `copilot` binary. The ACP behaviour itself is tested in `harness-acp`; these tests prove the
//! command line and the permission flags, that turns, permission requests and interrupts come
//! through with ACP's tool names, Copilot's early update and exit codes, and that `resume`
//! goes through `session/load`.

use fixtures::live::{Fake, drive_session, runtime, session_json};
use harness_agents_copilot::CopilotHarness;
use harness_agents_core::session::SessionItem;
use harness_agents_core::{Backend, Decision, EventBody, RunError};
use serde_json::json;

#[test]
fn cp15_cp17_a_session_is_copilot_acp_with_acps_tool_names_and_the_callers_answers() {
    let fake = Fake::new("acp-session");
    let mut request = fake.acp_request("load");
    request.model = Some("gpt-x".into());
    request.permission_mode = Some("acceptEdits".into());
    request.extra_args = vec!["--log-level=none".into()];
    let items = runtime().block_on(async {
        let session = CopilotHarness.session(request).await.expect("starts");
        session.prompt("ask").expect("open");
        session.prompt("ask").expect("open");
        let mut answers = [Decision::Allow, Decision::Deny].into_iter();
        drive_session(session, move |handle, item| match item {
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
        })
        .await
    });
    let ask = |id: &str, call: &str, line: u64| {
        json!({"kind": "permission", "id": id, "options": ["allow", "allow_always", "deny"],
            "command": "touch made.txt", "input": {"command": "touch made.txt"},
            "expect": [{"kind": "command"}], "tool": "execute", "tool_use_id": call, "line": line})
    };
    let first = json!({"agent": 1, "command": 1, "permission": 1});
    assert_eq!(
        session_json(&items),
        [
            ask("1", "c1", 6),
            json!({"kind": "command", "command": "touch made.txt", "success": true,
                "tool": "execute", "tool_use_id": "c1", "line": 8}),
            json!({"kind": "agent", "text": "made it", "line": 9}),
            json!({"turn_end": 1, "status": "success", "counts": first, "final_output": "made it"}),
            ask("2", "c2", 12),
            json!({"kind": "command", "command": "touch made.txt", "success": false,
                "error": "rejected", "tool": "execute", "tool_use_id": "c2", "line": 14}),
            json!({"kind": "agent", "text": "denied", "line": 15}),
            json!({"turn_end": 2, "status": "success", "counts": first, "final_output": "denied"}),
            json!({"ended": "Caller", "exit_code": 0,
                "counts": {"agent": 2, "command": 2, "permission": 2}}),
        ]
    );
    // CP15, CP17: the ACP mode, the model, `acceptEdits` as Copilot's write rule, the extra
    // arguments; no prompt and no `--output-format` on the command line.
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "--acp",
            "--no-auto-update",
            "--model=gpt-x",
            "--allow-tool=write",
            "--log-level=none"
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
}

#[test]
fn cp17_bypass_permissions_is_allow_all_tools_and_no_request_reaches_the_caller() {
    let fake = Fake::new("acp-session");
    let mut request = fake.acp_request("none");
    request.permission_mode = Some("bypassPermissions".into());
    let items = runtime().block_on(async {
        let session = CopilotHarness.session(request).await.expect("starts");
        session.prompt("ask").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let counts = json!({"agent": 1, "command": 1});
    assert_eq!(
        session_json(&items),
        [
            json!({"kind": "command", "command": "touch made.txt", "success": true,
                "tool": "execute", "tool_use_id": "c1", "line": 8}),
            json!({"kind": "agent", "text": "made it", "line": 9}),
            json!({"turn_end": 1, "status": "success", "counts": counts, "final_output": "made it"}),
            json!({"ended": "Caller", "exit_code": 0, "counts": counts}),
        ]
    );
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        ["--acp", "--no-auto-update", "--allow-all-tools"]
    );
}

#[test]
fn cp16_an_early_update_a_failing_command_and_the_sessions_usage_so_far() {
    let fake = Fake::new("acp-session");
    let mut request = fake.acp_request("none");
    request.env.insert("FAKE_EARLY".into(), "1".into());
    request.env.insert("FAKE_NAME".into(), "Copilot".into());
    let items = runtime().block_on(async {
        let session = CopilotHarness.session(request).await.expect("starts");
        session.prompt("fail").expect("open");
        session.prompt("fail").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let failed = |call: &str, line: u64| {
        json!({"kind": "command", "command": "false", "exit_code": 1, "success": false,
            "error": "<exit 1>", "tool": "execute", "tool_use_id": call, "line": line})
    };
    let turn = json!({"agent": 1, "command": 1});
    assert_eq!(
        session_json(&items),
        [
            failed("f1", 8),
            json!({"kind": "agent", "text": "failed", "line": 9}),
            json!({"turn_end": 1, "status": "success", "counts": turn, "final_output": "failed"}),
            failed("f2", 13),
            json!({"kind": "agent", "text": "failed", "line": 14}),
            json!({"turn_end": 2, "status": "success", "counts": turn, "final_output": "failed"}),
            json!({"ended": "Caller", "exit_code": 0, "counts": {"agent": 2, "command": 2}}),
        ]
    );
    let Some(SessionItem::Ended(end)) = items.last() else {
        panic!("an end");
    };
    // The update before `session/new`'s answer names the session the answer names.
    assert_eq!(end.outcome.session_id.as_deref(), Some("s1"));
    // A10a: the second answer's usage is the session's so far, not added to the first's.
    assert_eq!(
        serde_json::to_value(&end.outcome.metrics).expect("serializes"),
        json!({"input_tokens": 20, "output_tokens": 2, "num_turns": 2})
    );
}

#[test]
fn cp18_interrupt_cancels_the_waiting_request_then_the_turn_and_the_session_goes_on() {
    let fake = Fake::new("acp-session");
    let request = fake.acp_request("none");
    let items = runtime().block_on(async {
        let session = CopilotHarness.session(request).await.expect("starts");
        session.prompt("ask").expect("open");
        drive_session(session, |handle, item| match item {
            SessionItem::Event(event) if matches!(event.body, EventBody::Permission { .. }) => {
                handle.interrupt().expect("open");
            }
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(1) => {
                handle.prompt("plain").expect("open");
                handle.end_input().expect("open");
            }
            _ => {}
        })
        .await
    });
    let first = json!({"command": 1, "error": 1, "permission": 1});
    let second = json!({"agent": 1});
    assert_eq!(
        session_json(&items),
        [
            json!({"kind": "permission", "id": "1", "options": ["allow", "allow_always", "deny"],
                "command": "touch made.txt", "input": {"command": "touch made.txt"},
                "expect": [{"kind": "command"}], "tool": "execute", "tool_use_id": "c1", "line": 6}),
            json!({"kind": "command", "command": "touch made.txt", "success": false,
                "error": "cancelled", "tool": "execute", "tool_use_id": "c1", "line": 9}),
            json!({"kind": "error", "message": "the agent's turn ended: cancelled", "line": 10}),
            json!({"turn_end": 1, "status": "interrupted", "counts": first}),
            json!({"kind": "agent", "text": "plain 2", "line": 12}),
            json!({"turn_end": 2, "status": "success", "counts": second, "final_output": "plain 2"}),
            json!({"ended": "Caller", "exit_code": 0,
                "counts": {"agent": 1, "command": 1, "error": 1, "permission": 1}}),
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
}

#[test]
fn cp18_resume_goes_through_session_load_or_cannot_resume() {
    let fake = Fake::new("acp-session");
    let mut resumed = fake.acp_request("load");
    resumed.resume = Some("stored-1".into());
    let items = runtime().block_on(async {
        let session = CopilotHarness.session(resumed).await.expect("starts");
        session.prompt("plain").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let counts = json!({"agent": 1});
    assert_eq!(
        session_json(&items),
        [
            json!({"kind": "agent", "text": "plain 1", "line": 8}),
            json!({"turn_end": 1, "status": "success", "counts": counts, "final_output": "plain 1"}),
            json!({"ended": "Caller", "exit_code": 0, "counts": counts}),
        ]
    );
    let Some(SessionItem::Ended(end)) = items.last() else {
        panic!("an end");
    };
    assert_eq!(end.outcome.session_id.as_deref(), Some("stored-1"));
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/load", "session/prompt"]
    );
    // No `--resume` on the command line: the stored session is reopened over ACP.
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        ["--acp", "--no-auto-update"]
    );
    // An agent that advertises no way to resume is refused before any prompt.
    let fake = Fake::new("acp-session");
    let mut refused = fake.acp_request("none");
    refused.resume = Some("stored-1".into());
    let Err(err) = runtime().block_on(CopilotHarness.session(refused)) else {
        panic!("a session that cannot resume started");
    };
    assert!(
        matches!(&err, RunError::CannotResume { backend, .. } if backend == "copilot"),
        "{err:?}"
    );
}
