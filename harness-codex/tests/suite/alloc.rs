//! S7: a huge agent message is held once. Its event and the outcome's
//! `final_output` share one text, so a caller that keeps both holds the message once beside the
//! line it read. A counting allocator (per thread) measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, Usage, assert_within, decode, decode_answer};
use harness_agents_codex::{CodexNormalizer, RolloutNormalizer};
use harness_agents_core::{EventBody, Kind};
use serde_json::{Value, json};

use super::{completed, config, message, thread_started, turn_completed};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

/// One turn whose only item is an agent message with `text` (its JSON line built before the
/// measure, as the caller's line buffer): the message line's length, and what decoding cost
/// with the events and outcome kept alive as a caller keeps them.
fn one_turn(text: &str) -> (usize, Usage) {
    let lines = [
        thread_started(json!("th")),
        json!({"type": "turn.started"}).to_string(),
        completed(message("m", text)),
        turn_completed(json!({"input_tokens": 1})),
    ];
    let usage = decode_answer(CodexNormalizer::new(config()), &lines, text);
    (lines[2].len(), usage)
}

#[test]
fn s7_a_huge_agent_message_is_held_once_by_its_event_and_the_outcome() {
    let text = "x".repeat(16 << 20);
    let (_, usage) = one_turn(&text);
    assert_within(usage.peak, 1, text.len());
}

#[test]
fn s7_an_escaped_agent_message_is_decoded_straight_into_its_shared_text() {
    // A message with escapes (newlines, quotes) was unescaped into a string of its own, then
    // copied into the shared text: for a moment twice beside its line. It is now decoded once,
    // into the text the event and the outcome share.
    let text = "a line of \"prose\"\n".repeat(1 << 20);
    let (_, usage) = one_turn(&text);
    assert_within(usage.peak, 1, text.len());
    assert_within(usage.kept, 1, text.len());
}

/// A stored rollout (R1, R4, R7) whose only item is `item`, its lines built before the measure.
fn stored_turn(item: Value) -> Vec<String> {
    let line = |kind: &str, payload: Value| {
        json!({"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}).to_string()
    };
    vec![
        line(
            "session_meta",
            json!({"id": "t1", "cwd": "/p", "history_mode": "paginated"}),
        ),
        line("turn_context", json!({"model": "gpt-5"})),
        line("event_msg", json!({"type": "item_completed", "item": item})),
        line("event_msg", json!({"type": "task_complete"})),
    ]
}

/// What decoding a stored rollout whose only item is an `AgentMessage` with `text` cost.
fn stored_answer(text: &str) -> Usage {
    let item =
        json!({"type": "AgentMessage", "id": "m", "content": [{"type": "Text", "text": text}]});
    decode_answer(RolloutNormalizer::new(config()), &stored_turn(item), text)
}

#[test]
fn s7_a_stored_huge_agent_message_costs_one_copy() {
    // The line was parsed into a `Value`, its parts joined, the live line written
    // and read again: about five copies of a 16 MiB message at once.
    let text = "x".repeat(16 << 20);
    let usage = stored_answer(&text);
    assert_within(usage.peak, 1, text.len());
    assert_within(usage.kept, 1, text.len());
}

#[test]
fn s7_a_stored_escaped_agent_message_is_decoded_once() {
    let text = "a line of \"prose\"\n".repeat(1 << 20);
    let usage = stored_answer(&text);
    assert_within(usage.peak, 1, text.len());
    assert_within(usage.kept, 1, text.len());
}

/// What decoding a stored rollout whose only item is a `Reasoning` summary `text` cost; checks
/// that its one event says it.
fn stored_reasoning(text: &str) -> Usage {
    let item = json!({"type": "Reasoning", "id": "r", "summary_text": [text], "raw_content": []});
    let (events, _, usage) = decode(RolloutNormalizer::new(config()), &stored_turn(item));
    let said: Vec<usize> = events
        .iter()
        .filter_map(|event| match &event.body {
            EventBody::Reasoning { text: said } if said == text => Some(said.len()),
            _ => None,
        })
        .collect();
    assert!(said == [text.len()], "{} events", events.len());
    usage
}

#[test]
fn s7_a_stored_huge_reasoning_summary_costs_one_copy() {
    let text = "y".repeat(16 << 20);
    let usage = stored_reasoning(&text);
    assert_within(usage.peak, 1, text.len());
    assert_within(usage.kept, 1, text.len());
}

#[test]
fn s7_a_stored_escaped_reasoning_summary_is_decoded_once() {
    let text = "a \"thought\"\n".repeat(1 << 20);
    let usage = stored_reasoning(&text);
    assert_within(usage.peak, 1, text.len());
    assert_within(usage.kept, 1, text.len());
}

#[test]
fn s7_a_stored_command_with_huge_output_copies_none_of_it() {
    // The output is never an event's: it is not copied at all, escaped or not.
    for output in ["z".repeat(16 << 20), "a\tb\n".repeat(4 << 20)] {
        let item = json!({
            "type": "CommandExecution", "id": "c", "command": ["/bin/bash", "-lc", "cat a.txt"],
            "aggregated_output": output, "exit_code": 0, "status": "completed",
        });
        let (events, _, usage) = decode(RolloutNormalizer::new(config()), &stored_turn(item));
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind()).collect();
        assert_eq!(kinds, [Kind::Read]);
        assert_within(usage.peak, 0, output.len());
        assert_within(usage.kept, 0, output.len());
    }
}
