//! harness-acp's messages against the protocol's official types (`docs/acp.md`, A1 and
//! A12-A15): every recorded transcript, and every message the client writes.

use std::path::PathBuf;

use acp_schema_check::{Checked, check_transcript, transcripts};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/acp")
}

fn check(path: &std::path::Path) -> Checked {
    let text = std::fs::read_to_string(path).unwrap();
    check_transcript(&text)
        .unwrap_or_else(|failures| panic!("{}:\n{}", path.display(), failures.join("\n")))
}

#[test]
fn every_recorded_message_parses_with_the_official_types() {
    let paths = transcripts(&fixtures()).unwrap();
    // The 34 recordings (Gemini CLI, opencode, the Copilot CLI and Qwen Code) and the client's
    // messages.
    assert_eq!(paths.len(), 35, "{paths:#?}");
    let mut failures = Vec::new();
    let mut total = 0;
    let mut messages = 0;
    for path in &paths {
        let text = std::fs::read_to_string(path).unwrap();
        messages += text
            .lines()
            .filter(|l| l.contains(r#","message":"#))
            .count();
        match check_transcript(&text) {
            Ok(checked) => {
                // Every recording starts a session and prompts it.
                assert!(
                    checked.count("client", "request", "initialize") == 1,
                    "{}",
                    path.display()
                );
                assert!(
                    checked.count("agent", "result", "session/new") == 1,
                    "{}",
                    path.display()
                );
                total += checked.total();
            }
            Err(f) => failures.push(format!("{}:\n{}", path.display(), f.join("\n"))),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    // Every message was checked (only the agent's non-JSON lines are skipped).
    assert_eq!(total, messages);
    assert_eq!(total, 427);
}

#[test]
fn every_message_the_client_writes_parses_with_the_official_types() {
    let checked = check(&fixtures().join("client/messages.jsonl"));
    for method in ["initialize", "session/new", "session/prompt"] {
        assert_eq!(checked.count("client", "request", method), 1, "{method}");
    }
    assert_eq!(checked.count("client", "notification", "session/cancel"), 1);
    // Allowed, rejected, cancelled (no fitting option).
    assert_eq!(
        checked.count("client", "result", "session/request_permission"),
        3
    );
    // -32601 for a method the client does not serve; -32602 for a permission request without
    // options (the file leaves that request out: the official types reject it too).
    assert_eq!(checked.count("client", "error", "fs/read_text_file"), 1);
    assert_eq!(checked.count("client", "error", ""), 1);
    // Every line: the 9 client messages and the 6 agent messages they follow or answer.
    assert_eq!(checked.total(), 15);
}

#[test]
fn messages_the_official_types_reject_are_reported() {
    let bad = [
        // `session/new` without `cwd`.
        r#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"mcpServers":[]}}}"#,
        // An unknown update kind.
        r#"{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"nope"}}}}"#,
        // A permission answer with an unknown outcome.
        r#"{"from":"agent","message":{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[]}}}"#,
        r#"{"from":"client","message":{"jsonrpc":"2.0","id":5,"result":{"outcome":{"outcome":"maybe"}}}}"#,
        // An answer to nothing.
        r#"{"from":"agent","message":{"jsonrpc":"2.0","id":9,"result":{}}}"#,
        // Not JSON-RPC 2.0.
        r#"{"from":"agent","message":{"jsonrpc":"1.0","method":"session/update","params":{}}}"#,
    ]
    .join("\n");
    let failures = check_transcript(&bad).unwrap_err();
    let lines: Vec<&str> = failures
        .iter()
        .map(|f| f.split(':').next().unwrap())
        .collect();
    assert_eq!(
        lines,
        ["line 1", "line 2", "line 4", "line 5", "line 6"],
        "{failures:#?}"
    );
}

/// The edge cases `harness-acp`'s own views are tested on (`wire.rs`), read by the official
/// types: the same accepted, the same rejected.
#[test]
fn the_official_types_read_harness_acps_edge_cases_the_same_way() {
    use agent_client_protocol_schema::v1::{
        Plan, PlanEntryStatus, RequestPermissionRequest, ToolCallContent, ToolKind,
    };
    use serde_json::{Value, json};

    let read = |params: Value| serde_json::from_value::<RequestPermissionRequest>(params);
    let option = json!({"optionId": "o", "name": "Once", "kind": "allow_once"});
    let request = read(json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "kind": "think"}, "options": [option]})).unwrap();
    assert_eq!(request.tool_call.fields.kind, Some(ToolKind::Think));
    let request =
        read(json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "kind": 3}, "options": []}))
            .unwrap();
    assert_eq!(request.tool_call.fields.kind, None);
    for params in [
        json!({"sessionId": "s", "toolCall": {"toolCallId": "t"}}),
        json!({"sessionId": "s", "toolCall": {"toolCallId": 7}, "options": []}),
        json!({"sessionId": "s", "toolCall": ["t"], "options": []}),
        json!({"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": [{"optionId": "o", "name": "N", "kind": "maybe"}]}),
        json!({"toolCall": {"toolCallId": "t"}, "options": []}),
    ] {
        assert!(read(params.clone()).is_err(), "{params}");
    }

    let plan = |update: Value| {
        serde_json::from_value::<Plan>(update)
            .map(|p| p.entries.into_iter().map(|e| e.status).collect::<Vec<_>>())
    };
    let entry = |status: &str| json!({"content": "x", "priority": "high", "status": status});
    assert_eq!(
        plan(json!({"entries": [entry("completed"), entry("done"), {"content": "y", "status": "pending"}, entry("in_progress")]})).unwrap(),
        [PlanEntryStatus::Completed, PlanEntryStatus::InProgress]
    );
    assert!(plan(json!({"entries": "none"})).unwrap().is_empty());
    assert!(plan(json!({"sessionUpdate": "plan"})).is_err());

    let content =
        |items: Value| serde_json::from_value::<Vec<ToolCallContent>>(items).map(|v| v.len());
    assert_eq!(
        content(json!([
            {"type": "content", "content": {"type": "text", "text": "hi"}},
            {"type": "content", "content": {"type": "image", "data": "", "mimeType": "image/png"}},
            {"type": "content", "content": {"type": "resource", "resource": {"blob": "", "uri": "u"}}},
            {"type": "diff", "path": "/a", "oldText": 3, "newText": "b"},
            {"type": "terminal", "terminalId": "t"},
        ]))
        .unwrap(),
        5
    );
    for bad in [
        json!([{"type": "diff", "path": "/a"}]),
        json!([{"type": "content", "content": {"type": "image", "data": ""}}]),
        json!([{"type": "content", "content": {"type": "resource", "resource": {"uri": "u"}}}]),
        json!([{"type": "video"}]),
    ] {
        assert!(content(bad.clone()).is_err(), "{bad}");
    }
}

/// `harness acp`, the other side (`docs/acp-agent.md`): recorded conversations of an ACP
/// client with it, and an update of every kind it makes, all kept current by `harness-cli`'s
/// tests (`acp_agent`, and `acp::updates`). Here `agent` is what harness wrote.
#[test]
fn every_message_harness_acp_writes_parses_with_the_official_types() {
    let checked = check(&fixtures().join("../acp-agent/conversation.jsonl"));
    for method in ["initialize", "session/new", "session/set_mode"] {
        assert_eq!(checked.count("agent", "result", method), 1, "{method}");
    }
    // Ended, allowed, cancelled; then the turn whose agent died is an error answer.
    assert_eq!(checked.count("agent", "result", "session/prompt"), 3);
    assert_eq!(checked.count("agent", "error", "session/prompt"), 1);
    assert_eq!(checked.count("agent", "notification", "session/update"), 12);
    assert_eq!(
        checked.count("agent", "request", "session/request_permission"),
        1
    );
    assert_eq!(
        checked.count("client", "result", "session/request_permission"),
        1
    );
    assert_eq!(checked.count("client", "notification", "session/cancel"), 1);
    assert_eq!(checked.total(), 29);

    // A backend that names its sessions itself (AA3, AA4): `session/new` answered with its
    // id, a `session/load` it could not resume opened as new, a turn.
    let checked = check(&fixtures().join("../acp-agent/named.jsonl"));
    for method in ["initialize", "session/new", "session/load", "session/prompt"] {
        assert_eq!(checked.count("agent", "result", method), 1, "{method}");
    }
    assert_eq!(checked.count("agent", "notification", "session/update"), 2);
    assert_eq!(checked.total(), 10);

    // Every event kind's update (AA8-AA11) and a usage update (AA10).
    let checked = check(&fixtures().join("../acp-agent/updates.jsonl"));
    assert_eq!(checked.count("agent", "notification", "session/update"), 14);
    assert_eq!(checked.total(), 14);
}

/// A16-A22: every message of every recorded session (`fixtures/acp-session/`: several
/// prompts, permission answers chosen by the caller, `cancelled` answers and `session/cancel`,
/// `session/load` and `session/resume`) parses with the official types.
#[test]
fn every_recorded_session_message_parses_with_the_official_types() {
    let dir = fixtures().join("../acp-session");
    let paths = transcripts(&dir).unwrap();
    assert_eq!(paths.len(), 15, "{paths:#?}");
    let mut reopened = 0;
    for path in &paths {
        let checked = check(path);
        assert_eq!(checked.count("client", "request", "initialize"), 1);
        reopened += checked.count("client", "request", "session/load")
            + checked.count("client", "request", "session/resume");
    }
    assert_eq!(reopened, 2);
}

/// QW13-QW16: every message of every recorded Qwen Code session (`fixtures/qwen-session/`:
/// `qwen --acp` over several prompts, its vendor request and notification, `session/resume`)
/// parses with the official types.
#[test]
fn every_recorded_qwen_session_message_parses_with_the_official_types() {
    let dir = fixtures().join("../qwen-session");
    let paths = transcripts(&dir).unwrap();
    assert_eq!(paths.len(), 7, "{paths:#?}");
    let (mut resumed, mut drains, mut modes) = (0, 0, 0);
    for path in &paths {
        let checked = check(path);
        assert_eq!(checked.count("client", "request", "initialize"), 1);
        resumed += checked.count("client", "request", "session/resume");
        drains += checked.count("agent", "vendor_request", "craft/drainMidTurnQueue");
        modes += checked.count(
            "agent",
            "vendor_notification",
            "qwen/notify/session/mode-update",
        );
        // A14: every vendor request is answered with an error.
        assert_eq!(
            checked.count("client", "error", "craft/drainMidTurnQueue"),
            checked.count("agent", "vendor_request", "craft/drainMidTurnQueue"),
            "{}",
            path.display()
        );
    }
    assert_eq!((resumed, drains, modes), (1, 2, 1));
}
