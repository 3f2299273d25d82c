//! The PI rules of `docs/pi.md` on small hand-made streams; each test names its rule and
//! compares whole events.

use serde_json::{Value, json};

use super::{agent_end, assistant, end, failed_request, kind, run, run_with, session, start, text};

/// The events of `lines` followed by `agent_end`.
fn events(lines: &[Value]) -> Vec<Value> {
    let mut all = lines.to_vec();
    all.push(agent_end());
    run(&all).events
}

#[test]
fn pi1_unknown_types_and_lines_that_are_no_events_are_kept() {
    let got = events(&[
        json!({"type": "surprise", "x": 1}),
        json!([1, 2]),
        json!({"no": "type"}),
        Value::String("not json".into()),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "unknown_type", "raw": {"type": "surprise", "x": 1}, "line": 1}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1, 2], "line": 2}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"no": "type"}, "line": 3}),
            json!({"kind": "warning", "source": "non_json", "message": "not json", "line": 4}),
        ]
    );
}

#[test]
fn pi2_the_header_names_the_session_and_the_directory_and_emits_nothing() {
    let got = run(&[
        session("s-1", "/work"),
        start("t1", "read", json!({"path": "a.txt"})),
        end("t1", "read", "a", false),
        session("s-2", "/elsewhere"),
        agent_end(),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "read", "path": "/work/a.txt", "success": true, "tool": "read",
                "tool_use_id": "t1", "line": 3})
        ]
    );
    assert_eq!(got.outcome["session_id"], "s-1");
}

#[test]
fn pi3_lifecycle_lines_and_deltas_emit_nothing() {
    let got = run(&[
        kind("agent_start"),
        kind("turn_start"),
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json!({"type": "message_update", "assistantMessageEvent": {"type": "text_delta", "delta": "Hi"},
               "message": {"role": "assistant", "content": [text("Hi")]}}),
        json!({"type": "turn_end", "message": {}, "toolResults": []}),
        agent_end(),
    ]);
    assert_eq!(got.events, Vec::<Value>::new());
    assert_eq!(got.outcome["status"], "success");
    assert_eq!(got.outcome["metrics"], json!({"num_turns": 1}));
}

#[test]
fn pi4_user_and_tool_result_messages_are_echoes() {
    let got = events(&[
        json!({"type": "message_end", "message": {"role": "user", "content": [text("hi")]}}),
        json!({"type": "message_end", "message": {"role": "toolResult", "toolCallId": "t", "content": []}}),
        json!({"type": "message_end", "message": {"role": "robot"}}),
        json!({"type": "message_end", "message": "x"}),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "malformed_message",
                   "raw": {"type": "message_end", "message": {"role": "robot"}}, "line": 3}),
            json!({"kind": "unknown", "reason": "malformed_message",
                   "raw": {"type": "message_end", "message": "x"}, "line": 4}),
        ]
    );
}

#[test]
fn pi5_an_assistant_message_gives_its_thinking_then_its_text() {
    let content = json!([
        {"type": "thinking", "thinking": "First", "thinkingSignature": "s"},
        text("Let me look."),
        {"type": "thinking", "thinking": "[Reasoning redacted]", "redacted": true},
        {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a"}},
        {"type": "thinking", "thinking": "Second"},
        text(""),
        text("Then this."),
        {"type": "image", "data": "x"},
        {"type": "text", "text": 3},
    ]);
    let got = run(&[assistant(content, "toolUse"), agent_end()]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "unknown", "reason": "unknown_block", "raw": {"type": "image", "data": "x"}, "line": 1}),
            json!({"kind": "unknown", "reason": "unknown_block", "raw": {"type": "text", "text": 3}, "line": 1}),
            json!({"kind": "reasoning", "text": "First\n\nSecond", "line": 1}),
            json!({"kind": "agent", "text": "Let me look.\n\nThen this.", "line": 1}),
        ]
    );
    assert_eq!(got.outcome["final_output"], "Let me look.\n\nThen this.");
    let malformed = run(&[assistant(json!("text"), "stop"), agent_end()]);
    assert_eq!(malformed.events[0]["reason"], "malformed_message");
}

#[test]
fn pi6_a_tool_use_is_emitted_on_its_end_and_pairs_by_id_in_any_order() {
    let got = events(&[
        start("t1", "bash", json!({"command": "sleep 1; echo a"})),
        start("t2", "read", json!({"path": "b.txt", "limit": 1})),
        json!({"type": "tool_execution_update", "toolCallId": "t1", "toolName": "bash",
               "partialResult": {"content": []}}),
        end("t2", "read", "b", false),
        end("t1", "bash", "a", false),
        end("t9", "read", "x", false),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "read", "path": "/home/pi/project/b.txt", "range": {"start": 1, "end": 1},
                   "success": true, "tool": "read", "tool_use_id": "t2", "line": 4}),
            json!({"kind": "command", "command": "sleep 1; echo a", "success": true,
                   "tool": "bash", "tool_use_id": "t1", "line": 5}),
            json!({"kind": "unknown", "reason": "unpaired_result", "tool_use_id": "t9", "line": 6,
                   "raw": {"tool_use": null, "tool_result": end("t9", "read", "x", false)}}),
        ]
    );
}

#[test]
fn pi6_a_start_without_an_id_is_malformed_and_a_repeated_id_is_ambiguous() {
    let no_id = json!({"type": "tool_execution_start", "toolName": "read", "args": {"path": "a"}});
    let (first, second) = (
        start("t1", "read", json!({"path": "a"})),
        start("t1", "ls", json!({})),
    );
    let got = events(&[
        no_id.clone(),
        first.clone(),
        second.clone(),
        end("t1", "ls", "", false),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "malformed_tool_use", "tool": "read", "line": 1,
                   "raw": {"tool_use": no_id, "tool_result": null}}),
            json!({"kind": "unknown", "reason": "ambiguous_tool_use_id", "tool_use_id": "t1", "line": 4,
                   "raw": {"tool_use": [first, second], "tool_result": end("t1", "ls", "", false)}}),
        ]
    );
}

#[test]
fn pi7_a_failed_tool_carries_its_result_text_cut_to_1000_characters() {
    let long = "e".repeat(1_500);
    let got = events(&[
        start("t1", "read", json!({"path": "nope.txt"})),
        end(
            "t1",
            "read",
            "ENOENT: no such file or directory, access '/p/nope.txt'",
            true,
        ),
        start("t2", "write", json!({"path": "w.txt", "content": "x"})),
        end("t2", "write", &long, true),
    ]);
    assert_eq!(
        got[0],
        json!({"kind": "read", "path": "/home/pi/project/nope.txt", "success": false,
               "error": "ENOENT: no such file or directory, access '/p/nope.txt'",
               "tool": "read", "tool_use_id": "t1", "line": 2})
    );
    assert_eq!(got[1]["error"].as_str().map(str::len), Some(1_000));
}

#[test]
fn pi8_every_tool_maps_to_its_kind_and_others_are_unknown_tools() {
    let uses = [
        ("read", json!({"path": "a", "offset": 3})),
        ("write", json!({"path": "b", "content": "x"})),
        (
            "edit",
            json!({"path": "c", "edits": [{"oldText": "a", "newText": "b"}]}),
        ),
        (
            "grep",
            json!({"pattern": "fn", "path": "src", "glob": "*.rs"}),
        ),
        ("find", json!({"pattern": "*.md"})),
        ("ls", json!({"path": "docs"})),
        ("subagent", json!({"task": "x"})),
        ("read", json!({"path": 3})),
    ];
    let mut lines = Vec::new();
    for (i, (name, args)) in uses.iter().enumerate() {
        let id = format!("t{i}");
        lines.push(start(&id, name, args.clone()));
        lines.push(end(&id, name, "ok", false));
    }
    let got = events(&lines);
    let p = "/home/pi/project";
    assert_eq!(
        got,
        [
            json!({"kind": "read", "path": format!("{p}/a"), "range": {"start": 3, "end": null},
                   "success": true, "tool": "read", "tool_use_id": "t0", "line": 2}),
            json!({"kind": "write", "path": format!("{p}/b"), "success": true, "tool": "write",
                   "tool_use_id": "t1", "line": 4}),
            json!({"kind": "write", "path": format!("{p}/c"), "success": true, "tool": "edit",
                   "tool_use_id": "t2", "line": 6}),
            json!({"kind": "search", "query": "fn", "path": format!("{p}/src"), "success": true,
                   "tool": "grep", "tool_use_id": "t3", "line": 8}),
            json!({"kind": "search", "query": "*.md", "success": true, "tool": "find",
                   "tool_use_id": "t4", "line": 10}),
            json!({"kind": "list", "path": format!("{p}/docs"), "success": true, "tool": "ls",
                   "tool_use_id": "t5", "line": 12}),
            json!({"kind": "unknown", "reason": "unknown_tool", "tool": "subagent", "tool_use_id": "t6",
                   "line": 14, "raw": {"tool_use": lines[12], "tool_result": lines[13]}}),
            json!({"kind": "unknown", "reason": "malformed_tool_use", "tool": "read", "tool_use_id": "t7",
                   "line": 16, "raw": {"tool_use": lines[14], "tool_result": lines[15]}}),
        ]
    );
}

#[test]
fn pi9_a_failed_bash_call_carries_its_exit_code_and_reads_are_reclassified() {
    let got = events(&[
        start("t1", "bash", json!({"command": "make test"})),
        end("t1", "bash", "boom\n\n\nCommand exited with code 2", true),
        start("t2", "bash", json!({"command": "sleep 9"})),
        end("t2", "bash", "Command timed out after 1 seconds", true),
        start("t3", "bash", json!({"command": "cat missing.txt"})),
        end(
            "t3",
            "bash",
            "cat: missing.txt: No such file or directory\n\n\nCommand exited with code 1",
            true,
        ),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "command", "command": "make test", "exit_code": 2, "success": false,
                   "error": "boom\n\n\nCommand exited with code 2", "tool": "bash",
                   "tool_use_id": "t1", "line": 2}),
            json!({"kind": "command", "command": "sleep 9", "success": false,
                   "error": "Command timed out after 1 seconds", "tool": "bash",
                   "tool_use_id": "t2", "line": 4}),
            json!({"kind": "read", "path": "/home/pi/project/missing.txt", "command": "cat missing.txt",
                   "success": false,
                   "error": "cat: missing.txt: No such file or directory\n\n\nCommand exited with code 1",
                   "tool": "bash", "tool_use_id": "t3", "line": 6}),
        ]
    );
}

#[test]
fn pi10_paths_resolve_against_the_header_else_the_cwd_given() {
    let lines = [
        start("t1", "read", json!({"path": "@src/a.rs"})),
        end("t1", "read", "", false),
        start("t2", "read", json!({"path": "~/notes.txt"})),
        end("t2", "read", "", false),
        agent_end(),
    ];
    let mut config = harness_agents_core::NormalizerConfig::default();
    config.cwd = Some("/given".into());
    let got = run_with(config.clone(), &lines).events;
    assert_eq!(got[0]["path"], "/given/src/a.rs");
    assert_eq!(got[1]["path"], "~/notes.txt");
    let mut with_header = vec![session("s", "/header")];
    with_header.extend(lines);
    assert_eq!(
        run_with(config, &with_header).events[0]["path"],
        "/header/src/a.rs"
    );
}

#[test]
fn pi11_agent_end_ends_the_run_with_the_last_answer_and_summed_usage() {
    let got = run(&[
        session("s-1", "/p"),
        assistant(json!([text("Step one.")]), "toolUse"),
        json!({"type": "turn_end"}),
        assistant(json!([text("Done.")]), "stop"),
        json!({"type": "turn_end"}),
        agent_end(),
    ]);
    assert_eq!(
        got.outcome,
        json!({"kind": "outcome", "session_id": "s-1", "status": "success", "final_output": "Done.",
               "metrics": {"input_tokens": 20, "output_tokens": 6, "cache_read_input_tokens": 2,
                           "cache_creation_input_tokens": 4, "total_cost_usd": 1.0, "num_turns": 2},
               "counts": {"agent": 2}})
    );
    let cut = run(&[session("s", "/p"), assistant(json!([text("Hi")]), "stop")]);
    assert_eq!(cut.outcome["status"], "incomplete");
    assert_eq!(
        cut.events.last(),
        Some(&json!({"kind": "error", "message": "stream ended without a result"}))
    );
}

#[test]
fn pi12_every_failed_request_is_an_error_and_a_run_pi_gives_up_on_fails_though_pi_exits_0() {
    let err = "500 {\"type\":\"error\"}";
    let retry = |attempt: u64| {
        json!({"type": "auto_retry_start", "attempt": attempt, "maxAttempts": 2, "delayMs": 100 * attempt,
               "errorMessage": err})
    };
    let got = run(&[
        failed_request(err),
        agent_end(),
        retry(1),
        failed_request(err),
        agent_end(),
        retry(2),
        failed_request(err),
        agent_end(),
        json!({"type": "auto_retry_end", "success": false, "attempt": 2, "finalError": err}),
    ]);
    let warning = |line: u64, attempt: u64| {
        json!({"kind": "warning", "source": "stream", "line": line,
               "message": format!("retrying the failed model request ({attempt} of 2) in {} ms: {err}", 100 * attempt)})
    };
    assert_eq!(
        got.events,
        [
            json!({"kind": "error", "message": err, "line": 1}),
            warning(3, 1),
            json!({"kind": "error", "message": err, "line": 4}),
            warning(6, 2),
            json!({"kind": "error", "message": err, "line": 7}),
        ]
    );
    assert_eq!(got.outcome["status"], "error");
}

#[test]
fn pi12_a_retry_that_succeeds_ends_in_success() {
    let got = run(&[
        failed_request("overloaded"),
        agent_end(),
        json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
               "errorMessage": "overloaded"}),
        json!({"type": "auto_retry_end", "success": true, "attempt": 1}),
        assistant(json!([text("Hi.")]), "stop"),
        agent_end(),
    ]);
    assert_eq!(
        got.events,
        [
            json!({"kind": "error", "message": "overloaded", "line": 1}),
            json!({"kind": "warning", "source": "stream", "line": 3,
                   "message": "retrying the failed model request (1 of 3) in 2000 ms: overloaded"}),
            json!({"kind": "agent", "text": "Hi.", "line": 5}),
        ]
    );
    assert_eq!(got.outcome["status"], "success");
    assert_eq!(got.outcome["final_output"], "Hi.");
}

#[test]
fn pi12_the_status_follows_the_last_request() {
    let failed = run(&[failed_request(""), agent_end()]);
    assert_eq!(
        failed.events,
        [
            json!({"kind": "error", "message": "the model request ended with stopReason error", "line": 1})
        ]
    );
    assert_eq!(failed.outcome["status"], "error");
    let aborted = run(&[
        json!({"type": "message_end", "message": {"role": "assistant", "content": [text("Part")],
               "stopReason": "aborted", "errorMessage": "Request was aborted"}}),
        agent_end(),
    ]);
    assert_eq!(aborted.events[1]["message"], "Request was aborted");
    assert_eq!(aborted.outcome["status"], "error");
    let next = run(&[
        failed_request("400 bad request"),
        agent_end(),
        kind("agent_start"),
        assistant(json!([text("Next prompt.")]), "stop"),
        agent_end(),
    ]);
    assert_eq!(next.outcome["status"], "success");
}

#[test]
fn pi13_compaction_failures_warn_and_pis_other_notices_emit_nothing() {
    let got = events(&[
        json!({"type": "compaction_start", "reason": "threshold"}),
        json!({"type": "compaction_end", "reason": "threshold", "aborted": false, "willRetry": false,
               "errorMessage": "too small"}),
        json!({"type": "compaction_end", "reason": "threshold", "aborted": false, "willRetry": false}),
        json!({"type": "queue_update", "steering": [], "followUp": []}),
        json!({"type": "thinking_level_changed", "level": "high"}),
        json!({"type": "session_info_changed", "name": "x"}),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "warning", "source": "stream", "message": "compaction failed: too small", "line": 2})
        ]
    );
}

#[test]
fn pi14_at_the_end_running_tools_are_unresolved_and_a_retry_cut_short_fails() {
    let use_line = start("t1", "bash", json!({"command": "sleep 100"}));
    let got = run(&[
        failed_request("529 overloaded"),
        agent_end(),
        json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 2000,
               "errorMessage": "529 overloaded"}),
        kind("agent_start"),
        use_line.clone(),
    ]);
    assert_eq!(
        got.events[2..],
        [
            json!({"kind": "unknown", "reason": "unresolved_tool_use", "tool": "bash", "tool_use_id": "t1",
                "raw": {"tool_use": use_line, "tool_result": null}})
        ]
    );
    assert_eq!(got.outcome["status"], "error");
    // Without any `agent_end`, the run is incomplete (S9), even after a failed request.
    let cut = run(&[failed_request("529 overloaded")]);
    assert_eq!(cut.outcome["status"], "incomplete");
    assert_eq!(
        cut.events,
        [
            json!({"kind": "error", "message": "529 overloaded", "line": 1}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}
