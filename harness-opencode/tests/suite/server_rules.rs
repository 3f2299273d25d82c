//! The PS rules of `docs/opencode.md`: the events of `opencode serve`'s stream, as a
//! session's transcript holds them, on hand-made events in the shape the recordings show.
//! Each goes through the conformance kit (every split of the input, every line accounted for)
//! and compares whole serialized events.

use serde_json::{Value, json};

use super::run;

fn event(kind: &str, properties: Value) -> Value {
    json!({"id": "evt_1", "type": kind, "properties": properties})
}

fn part(part: Value) -> Value {
    let mut part = part;
    part["sessionID"] = json!("ses_1");
    event(
        "message.part.updated",
        json!({"sessionID": "ses_1", "part": part}),
    )
}

fn user(id: &str) -> Value {
    event(
        "message.updated",
        json!({"sessionID": "ses_1", "info": {"id": id, "sessionID": "ses_1", "role": "user"}}),
    )
}

fn text(message: &str, text: &str, ended: bool) -> Value {
    let mut time = json!({"start": 1});
    if ended {
        time["end"] = json!(2);
    }
    part(json!({"id": "prt_t", "type": "text", "messageID": message, "text": text, "time": time}))
}

fn finish(message: &str, reason: &str) -> Value {
    part(
        json!({"id": "prt_f", "type": "step-finish", "messageID": message, "reason": reason,
                "tokens": {"input": 10, "output": 2, "reasoning": 0, "cache": {"read": 0, "write": 0}},
                "cost": 0.5}),
    )
}

fn bash(status: &str, input: Value, extra: Value) -> Value {
    let mut state = json!({"status": status, "input": input});
    if let (Some(state), Some(extra)) = (state.as_object_mut(), extra.as_object()) {
        state.extend(extra.clone());
    }
    part(
        json!({"id": "prt_b", "type": "tool", "tool": "bash", "callID": "toolu_1",
                "messageID": "msg_a", "state": state}),
    )
}

fn idle() -> Value {
    event("session.idle", json!({"sessionID": "ses_1"}))
}

#[test]
fn ps1_ps2_only_the_sessions_finished_assistant_text_speaks() {
    let (events, outcome) = run(&[
        user("msg_u"),
        // PS2: the prompt's own part, even when whole.
        part(
            json!({"id": "prt_u", "type": "text", "messageID": "msg_u", "text": "hi",
                    "time": {"start": 1, "end": 1}}),
        ),
        event(
            "message.part.delta",
            json!({"sessionID": "ses_1", "messageID": "msg_a",
                                            "partID": "prt_t", "field": "text", "delta": "He"}),
        ),
        text("msg_a", "", false),
        text("msg_a", "Hello.", true),
        // PS1: another session's part.
        event(
            "message.part.updated",
            json!({"sessionID": "ses_2", "part": {
            "type": "text", "messageID": "msg_z", "sessionID": "ses_2", "text": "not ours",
            "time": {"start": 1, "end": 2}}}),
        ),
        finish("msg_a", "stop"),
        idle(),
    ]);
    assert_eq!(
        events,
        [json!({"kind": "agent", "text": "Hello.", "line": 5})]
    );
    assert_eq!(outcome["session_id"], "ses_1");
    assert_eq!(outcome["status"], "success");
    assert_eq!(outcome["final_output"], "Hello.");
}

#[test]
fn ps3_ps6_a_permission_request_names_the_pending_tool_and_its_input() {
    let (events, _) = run(&[
        bash("pending", json!({}), json!({})),
        event(
            "permission.asked",
            json!({
            "id": "per_1", "sessionID": "ses_1", "permission": "bash", "patterns": ["ls -la"],
            "metadata": {"command": "ls -la"}, "always": ["ls *"],
            "tool": {"messageID": "msg_a", "callID": "toolu_1"}}),
        ),
        event(
            "permission.replied",
            json!({"sessionID": "ses_1", "requestID": "per_1",
                                           "reply": "once"}),
        ),
        bash("running", json!({"command": "ls -la"}), json!({})),
        bash(
            "completed",
            json!({"command": "ls -la"}),
            json!({"output": "x\n", "metadata": {"exit": 0}}),
        ),
        finish("msg_a", "tool-calls"),
    ]);
    assert_eq!(
        events,
        [
            json!({"kind": "permission", "id": "per_1", "options": ["allow", "allow_always", "deny"],
                   "command": "ls -la", "input": {"command": "ls -la"},
                   "expect": [{"kind": "list"}],
                   "tool": "bash", "tool_use_id": "toolu_1", "line": 2}),
            json!({"kind": "list", "command": "ls -la", "success": true,
                   "tool": "bash", "tool_use_id": "toolu_1", "line": 5}),
            // S9: the step called tools and the input ended there.
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn ps5_an_abort_is_no_failure_and_another_error_is() {
    let aborted = json!({"name": "MessageAbortedError", "data": {"message": "Aborted"}});
    let (events, outcome) = run(&[
        event(
            "session.error",
            json!({"sessionID": "ses_1", "error": aborted}),
        ),
        idle(),
    ]);
    assert_eq!(
        events,
        [json!({"kind": "error", "message": "stream ended without a result"})]
    );
    assert_eq!(outcome["status"], "incomplete");

    let api = json!({"name": "APIError", "data": {"message": "overloaded", "statusCode": 529}});
    let (events, outcome) = run(&[
        event("session.error", json!({"sessionID": "ses_1", "error": api})),
        idle(),
    ]);
    assert_eq!(
        events,
        [json!({"kind": "error", "message": "overloaded", "line": 1})]
    );
    assert_eq!(outcome["status"], "error");
}

#[test]
fn ps4_ps8_other_parts_and_events_are_consumed_and_a_bad_part_is_unknown() {
    let (events, _) = run(&[
        part(json!({"type": "snapshot", "messageID": "msg_a", "snapshot": "abc"})),
        event(
            "session.status",
            json!({"sessionID": "ses_1", "status": {"type": "busy"}}),
        ),
        event("todo.updated", json!({"sessionID": "ses_1", "todos": []})),
        event("some.future.event", json!({"sessionID": "ses_1"})),
        event(
            "message.part.updated",
            json!({"sessionID": "ses_1", "part": "not an object"}),
        ),
        finish("msg_a", "stop"),
    ]);
    assert_eq!(
        events,
        [json!({"kind": "unknown", "reason": "malformed_message",
                "raw": {"id": "evt_1", "type": "message.part.updated",
                        "properties": {"sessionID": "ses_1", "part": "not an object"}},
                "line": 5})]
    );
}

#[test]
fn ps7_idle_flushes_what_the_agent_said() {
    // An aborted step has no step-finish: the idle that ends its turn flushes the text.
    let (events, _) = run(&[text("msg_a", "Partial answer.", true), idle()]);
    assert_eq!(
        events,
        [
            json!({"kind": "agent", "text": "Partial answer.", "line": 1}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn ps14_a_turns_metrics_are_its_own_steps() {
    use harness_agents_core::{Backend, Normalizer};

    let mut config = super::config();
    config.session = true;
    let mut normalizer = harness_agents_opencode::OpencodeHarness.normalizer(config);
    let mut events = Vec::new();
    let mut turn = |normalizer: &mut Box<dyn Normalizer>, steps: usize| {
        for _ in 0..steps {
            let line = finish("msg_a", "stop").to_string();
            normalizer.push_line(line.as_bytes(), &mut events);
        }
        normalizer.push_line(idle().to_string().as_bytes(), &mut events);
        let outcome = normalizer.end_turn();
        serde_json::to_value(&outcome.metrics).expect("serializes")
    };
    let first = turn(&mut normalizer, 2);
    let second = turn(&mut normalizer, 1);
    assert_eq!(first["input_tokens"], 20);
    assert_eq!(first["num_turns"], 2);
    assert_eq!(second["input_tokens"], 10);
    assert_eq!(second["total_cost_usd"], 0.5);
    assert!(second.get("cumulative").is_none(), "{second}");
    let total = normalizer.finish(&mut events);
    assert_eq!(
        total.metrics.num_turns.map(|n| n.to_string()).as_deref(),
        Some("3")
    );
}
