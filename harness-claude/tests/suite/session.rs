//! A session's control lines (CS1-CS4, `docs/claude-session.md`): a permission request is a
//! `permission` event with what the tool would do (I4); the other control lines are the
//! session's business and emit nothing.

use serde_json::json;

use harness_agents_core::NormalizerConfig;

use super::{events, events_with};

/// The settings of a session's stream: the CS rules on.
fn session() -> NormalizerConfig {
    let mut config = NormalizerConfig::default();
    config.session = true;
    config
}

fn request(id: &str, tool: &str, input: serde_json::Value) -> String {
    json!({
        "type": "control_request",
        "request_id": id,
        "request": {
            "subtype": "can_use_tool",
            "tool_name": tool,
            "display_name": tool,
            "input": input,
            "tool_use_id": "toolu_9",
            "permission_suggestions": [],
        },
    })
    .to_string()
}

#[test]
fn cs1_a_shell_request_names_the_command_and_its_classification() {
    let got = events_with(
        session(),
        &[request(
            "r1",
            "Bash",
            json!({"command": "cat src/a.rs", "description": "show it"}),
        )],
    );
    assert_eq!(
        got,
        [json!({
            "kind": "permission",
            "id": "r1",
            "options": ["allow", "allow_always", "deny"],
            "command": "cat src/a.rs",
            "expect": [{"kind": "read", "path": "src/a.rs"}],
            "input": {"command": "cat src/a.rs", "description": "show it"},
            "tool": "Bash",
            "tool_use_id": "toolu_9",
            "line": 1,
        })]
    );
}

#[test]
fn cs1_a_file_request_names_the_path() {
    let got = events_with(
        session(),
        &[request(
            "r2",
            "Write",
            json!({"file_path": "/p/notes.md", "content": "hello"}),
        )],
    );
    assert_eq!(
        got,
        [json!({
            "kind": "permission",
            "id": "r2",
            "options": ["allow", "allow_always", "deny"],
            "path": "/p/notes.md",
            "expect": [{"kind": "write", "path": "/p/notes.md"}],
            "input": {"file_path": "/p/notes.md", "content": "hello"},
            "tool": "Write",
            "tool_use_id": "toolu_9",
            "line": 1,
        })]
    );
}

#[test]
fn cs1_an_unmapped_tool_keeps_its_input_for_the_caller() {
    let got = events_with(
        session(),
        &[request("r3", "mcp__db__drop", json!({"table": "users"}))],
    );
    assert_eq!(
        got,
        [json!({
            "kind": "permission",
            "id": "r3",
            "options": ["allow", "allow_always", "deny"],
            "input": {"table": "users"},
            "tool": "mcp__db__drop",
            "tool_use_id": "toolu_9",
            "line": 1,
        })]
    );
}

#[test]
fn cs2_to_cs4_the_session_s_own_lines_emit_nothing() {
    let got = events_with(
        session(),
        &[
            json!({"type": "control_request", "request_id": "h1",
               "request": {"subtype": "hook_callback", "callback_id": "hook_0"}})
            .to_string(),
            json!({"type": "control_response",
               "response": {"subtype": "success", "request_id": "int_1",
                            "response": {"still_queued": []}}})
            .to_string(),
            json!({"type": "control_cancel_request", "request_id": "r1"}).to_string(),
        ],
    );
    assert_eq!(got, Vec::<serde_json::Value>::new());
}

#[test]
fn cs2_a_request_nobody_could_answer_is_kept_as_unknown() {
    let line = json!({"type": "control_request",
                      "request": {"subtype": "can_use_tool", "tool_name": "Bash"}});
    let got = events_with(session(), &[line.to_string()]);
    assert_eq!(
        got,
        [json!({"kind": "unknown", "reason": "malformed_message", "raw": line, "line": 1})]
    );
    let line = json!({"type": "control_request", "request_id": "r",
                      "request": {"subtype": "can_use_tool", "input": {}}});
    let got = events_with(session(), &[line.to_string()]);
    assert_eq!(
        got,
        [json!({"kind": "unknown", "reason": "malformed_message", "raw": line, "line": 1})]
    );
}

#[test]
fn c8_outside_a_session_control_lines_stay_unknown() {
    let line = json!({"type": "control_cancel_request", "request_id": "r1"});
    assert_eq!(
        events(&[line.to_string()]),
        [json!({"kind": "unknown", "reason": "unknown_type", "raw": line, "line": 1})]
    );
    let line: serde_json::Value =
        serde_json::from_str(&request("r1", "Bash", json!({"command": "ls"}))).unwrap();
    assert_eq!(
        events(&[line.to_string()]),
        [json!({"kind": "unknown", "reason": "unknown_type", "raw": line, "line": 1})]
    );
}
