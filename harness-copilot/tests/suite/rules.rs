//! The CP rules of `docs/copilot.md` on small hand-made streams; each test names its rule and
//! compares whole events.

use harness_agents_core::NormalizerConfig;
use serde_json::{Value, json};

use super::{done, ephemeral, failed, line, message, result, run, run_with, shell_done, start};

/// The events of `lines` followed by a successful `result`.
fn events(lines: &[Value]) -> Vec<Value> {
    let mut all = lines.to_vec();
    all.push(result("s-1", 0));
    run(&all).events
}

#[test]
fn cp1_unknown_types_lines_that_are_no_events_and_data_that_is_no_object_are_kept() {
    let got = events(&[
        line("session.surprise", json!({"x": 1})),
        json!([1, 2]),
        json!({"no": "type"}),
        json!({"type": "assistant.message", "data": "text"}),
        Value::String("not json".into()),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "unknown_type",
                "raw": {"type": "session.surprise", "data": {"x": 1}}, "line": 1}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1, 2], "line": 2}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"no": "type"}, "line": 3}),
            json!({"kind": "unknown", "reason": "malformed_message",
                "raw": {"type": "assistant.message", "data": "text"}, "line": 4}),
            json!({"kind": "warning", "source": "non_json", "message": "not json", "line": 5}),
        ]
    );
}

#[test]
fn cp2_the_session_id_is_the_result_lines() {
    let got = run(&[
        line(
            "user.message",
            json!({"content": "hi", "sessionId": "not-this"}),
        ),
        result("s-9", 0),
    ]);
    assert_eq!(got.events, Vec::<Value>::new());
    assert_eq!(got.outcome["session_id"], "s-9");
}

#[test]
fn cp3_cp4_bookkeeping_and_the_echoed_prompt_emit_nothing() {
    let got = run(&[
        ephemeral("session.skills_loaded", json!({"skills": []})),
        ephemeral("session.mcp_servers_loaded", json!({"servers": []})),
        ephemeral("session.tools_updated", json!({"model": "gpt-4.1"})),
        line(
            "user.message",
            json!({"content": "do it", "transformedContent": "x\n\ndo it"}),
        ),
        line("assistant.turn_start", json!({"turnId": "0"})),
        ephemeral(
            "model.call_start",
            json!({"turnId": "0", "model": "gpt-4.1"}),
        ),
        ephemeral(
            "model.call_finished",
            json!({"turnId": "0", "outcome": "success"}),
        ),
        ephemeral("model.call_final_result", json!({"result": "success"})),
        ephemeral("session.background_tasks_changed", json!({})),
        ephemeral(
            "session.info",
            json!({"infoType": "file_created", "message": "/p/a"}),
        ),
        line("assistant.turn_end", json!({"turnId": "0"})),
        ephemeral("assistant.idle", json!({})),
        result("s-1", 0),
    ]);
    assert_eq!(got.events, Vec::<Value>::new());
    assert_eq!(got.outcome["status"], "success");
    assert_eq!(
        got.outcome["metrics"],
        json!({"num_turns": 1, "duration_api_ms": 61, "duration_ms": 673})
    );
}

#[test]
fn cp5_cp6_a_message_gives_its_reasoning_once_then_its_text_and_the_deltas_nothing() {
    let got = run(&[
        ephemeral(
            "assistant.reasoning_delta",
            json!({"reasoningId": "r", "deltaContent": "Think."}),
        ),
        ephemeral("assistant.message_start", json!({"messageId": "m"})),
        ephemeral(
            "assistant.message_delta",
            json!({"messageId": "m", "deltaContent": "Do"}),
        ),
        ephemeral(
            "assistant.tool_call_delta",
            json!({"toolCallId": "t", "inputDelta": "{"}),
        ),
        message("", Some("Think.")),
        ephemeral(
            "assistant.reasoning",
            json!({"reasoningId": "r", "content": "Think."}),
        ),
        message("Done.", None),
        result("s-1", 0),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "reasoning", "text": "Think.", "line": 5}),
            json!({"kind": "agent", "text": "Done.", "line": 7}),
        ]
    );
    assert_eq!(got.outcome["final_output"], "Done.");
}

#[test]
fn cp7_parallel_uses_complete_in_any_order_and_pair_by_id() {
    let got = events(&[
        start("a", "view", json!({"path": "a.txt"})),
        start("b", "view", json!({"path": "b.txt"})),
        ephemeral(
            "tool.shell_output",
            json!({"toolCallId": "a", "stream": "stdout", "text": "x"}),
        ),
        ephemeral(
            "tool.execution_partial_result",
            json!({"toolCallId": "a", "partialOutput": "x"}),
        ),
        done("b", "b"),
        done("a", "a"),
        done("c", "c"),
        line(
            "tool.execution_start",
            json!({"toolName": "view", "arguments": {}}),
        ),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "read", "path": "/home/copilot/project/b.txt", "success": true,
                "tool": "view", "tool_use_id": "b", "line": 5}),
            json!({"kind": "read", "path": "/home/copilot/project/a.txt", "success": true,
                "tool": "view", "tool_use_id": "a", "line": 6}),
            json!({"kind": "unknown", "reason": "unpaired_result", "tool_use_id": "c",
                "raw": {"tool_use": null, "tool_result": done("c", "c")}, "line": 7}),
            json!({"kind": "unknown", "reason": "malformed_tool_use", "tool": "view",
                "raw": {"tool_use": {"type": "tool.execution_start",
                    "data": {"toolName": "view", "arguments": {}}}, "tool_result": null},
                "line": 8}),
        ]
    );
}

#[test]
fn cp8_the_file_tools_map_to_read_list_write_and_search() {
    let got = events(&[
        start(
            "1",
            "view",
            json!({"path": "src/a.rs", "view_range": [3, 5]}),
        ),
        done("1", "x"),
        start(
            "2",
            "view",
            json!({"path": "/etc/hosts", "view_range": [2, -1]}),
        ),
        done("2", "x"),
        start("3", "view", json!({"path": "src"})),
        line(
            "tool.execution_complete",
            json!({"toolCallId": "3", "success": true,
            "result": {"content": "a.rs"},
            "toolTelemetry": {"properties": {"viewType": "directory"}}}),
        ),
        start("4", "create", json!({"path": "new.txt", "file_text": "hi"})),
        done("4", "Created file"),
        start(
            "5",
            "edit",
            json!({"path": "new.txt", "old_str": "a", "new_str": "b"}),
        ),
        failed("5", "No match found"),
        start(
            "6",
            "grep",
            json!({"pattern": "fn", "paths": ["src", "tests"]}),
        ),
        done("6", "src/a.rs"),
        start("7", "glob", json!({"pattern": "*.txt"})),
        done("7", "./new.txt"),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "read", "path": "/home/copilot/project/src/a.rs",
                "range": {"start": 3, "end": 5}, "success": true, "tool": "view",
                "tool_use_id": "1", "line": 2}),
            json!({"kind": "read", "path": "/etc/hosts", "range": {"start": 2, "end": null},
                "success": true, "tool": "view", "tool_use_id": "2", "line": 4}),
            json!({"kind": "list", "path": "/home/copilot/project/src", "success": true,
                "tool": "view", "tool_use_id": "3", "line": 6}),
            json!({"kind": "write", "path": "/home/copilot/project/new.txt", "success": true,
                "tool": "create", "tool_use_id": "4", "line": 8}),
            json!({"kind": "write", "path": "/home/copilot/project/new.txt", "success": false,
                "error": "No match found", "tool": "edit", "tool_use_id": "5", "line": 10}),
            json!({"kind": "search", "query": "fn", "path": "/home/copilot/project/src",
                "success": true, "tool": "grep", "tool_use_id": "6", "line": 12}),
            json!({"kind": "search", "query": "fn", "path": "/home/copilot/project/tests",
                "success": true, "tool": "grep", "tool_use_id": "6", "line": 12}),
            json!({"kind": "search", "query": "*.txt", "success": true, "tool": "glob",
                "tool_use_id": "7", "line": 14}),
        ]
    );
}

#[test]
fn cp8_other_tools_are_unknown_and_bad_arguments_malformed() {
    let got = events(&[
        start("1", "read_bash", json!({"shellId": "0"})),
        done("1", "out"),
        start("2", "view", json!({"path": "a", "view_range": [1]})),
        done("2", "a"),
        start("3", "grep", json!({"paths": "src"})),
        done("3", ""),
    ]);
    let raw = |n: usize| {
        json!({"tool_use": start(&n.to_string(), ["read_bash", "view", "grep"][n - 1],
        [json!({"shellId": "0"}), json!({"path": "a", "view_range": [1]}), json!({"paths": "src"})][n - 1].clone()),
        "tool_result": done(&n.to_string(), ["out", "a", ""][n - 1])})
    };
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "unknown_tool", "tool": "read_bash",
                "tool_use_id": "1", "raw": raw(1), "line": 2}),
            json!({"kind": "unknown", "reason": "malformed_tool_use", "tool": "view",
                "tool_use_id": "2", "raw": raw(2), "line": 4}),
            json!({"kind": "unknown", "reason": "malformed_tool_use", "tool": "grep",
                "tool_use_id": "3", "raw": raw(3), "line": 6}),
        ]
    );
}

#[test]
fn cp9_a_shell_command_exiting_non_zero_fails_though_copilot_calls_it_a_success() {
    let got = events(&[
        start(
            "1",
            "bash",
            json!({"command": "make test", "description": "test"}),
        ),
        shell_done("1", "out\nerr\n<shellId: 0 completed with exit code 2>", 2),
        start(
            "2",
            "bash",
            json!({"command": "cat a.txt", "description": "read"}),
        ),
        shell_done("2", "a\n<shellId: 1 completed with exit code 0>", 0),
        start(
            "3",
            "bash",
            json!({"command": "npm test", "description": "test"}),
        ),
        shell_done("3", "ok", 0),
        start(
            "4",
            "bash",
            json!({"command": "rm -rf /", "description": "no"}),
        ),
        line(
            "tool.execution_complete",
            json!({"toolCallId": "4", "success": false,
            "error": {"message": "Permission denied", "code": "denied"}}),
        ),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "command", "command": "make test", "exit_code": 2, "success": false,
                "error": "out\nerr\n<shellId: 0 completed with exit code 2>", "tool": "bash",
                "tool_use_id": "1", "line": 2}),
            json!({"kind": "read", "path": "/home/copilot/project/a.txt", "command": "cat a.txt",
                "success": true, "tool": "bash", "tool_use_id": "2", "line": 4}),
            json!({"kind": "command", "command": "npm test", "exit_code": 0, "success": true,
                "tool": "bash", "tool_use_id": "3", "line": 6}),
            json!({"kind": "command", "command": "rm -rf /", "success": false,
                "error": "Permission denied", "tool": "bash", "tool_use_id": "4", "line": 8}),
        ]
    );
}

#[test]
fn cp10_without_a_cwd_paths_stay_as_written() {
    let got = run_with(
        NormalizerConfig::default(),
        &[
            start("1", "view", json!({"path": "./a/../b.txt"})),
            done("1", "b"),
            result("s", 0),
        ],
    );
    assert_eq!(
        got.events,
        [
            json!({"kind": "read", "path": "b.txt", "success": true, "tool": "view",
            "tool_use_id": "1", "line": 2})
        ]
    );
}

#[test]
fn cp11_cp12_failed_requests_warn_and_giving_up_is_an_error_and_a_failed_run() {
    let got = run(&[
        ephemeral(
            "model.call_failure",
            json!({"model": "gpt-4.1", "statusCode": 500,
            "retryAttempt": 0, "errorMessage": "500 boom"}),
        ),
        line(
            "assistant.turn_retry",
            json!({"turnId": "0", "reason": "api_error"}),
        ),
        ephemeral(
            "session.info",
            json!({"infoType": "model_retry", "message": "Retrying..."}),
        ),
        line("session.warning", json!({"message": "careful"})),
        line(
            "session.error",
            json!({"errorType": "query", "statusCode": 500,
            "message": "Failed to get response from the AI model; retried 5 times"}),
        ),
        result("s-1", 1),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "warning", "source": "stream", "line": 1,
                "message": "the model request failed (HTTP 500, attempt 0): 500 boom"}),
            json!({"kind": "warning", "source": "stream", "message": "careful", "line": 4}),
            json!({"kind": "error", "line": 5,
                "message": "Failed to get response from the AI model; retried 5 times"}),
        ]
    );
    assert_eq!(got.outcome["status"], "error");
    assert_eq!(got.outcome["session_id"], "s-1");
}

#[test]
fn cp13_uses_still_running_and_a_missing_result_end_the_run_incomplete() {
    let got = run(&[
        start("1", "bash", json!({"command": "sleep 9"})),
        message("Waiting.", None),
    ]);
    assert_eq!(got.events.len(), 3, "{:?}", got.events);
    assert_eq!(
        got.events[1],
        json!({"kind": "unknown", "reason": "unresolved_tool_use", "tool": "bash",
            "tool_use_id": "1", "raw": {"tool_use": start("1", "bash", json!({"command": "sleep 9"})),
            "tool_result": null}})
    );
    assert_eq!(got.outcome["status"], "incomplete");
}
