//! Gemini CLI's session (G13): its ACP mode, `gemini --acp --skip-trust`, driven by the ACP
//! session of `harness-agents-acp`, here against `fixtures/fake-agent/acp-session` as the
//! `gemini` binary. The ACP behaviour itself is tested in `harness-acp`; these tests prove the
//! command line, that turns and permission requests come through with ACP's tool names, and
//! that `resume` goes through `session/load`.

use fixtures::live::{Fake, drive_session, runtime, session_json};
use harness_agents_core::session::SessionItem;
use harness_agents_core::{Backend, Decision, EventBody, RunError, RunRequest};
use harness_agents_gemini::GeminiHarness;
use serde_json::{Value, json};

#[test]
fn g13_a_session_is_gemini_acp_with_acps_tool_names_and_the_callers_answers() {
    let fake = Fake::new("acp-session");
    let mut request = fake.acp_request("load");
    request.model = Some("gemini-x".into());
    request.permission_mode = Some("acceptEdits".into());
    request.extra_args = vec!["--debug".into()];
    let items = runtime().block_on(async {
        let session = GeminiHarness.session(request).await.expect("starts");
        session.prompt("ask").expect("open");
        drive_session(session, |handle, item| match item {
            SessionItem::Event(event) => {
                if let EventBody::Permission { id, .. } = &event.body {
                    handle
                        .answer(id.clone(), Decision::Allow, None)
                        .expect("open");
                }
            }
            SessionItem::TurnEnd(_) => handle.end_input().expect("open"),
            SessionItem::Ended(_) => {}
        })
        .await
    });
    let counts = json!({"agent": 1, "command": 1, "permission": 1});
    assert_eq!(
        session_json(&items),
        [
            json!({"kind": "permission", "id": "1", "options": ["allow", "allow_always", "deny"],
                "command": "touch made.txt", "input": {"command": "touch made.txt"},
                "expect": [{"kind": "command"}], "tool": "execute", "tool_use_id": "c1", "line": 6}),
            json!({"kind": "command", "command": "touch made.txt", "success": true,
                "tool": "execute", "tool_use_id": "c1", "line": 8}),
            json!({"kind": "agent", "text": "made it", "line": 9}),
            json!({"turn_end": 1, "status": "success", "counts": counts, "final_output": "made it"}),
            json!({"ended": "Caller", "exit_code": 0, "counts": counts}),
        ]
    );
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "--acp",
            "--skip-trust",
            "--model=gemini-x",
            "--approval-mode=auto_edit",
            "--debug"
        ]
    );
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/new", "session/prompt", "answer"]
    );
}

#[test]
fn g13_resume_goes_through_session_load_or_cannot_resume() {
    let fake = Fake::new("acp-session");
    let mut resumed = fake.acp_request("load");
    resumed.resume = Some("stored-1".into());
    let items = runtime().block_on(async {
        let session = GeminiHarness.session(resumed).await.expect("starts");
        session.prompt("plain").expect("open");
        session.end_input().expect("open");
        drive_session(session, |_, _| {}).await
    });
    let Some(SessionItem::Ended(end)) = items.last() else {
        panic!("an end");
    };
    assert_eq!(end.outcome.session_id.as_deref(), Some("stored-1"));
    assert_eq!(
        fake.acp_methods(),
        ["initialize", "session/load", "session/prompt"]
    );
    // An agent that advertises no way to resume is refused before any prompt.
    let fake = Fake::new("acp-session");
    let mut refused = fake.acp_request("none");
    refused.resume = Some("stored-1".into());
    let Err(err) = runtime().block_on(GeminiHarness.session(refused)) else {
        panic!("a session that cannot resume started");
    };
    assert!(
        matches!(&err, RunError::CannotResume { backend, .. } if backend == "gemini"),
        "{err:?}"
    );
}

/// I8: Gemini CLI's `sessionId` is named as its ACP session opens, before any prompt (A23);
/// a resumed session names the one loaded.
#[test]
fn g13_i8_the_session_is_named_before_any_prompt() {
    for (resume, named, opened) in [
        (None, "s1", "session/new"),
        (Some("stored-1"), "stored-1", "session/load"),
    ] {
        let fake = Fake::new("acp-session");
        let mut request = fake.acp_request("load");
        request.resume = resume.map(str::to_string);
        let (id, items) = fixtures::live::named_session(&GeminiHarness, request);
        assert_eq!(id.as_deref(), Some(named));
        assert_eq!(
            items,
            [json!({"ended": "Caller", "exit_code": 0, "counts": {}})]
        );
        assert_eq!(fake.acp_methods(), ["initialize", opened]);
    }
}

/// Runs a session of `request` with one prompt, nobody answering.
fn one_prompt(request: RunRequest, text: &str) -> Vec<Value> {
    let items = runtime().block_on(async {
        let session = GeminiHarness.session(request).await.expect("starts");
        session.prompt(text).expect("open");
        drive_session(session, |_, _| {}).await
    });
    session_json(&items)
}

/// Whether process `pid` (as written to a file) is gone: no such process, or a zombie.
fn gone(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    stat.is_err() || stat.is_ok_and(|s| s.contains(") Z "))
}

#[test]
fn g13_i6_gemini_dying_mid_turn_or_never_ready_ends_the_session() {
    let fake = Fake::new("acp-session");
    let pid = fake.path("pid");
    // The fake writes its pid to `pid`.
    let items = one_prompt(fake.acp_request("none"), "die");
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "agent", "text": "dying", "line": 6}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            json!({"turn_end": 1, "status": "error", "counts": counts, "final_output": "dying"}),
            json!({"ended": "AgentExited", "exit_code": 3, "counts": counts}),
        ]
    );
    assert!(gone(&std::fs::read_to_string(&pid).expect("its pid")));

    let fake = Fake::new("acp-session");
    let pid = fake.path("pid");
    // The fake writes its pid to `pid`.
    let mut request = fake.acp_request("none");
    request.env.insert("FAKE_MODE".into(), "never-ready".into());
    request.timeout = Some(std::time::Duration::from_secs(1));
    let items = one_prompt(request, "plain");
    let counts = json!({"error": 2});
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "the turn timed out after 1 second; the session is closed"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"turn_end": 1, "status": "error", "counts": counts}),
            json!({"ended": "TimedOut", "exit_code": null, "counts": counts}),
        ]
    );
    assert_eq!(fake.acp_methods(), ["initialize"]);
    assert!(gone(&std::fs::read_to_string(&pid).expect("its pid")));
}
