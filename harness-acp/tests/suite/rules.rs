//! The A rules of `docs/acp.md`, one test or more each, on hand-written transcripts.

use harness_agents_core::NormalizerConfig;
use serde_json::{Value, json};

use super::{CWD, agent, answer, client, config, end_turn, request, run, run_with, start, update};

fn with(lines: Vec<Value>) -> Vec<Value> {
    let mut all = start();
    all.extend(lines);
    all.push(end_turn());
    all
}

fn call(id: &str, kind: &str, status: &str, extra: Value) -> Value {
    let mut update = json!({"sessionUpdate": "tool_call", "toolCallId": id, "title": "t",
                            "kind": kind, "status": status});
    for (key, value) in extra.as_object().unwrap() {
        update[key] = value.clone();
    }
    super::update(update)
}

fn done(id: &str, status: &str, extra: Value) -> Value {
    let mut update =
        json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": status});
    for (key, value) in extra.as_object().unwrap() {
        update[key] = value.clone();
    }
    super::update(update)
}

#[test]
fn a1_a_non_json_agent_line_is_a_warning_and_other_shapes_are_not_events() {
    let lines = vec![
        json!({"from": "agent", "text": "Loaded cached credentials."}),
        json!({"from": "server", "message": {"jsonrpc": "2.0"}}),
        json!({"from": "agent", "message": [1]}),
        json!([1]),
    ];
    let run = run(&lines);
    assert_eq!(
        run.events,
        [
            json!({"kind": "warning", "message": "Loaded cached credentials.", "source": "non_json", "line": 1}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"from": "server", "message": {"jsonrpc": "2.0"}}, "line": 2}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"from": "agent", "message": [1]}, "line": 3}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1], "line": 4}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn a2_session_new_sets_the_working_directory_and_a3_its_answer_the_session_id() {
    let mut lines = vec![
        request(
            1,
            "session/new",
            json!({"cwd": "/elsewhere", "mcpServers": []}),
        ),
        answer(1, json!({"sessionId": "abc"})),
        request(2, "session/prompt", json!({})),
        call(
            "r",
            "read",
            "completed",
            json!({"locations": [{"path": "a.txt"}]}),
        ),
    ];
    lines.push(end_turn());
    let run = run(&lines);
    assert_eq!(run.events[0]["path"], "/elsewhere/a.txt");
    assert_eq!(run.outcome["session_id"], "abc");
    assert_eq!(run.outcome["status"], "success");
}

#[test]
fn a3_an_error_answer_ends_the_run_with_an_error_and_an_unpaired_answer_is_unknown() {
    let lines = vec![
        request(0, "initialize", json!({"protocolVersion": 1})),
        answer(9, json!({})),
        agent(
            json!({"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": "Authentication required"}}),
        ),
    ];
    let run = run(&lines);
    assert_eq!(
        run.events,
        [
            json!({"kind": "unknown", "reason": "unpaired_result", "raw": {"jsonrpc": "2.0", "id": 9, "result": {}}, "line": 2}),
            json!({"kind": "error", "message": "initialize failed: Authentication required (code -32000)", "line": 3}),
        ]
    );
    assert_eq!(run.outcome["status"], "error");
}

#[test]
fn a4_unknown_updates_are_unknown_and_session_state_is_consumed() {
    let notice = json!({"sessionUpdate": "notice", "text": "x"});
    let run = run(&with(vec![
        update(json!({"sessionUpdate": "available_commands_update", "availableCommands": []})),
        update(json!({"sessionUpdate": "current_mode_update", "currentModeId": "yolo"})),
        update(
            json!({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}),
        ),
        update(notice.clone()),
        agent(json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1"}})),
        agent(json!({"jsonrpc": "2.0", "method": "_vendor/thing", "params": {}})),
    ]));
    let kinds: Vec<(&str, &str, u64)> = run
        .events
        .iter()
        .map(|e| {
            (
                e["kind"].as_str().unwrap(),
                e["reason"].as_str().unwrap_or(""),
                e["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("unknown", "unknown_type", 7),
            ("unknown", "not_an_event", 8),
            ("unknown", "unknown_type", 9)
        ]
    );
    assert_eq!(run.events[0]["raw"]["params"]["update"], notice);
}

/// A4, measured with the GitHub Copilot CLI: an update of the new session arrives before the
/// answer to `session/new`; it names the session the answer then names, and says nothing else.
#[test]
fn a4_an_update_before_session_news_answer_names_the_session() {
    let lines = [
        request(1, "session/new", json!({"cwd": CWD, "mcpServers": []})),
        update(json!({"sessionUpdate": "available_commands_update", "availableCommands": []})),
        answer(1, json!({"sessionId": "s1"})),
        request(
            2,
            "session/prompt",
            json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hello"}}),
        ),
        end_turn(),
    ];
    let run = run(&lines);
    assert_eq!(
        run.events,
        [json!({"kind": "agent", "text": "hello", "line": 5})]
    );
    assert_eq!(run.outcome["session_id"], "s1");
    assert_eq!(run.outcome["status"], "success");
}

#[test]
fn a4_plan_entries_become_a_plan() {
    let run = run(&with(vec![update(
        json!({"sessionUpdate": "plan", "entries": [
        {"content": "One", "priority": "high", "status": "completed"},
        {"content": "Two", "priority": "low", "status": "in_progress"}]}),
    )]));
    assert_eq!(
        run.events,
        [
            json!({"kind": "plan", "items": [{"text": "One", "completed": true}, {"text": "Two", "completed": false}], "line": 4})
        ]
    );
}

#[test]
fn a5_chunks_are_joined_reasoning_first_and_flushed_by_the_next_other_line() {
    let chunk = |kind: &str, text: &str| {
        update(json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}}))
    };
    let run = run(&with(vec![
        chunk("agent_message_chunk", "Hel"),
        chunk("agent_thought_chunk", "Think"),
        chunk("agent_message_chunk", "lo"),
        chunk("agent_thought_chunk", "ing"),
        call(
            "r",
            "read",
            "in_progress",
            json!({"locations": [{"path": "/a"}]}),
        ),
        chunk("agent_message_chunk", "Bye"),
        update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "", "mimeType": "image/png"}}),
        ),
    ]));
    assert_eq!(
        run.events,
        [
            json!({"kind": "reasoning", "text": "Thinking", "line": 7}),
            json!({"kind": "agent", "text": "Hello", "line": 6}),
            json!({"kind": "agent", "text": "Bye", "line": 9}),
            json!({"kind": "unknown", "reason": "unknown_block", "raw": {"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "image", "data": "", "mimeType": "image/png"}}}}, "line": 10}),
            json!({"kind": "unknown", "reason": "unresolved_tool_use", "raw": {"toolCallId": "r", "title": "t", "kind": "read", "status": "in_progress", "locations": [{"path": "/a"}]}, "tool": "read", "tool_use_id": "r"}),
        ]
    );
    assert_eq!(run.outcome["final_output"], "Bye");
}

/// A5: an empty chunk (Qwen Code sends one after every model call) adds no text: it ends a
/// text being assembled (its `line`), and alone gives no empty `agent` event and leaves the
/// final output as the last message that said something.
#[test]
fn a5_an_empty_chunk_gives_no_event_and_keeps_the_final_output() {
    let chunk = |kind: &str, text: &str| {
        update(json!({"sessionUpdate": kind, "content": {"type": "text", "text": text}}))
    };
    let run = run(&with(vec![
        chunk("agent_message_chunk", "Done."),
        chunk("agent_message_chunk", ""),
        chunk("agent_thought_chunk", ""),
        call(
            "r",
            "read",
            "in_progress",
            json!({"locations": [{"path": "/a"}]}),
        ),
        chunk("agent_message_chunk", ""),
        chunk("agent_thought_chunk", ""),
    ]));
    assert_eq!(
        run.events,
        [
            json!({"kind": "agent", "text": "Done.", "line": 5}),
            json!({"kind": "unknown", "reason": "unresolved_tool_use", "raw": {"toolCallId": "r", "title": "t", "kind": "read", "status": "in_progress", "locations": [{"path": "/a"}]}, "tool": "read", "tool_use_id": "r"}),
        ]
    );
    assert_eq!(run.outcome["final_output"], "Done.");
    assert_eq!(run.outcome["counts"].get("agent"), Some(&json!(1)));
}

/// A6: opencode's final update has no `kind`: the first notification's is kept.
#[test]
fn a6_a_call_keeps_the_fields_its_later_updates_leave_out() {
    let run = run(&with(vec![
        call("b", "execute", "pending", json!({"rawInput": {}})),
        done(
            "b",
            "in_progress",
            json!({"rawInput": {"command": "cat notes.txt"}}),
        ),
        done("b", "completed", json!({"rawOutput": {"output": "x"}})),
    ]));
    assert_eq!(
        run.events,
        [
            json!({"kind": "read", "path": "/home/acp/project/notes.txt", "command": "cat notes.txt", "success": true, "tool": "execute", "tool_use_id": "b", "line": 6})
        ]
    );
}

#[test]
fn a7_every_kind_has_its_event() {
    let diff = |path: &str, old: Value| json!({"content": [{"type": "diff", "path": path, "oldText": old, "newText": "n"}]});
    let run = run(&with(vec![
        call("e1", "edit", "completed", diff("/p/new.txt", Value::Null)),
        call("e2", "edit", "completed", diff("old.txt", json!("o"))),
        call(
            "e3",
            "edit",
            "completed",
            json!({"locations": [{"path": "x.txt"}]}),
        ),
        call(
            "d",
            "delete",
            "completed",
            json!({"rawInput": {"file_path": "gone.txt"}}),
        ),
        call(
            "m",
            "move",
            "completed",
            json!({"locations": [{"path": "a"}, {"path": "b"}]}),
        ),
        call(
            "s",
            "search",
            "completed",
            json!({"rawInput": {"pattern": "TODO", "path": "src"}}),
        ),
        call(
            "x",
            "execute",
            "completed",
            json!({"rawInput": {"command": "cargo test"}}),
        ),
        call(
            "v",
            "execute",
            "completed",
            json!({"rawInput": {"command": ["ls", "-la", "src"]}}),
        ),
        call("f", "fetch", "completed", json!({"rawInput": {"url": "u"}})),
    ]));
    let tool = |id: &str, kind: &str| json!({"tool": kind, "tool_use_id": id});
    let with_tool = |mut event: Value, id: &str, kind: &str, line: u64| {
        for (k, v) in tool(id, kind).as_object().unwrap() {
            event[k] = v.clone();
        }
        event["line"] = json!(line);
        event
    };
    assert_eq!(
        run.events,
        [
            with_tool(
                json!({"kind": "write", "path": "/p/new.txt", "change": "add", "success": true}),
                "e1",
                "edit",
                4
            ),
            with_tool(
                json!({"kind": "write", "path": "/home/acp/project/old.txt", "change": "update", "success": true}),
                "e2",
                "edit",
                5
            ),
            with_tool(
                json!({"kind": "write", "path": "/home/acp/project/x.txt", "success": true}),
                "e3",
                "edit",
                6
            ),
            with_tool(
                json!({"kind": "write", "path": "/home/acp/project/gone.txt", "change": "delete", "success": true}),
                "d",
                "delete",
                7
            ),
            with_tool(
                json!({"kind": "write", "path": "/home/acp/project/a", "success": true}),
                "m",
                "move",
                8
            ),
            with_tool(
                json!({"kind": "write", "path": "/home/acp/project/b", "success": true}),
                "m",
                "move",
                8
            ),
            with_tool(
                json!({"kind": "search", "query": "TODO", "path": "/home/acp/project/src", "success": true}),
                "s",
                "search",
                9
            ),
            with_tool(
                json!({"kind": "command", "command": "cargo test", "success": true}),
                "x",
                "execute",
                10
            ),
            with_tool(
                json!({"kind": "list", "path": "/home/acp/project/src", "command": "ls -la src", "success": true}),
                "v",
                "execute",
                11
            ),
            with_tool(
                json!({"kind": "unknown", "reason": "unknown_tool", "raw": {"toolCallId": "f", "title": "t", "kind": "fetch", "status": "completed", "rawInput": {"url": "u"}}}),
                "f",
                "fetch",
                12
            ),
        ]
    );
}

#[test]
fn a7_a_failed_call_carries_its_error_and_a_call_without_what_it_needs_is_malformed() {
    let run = run(&with(vec![
        call(
            "r",
            "read",
            "failed",
            json!({"locations": [{"path": "/nope"}],
            "content": [{"type": "content", "content": {"type": "text", "text": "File not found"}}]}),
        ),
        call(
            "x",
            "execute",
            "failed",
            json!({"rawInput": {"command": "false"}, "rawOutput": {"error": "exit 1"}}),
        ),
        call("q", "read", "completed", json!({})),
        call("t", "think", "completed", json!({})),
        call(
            "y",
            "execute",
            "failed",
            json!({"rawInput": {"command": "touch b"}, "rawOutput": {"message": "denied by rule", "code": "denied"}}),
        ),
    ]));
    assert_eq!(run.events[0]["error"], "File not found");
    assert_eq!(run.events[0]["success"], false);
    assert_eq!(run.events[1]["error"], "exit 1");
    assert_eq!(run.events[2]["reason"], "malformed_tool_use");
    assert_eq!(run.events[2]["tool_use_id"], "q");
    assert_eq!(run.events[3]["reason"], "unknown_tool");
    assert_eq!(run.events[4]["error"], "denied by rule");
    assert_eq!(run.events[4]["success"], false);
    assert_eq!(run.events.len(), 5);
}

#[test]
fn a7a_a_shell_exit_in_raw_output_gives_the_exit_code_and_a_non_zero_one_fails() {
    let exit = |code: Value| {
        json!({"content": [{"type": "content", "content": {"type": "text", "text": "out\n<shellId: 0 completed with exit code 3>"}}],
               "rawOutput": {"content": "out", "contents": [
                   {"type": "shell_output", "exitCode": 9},
                   {"type": "shell_exit", "shellId": "0", "exitCode": code, "cwd": "/p"}]}})
    };
    let mut three = exit(json!(3));
    three["rawInput"] = json!({"command": "echo out; exit 3"});
    let mut zero = exit(json!(0));
    zero["rawInput"] = json!({"command": "true"});
    let mut odd = exit(json!("3"));
    odd["rawInput"] = json!({"command": "false"});
    let mut failed = exit(json!(2));
    failed["rawInput"] = json!({"command": "cat nope"});
    let run = run(&with(vec![
        call("x3", "execute", "completed", three),
        call("x0", "execute", "completed", zero),
        call("xs", "execute", "completed", odd),
        call("xr", "execute", "failed", failed),
    ]));
    let error = "out\n<shellId: 0 completed with exit code 3>";
    assert_eq!(
        run.events,
        [
            json!({"kind": "command", "command": "echo out; exit 3", "success": false,
                   "exit_code": 3, "error": error, "tool": "execute", "tool_use_id": "x3", "line": 4}),
            json!({"kind": "command", "command": "true", "success": true, "exit_code": 0,
                   "tool": "execute", "tool_use_id": "x0", "line": 5}),
            json!({"kind": "command", "command": "false", "success": true,
                   "tool": "execute", "tool_use_id": "xs", "line": 6}),
            json!({"kind": "read", "path": "/home/acp/project/nope", "command": "cat nope",
                   "success": false, "error": error, "tool": "execute", "tool_use_id": "xr", "line": 7}),
        ]
    );
}

#[test]
fn a7a_qwens_structured_exit_code_unless_a_signal_ended_the_command() {
    let shell = |code: Value, signal: Value| json!({"type": "shell_result", "output": "oops", "exitCode": code, "signal": signal});
    let run = run(&with(vec![
        // Qwen Code: a command exiting 1 is `failed`, its exit code in `rawOutput`.
        call(
            "a",
            "execute",
            "failed",
            json!({"rawInput": {"command": "exit 1"}, "rawOutput": shell(json!(1), Value::Null),
            "content": [{"type": "content", "content": {"type": "text", "text": "Exit Code: 1"}}]}),
        ),
        // A non-zero exit code fails a call its agent called `completed`.
        call(
            "b",
            "execute",
            "completed",
            json!({"rawInput": {"command": "false"}, "rawOutput": shell(json!(2), Value::Null)}),
        ),
        call(
            "c",
            "execute",
            "completed",
            json!({"rawInput": {"command": "true"}, "rawOutput": shell(json!(0), Value::Null)}),
        ),
        // A command ended by a signal has no exit code; nor has a code that is no integer.
        call(
            "d",
            "execute",
            "failed",
            json!({"rawInput": {"command": "sleep 9"}, "rawOutput": shell(json!(0), json!(15))}),
        ),
        call(
            "e",
            "execute",
            "completed",
            json!({"rawInput": {"command": "true"}, "rawOutput": shell(json!(1.5), Value::Null)}),
        ),
    ]));
    let command = |id: &str, command: &str, line: u64| {
        json!({"kind": "command", "command": command, "tool": "execute", "tool_use_id": id,
            "line": line})
    };
    let mut expected = vec![
        command("a", "exit 1", 4),
        command("b", "false", 5),
        command("c", "true", 6),
        command("d", "sleep 9", 7),
        command("e", "true", 8),
    ];
    for (event, (success, error, code)) in expected.iter_mut().zip([
        (false, Some("Exit Code: 1"), Some(1)),
        // Its `error` is its content's text, as a `failed` call's: none here.
        (false, None, Some(2)),
        (true, None, Some(0)),
        (false, None, None),
        (true, None, None),
    ]) {
        event["success"] = json!(success);
        if let Some(error) = error {
            event["error"] = json!(error);
        }
        if let Some(code) = code {
            event["exit_code"] = json!(code);
        }
    }
    assert_eq!(run.events, expected);
}

#[test]
fn a9_a_permission_request_records_the_call_and_other_requests_are_unknown() {
    let ask = agent(
        json!({"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {
        "sessionId": "s1", "toolCall": {"toolCallId": "w", "kind": "edit", "status": "pending", "locations": [{"path": "n.txt"}]},
        "options": [{"optionId": "ok", "name": "OK", "kind": "allow_once"}]}}),
    );
    let run = run(&with(vec![
        ask,
        client(
            json!({"jsonrpc": "2.0", "id": 0, "result": {"outcome": {"outcome": "selected", "optionId": "ok"}}}),
        ),
        done("w", "completed", json!({})),
        agent(json!({"jsonrpc": "2.0", "id": 1, "method": "terminal/create", "params": {}})),
        client(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}),
        ),
    ]));
    assert_eq!(
        run.events,
        [
            json!({"kind": "write", "path": "/home/acp/project/n.txt", "success": true, "tool": "edit", "tool_use_id": "w", "line": 6}),
            json!({"kind": "unknown", "reason": "unknown_type", "raw": {"jsonrpc": "2.0", "id": 1, "method": "terminal/create", "params": {}}, "line": 7}),
        ]
    );
}

#[test]
fn a10_the_stop_reason_gives_the_status_and_usage_the_metrics() {
    let mut lines = start();
    lines.push(update(json!({"sessionUpdate": "usage_update", "used": 5, "size": 10, "cost": {"amount": 0.5, "currency": "USD"}})));
    lines.push(update(json!({"sessionUpdate": "usage_update", "used": 6, "size": 10, "cost": {"amount": 0.75, "currency": "USD"}})));
    lines.push(update(json!({"sessionUpdate": "usage_update", "used": 7, "size": 10, "cost": {"amount": 9, "currency": "EUR"}})));
    lines.push(answer(2, json!({"stopReason": "max_tokens", "usage": {"totalTokens": 17, "inputTokens": 10, "outputTokens": 7, "thoughtTokens": 2, "cachedReadTokens": 3, "cachedWriteTokens": 1}})));
    let run = run(&lines);
    assert_eq!(
        run.events,
        [json!({"kind": "error", "message": "the agent's turn ended: max_tokens", "line": 7})]
    );
    assert_eq!(
        run.outcome,
        json!({"kind": "outcome", "session_id": "s1", "status": "error",
               "metrics": {"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 3,
                           "cache_creation_input_tokens": 1, "reasoning_output_tokens": 2,
                           "total_cost_usd": 0.75, "num_turns": 1},
               "counts": {"error": 1}})
    );
}

#[test]
fn a10a_copilots_usage_is_the_sessions_so_far_and_replaces_instead_of_adding() {
    let usage = |n: u64| json!({"stopReason": "end_turn", "usage": {"inputTokens": n, "outputTokens": n / 4}});
    let prompt = |id: u64| {
        request(
            id,
            "session/prompt",
            json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}),
        )
    };
    let session = |name: &str| {
        let mut lines = vec![
            request(0, "initialize", json!({"protocolVersion": 1})),
            answer(
                0,
                json!({"protocolVersion": 1, "agentInfo": {"name": name, "version": "1"}}),
            ),
        ];
        lines.extend(start());
        lines.extend([answer(2, usage(240)), prompt(3), answer(3, usage(360))]);
        run(&lines).outcome["metrics"].clone()
    };
    assert_eq!(
        session("Copilot"),
        json!({"input_tokens": 360, "output_tokens": 90, "num_turns": 2})
    );
    // Any other agent's answers carry the prompt's own usage: they add up.
    assert_eq!(
        session("copilot-like"),
        json!({"input_tokens": 600, "output_tokens": 150, "num_turns": 2})
    );
}

#[test]
fn l1_a_call_is_announced_when_first_seen() {
    let mut config = NormalizerConfig::default();
    config.cwd = Some("/w".into());
    config.started = true;
    let run = run_with(
        config,
        &with(vec![
            call(
                "x",
                "execute",
                "pending",
                json!({"rawInput": {"command": "cat a.txt"}}),
            ),
            done("x", "completed", json!({})),
        ]),
    );
    assert_eq!(
        run.events,
        [
            json!({"kind": "started", "command": "cat a.txt", "expect": [{"kind": "read", "path": "/home/acp/project/a.txt"}], "tool": "execute", "tool_use_id": "x", "line": 4}),
            json!({"kind": "read", "path": "/home/acp/project/a.txt", "command": "cat a.txt", "success": true, "tool": "execute", "tool_use_id": "x", "line": 5}),
        ]
    );
}

/// A5: the client's lines and the agent's non-JSON lines do not end the message.
#[test]
fn a5_client_lines_and_non_json_lines_flush_nothing() {
    let chunk = |text: &str| {
        update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}),
        )
    };
    let run = run(&with(vec![
        chunk("One "),
        client(
            json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s1"}}),
        ),
        json!({"from": "agent", "text": "a log line"}),
        chunk("message."),
    ]));
    assert_eq!(
        run.events,
        [
            json!({"kind": "warning", "message": "a log line", "source": "non_json", "line": 6}),
            json!({"kind": "agent", "text": "One message.", "line": 7}),
        ]
    );
}

#[test]
fn a17_in_a_session_a_permission_request_is_a_permission_event_with_the_offered_decisions() {
    let ask = |id: Value, kinds: &[&str]| {
        let options: Vec<Value> = kinds
            .iter()
            .map(|k| json!({"optionId": format!("o-{k}"), "name": k, "kind": k}))
            .collect();
        agent(
            json!({"jsonrpc": "2.0", "id": id, "method": "session/request_permission", "params": {
            "sessionId": "s1", "toolCall": {"toolCallId": "w", "kind": "edit", "status": "pending",
                "locations": [{"path": "n.txt"}], "rawInput": {"path": "n.txt", "text": "b"}},
            "options": options}}),
        )
    };
    let lines = with(vec![
        ask(json!(0), &["allow_always", "allow_once", "reject_once"]),
        ask(json!("r-1"), &["allow_once", "reject_always"]),
        // No decision fits (the session cancels it at once), or an id nobody could name.
        ask(json!(2), &["reject_always"]),
        ask(json!(null), &["allow_once"]),
        done("w", "completed", json!({})),
    ]);
    let mut session = config();
    session.session = true;
    let asked = |id: &str, options: Value| {
        json!({"kind": "permission", "id": id, "options": options,
            "path": "/home/acp/project/n.txt", "expect": [{"kind": "write", "path": "/home/acp/project/n.txt"}],
            "input": {"path": "n.txt", "text": "b"}, "tool": "edit", "tool_use_id": "w", "line": 4})
    };
    let mut second = asked("r-1", json!(["allow"]));
    second["line"] = json!(5);
    let wrote = json!({"kind": "write", "path": "/home/acp/project/n.txt", "success": true,
        "tool": "edit", "tool_use_id": "w", "line": 8});
    assert_eq!(
        run_with(session, &lines).events,
        [
            asked("0", json!(["allow", "allow_always", "deny"])),
            second,
            wrote.clone()
        ]
    );
    // In a run the client answers by the mode (A13): no request reaches anybody.
    assert_eq!(run(&lines).events, [wrote]);
}

#[test]
fn a21_a_loaded_sessions_replay_gives_no_events_and_its_id_is_the_stored_one() {
    let lines = vec![
        request(
            1,
            "session/load",
            json!({"sessionId": "old", "cwd": CWD, "mcpServers": []}),
        ),
        update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "said before"}}),
        ),
        update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "o", "kind": "read", "status": "completed", "locations": [{"path": "a"}]}),
        ),
        answer(1, json!(null)),
        request(
            2,
            "session/prompt",
            json!({"sessionId": "old", "prompt": [{"type": "text", "text": "hi"}]}),
        ),
        update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "new"}}),
        ),
        end_turn(),
    ];
    let mut session = config();
    session.session = true;
    let run = run_with(session, &lines);
    assert_eq!(
        run.events,
        [json!({"kind": "agent", "text": "new", "line": 6})]
    );
    assert_eq!(run.outcome["session_id"], "old");
}
