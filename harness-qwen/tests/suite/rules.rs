//! The QW rules of `docs/qwen.md` on small hand-made streams; each test names its rule and
//! compares whole events.

use serde_json::{Value, json};

use super::{assistant, init, result_ok, run, text, tool_result, tool_use};

#[test]
fn qw1_unknown_types_and_lines_that_are_no_events_are_kept() {
    let got = run(&[
        json!({"type": "surprise", "x": 1}),
        json!([1, 2]),
        json!({"no": "type"}),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "unknown", "reason": "unknown_type", "raw": {"type": "surprise", "x": 1}, "line": 1}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1, 2], "line": 2}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"no": "type"}, "line": 3}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn qw2_init_names_the_session_retry_warns_other_subtypes_are_unknown() {
    let retry = json!({"type": "system", "subtype": "retry", "session_id": "s",
                       "data": {"reason": "retry", "discardedToolCalls": 1, "preserveText": false}});
    let other = json!({"type": "system", "subtype": "later"});
    let got = run(&[
        init("s-1", "/work"),
        assistant(json!([tool_use(
            "c1",
            "read_file",
            json!({"file_path": "a.txt"})
        )])),
        tool_result("c1", "a", false),
        retry,
        other.clone(),
        result_ok("done"),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "read", "path": "/work/a.txt", "success": true, "tool": "read_file",
                   "tool_use_id": "c1", "line": 3}),
            json!({"kind": "warning", "source": "stream", "line": 4,
                   "message": "retrying the model request (1 buffered tool call(s) discarded)"}),
            json!({"kind": "unknown", "reason": "unknown_system_subtype", "raw": other, "line": 5}),
        ]
    );
    assert_eq!(got.outcome["session_id"], "s-1");
    assert_eq!(got.outcome["status"], "success");
}

#[test]
fn qw3_qw4_stream_events_emit_nothing_and_each_assistant_line_speaks_at_once() {
    let got = run(&[
        json!({"type": "stream_event", "event": {"type": "goal_state",
               "goal_state": {"v": 2, "goal": null, "activity": "idle"}}}),
        assistant(json!([{"type": "thinking", "thinking": "Hmm.", "signature": ""}])),
        assistant(json!([text("Hello.")])),
        assistant(json!([{"type": "image"}, {"type": "text", "text": 3}])),
        result_ok("Hello."),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "reasoning", "text": "Hmm.", "line": 2}),
            json!({"kind": "agent", "text": "Hello.", "line": 3}),
            json!({"kind": "unknown", "reason": "unknown_block", "raw": {"type": "image"}, "line": 4}),
            json!({"kind": "unknown", "reason": "unknown_block", "raw": {"type": "text", "text": 3}, "line": 4}),
        ]
    );
    assert_eq!(got.outcome["final_output"], "Hello.");
}

#[test]
fn qw5_qw10_a_failed_request_is_one_error_and_the_run_fails() {
    let got = run(&[
        assistant(json!([text("[API Error: 400 Bad request]")])),
        json!({"type": "result", "subtype": "error_during_execution", "is_error": true,
               "num_turns": 1, "usage": {"input_tokens": 0, "output_tokens": 0},
               "permission_denials": [], "error": {"message": "[API Error: 400 Bad request]"}}),
    ]);
    assert_eq!(
        got.events,
        [json!({"kind": "error", "message": "[API Error: 400 Bad request]", "line": 2})]
    );
    assert_eq!(got.outcome["status"], "error");
}

#[test]
fn qw7_qw9_a_failed_shell_command_has_its_exit_code() {
    let report = "Command: make\nDirectory: (root)\nOutput: oops\nError: (none)\nExit Code: 2\nSignal: (none)\nProcess Group PGID: 7";
    let got = run(&[
        assistant(json!([tool_use(
            "c1",
            "run_shell_command",
            json!({"command": "make"})
        )])),
        tool_result("c1", report, true),
        tool_result("c9", "stray", false),
        result_ok("x"),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "command", "command": "make", "exit_code": 2, "success": false,
                   "error": report, "tool": "run_shell_command", "tool_use_id": "c1", "line": 2}),
            json!({"kind": "unknown", "reason": "unpaired_result", "tool_use_id": "c9", "line": 3,
                   "raw": {"tool_use": null, "tool_result": {"type": "tool_result",
                           "tool_use_id": "c9", "is_error": false, "content": "stray"}}}),
        ]
    );
}

#[test]
fn qw11_a_use_without_a_result_is_unresolved() {
    let block = tool_use("c1", "glob", json!({"pattern": "*.rs"}));
    let got = run(&[assistant(json!([block.clone()]))]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "unknown", "reason": "unresolved_tool_use", "tool": "glob",
                   "tool_use_id": "c1", "raw": {"tool_use": block, "tool_result": null}}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(got.outcome["status"], "incomplete");
}

/// The helper lines are what the recordings hold.
#[test]
fn helpers_match_the_recorded_shapes() {
    let line: Value = init("s", "/p");
    assert_eq!(line["qwen_code_version"], "0.24.4");
}

/// S8: every line of `fixtures/dispositions/qwen.jsonl` gets the disposition it names.
#[test]
fn s8_every_line_is_accounted_for() {
    let mut normalizer = harness_agents_qwen::QwenNormalizer::new(Default::default());
    fixtures::assert_dispositions("qwen", &mut normalizer);
}
