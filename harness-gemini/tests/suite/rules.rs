//! The G rules of `docs/gemini.md` on small hand-made streams; each test names its rule and
//! compares whole events.

use serde_json::{Value, json};

use super::{chunk, failed, init, ok, result, run, run_with, tool_use, user};

/// The events without the outcome, for streams that end with a `result`.
fn events(lines: &[Value]) -> Vec<Value> {
    let mut all = lines.to_vec();
    all.push(result());
    run(&all).events
}

#[test]
fn g2_the_first_non_empty_session_id_is_kept_and_init_emits_nothing() {
    let run = run(&[init(""), init("s-1"), init("s-2"), result()]);
    assert_eq!(run.events, Vec::<Value>::new());
    assert_eq!(run.outcome["session_id"], "s-1");
}

#[test]
fn g3_chunks_join_into_one_agent_event_on_the_last_line_that_added_text() {
    let got = events(&[user("hi"), chunk("Hel"), chunk("lo"), chunk("")]);
    assert_eq!(got, [json!({"kind": "agent", "text": "Hello", "line": 3})]);
}

#[test]
fn g3_any_other_json_line_flushes_but_non_json_and_stderr_do_not() {
    let lines = [
        chunk("a"),
        Value::String("not json".into()),
        chunk("b"),
        json!({"type": "surprise"}),
        chunk("c"),
    ];
    let got = events(&lines);
    assert_eq!(
        got,
        [
            json!({"kind": "warning", "source": "non_json", "message": "not json", "line": 2}),
            json!({"kind": "agent", "text": "ab", "line": 3}),
            json!({"kind": "unknown", "reason": "unknown_type", "raw": {"type": "surprise"}, "line": 4}),
            json!({"kind": "agent", "text": "c", "line": 5}),
        ]
    );
}

#[test]
fn g3_text_still_assembled_at_the_end_is_flushed_before_the_s9_error() {
    let run = run(&[chunk("partial")]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "agent", "text": "partial", "line": 1}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(run.outcome["status"], "incomplete");
}

#[test]
fn g3_a_message_of_another_role_or_without_string_content_is_malformed() {
    let bad = [
        json!({"type": "message", "role": "system", "content": "x"}),
        json!({"type": "message", "role": "user", "content": 3}),
    ];
    let got = events(&bad);
    let expected: Vec<Value> = bad
        .iter()
        .enumerate()
        .map(|(i, raw)| json!({"kind": "unknown", "reason": "malformed_message", "raw": raw, "line": i + 1}))
        .collect();
    assert_eq!(got, expected);
}

#[test]
fn g4_g5_a_result_resolves_its_use_in_any_order() {
    let got = events(&[
        tool_use("glob", "t1", json!({"pattern": "*.rs", "dir_path": "src"})),
        tool_use(
            "read_file",
            "t2",
            json!({"file_path": "/abs/a.rs", "end_line": 9}),
        ),
        ok("t2"),
        failed("t1", "invalid_tool_params", "Search path does not exist"),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "read", "path": "/abs/a.rs", "range": {"start": 1, "end": 9},
                   "success": true, "tool": "read_file", "tool_use_id": "t2", "line": 3}),
            json!({"kind": "search", "query": "*.rs", "path": "/home/gemini/project/src",
                   "success": false, "error": "Search path does not exist",
                   "tool": "glob", "tool_use_id": "t1", "line": 4}),
        ]
    );
}

#[test]
fn g5_the_failure_text_is_the_error_message_else_the_output_cut_to_1000_characters() {
    let long = "é".repeat(1_200);
    let got = events(&[
        tool_use("write_file", "a", json!({"file_path": "x"})),
        json!({"type": "tool_result", "tool_id": "a", "status": "error", "output": long}),
        tool_use("write_file", "b", json!({"file_path": "y"})),
        json!({"type": "tool_result", "tool_id": "b", "status": "cancelled"}),
    ]);
    assert_eq!(got[0]["error"], json!("é".repeat(1_000)));
    assert_eq!(got[0]["success"], false);
    assert_eq!(got[1]["success"], false);
    assert_eq!(got[1].get("error"), None);
}

#[test]
fn g5_an_unpaired_result_and_a_reused_id_are_never_guessed() {
    let u1 = tool_use("read_file", "dup", json!({"file_path": "a"}));
    let u2 = tool_use("read_file", "dup", json!({"file_path": "b"}));
    let r = ok("dup");
    let got = events(&[u1.clone(), u2.clone(), r.clone(), ok("dup"), ok("never")]);
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "ambiguous_tool_use_id",
                   "raw": {"tool_use": [u1, u2], "tool_result": r},
                   "tool_use_id": "dup", "line": 3}),
            json!({"kind": "unknown", "reason": "unpaired_result",
                   "raw": {"tool_use": null, "tool_result": ok("dup")},
                   "tool_use_id": "dup", "line": 4}),
            json!({"kind": "unknown", "reason": "unpaired_result",
                   "raw": {"tool_use": null, "tool_result": ok("never")},
                   "tool_use_id": "never", "line": 5}),
        ]
    );
}

#[test]
fn g4_a_use_without_a_string_id_is_malformed_at_once_and_others_when_their_result_comes() {
    let no_id = json!({"type": "tool_use", "tool_name": "glob", "parameters": {}});
    let no_name = json!({"type": "tool_use", "tool_id": "n", "parameters": {}});
    let bad = tool_use("read_file", "r", json!({"start_line": 1}));
    let got = events(&[
        no_id.clone(),
        no_name.clone(),
        bad.clone(),
        ok("n"),
        ok("r"),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "unknown", "reason": "malformed_tool_use",
                   "raw": {"tool_use": no_id, "tool_result": null}, "tool": "glob", "line": 1}),
            json!({"kind": "unknown", "reason": "malformed_tool_use",
                   "raw": {"tool_use": no_name, "tool_result": ok("n")},
                   "tool_use_id": "n", "line": 4}),
            json!({"kind": "unknown", "reason": "malformed_tool_use",
                   "raw": {"tool_use": bad, "tool_result": ok("r")},
                   "tool": "read_file", "tool_use_id": "r", "line": 5}),
        ]
    );
}

#[test]
fn g6_other_tools_are_unknown_with_both_lines() {
    let u = tool_use(
        "invoke_agent",
        "i",
        json!({"agent_name": "x", "prompt": "y"}),
    );
    let got = events(&[u.clone(), ok("i")]);
    assert_eq!(
        got,
        [json!({"kind": "unknown", "reason": "unknown_tool",
                "raw": {"tool_use": u, "tool_result": ok("i")},
                "tool": "invoke_agent", "tool_use_id": "i", "line": 2})]
    );
}

#[test]
fn g6_shell_commands_go_through_the_classifier_and_dir_path_acts_as_a_cd() {
    let got = events(&[
        tool_use(
            "run_shell_command",
            "a",
            json!({"command": "cat lib.rs", "dir_path": "src"}),
        ),
        ok("a"),
        tool_use(
            "run_shell_command",
            "b",
            json!({"command": "rg -n todo", "dir_path": "/x"}),
        ),
        ok("b"),
        tool_use(
            "run_shell_command",
            "c",
            json!({"command": "cargo test; exit 3"}),
        ),
        ok("c"),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "read", "path": "/home/gemini/project/src/lib.rs", "command": "cat lib.rs",
                   "success": true, "tool": "run_shell_command", "tool_use_id": "a", "line": 2}),
            json!({"kind": "search", "query": "todo", "path": "/x", "command": "rg -n todo",
                   "success": true, "tool": "run_shell_command", "tool_use_id": "b", "line": 4}),
            json!({"kind": "command", "command": "cargo test; exit 3", "success": true,
                   "tool": "run_shell_command", "tool_use_id": "c", "line": 6}),
        ]
    );
}

#[test]
fn g6_a_skill_lives_under_the_workspace_by_default_dot_gemini() {
    let lines = [
        tool_use("activate_skill", "s", json!({"name": "review"})),
        ok("s"),
        result(),
    ];
    let skill = |workspace: Option<&str>| {
        let mut config = super::config();
        config.workspace = workspace.map(str::to_string);
        run_with(config, &lines).events[0]["path"].clone()
    };
    assert_eq!(
        skill(None),
        "/home/gemini/project/.gemini/skills/review/SKILL.md"
    );
    assert_eq!(skill(Some("/ws")), "/ws/skills/review/SKILL.md");
}

#[test]
fn g7_write_todos_gives_a_plan_on_success_and_a_warning_on_failure() {
    let todos = json!({"todos": [{"description": "a", "status": "completed"}]});
    let got = events(&[
        tool_use("write_todos", "w1", todos.clone()),
        ok("w1"),
        tool_use("write_todos", "w2", todos),
        failed("w2", "invalid_tool_params", "bad"),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "plan", "items": [{"text": "a", "completed": true}], "line": 2}),
            json!({"kind": "warning", "source": "stream", "message": "write_todos failed: bad", "line": 4}),
        ]
    );
}

#[test]
fn g9_error_lines_by_severity() {
    let got = events(&[
        json!({"type": "error", "severity": "warning", "message": "Loop detected"}),
        json!({"type": "error", "severity": "error", "message": "Maximum session turns exceeded"}),
        json!({"type": "error", "message": 3}),
    ]);
    assert_eq!(
        got,
        [
            json!({"kind": "warning", "source": "stream", "message": "Loop detected", "line": 1}),
            json!({"kind": "error", "message": "Maximum session turns exceeded", "line": 2}),
            json!({"kind": "error", "message": "error", "line": 3}),
        ]
    );
}

#[test]
fn g10_a_failed_result_reports_its_error_once() {
    let failed_result = |error: Value| json!({"type": "result", "status": "error", "error": error, "stats": {"input_tokens": 5}});
    let with_message = run(&[failed_result(
        json!({"type": "unknown", "message": "[API Error]"}),
    )]);
    assert_eq!(
        with_message.events,
        [json!({"kind": "error", "message": "[API Error]", "line": 1})]
    );
    assert_eq!(with_message.outcome["status"], "error");
    let after_line = run(&[
        json!({"type": "error", "severity": "error", "message": "empty response"}),
        failed_result(Value::Null),
    ]);
    assert_eq!(
        after_line.events,
        [json!({"kind": "error", "message": "empty response", "line": 1})]
    );
    let bare = run(&[failed_result(Value::Null)]);
    assert_eq!(
        bare.events,
        [json!({"kind": "error", "message": "result status: error", "line": 1})]
    );
}

#[test]
fn g10_the_outcome_takes_the_last_stats_and_the_last_answer() {
    let run = run(&[
        init("s"),
        chunk("first"),
        tool_use("glob", "g", json!({"pattern": "*"})),
        ok("g"),
        chunk("final "),
        chunk("answer"),
        result(),
    ]);
    assert_eq!(
        run.outcome,
        json!({"kind": "outcome", "session_id": "s", "status": "success",
               "final_output": "final answer",
               "metrics": {"input_tokens": 10, "output_tokens": 3, "cache_read_input_tokens": 4,
                           "duration_ms": 50, "num_turns": 1},
               "counts": {"agent": 2, "search": 1}})
    );
}

#[test]
fn g11_uses_without_a_result_are_unresolved_in_record_order() {
    let a = tool_use("replace", "a", json!({"file_path": "x"}));
    let b = tool_use("glob", "b", json!({"pattern": "*"}));
    let run = run(&[a.clone(), b.clone()]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "unknown", "reason": "unresolved_tool_use",
                   "raw": {"tool_use": a, "tool_result": null}, "tool": "replace", "tool_use_id": "a"}),
            json!({"kind": "unknown", "reason": "unresolved_tool_use",
                   "raw": {"tool_use": b, "tool_result": null}, "tool": "glob", "tool_use_id": "b"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn l1_a_tool_use_is_announced_on_its_line_with_what_it_will_give() {
    let mut config = super::config();
    config.started = true;
    let lines = [
        tool_use(
            "run_shell_command",
            "sh",
            json!({"command": "ls", "dir_path": "src"}),
        ),
        tool_use("write_todos", "w", json!({"todos": []})),
        ok("sh"),
        ok("w"),
        result(),
    ];
    let got = run_with(config, &lines).events;
    assert_eq!(
        got,
        [
            json!({"kind": "started", "command": "ls",
                   "expect": [{"kind": "list", "path": "/home/gemini/project/src"}],
                   "tool": "run_shell_command", "tool_use_id": "sh", "line": 1}),
            json!({"kind": "started", "tool": "write_todos", "tool_use_id": "w", "line": 2}),
            json!({"kind": "list", "path": "/home/gemini/project/src", "command": "ls",
                   "success": true, "tool": "run_shell_command", "tool_use_id": "sh", "line": 3}),
            json!({"kind": "plan", "items": [], "line": 4}),
        ]
    );
}
