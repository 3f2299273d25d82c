//! Assistant messages: C2 (blocks), C3 (assembly by id), C4 (threads and flush points),
//! C5 (user lines), J2 (their line numbers) and J4 (parent_tool_use_id).

use serde_json::{Value, json};

use super::*;

fn agent(text: &str, line: u64) -> Value {
    json!({"kind": "agent", "text": text, "line": line})
}

fn reasoning(text: &str, line: u64) -> Value {
    json!({"kind": "reasoning", "text": text, "line": line})
}

fn in_thread(mut event: Value, parent: &str) -> Value {
    event["parent_tool_use_id"] = json!(parent);
    event
}

/// The end-of-input event of a use that never got its result (S9), here after a `result`.
fn unresolved(block: Value) -> Value {
    json!({
        "kind": "unknown", "reason": "unresolved_tool_use", "tool": block["name"],
        "tool_use_id": block["id"], "raw": {"tool_use": block, "tool_result": null},
    })
}

fn unknown_block(block: Value, line: u64) -> Value {
    json!({"kind": "unknown", "reason": "unknown_block", "raw": block, "line": line})
}

#[test]
fn c2_thinking_then_text_make_one_reasoning_then_one_agent() {
    // The text comes first in the message, but reasoning is always emitted first.
    assert_eq!(
        events(&[assistant(
            "m1",
            json!([text("a"), thinking("t1"), text("b"), thinking("t2")])
        )]),
        [reasoning("t1\n\nt2", 1), agent("a\n\nb", 1)]
    );
}

#[test]
fn c2_redacted_thinking_is_consumed() {
    assert_eq!(
        events(&[assistant(
            "m1",
            json!([{"type": "redacted_thinking", "data": "xx"}, text("a")])
        )]),
        [agent("a", 1)]
    );
    assert_eq!(
        events(&[assistant(
            "m1",
            json!([{"type": "redacted_thinking", "data": "xx"}])
        )]),
        Vec::<Value>::new()
    );
}

#[test]
fn c2_unknown_block_type_is_emitted_at_once() {
    let image = json!({"type": "image", "source": {"data": "..."}});
    assert_eq!(
        events(&[
            assistant("m1", json!([text("a")])),
            assistant("m1", json!([image.clone(), text("b")])),
        ]),
        // Emitted on its line, ahead of the message, which is flushed only by `result`.
        [unknown_block(image, 2), agent("a\n\nb", 2)]
    );
}

#[test]
fn c2_text_block_whose_text_is_not_a_string_is_an_unknown_block() {
    let blocks = [
        json!({"type": "text", "text": 5}),
        json!({"type": "text", "text": null}),
        json!({"type": "text"}),
        json!({"type": "text", "text": ["a"]}),
    ];
    assert_eq!(
        events(&[assistant("m1", json!(blocks))]),
        blocks
            .iter()
            .map(|b| unknown_block(b.clone(), 1))
            .collect::<Vec<_>>()
    );
}

#[test]
fn c2_thinking_block_whose_thinking_is_not_a_string_is_an_unknown_block() {
    let bad = json!({"type": "thinking", "thinking": {"t": 1}});
    let missing = json!({"type": "thinking", "text": "wrong field"});
    assert_eq!(
        events(&[assistant(
            "m1",
            json!([bad.clone(), thinking("ok"), missing.clone()])
        )]),
        [
            unknown_block(bad, 1),
            unknown_block(missing, 1),
            reasoning("ok", 1)
        ]
    );
}

#[test]
fn c2_non_object_block_and_block_without_type_are_unknown_blocks() {
    let blocks = [
        json!("just a string"),
        json!(7),
        json!(null),
        json!(["text"]),
        json!({"text": "no type"}),
        json!({"type": 3, "text": "type not a string"}),
    ];
    assert_eq!(
        events(&[assistant("m1", json!(blocks))]),
        blocks
            .iter()
            .map(|b| unknown_block(b.clone(), 1))
            .collect::<Vec<_>>()
    );
}

#[test]
fn c2_assistant_content_not_a_list_is_a_malformed_message() {
    let lines = [
        json!({"type": "assistant", "message": {"id": "m1", "content": "text"}}),
        json!({"type": "assistant", "message": {"id": "m1", "content": {"type": "text"}}}),
        json!({"type": "assistant", "message": {"id": "m1"}}),
        json!({"type": "assistant", "message": "hello"}),
        json!({"type": "assistant"}),
    ];
    let lines: Vec<String> = lines.iter().map(Value::to_string).collect();
    let expected: Vec<Value> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "kind": "unknown",
                "reason": "malformed_message",
                "raw": serde_json::from_str::<Value>(l).unwrap(),
                "line": i + 1,
            })
        })
        .collect();
    assert_eq!(events(&lines), expected);
}

#[test]
fn c3_malformed_message_line_starts_no_message_but_flushes_per_its_id() {
    let same_id = json!({"type": "assistant", "message": {"id": "m1", "content": 5}});
    let other_id = json!({"type": "assistant", "message": {"id": "m2", "content": 5}});
    assert_eq!(
        events(&[
            assistant("m1", json!([text("a")])),
            same_id.to_string(),
            assistant("m1", json!([text("b")])),
            other_id.to_string(),
            assistant("m2", json!([text("c")])),
        ]),
        [
            json!({"kind": "unknown", "reason": "malformed_message", "raw": same_id, "line": 2}),
            // The line with another id completes m1, before its own event.
            agent("a\n\nb", 3),
            json!({"kind": "unknown", "reason": "malformed_message", "raw": other_id, "line": 4}),
            agent("c", 5),
        ]
    );
}

#[test]
fn c3_lines_with_the_same_id_join_even_when_not_consecutive() {
    assert_eq!(
        events(&[
            assistant("m1", json!([thinking("t1")])),
            json!({"type": "system", "subtype": "status", "status": "busy"}).to_string(),
            json!({"type": "stream_event", "event": {}}).to_string(),
            assistant("m1", json!([text("a")])),
            assistant_in(Some("elsewhere"), json!("s1"), json!([text("sub")])),
            assistant("m1", json!([text("b")])),
        ]),
        // Flushed together by `result`, in the order first seen.
        [
            reasoning("t1", 1),
            agent("a\n\nb", 6),
            in_thread(agent("sub", 5), "elsewhere"),
        ]
    );
}

#[test]
fn c3_line_without_a_string_id_is_a_message_of_its_own() {
    assert_eq!(
        events(&[
            assistant_in(None, Value::Null, json!([text("a")])),
            assistant_in(None, Value::Null, json!([text("b")])),
            assistant_in(None, json!(7), json!([text("c")])),
            assistant_in(None, json!(7), json!([text("d")])),
            json!({"type": "assistant", "message": {"content": [text("e")]}}).to_string(),
        ]),
        [
            agent("a", 1),
            agent("b", 2),
            agent("c", 3),
            agent("d", 4),
            agent("e", 5)
        ]
    );
}

#[test]
fn c3_an_id_that_comes_back_after_its_flush_starts_a_new_message() {
    assert_eq!(
        events(&[
            assistant("m1", json!([text("a")])),
            user(json!("next prompt")),
            assistant("m1", json!([text("b")])),
            assistant("m2", json!([text("c")])),
            assistant("m1", json!([text("d")])),
        ]),
        [agent("a", 1), agent("b", 3), agent("c", 4), agent("d", 5)]
    );
}

#[test]
fn c3_same_id_in_another_thread_is_another_message() {
    assert_eq!(
        events(&[
            assistant("m1", json!([text("main")])),
            assistant_in(Some("x"), json!("m1"), json!([text("sub")])),
            assistant("m1", json!([text("main again")])),
        ]),
        [
            agent("main\n\nmain again", 3),
            in_thread(agent("sub", 2), "x")
        ]
    );
}

#[test]
fn c3_a_message_is_seen_with_its_first_line_whatever_it_holds() {
    // m1 is seen at line 1 (only a tool use), s1 at line 2; m1's text arrives later.
    // `result` flushes both in first-seen order: m1 first.
    assert_eq!(
        events(&[
            assistant("m1", json!([])),
            assistant_in(Some("x"), json!("s1"), json!([text("sub")])),
            assistant("m1", json!([text("main")])),
        ]),
        [agent("main", 3), in_thread(agent("sub", 2), "x")]
    );
}

#[test]
fn c4_empty_texts_are_skipped_and_do_not_move_the_line() {
    assert_eq!(
        events(&[
            assistant("m1", json!([thinking("t")])),
            assistant("m1", json!([text("a")])),
            assistant("m1", json!([thinking(""), text("")])),
            assistant("m1", json!([text("b")])),
            assistant("m1", json!([text("")])),
        ]),
        [reasoning("t", 1), agent("a\n\nb", 4)]
    );
    // Nothing but empty texts: no event at all.
    assert_eq!(
        events(&[assistant("m1", json!([thinking(""), text("")]))]),
        Vec::<Value>::new()
    );
}

#[test]
fn j2_agent_and_reasoning_take_the_last_line_that_added_text() {
    assert_eq!(
        events(&[
            assistant("m1", json!([thinking("t1")])),
            assistant("m1", json!([text("a")])),
            assistant("m1", json!([thinking("t2")])),
            assistant("m1", json!([thinking("")])),
            assistant("m1", json!([tool_use("t1", "WebFetch", json!({}))])),
            user(json!([tool_result("t1")])),
        ]),
        [
            reasoning("t1\n\nt2", 3),
            agent("a", 2),
            json!({
                "kind": "unknown", "reason": "unknown_tool", "tool": "WebFetch",
                "tool_use_id": "t1", "line": 6,
                "raw": {"tool_use": tool_use("t1", "WebFetch", json!({})), "tool_result": tool_result("t1")},
            }),
        ]
    );
}

#[test]
fn j2_a_message_flushed_at_end_of_input_keeps_its_line() {
    let run = run(&[
        String::new(),
        assistant("m1", json!([text("a")])),
        assistant("m1", json!([text("")])),
    ]);
    assert_eq!(
        run.events,
        [
            agent("a", 2),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn c4_thinking_split_across_lines_with_other_lines_between_is_reported_once() {
    let limited = json!({
        "type": "rate_limit_event",
        "rate_limit_info": {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": 1893456000},
    });
    let stdout = [
        assistant("m1", json!([thinking("first")])),
        json!({"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 3}).to_string(),
        json!({"type": "system", "subtype": "api_retry", "attempt": 1}).to_string(),
        limited.to_string(),
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}).to_string(),
        json!({"type": "stream_event", "event": {"type": "ping"}}).to_string(),
        "not json".to_string(),
        json!({"type": "zzz"}).to_string(),
        json!(["not an event"]).to_string(),
        json!({"type": "system", "subtype": "init", "cwd": "/w"}).to_string(),
        assistant("m1", json!([thinking("second")])),
        assistant("m1", json!([text("answer")])),
        result_ok(),
    ];
    let bytes: Vec<&[u8]> = stdout.iter().map(|l| l.as_bytes()).collect();
    let run = run_with(
        harness_agents_core::NormalizerConfig::default(),
        &bytes,
        &[b"on stderr"],
    );
    assert_eq!(
        run.events,
        [
            json!({"kind": "unknown", "reason": "unknown_system_subtype", "raw": {"type": "system", "subtype": "api_retry", "attempt": 1}, "line": 3}),
            json!({"kind": "warning", "source": "rate_limit", "message": "rate limit status rejected, limit five_hour, resets at 1893456000", "line": 4}),
            json!({"kind": "warning", "source": "non_json", "message": "not json", "line": 7}),
            json!({"kind": "unknown", "reason": "unknown_type", "raw": {"type": "zzz"}, "line": 8}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": ["not an event"], "line": 9}),
            reasoning("first\n\nsecond", 11),
            agent("answer", 12),
            json!({"kind": "warning", "source": "stderr", "message": "on stderr", "line": 1, "stream": "stderr"}),
        ]
    );
}

#[test]
fn c4_assistant_line_with_another_id_flushes_before_its_own_events() {
    let bad = json!({"type": "image"});
    assert_eq!(
        events(&[
            assistant("m1", json!([thinking("t"), text("a")])),
            assistant("m2", json!([bad.clone(), text("b")])),
        ]),
        [
            reasoning("t", 1),
            agent("a", 1),
            unknown_block(bad, 2),
            agent("b", 2)
        ]
    );
}

#[test]
fn c4_user_line_of_the_thread_flushes_whatever_its_content() {
    let malformed = json!({"type": "user", "message": {"content": 5}});
    assert_eq!(
        events(&[
            assistant("m1", json!([text("a")])),
            user(json!([text("echoed prompt")])),
            assistant("m2", json!([text("b")])),
            user(json!("string prompt")),
            assistant("m3", json!([text("c")])),
            malformed.to_string(),
            assistant("m4", json!([text("d")])),
            user(json!([])),
        ]),
        [
            agent("a", 1),
            agent("b", 3),
            agent("c", 5),
            json!({"kind": "unknown", "reason": "malformed_message", "raw": malformed, "line": 6}),
            agent("d", 7),
        ]
    );
}

#[test]
fn c4_user_line_of_another_thread_does_not_flush() {
    assert_eq!(
        events(&[
            assistant("m1", json!([text("a")])),
            user_in(Some("other"), json!("sub prompt")),
            assistant("m1", json!([text("b")])),
        ]),
        [agent("a\n\nb", 3)]
    );
}

#[test]
fn c4_subagent_line_flushes_the_parent_message() {
    let agent_use = tool_use("ag", "Agent", json!({"prompt": "go"}));
    assert_eq!(
        events(&[
            assistant("m1", json!([text("delegating"), agent_use.clone()])),
            user_in(Some("ag"), json!([text("go")])),
            assistant_in(Some("ag"), json!("s1"), json!([text("working")])),
        ]),
        [
            agent("delegating", 1),
            in_thread(agent("working", 3), "ag"),
            unresolved(agent_use),
        ]
    );
}

#[test]
fn c4_any_line_of_the_subagent_flushes_the_parent_message() {
    // "when any line arrives whose parent_tool_use_id is the id of one of the message's own
    // tool uses": this reading wins over "nothing else flushes (not system lines ...)".
    let agent_use = tool_use("ag", "Agent", json!({"prompt": "go"}));
    for line in [
        json!({"type": "system", "subtype": "status", "parent_tool_use_id": "ag"}),
        json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}, "parent_tool_use_id": "ag"}),
        json!({"type": "stream_event", "parent_tool_use_id": "ag"}),
    ] {
        assert_eq!(
            events(&[
                assistant("m1", json!([text("a"), agent_use.clone()])),
                line.to_string(),
                assistant("m1", json!([text("b")])),
            ]),
            [agent("a", 1), agent("b", 3), unresolved(agent_use.clone())],
            "{line}"
        );
    }
}

#[test]
fn c4_result_for_the_subagent_tool_use_flushes_the_subagent_message() {
    let agent_use = tool_use("ag", "Agent", json!({"prompt": "go"}));
    let done = json!({"type": "tool_result", "tool_use_id": "ag", "content": [text("found it")]});
    assert_eq!(
        events(&[
            assistant("m1", json!([agent_use.clone()])),
            assistant_in(
                Some("ag"),
                json!("s1"),
                json!([thinking("hm"), text("found it")])
            ),
            user(json!([done.clone()])),
            assistant("m2", json!([text("thanks")])),
        ]),
        [
            in_thread(reasoning("hm", 2), "ag"),
            in_thread(agent("found it", 2), "ag"),
            json!({
                "kind": "unknown", "reason": "unknown_tool", "tool": "Agent", "tool_use_id": "ag",
                "raw": {"tool_use": agent_use, "tool_result": done}, "line": 3,
            }),
            agent("thanks", 4),
        ]
    );
}

#[test]
fn c4_task_notification_of_a_background_subagent_flushes_its_message() {
    let agent_use = tool_use(
        "ag",
        "Agent",
        json!({"prompt": "go", "run_in_background": true}),
    );
    // Since Claude Code 2.1.2xx the result arrives when the sub-agent starts.
    let launched =
        json!({"type": "tool_result", "tool_use_id": "ag", "content": [text("started")]});
    let notification = json!({
        "type": "system", "subtype": "task_notification", "tool_use_id": "ag",
        "status": "completed", "session_id": "s",
    });
    let other = json!({"type": "system", "subtype": "task_notification", "tool_use_id": "zz"});
    assert_eq!(
        events(&[
            assistant("m1", json!([agent_use.clone()])),
            user_tur(
                json!([launched.clone()]),
                json!({"isAsync": true, "status": "async_launched"})
            ),
            assistant_in(
                Some("ag"),
                json!("s1"),
                json!([thinking("hm"), text("found it")])
            ),
            other.to_string(),
            notification.to_string(),
            assistant("m2", json!([text("thanks")])),
        ]),
        [
            json!({
                "kind": "unknown", "reason": "unknown_tool", "tool": "Agent", "tool_use_id": "ag",
                "raw": {
                    "tool_use": agent_use, "tool_result": launched,
                    "tool_use_result": {"isAsync": true, "status": "async_launched"},
                },
                "line": 2,
            }),
            // C1: the notification naming another tool use flushes nothing.
            json!({"kind": "unknown", "reason": "unknown_system_subtype", "raw": other, "line": 4}),
            // C4: the one naming the sub-agent's tool use flushes its thread, before its own event.
            in_thread(reasoning("hm", 3), "ag"),
            in_thread(agent("found it", 3), "ag"),
            json!({"kind": "unknown", "reason": "unknown_system_subtype", "raw": notification, "line": 5}),
            agent("thanks", 6),
        ]
    );
}

#[test]
fn c4_result_line_flushes_every_thread_in_first_seen_order() {
    let run = run(&[
        assistant_in(Some("b"), json!("x"), json!([text("b thread")])),
        assistant("m1", json!([text("main")])),
        assistant_in(Some("a"), json!("y"), json!([text("a thread")])),
        json!({"type": "result", "subtype": "success", "result": "r"}).to_string(),
        assistant("m2", json!([text("after")])),
    ]);
    assert_eq!(
        run.events,
        [
            in_thread(agent("b thread", 1), "b"),
            agent("main", 2),
            in_thread(agent("a thread", 3), "a"),
            agent("after", 5),
        ]
    );
    assert_eq!(run.outcome["status"], "success");
}

#[test]
fn c4_end_of_input_flushes_every_thread_in_first_seen_order() {
    let run = run(&[
        assistant_in(Some("b"), json!("x"), json!([text("b thread")])),
        assistant("m1", json!([thinking("main")])),
    ]);
    assert_eq!(
        run.events,
        [
            in_thread(agent("b thread", 1), "b"),
            reasoning("main", 2),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn c5_user_text_blocks_string_content_and_other_blocks_emit_nothing() {
    assert_eq!(
        events(&[
            user(json!("the prompt")),
            user(json!([text("context"), {"type": "image"}, 5, {"no": "type"}])),
        ]),
        Vec::<Value>::new()
    );
}

#[test]
fn c5_user_content_neither_string_nor_list_is_a_malformed_message() {
    let lines = [
        json!({"type": "user", "message": {"content": {"type": "text", "text": "x"}}}),
        json!({"type": "user", "message": {"content": 1}}),
        json!({"type": "user", "message": {"content": null}}),
        json!({"type": "user", "message": {}}),
        json!({"type": "user"}),
        json!({"type": "user", "message": {"content": "ok"}, "parent_tool_use_id": "p"}),
        json!({"type": "user", "message": {"content": false}, "parent_tool_use_id": "p"}),
    ];
    let strings: Vec<String> = lines.iter().map(Value::to_string).collect();
    let malformed = |i: usize| json!({"kind": "unknown", "reason": "malformed_message", "raw": lines[i], "line": i + 1});
    assert_eq!(
        events(&strings),
        [
            malformed(0),
            malformed(1),
            malformed(2),
            malformed(3),
            malformed(4),
            in_thread(malformed(6), "p"),
        ]
    );
}

#[test]
fn j4_parent_tool_use_id_is_on_every_kind_from_a_subagent_line() {
    let p = Some("ag");
    let system = json!({"type": "system", "subtype": "compact", "parent_tool_use_id": "ag"});
    let other = json!({"type": "zzz", "parent_tool_use_id": "ag"});
    let untyped = json!({"parent_tool_use_id": "ag"});
    let limited = json!({"type": "rate_limit_event", "parent_tool_use_id": "ag"});
    let malformed =
        json!({"type": "assistant", "message": {"content": 1}, "parent_tool_use_id": "ag"});
    let image = json!({"type": "image"});
    let no_id = json!({"type": "tool_use", "name": "Bash", "input": {"command": "ls"}});
    let failed = json!({"type": "result", "subtype": "error_during_execution", "is_error": true, "result": "boom", "parent_tool_use_id": "ag"});
    let run = run(&[
        system.to_string(),
        other.to_string(),
        untyped.to_string(),
        limited.to_string(),
        malformed.to_string(),
        assistant_in(
            p,
            json!("s1"),
            json!([thinking("t"), text("a"), image.clone(), no_id.clone()]),
        ),
        assistant_in(
            p,
            json!("s1"),
            json!([tool_use("w1", "Write", json!({"file_path": "/f"}))]),
        ),
        // The result comes on a main-thread line: the write keeps its use's thread.
        user(json!([tool_result("w1")])),
        failed.to_string(),
    ]);
    let t = |e: Value| in_thread(e, "ag");
    assert_eq!(
        run.events,
        [
            t(
                json!({"kind": "unknown", "reason": "unknown_system_subtype", "raw": system, "line": 1})
            ),
            t(json!({"kind": "unknown", "reason": "unknown_type", "raw": other, "line": 2})),
            t(json!({"kind": "unknown", "reason": "not_an_event", "raw": untyped, "line": 3})),
            t(
                json!({"kind": "warning", "source": "rate_limit", "message": "rate limit status unknown", "line": 4})
            ),
            t(
                json!({"kind": "unknown", "reason": "malformed_message", "raw": malformed, "line": 5})
            ),
            t(unknown_block(image, 6)),
            t(json!({
                "kind": "unknown", "reason": "malformed_tool_use", "tool": "Bash", "line": 6,
                "raw": {"tool_use": no_id, "tool_result": null},
            })),
            t(
                json!({"kind": "write", "path": "/f", "success": true, "tool": "Write", "tool_use_id": "w1", "line": 8})
            ),
            // A main-thread user line does not flush the sub-agent's message; `result` does.
            t(reasoning("t", 6)),
            t(agent("a", 6)),
            t(json!({"kind": "error", "message": "boom", "line": 9})),
        ]
    );
}

#[test]
fn j4_empty_or_non_string_parent_counts_as_the_main_thread() {
    let empty = json!({"type": "zzz", "parent_tool_use_id": ""});
    let number = json!({"type": "zzz", "parent_tool_use_id": 5});
    assert_eq!(
        events(&[
            assistant("m1", json!([text("a")])),
            assistant_in(Some(""), json!("m1"), json!([text("b")])),
            empty.to_string(),
            number.to_string(),
        ]),
        [
            json!({"kind": "unknown", "reason": "unknown_type", "raw": empty, "line": 3}),
            json!({"kind": "unknown", "reason": "unknown_type", "raw": number, "line": 4}),
            agent("a\n\nb", 2),
        ]
    );
}

#[test]
fn c4_one_line_flushes_what_it_completes_in_first_seen_order() {
    let agent_use = tool_use("ag", "Agent", json!({"prompt": "go"}));
    let done = tool_result("ag");
    // Line 4 completes both the sub-agent's message (seen at line 2) and the main thread's
    // m2 (seen at line 3): they come out in that order, before the line's own event.
    assert_eq!(
        events(&[
            assistant("m1", json!([agent_use.clone()])),
            assistant_in(Some("ag"), json!("s1"), json!([text("sub")])),
            assistant("m2", json!([text("main")])),
            user(json!([done.clone()])),
        ]),
        [
            in_thread(agent("sub", 2), "ag"),
            agent("main", 3),
            json!({
                "kind": "unknown", "reason": "unknown_tool", "tool": "Agent", "tool_use_id": "ag",
                "raw": {"tool_use": agent_use, "tool_result": done}, "line": 4,
            }),
        ]
    );
}

#[test]
fn c2_tool_result_block_in_an_assistant_message_is_an_unknown_block() {
    let block = tool_result("t1");
    assert_eq!(
        events(&[assistant("m1", json!([block.clone(), text("a")]))]),
        [unknown_block(block, 1), agent("a", 1)]
    );
}
