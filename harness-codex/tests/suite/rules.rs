//! Unit tests per rule (X1-X9, O1, O3, O4, and the S rules as Codex meets them), for what the
//! recordings do not show. Each asserts the exact events.

use harness_agents_codex::CodexNormalizer;
use harness_agents_core::{Normalizer, NormalizerConfig, PendingToolUse};
use serde_json::{Value, json};

use super::*;

const WRAP: &str = "/bin/bash -lc";

fn ok_command(id: &str, line: &str) -> Value {
    command(id, line, "completed", json!(0))
}

fn unresolved(item: Value) -> Value {
    json!({
        "kind": "unknown", "reason": "unresolved_tool_use", "tool": item["type"],
        "tool_use_id": item["id"], "raw": item,
    })
}

fn no_result() -> Value {
    json!({"kind": "error", "message": "stream ended without a result"})
}

// ---- X1 ----

#[test]
fn x1_only_thread_started_sets_session_id() {
    let run = run(&[
        json!({"type": "turn.started", "session_id": "not-this"}).to_string(),
        thread_started(json!("")),
        thread_started(json!(7)),
        thread_started(json!("th-1")),
        thread_started(json!("th-2")),
        turn_completed(json!({})),
    ]);
    assert_eq!(run.events, Vec::<Value>::new());
    assert_eq!(run.outcome["session_id"], "th-1");
}

#[test]
fn x1_without_thread_started_there_is_no_session_id() {
    let run = run(&[
        json!({"type": "turn.started", "session_id": "s", "thread_id": "t"}).to_string(),
        turn_completed(json!({})),
    ]);
    assert_eq!(run.outcome.get("session_id"), None);
    assert_eq!(run.outcome["status"], "success");
}

// ---- X2 ----

#[test]
fn x2_item_without_string_type_is_unknown_item() {
    let no_type = json!({"id": "item_0", "text": "x"});
    let number_type = json!({"id": "item_1", "type": 5});
    let lines = [
        started(no_type.clone()),
        updated(number_type.clone()),
        completed(number_type.clone()),
        completed(json!("not an object")),
        json!({"type": "item.completed"}).to_string(),
    ];
    let unknown_item = |raw: Value, line: u64| json!({"kind": "unknown", "reason": "unknown_item", "raw": raw, "line": line});
    let line = |l: &String| serde_json::from_str::<Value>(l).unwrap();
    assert_eq!(
        events(&lines),
        [
            unknown_item(no_type, 1),
            unknown_item(number_type.clone(), 2),
            unknown_item(number_type, 3),
            unknown_item(line(&lines[3]), 4),
            unknown_item(line(&lines[4]), 5),
        ]
    );
}

#[test]
fn x2_item_without_string_id_is_not_recorded_but_completes() {
    let item = json!({"id": 3, "type": "command_execution", "command": "git status", "exit_code": 0, "status": "completed"});
    let run = run(&[started(item.clone()), completed(item)]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "command", "command": "git status", "exit_code": 0, "success": true, "tool": "command_execution", "line": 2}),
            no_result(),
        ]
    );
}

#[test]
fn x2_completion_needs_no_start_and_nothing_is_emitted_before_it() {
    let item = ok_command("item_0", &format!("{WRAP} 'git status'"));
    let mut normalizer = CodexNormalizer::new(config());
    let mut out = Vec::new();
    normalizer.push_line(started(item.clone()).as_bytes(), &mut out);
    normalizer.push_line(updated(item.clone()).as_bytes(), &mut out);
    assert!(out.is_empty(), "{out:?}");
    normalizer.push_line(completed(item).as_bytes(), &mut out);
    assert_eq!(
        out.iter().map(to_json).collect::<Vec<_>>(),
        [
            json!({"kind": "command", "command": "git status", "exit_code": 0, "success": true, "tool": "command_execution", "tool_use_id": "item_0", "line": 3}),
        ]
    );
    assert_eq!(
        events(&[completed(ok_command("item_9", "git log"))]),
        [
            json!({"kind": "command", "command": "git log", "exit_code": 0, "success": true, "tool": "command_execution", "tool_use_id": "item_9", "line": 1}),
        ]
    );
}

#[test]
fn x2_update_replaces_the_record_in_place() {
    let first = command("a", "sleep 1", "in_progress", Value::Null);
    let second = command("b", "sleep 2", "in_progress", Value::Null);
    let mut first_updated = first.clone();
    first_updated["aggregated_output"] = json!("tick");
    let run = run(&[
        started(first.clone()),
        started(second.clone()),
        updated(first_updated.clone()),
    ]);
    assert_eq!(
        run.events,
        [unresolved(first_updated), unresolved(second), no_result()]
    );
}

#[test]
fn x2_update_of_an_item_not_open_records_it_last() {
    let first = command("a", "sleep 1", "in_progress", Value::Null);
    let second = command("b", "sleep 2", "in_progress", Value::Null);
    let run = run(&[updated(second.clone()), started(first.clone())]);
    assert_eq!(
        run.events,
        [unresolved(second), unresolved(first), no_result()]
    );
}

// ---- X3 ----

#[test]
fn x3_messages_and_reasoning_need_non_empty_string_text() {
    assert_eq!(
        events(&[
            completed(json!({"id": "r", "type": "reasoning", "text": "thinking"})),
            completed(json!({"id": "r2", "type": "reasoning", "text": ""})),
            completed(message("m", "hello")),
            completed(message("m2", "")),
            completed(json!({"id": "m3", "type": "agent_message", "text": ["x"]})),
            completed(json!({"id": "m4", "type": "agent_message"})),
        ]),
        [
            json!({"kind": "reasoning", "text": "thinking", "line": 1}),
            json!({"kind": "agent", "text": "hello", "line": 3}),
        ]
    );
}

// ---- X4 ----

fn cmd_event(command: &str, success: bool, exit_code: Option<i64>, line: u64) -> Value {
    let mut event = json!({
        "kind": "command", "command": command, "success": success,
        "tool": "command_execution", "tool_use_id": "item_0", "line": line,
    });
    if let Some(code) = exit_code {
        event["exit_code"] = json!(code);
    }
    event
}

fn one_command(item: Value) -> Vec<Value> {
    events(&[completed(item)])
}

#[test]
fn x4_unsplittable_command_is_one_word() {
    let line = format!("{WRAP} 'cat README.md");
    assert_eq!(
        one_command(ok_command("item_0", &line)),
        [cmd_event(&line, true, Some(0), 1)]
    );
}

#[test]
fn x4_command_is_the_script_only_for_a_shell_wrapper() {
    // A plain argv is classified word by word and keeps the whole line.
    assert_eq!(
        one_command(ok_command("item_0", "cat README.md")),
        [json!({
            "kind": "read", "path": "/home/dev2/project/README.md", "command": "cat README.md",
            "success": true, "tool": "command_execution", "tool_use_id": "item_0", "line": 1,
        })]
    );
    // Any path and -c as well as -lc; zsh and sh too.
    for line in [
        "/usr/bin/zsh -c 'npm test'",
        "sh -lc 'npm test'",
        "bash -c \"npm test\"",
    ] {
        assert_eq!(
            one_command(ok_command("item_0", line)),
            [cmd_event("npm test", true, Some(0), 1)],
            "{line}"
        );
    }
    // Not a wrapper: other flags, other programs, other arity.
    for line in [
        "bash -x 'npm test'",
        "fish -c 'npm test'",
        "bash -lc 'npm test' extra",
    ] {
        assert_eq!(
            one_command(ok_command("item_0", line)),
            [cmd_event(line, true, Some(0), 1)],
            "{line}"
        );
    }
}

#[test]
fn x4_empty_or_comment_only_line_is_a_command_without_classification() {
    for line in ["", "   ", "# only a comment", "\\\n"] {
        assert_eq!(
            one_command(ok_command("item_0", line)),
            [cmd_event(line, true, Some(0), 1)],
            "{line:?}"
        );
    }
}

#[test]
fn x4_a_comment_after_words_is_dropped_before_classifying() {
    assert_eq!(
        one_command(ok_command("item_0", "cat a.txt # show it")),
        [json!({
            "kind": "read", "path": "/home/dev2/project/a.txt", "command": "cat a.txt # show it",
            "success": true, "tool": "command_execution", "tool_use_id": "item_0", "line": 1,
        })]
    );
}

#[test]
fn x4_command_that_is_not_a_string_is_malformed() {
    let item = json!({"id": "item_0", "type": "command_execution", "command": ["ls"], "status": "completed"});
    assert_eq!(
        one_command(item.clone()),
        [json!({
            "kind": "unknown", "reason": "malformed_tool_use", "raw": item,
            "tool": "command_execution", "tool_use_id": "item_0", "line": 1,
        })]
    );
}

#[test]
fn x4_exit_code_only_when_an_integer_and_success_only_when_completed() {
    let line = format!("{WRAP} 'make'");
    let cases = [
        ("completed", json!(0), true, Some(0)),
        ("failed", json!(2), false, Some(2)),
        ("failed", json!(-1), false, Some(-1)),
        ("declined", json!(1.5), false, None),
        ("completed", json!("3"), true, None),
        ("COMPLETED", Value::Null, false, None),
    ];
    for (status, code, success, exit_code) in cases {
        assert_eq!(
            one_command(command("item_0", &line, status, code.clone())),
            [cmd_event("make", success, exit_code, 1)],
            "{status} {code}"
        );
    }
    // X4: an integer as serde_json keeps one, i64 or u64; one that fits only a u64 is kept.
    let big = one_command(command("item_0", &line, "failed", json!(u64::MAX)));
    assert_eq!(big[0]["exit_code"], json!(u64::MAX), "{big:?}");
    let mut no_status = ok_command("item_0", &line);
    no_status.as_object_mut().unwrap().remove("status");
    assert_eq!(
        one_command(no_status),
        [cmd_event("make", false, Some(0), 1)]
    );
}

#[test]
fn x4_reclassified_parts_share_status_and_carry_no_exit_code() {
    let line = format!("{WRAP} 'cd src && rg -n foo lib && ls'");
    assert_eq!(
        one_command(command("item_0", &line, "failed", json!(1))),
        [
            json!({
                "kind": "search", "query": "foo", "path": "/home/dev2/project/src/lib",
                "command": "cd src && rg -n foo lib && ls", "success": false,
                "tool": "command_execution", "tool_use_id": "item_0", "line": 1,
            }),
            json!({
                "kind": "list", "path": "/home/dev2/project/src",
                "command": "cd src && rg -n foo lib && ls", "success": false,
                "tool": "command_execution", "tool_use_id": "item_0", "line": 1,
            }),
        ]
    );
}

#[test]
fn x9_without_cwd_relative_paths_stay_relative_but_normalized() {
    let line = format!("{WRAP} 'cat ./a/../b.txt && ls && cat /etc//hosts'");
    let run = run_with(
        NormalizerConfig::default(),
        &[completed(ok_command("item_0", &line)).as_bytes()],
        &[],
    );
    let script = "cat ./a/../b.txt && ls && cat /etc//hosts";
    assert_eq!(
        run.events,
        [
            json!({"kind": "read", "path": "b.txt", "command": script, "success": true, "tool": "command_execution", "tool_use_id": "item_0", "line": 1}),
            json!({"kind": "list", "command": script, "success": true, "tool": "command_execution", "tool_use_id": "item_0", "line": 1}),
            json!({"kind": "read", "path": "/etc/hosts", "command": script, "success": true, "tool": "command_execution", "tool_use_id": "item_0", "line": 1}),
            no_result(),
        ]
    );
}

// ---- X5 ----

fn plan(items: Value, line: u64) -> Value {
    json!({"kind": "plan", "items": items, "line": line})
}

#[test]
fn x5_same_items_for_same_id_emit_no_new_plan() {
    let a = json!([{"text": "a", "completed": false}]);
    let b = json!([{"text": "a", "completed": true}]);
    assert_eq!(
        events(&[
            started(todo("t", a.clone())),
            updated(todo("t", a.clone())),
            updated(todo("t", b.clone())),
            updated(todo("t", a.clone())),
            completed(todo("t", a.clone())),
            // Another id has its own last plan.
            started(todo("u", a.clone())),
        ]),
        [
            plan(a.clone(), 1),
            plan(b, 3),
            plan(a.clone(), 4),
            plan(a, 6)
        ]
    );
}

#[test]
fn x5_the_last_plan_of_an_id_is_forgotten_when_its_item_completes() {
    // S7: the memory a plan takes is bounded by the pending to-do lists, so an id that comes
    // back after its item.completed starts afresh.
    let a = json!([{"text": "a", "completed": false}]);
    assert_eq!(
        events(&[
            started(todo("t", a.clone())),
            completed(todo("t", a.clone())),
            started(todo("t", a.clone())),
            completed(todo("t", a.clone())),
        ]),
        [plan(a.clone(), 1), plan(a, 3)]
    );
}

#[test]
fn x5_equality_is_exact_json_equality_of_the_copied_entries() {
    let bool_false = json!([{"text": "a", "completed": false}]);
    let zero = json!([{"text": "a", "completed": 0}]);
    let one = json!([{"text": "a", "completed": 1}]);
    let one_float = json!([{"text": "a", "completed": 1.0}]);
    // Fields other than text and completed are not copied, so they make no new plan.
    let with_extra = json!([{"text": "a", "completed": 1.0, "id": 9}]);
    assert_eq!(
        events(&[
            started(todo("t", bool_false.clone())),
            updated(todo("t", zero.clone())),
            updated(todo("t", one.clone())),
            updated(todo("t", one_float.clone())),
            updated(todo("t", with_extra)),
        ]),
        [
            plan(bool_false, 1),
            plan(zero, 2),
            plan(one, 3),
            plan(one_float, 4)
        ]
    );
}

#[test]
fn x5_entries_are_copied_as_given_and_bad_shapes_count_as_empty() {
    let entries = json!([{"text": "a"}, "skip me", 3, {"completed": true, "extra": 1}, {"text": null, "completed": "yes"}]);
    assert_eq!(
        events(&[
            started(todo("t", entries)),
            updated(todo("t", json!({"not": "a list"}))),
            completed(json!({"id": "t", "type": "todo_list"})),
        ]),
        [
            plan(
                json!([{"text": "a", "completed": null}, {"text": null, "completed": true}, {"text": null, "completed": "yes"}]),
                1
            ),
            plan(json!([]), 2),
        ]
    );
}

#[test]
fn x5_todo_list_without_string_id_always_emits() {
    let a = json!([{"text": "a", "completed": false}]);
    let item = json!({"type": "todo_list", "items": a});
    assert_eq!(
        events(&[
            started(item.clone()),
            updated(item.clone()),
            completed(item)
        ]),
        [plan(a.clone(), 1), plan(a.clone(), 2), plan(a, 3)]
    );
}

// ---- X6 ----

#[test]
fn x6_file_change_entry_without_path_is_malformed() {
    let item = json!({
        "id": "item_0", "type": "file_change", "status": "completed",
        "changes": [
            {"path": "src/a.rs", "kind": "update"},
            {"path": "", "kind": "add"},
            {"path": 5, "kind": "add"},
            "not an object",
            {"path": "/tmp/../b.rs", "kind": 7},
        ],
    });
    let malformed = json!({
        "kind": "unknown", "reason": "malformed_tool_use", "raw": item,
        "tool": "file_change", "tool_use_id": "item_0", "line": 1,
    });
    assert_eq!(
        events(&[completed(item.clone())]),
        [
            json!({"kind": "write", "path": "/home/dev2/project/src/a.rs", "change": "update", "success": true, "tool": "file_change", "tool_use_id": "item_0", "line": 1}),
            malformed.clone(),
            malformed.clone(),
            malformed,
            json!({"kind": "write", "path": "/b.rs", "success": true, "tool": "file_change", "tool_use_id": "item_0", "line": 1}),
        ]
    );
}

#[test]
fn x6_changes_not_a_list_give_one_malformed_and_an_empty_list_nothing() {
    let not_list = json!({"id": "item_0", "type": "file_change", "status": "completed", "changes": {"path": "a"}});
    let missing = json!({"id": "item_1", "type": "file_change", "status": "completed"});
    let empty =
        json!({"id": "item_2", "type": "file_change", "status": "completed", "changes": []});
    let failed = json!({"id": "item_3", "type": "file_change", "status": "failed", "changes": [{"path": "x", "kind": "delete"}]});
    assert_eq!(
        events(&[
            completed(not_list.clone()),
            completed(missing.clone()),
            completed(empty),
            completed(failed),
        ]),
        [
            json!({"kind": "unknown", "reason": "malformed_tool_use", "raw": not_list, "tool": "file_change", "tool_use_id": "item_0", "line": 1}),
            json!({"kind": "unknown", "reason": "malformed_tool_use", "raw": missing, "tool": "file_change", "tool_use_id": "item_1", "line": 2}),
            json!({"kind": "write", "path": "/home/dev2/project/x", "change": "delete", "success": false, "tool": "file_change", "tool_use_id": "item_3", "line": 4}),
        ]
    );
}

#[test]
fn x6_error_item_is_a_stream_warning() {
    assert_eq!(
        events(&[
            completed(json!({"id": "e", "type": "error", "message": "model fell back"})),
            completed(json!({"id": "e2", "type": "error", "message": 3})),
        ]),
        [
            json!({"kind": "warning", "source": "stream", "message": "model fell back", "line": 1}),
            json!({"kind": "warning", "source": "stream", "message": "", "line": 2}),
        ]
    );
}

#[test]
fn x6_mcp_and_web_search_are_unknown_tools() {
    let mcp = json!({"id": "m", "type": "mcp_tool_call", "server": "srv", "tool": 3});
    let web = json!({"id": "w", "type": "web_search", "query": "q"});
    assert_eq!(
        events(&[completed(mcp.clone()), completed(web.clone())]),
        [
            json!({"kind": "unknown", "reason": "unknown_tool", "raw": mcp, "tool": "mcp_tool_call", "tool_use_id": "m", "line": 1}),
            json!({"kind": "unknown", "reason": "unknown_tool", "raw": web, "tool": "web_search", "tool_use_id": "w", "line": 2}),
        ]
    );
}

#[test]
fn x6_other_item_types_are_unknown_items() {
    let item = json!({"id": "c", "type": "collab_tool_call", "status": "completed"});
    assert_eq!(
        events(&[completed(item.clone())]),
        [json!({"kind": "unknown", "reason": "unknown_item", "raw": item, "line": 1})]
    );
}

#[test]
fn x6_a_repeated_key_keeps_its_last_value() {
    let line = r#"{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"first","text":"second","id":"b"}}"#;
    assert_eq!(
        events(&[line.to_string()]),
        [json!({"kind": "agent", "text": "second", "line": 1})]
    );
}

// ---- X7 ----

#[test]
fn x7_top_level_error_is_a_stream_warning() {
    let run = run(&[
        json!({"type": "error", "message": "Reconnecting... 1/5"}).to_string(),
        json!({"type": "error", "message": {"text": "x"}}).to_string(),
        json!({"type": "error"}).to_string(),
    ]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "warning", "source": "stream", "message": "Reconnecting... 1/5", "line": 1}),
            json!({"kind": "warning", "source": "stream", "message": "", "line": 2}),
            json!({"kind": "warning", "source": "stream", "message": "", "line": 3}),
            no_result(),
        ]
    );
    assert_eq!(run.outcome["status"], "incomplete");
}

#[test]
fn x7_turn_failed_is_an_error_with_its_message_or_turn_failed() {
    let run = run(&[
        turn_failed(json!("boom")),
        turn_failed(json!("")),
        turn_failed(json!(5)),
        json!({"type": "turn.failed"}).to_string(),
        turn_completed(json!({})),
    ]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "error", "message": "boom", "line": 1}),
            json!({"kind": "error", "message": "turn failed", "line": 2}),
            json!({"kind": "error", "message": "turn failed", "line": 3}),
            json!({"kind": "error", "message": "turn failed", "line": 4}),
        ]
    );
    // O3: any turn.failed makes the run an error, even when a turn completes later.
    assert_eq!(run.outcome["status"], "error");
    assert_eq!(run.outcome["metrics"], json!({"num_turns": 5}));
}

#[test]
fn x7_other_top_level_types_are_unknown_type() {
    let line = json!({"type": "session.configured", "model": "m"});
    assert_eq!(
        events(&[line.to_string()]),
        [json!({"kind": "unknown", "reason": "unknown_type", "raw": line, "line": 1})]
    );
}

// ---- X8 ----

#[test]
fn x8_unfinished_items_ordered_by_latest_start() {
    let a = command("a", "sleep 1", "in_progress", Value::Null);
    let b = json!({"id": "b", "type": "agent_message", "text": ""});
    let c = json!({"id": "c", "type": "file_change", "changes": [], "status": "in_progress"});
    let mut a_again = a.clone();
    a_again["command"] = json!("sleep 11");
    let run = run(&[
        started(a.clone()),
        started(b.clone()),
        started(c.clone()),
        completed(c),
        started(a_again.clone()),
        started(todo("t", json!([]))),
    ]);
    assert_eq!(
        run.events,
        [
            plan(json!([]), 6),
            unresolved(b),
            unresolved(a_again),
            no_result(),
        ]
    );
    assert_eq!(run.outcome["status"], "incomplete");
    assert_eq!(run.outcome["metrics"], json!({}));
}

#[test]
fn x8_unresolved_items_come_after_a_terminal_line_without_the_missing_result_error() {
    let a = command("a", "sleep 1", "in_progress", Value::Null);
    let run = run(&[started(a.clone()), turn_completed(json!({}))]);
    assert_eq!(run.events, [unresolved(a)]);
    assert_eq!(run.outcome["status"], "success");
}

// ---- O1, O3, O4 ----

#[test]
fn o3_metrics_from_last_turn_completed() {
    let run = run(&[
        turn_completed(
            json!({"input_tokens": 100, "cached_input_tokens": 10, "output_tokens": 5, "reasoning_output_tokens": 2}),
        ),
        turn_completed(
            json!({"input_tokens": 7, "cached_input_tokens": "9", "output_tokens": 1.5, "cache_write_input_tokens": 3}),
        ),
        turn_failed(json!("late")),
    ]);
    assert_eq!(
        run.outcome["metrics"],
        json!({"input_tokens": 7, "output_tokens": 1.5, "num_turns": 3})
    );
    assert_eq!(run.outcome["status"], "error");
}

#[test]
fn o1_final_output_is_the_last_message_before_the_last_terminal_line() {
    let run = run(&[
        completed(message("m1", "first turn")),
        turn_completed(json!({})),
        completed(message("m2", "second a")),
        completed(message("m3", "second b")),
        completed(message("m4", "")),
        turn_completed(json!({})),
        completed(message("m5", "after the last turn")),
    ]);
    assert_eq!(run.outcome["final_output"], "second b");

    // The last turn said nothing: no final output, even though an earlier turn did.
    let run = super::run(&[
        completed(message("m1", "first turn")),
        turn_completed(json!({})),
        turn_failed(json!("x")),
    ]);
    assert_eq!(run.outcome.get("final_output"), None);

    // No terminal line: no final output.
    let run = super::run(&[completed(message("m1", "partial"))]);
    assert_eq!(run.outcome.get("final_output"), None);
    assert_eq!(run.outcome["status"], "incomplete");
}

#[test]
fn o4_pending_items_are_answered_while_the_run_goes_on() {
    let mut normalizer = CodexNormalizer::new(config());
    let mut out = Vec::new();
    for line in [
        thread_started(json!("th")),
        started(command("a", "sleep 1", "in_progress", Value::Null)),
        started(todo("t", json!([]))),
        started(json!({"id": "b", "type": "mcp_tool_call"})),
        completed(command("a", "sleep 1", "completed", json!(0))),
    ] {
        normalizer.push_line(line.as_bytes(), &mut out);
    }
    assert_eq!(normalizer.session_id(), Some("th"));
    assert_eq!(normalizer.cwd(), Some(CWD));
    assert_eq!(
        normalizer.pending_tool_uses(),
        [PendingToolUse {
            id: "b".into(),
            tool: Some("mcp_tool_call".into()),
            thread: None,
        }]
    );
}

// ---- S rules as Codex meets them ----

#[test]
fn s1_to_s4_lines_that_are_not_events() {
    let run = run_with(
        config(),
        &[
            b"",
            b"  \t\r",
            b"banner\r",
            b"[1, 2]",
            b"{\"no\": \"type\"}",
            b"\xff\xfe",
        ],
        &[b"Reading additional input from stdin...", b"", b"oops\r"],
    );
    assert_eq!(
        run.events,
        [
            json!({"kind": "warning", "source": "non_json", "message": "banner", "line": 3}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1, 2], "line": 4}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"no": "type"}, "line": 5}),
            json!({"kind": "warning", "source": "non_json", "message": "\u{fffd}\u{fffd}", "line": 6}),
            json!({"kind": "warning", "source": "stderr", "stream": "stderr", "message": "Reading additional input from stdin...", "line": 1}),
            json!({"kind": "warning", "source": "stderr", "stream": "stderr", "message": "oops", "line": 3}),
            no_result(),
        ]
    );
}

#[test]
fn s2_a_long_non_json_line_is_cut_to_1000_characters() {
    let line = "é".repeat(1_500);
    let run = run_stream(line.as_bytes());
    assert_eq!(run.events[0]["message"], "é".repeat(1_000));
}

/// S2 where the fast reader skips strings unread: a lone surrogate or a number out of range deep
/// in a skipped field, or nesting too deep, makes the line not JSON; a valid pair, an escaped
/// key and a long number keep it JSON.
#[test]
fn s2_skipped_fields_are_checked_as_value_checks_them() {
    let completed = |extra: &str| {
        format!(
            r#"{{"type":"item.completed","item":{{"id":"c","type":"command_execution","command":"true","aggregated_output":{extra},"exit_code":0,"status":"completed"}}}}"#
        )
    };
    let deep = format!("{}0{}", "[".repeat(124), "]".repeat(124));
    let lines = [
        completed(r#""a\nb\ud800c""#),
        completed(r#""a\udc00""#),
        completed(r#""a\ud83d\u0041""#),
        completed("[1e400]"),
        // 128 levels with the line and the item: too deep.
        completed(&format!("[[{deep}]]")),
        completed(r#""ok \ud83d\ude00 \\ud800""#),
        completed(r#"{"\u0061":123456789012345678901234567890}"#),
        // 127 levels: the deepest JSON.
        completed(&format!("[{deep}]")),
    ];
    let warning = |line: &String, n: u64| json!({"kind": "warning", "source": "non_json", "message": line, "line": n});
    let command = |n: u64| {
        json!({"kind": "command", "command": "true", "exit_code": 0, "success": true,
            "tool": "command_execution", "tool_use_id": "c", "line": n})
    };
    assert_eq!(
        run(&lines).events,
        [
            warning(&lines[0], 1),
            warning(&lines[1], 2),
            warning(&lines[2], 3),
            warning(&lines[3], 4),
            warning(&lines[4], 5),
            command(6),
            command(7),
            command(8),
            no_result(),
        ]
    );
}

#[test]
fn s8_odd_values_never_panic() {
    let odd = [
        json!({"type": "item.completed", "item": {"id": "x", "type": "command_execution", "command": "\u{0}\u{7f}'\"\\", "status": "completed"}}),
        json!({"type": "item.completed", "item": {"id": "x", "type": "command_execution", "command": "bash -lc '{\u{1F600}'", "exit_code": 18446744073709551615u64}}),
        json!({"type": "item.completed", "item": {"id": "x", "type": "file_change", "changes": [null, [], {"path": "/"}]}}),
        json!({"type": "item.updated", "item": {"id": "x", "type": "todo_list", "items": [null, {"text": [1]}]}}),
        json!({"type": "turn.completed", "usage": [1, 2]}),
        json!({"type": "thread.started", "thread_id": {"a": 1}}),
    ];
    let lines: Vec<String> = odd.iter().map(Value::to_string).collect();
    let run = run(&lines);
    assert_eq!(run.outcome["status"], "success");
    assert_eq!(run.outcome["metrics"], json!({"num_turns": 1}));
}

#[test]
fn s6_lines_after_finish_are_ignored() {
    let mut normalizer = CodexNormalizer::new(config());
    let mut out = Vec::new();
    normalizer.push_line(turn_completed(json!({})).as_bytes(), &mut out);
    let first = normalizer.finish(&mut out);
    normalizer.push_line(b"junk", &mut out);
    normalizer.push_stderr(b"junk", &mut out);
    let second = normalizer.finish(&mut out);
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(first, second);
}

// ---- L1: started events ----

#[test]
fn l1_started_comes_when_an_item_is_first_recorded() {
    let mut config = config();
    config.started = true;
    let line = format!("{WRAP} 'cargo test'");
    let running = command("item_0", &line, "in_progress", Value::Null);
    let patch = json!({"id": "item_1", "type": "file_change", "status": "in_progress",
        "changes": [{"path": "src/a.rs", "kind": "update"}]});
    let lines = [
        started(running.clone()),
        updated(running.clone()),
        started(message("item_9", "a message")),
        updated(patch),
        completed(command("item_0", &line, "completed", json!(0))),
        turn_completed(json!({})),
    ];
    let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    let run = run_with(config, &bytes, &[]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "started", "tool": "command_execution", "tool_use_id": "item_0",
                "command": "cargo test", "expect": [{"kind": "command"}], "line": 1}),
            // Every item but a todo_list is announced: it is pending until it completes (X8).
            json!({"kind": "started", "tool": "agent_message", "tool_use_id": "item_9", "line": 3}),
            // X2: an update of an item not open records it, so it starts too.
            json!({"kind": "started", "tool": "file_change", "tool_use_id": "item_1",
                "expect": [{"kind": "write", "path": "/home/dev2/project/src/a.rs"}], "line": 4}),
            cmd_event("cargo test", true, Some(0), 5),
            // X8: an open item of any type but todo_list is unresolved at the end.
            unresolved(json!({"id": "item_9", "type": "agent_message", "text": "a message"})),
            unresolved(
                json!({"id": "item_1", "type": "file_change", "status": "in_progress",
                "changes": [{"path": "src/a.rs", "kind": "update"}]})
            ),
        ]
    );
    // Off by default: the same stream without them.
    let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    let off = run_with(super::config(), &bytes, &[]);
    let finals: Vec<Value> = run
        .events
        .into_iter()
        .filter(|e| e["kind"] != "started")
        .collect();
    assert_eq!(off.events, finals);
}
