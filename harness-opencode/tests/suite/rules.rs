//! The P rules of `docs/opencode.md`, one test per rule or choice, on hand-made lines in the
//! shape the recordings show. Each compares whole serialized events.

use serde_json::{Value, json};

use super::run;

fn line(kind: &str, part: Value) -> Value {
    json!({"type": kind, "timestamp": 1, "sessionID": "ses_1", "part": part})
}

fn text(kind: &str, message: &str, text: &str) -> Value {
    line(
        kind,
        json!({"type": kind, "messageID": message, "text": text}),
    )
}

fn tool(tool: &str, id: &str, status: &str, input: Value, extra: Value) -> Value {
    let mut state = json!({"status": status, "input": input});
    if let (Some(state), Some(extra)) = (state.as_object_mut(), extra.as_object()) {
        state.extend(extra.clone());
    }
    line(
        "tool_use",
        json!({"type": "tool", "tool": tool, "callID": id, "messageID": "msg_1", "state": state}),
    )
}

fn finish(message: &str, reason: &str) -> Value {
    line(
        "step_finish",
        json!({"type": "step-finish", "messageID": message, "reason": reason,
               "tokens": {"input": 10, "output": 2, "reasoning": 1, "cache": {"read": 3, "write": 4}},
               "cost": 0.5}),
    )
}

#[test]
fn p3_reasoning_and_text_are_joined_per_message_reasoning_first_and_a_tool_flushes_them() {
    let (events, _) = run(&[
        text("text", "msg_1", "one"),
        text("reasoning", "msg_1", "think a"),
        text("text", "msg_1", ""),
        text("reasoning", "msg_1", "think b"),
        text("text", "msg_1", "two"),
        tool(
            "read",
            "t1",
            "completed",
            json!({"filePath": "a.txt"}),
            json!({}),
        ),
        text("text", "msg_1", "after"),
        text("text", "msg_2", "next message"),
        finish("msg_2", "stop"),
    ]);
    assert_eq!(
        events,
        [
            json!({"kind": "reasoning", "text": "think a\n\nthink b", "line": 5}),
            json!({"kind": "agent", "text": "one\n\ntwo", "line": 5}),
            json!({"kind": "read", "path": "/home/oc/project/a.txt", "success": true, "tool": "read", "tool_use_id": "t1", "line": 6}),
            json!({"kind": "agent", "text": "after", "line": 7}),
            json!({"kind": "agent", "text": "next message", "line": 8}),
        ]
    );
}

#[test]
fn p2_synthetic_text_is_opencode_s_own_and_not_the_agent_s() {
    let mut synthetic = text("text", "msg_2", "The conversation was compacted.");
    synthetic["part"]["synthetic"] = json!(true);
    let (events, outcome) = run(&[synthetic, finish("msg_3", "stop")]);
    assert_eq!(events, Vec::<Value>::new());
    assert_eq!(outcome["status"], "success");
}

#[test]
fn p6_edits_and_patches_give_one_write_per_file_with_its_change() {
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch";
    let (events, _) = run(&[
        tool(
            "multiedit",
            "t1",
            "completed",
            json!({"filePath": "/p/m.rs", "edits": []}),
            json!({}),
        ),
        tool(
            "apply_patch",
            "t2",
            "completed",
            json!({"patchText": patch}),
            json!({}),
        ),
        tool(
            "patch",
            "t3",
            "error",
            json!({"patchText": "*** Update File: b.rs"}),
            json!({"error": "no match"}),
        ),
        tool(
            "write",
            "t4",
            "completed",
            json!({"filePath": "w.txt", "content": "x"}),
            json!({"metadata": {"exists": true}}),
        ),
        finish("msg_1", "stop"),
    ]);
    let write = |path: &str, change: &str, tool: &str, id: &str, line: u64| json!({"kind": "write", "path": path, "change": change, "success": true, "tool": tool, "tool_use_id": id, "line": line});
    assert_eq!(
        events,
        [
            write("/p/m.rs", "update", "multiedit", "t1", 1),
            write("/home/oc/project/new.txt", "add", "apply_patch", "t2", 2),
            write(
                "/home/oc/project/src/a.rs",
                "update",
                "apply_patch",
                "t2",
                2
            ),
            write("/home/oc/project/old.txt", "delete", "apply_patch", "t2", 2),
            json!({"kind": "write", "path": "/home/oc/project/b.rs", "change": "update", "success": false, "error": "no match", "tool": "patch", "tool_use_id": "t3", "line": 3}),
            write("/home/oc/project/w.txt", "update", "write", "t4", 4),
        ]
    );
}

#[test]
fn p6_list_grep_glob_and_read_ranges() {
    let (events, _) = run(&[
        tool("list", "t1", "completed", json!({"path": "src"}), json!({})),
        tool(
            "grep",
            "t2",
            "completed",
            json!({"pattern": "fn", "path": "", "include": "*.rs"}),
            json!({}),
        ),
        tool(
            "read",
            "t3",
            "completed",
            json!({"filePath": "a", "offset": 0, "limit": 0}),
            json!({}),
        ),
        tool(
            "read",
            "t4",
            "completed",
            json!({"filePath": "b", "limit": 5}),
            json!({}),
        ),
        finish("msg_1", "stop"),
    ]);
    assert_eq!(
        events,
        [
            json!({"kind": "list", "path": "/home/oc/project/src", "success": true, "tool": "list", "tool_use_id": "t1", "line": 1}),
            json!({"kind": "search", "query": "fn", "success": true, "tool": "grep", "tool_use_id": "t2", "line": 2}),
            json!({"kind": "read", "path": "/home/oc/project/a", "range": {"start": 1, "end": null}, "success": true, "tool": "read", "tool_use_id": "t3", "line": 3}),
            json!({"kind": "read", "path": "/home/oc/project/b", "range": {"start": 1, "end": 5}, "success": true, "tool": "read", "tool_use_id": "t4", "line": 4}),
        ]
    );
}

#[test]
fn p5_a_tool_part_without_name_or_state_or_with_a_bad_field_is_malformed() {
    let no_state = line(
        "tool_use",
        json!({"type": "tool", "tool": "read", "callID": "t1"}),
    );
    let bad_offset = tool(
        "read",
        "t2",
        "completed",
        json!({"filePath": "a", "offset": "2"}),
        json!({}),
    );
    let (events, _) = run(&[
        no_state.clone(),
        bad_offset.clone(),
        finish("msg_1", "stop"),
    ]);
    assert_eq!(
        events,
        [
            json!({"kind": "unknown", "reason": "malformed_tool_use", "raw": no_state["part"], "tool": "read", "tool_use_id": "t1", "line": 1}),
            json!({"kind": "unknown", "reason": "malformed_tool_use", "raw": bad_offset["part"], "tool": "read", "tool_use_id": "t2", "line": 2}),
        ]
    );
}

#[test]
fn p6_a_failed_todowrite_is_a_warning_and_unknown_tools_are_unknown() {
    let todo = tool(
        "todowrite",
        "t1",
        "error",
        json!({"todos": []}),
        json!({"error": "bad list"}),
    );
    let web = tool(
        "webfetch",
        "t2",
        "completed",
        json!({"url": "x"}),
        json!({}),
    );
    let (events, _) = run(&[todo, web.clone(), finish("msg_1", "stop")]);
    assert_eq!(
        events,
        [
            json!({"kind": "warning", "message": "todowrite failed: bad list", "source": "stream", "line": 1}),
            json!({"kind": "unknown", "reason": "unknown_tool", "raw": web["part"], "tool": "webfetch", "tool_use_id": "t2", "line": 2}),
        ]
    );
}

#[test]
fn p7_a_running_tool_is_pending_until_it_finishes_and_unresolved_at_the_end() {
    let running = tool(
        "bash",
        "t1",
        "running",
        json!({"command": "sleep 1"}),
        json!({}),
    );
    let done = tool(
        "bash",
        "t1",
        "completed",
        json!({"command": "sleep 1"}),
        json!({"metadata": {"exit": 0}}),
    );
    let left = tool("read", "t2", "pending", json!({"filePath": "a"}), json!({}));
    let (events, outcome) = run(&[running, done, left.clone()]);
    assert_eq!(
        events,
        [
            json!({"kind": "command", "command": "sleep 1", "exit_code": 0, "success": true, "tool": "bash", "tool_use_id": "t1", "line": 2}),
            json!({"kind": "unknown", "reason": "unresolved_tool_use", "raw": left["part"], "tool": "read", "tool_use_id": "t2"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(outcome["status"], "incomplete");
}

#[test]
fn p10_p11_only_a_step_that_does_not_call_tools_ends_the_turn_and_every_step_is_counted() {
    let (events, outcome) = run(&[
        text("text", "msg_1", "calling"),
        finish("msg_1", "tool-calls"),
        text("text", "msg_2", "answer"),
        finish("msg_2", "stop"),
    ]);
    assert_eq!(events.len(), 2);
    assert_eq!(outcome["status"], "success");
    assert_eq!(outcome["final_output"], "answer");
    assert_eq!(
        outcome["metrics"],
        json!({"input_tokens": 20, "output_tokens": 4, "cache_read_input_tokens": 6,
               "cache_creation_input_tokens": 8, "reasoning_output_tokens": 2,
               "total_cost_usd": 1.0, "num_turns": 2})
    );
    let (_, cut) = run(&[
        text("text", "msg_1", "calling"),
        finish("msg_1", "tool-calls"),
    ]);
    assert_eq!(cut["status"], "incomplete");
    assert_eq!(cut.get("final_output"), None);
}

#[test]
fn p13_an_error_line_is_an_error_event_and_fails_the_run() {
    let api = json!({"type": "error", "sessionID": "ses_1", "error": {"name": "APIError", "data": {"message": "overloaded", "statusCode": 529}}});
    let named = json!({"type": "error", "sessionID": "ses_1", "error": {"name": "UnknownError", "data": {}}});
    let bare = json!({"type": "error"});
    let (events, outcome) = run(&[api, named, bare]);
    assert_eq!(
        events,
        [
            json!({"kind": "error", "message": "overloaded", "line": 1}),
            json!({"kind": "error", "message": "UnknownError", "line": 2}),
            json!({"kind": "error", "message": "error", "line": 3}),
        ]
    );
    assert_eq!(outcome["status"], "error");
    assert_eq!(outcome["session_id"], "ses_1");
}

#[test]
fn p1_other_types_and_malformed_lines_are_unknown() {
    let mystery = json!({"type": "mystery", "sessionID": "ses_9"});
    let no_part = json!({"type": "text", "sessionID": "ses_9"});
    let bad_text = line("text", json!({"type": "text", "messageID": "m", "text": 5}));
    let (events, outcome) = run(&[
        mystery.clone(),
        no_part.clone(),
        bad_text.clone(),
        json!([1]),
    ]);
    assert_eq!(
        events,
        [
            json!({"kind": "unknown", "reason": "unknown_type", "raw": mystery, "line": 1}),
            json!({"kind": "unknown", "reason": "malformed_message", "raw": no_part, "line": 2}),
            json!({"kind": "unknown", "reason": "malformed_message", "raw": bad_text, "line": 3}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1], "line": 4}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(outcome["session_id"], "ses_9");
}

#[test]
fn p6c_a_command_that_exits_non_zero_or_is_killed_failed_with_its_output_as_error() {
    let failed = tool(
        "bash",
        "t1",
        "completed",
        json!({"command": "make"}),
        json!({"output": "boom", "metadata": {"exit": 2}}),
    );
    let killed = tool(
        "bash",
        "t2",
        "completed",
        json!({"command": "sleep 5", "timeout": 1000}),
        json!({"output": "terminated", "metadata": {"exit": null}}),
    );
    let ok = tool(
        "bash",
        "t3",
        "completed",
        json!({"command": "true", "workdir": "sub"}),
        json!({"output": "", "metadata": {"exit": 0}}),
    );
    let (events, _) = run(&[failed, killed, ok, finish("msg_1", "stop")]);
    assert_eq!(
        events,
        [
            json!({"kind": "command", "command": "make", "exit_code": 2, "success": false, "error": "boom", "tool": "bash", "tool_use_id": "t1", "line": 1}),
            json!({"kind": "command", "command": "sleep 5", "success": false, "error": "terminated", "tool": "bash", "tool_use_id": "t2", "line": 2}),
            json!({"kind": "command", "command": "true", "exit_code": 0, "success": true, "tool": "bash", "tool_use_id": "t3", "line": 3}),
        ]
    );
}

#[test]
fn s2_a_line_is_json_exactly_when_a_value_parse_says_so_even_in_fields_no_rule_reads() {
    let surrogate = r#"{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"read","callID":"t","state":{"status":"completed","input":{"filePath":"a"},"output":"\ud800"}}}"#;
    let huge =
        r#"{"type":"step_start","sessionID":"s","timestamp":1e400,"part":{"type":"step-start"}}"#;
    let mut normalizer = harness_agents_opencode::OpencodeNormalizer::new(super::config());
    let mut events = Vec::new();
    use harness_agents_core::Normalizer;
    normalizer.push_line(surrogate.as_bytes(), &mut events);
    normalizer.push_line(huge.as_bytes(), &mut events);
    let kinds: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap()["source"].clone())
        .collect();
    assert_eq!(kinds, [json!("non_json"), json!("non_json")]);
}
