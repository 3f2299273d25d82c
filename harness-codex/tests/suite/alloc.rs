//! Issue 18 item 8 (S7): a huge agent message is held once. Its event and the outcome's
//! `final_output` share one text, so a caller that keeps both holds the message once beside the
//! line it read. A counting allocator (per thread) measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, SLACK, Usage, decode};
use harness_agents_codex::CodexNormalizer;
use harness_core::{Event, EventBody, Outcome};
use serde_json::json;

use super::{completed, config, message, thread_started, turn_completed};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

/// One turn whose only item is an agent message with `text` (its JSON line built before the
/// measure, as the caller's line buffer): the events and outcome, kept alive as a caller keeps
/// them, the message line's length, and what decoding cost.
fn one_turn(text: &str) -> (Vec<Event>, Outcome, usize, Usage) {
    let lines = [
        thread_started(json!("th")),
        json!({"type": "turn.started"}).to_string(),
        completed(message("m", text)),
        turn_completed(json!({"input_tokens": 1})),
    ];
    let (events, outcome, usage) = decode(CodexNormalizer::new(config()), &lines);
    let [event] = &events[..] else {
        panic!("{events:?}");
    };
    let EventBody::Agent { text: said } = &event.body else {
        panic!("{event:?}");
    };
    assert_eq!(&**said, text);
    assert_eq!(outcome.final_output.as_deref(), Some(text));
    (events, outcome, lines[2].len(), usage)
}

#[test]
fn s7_a_huge_agent_message_is_held_once_by_its_event_and_the_outcome() {
    let text = "x".repeat(16 << 20);
    let (_events, _outcome, _, usage) = one_turn(&text);
    assert!(
        usage.peak <= text.len() + SLACK,
        "peak {} bytes above the line for a {}-byte message",
        usage.peak,
        text.len()
    );
}

#[test]
fn s7_an_escaped_agent_message_is_unescaped_once_then_held_once() {
    // A message with escapes (newlines, quotes) is unescaped into a string of its own (sized
    // for the escaped text), then shared: for a moment the line's text twice, then once.
    let text = "a line of \"prose\"\n".repeat(1 << 20);
    let (_events, _outcome, line, usage) = one_turn(&text);
    assert!(
        usage.kept <= text.len() + SLACK,
        "{} bytes kept for a {}-byte message",
        usage.kept,
        text.len()
    );
    assert!(
        usage.peak <= line + text.len() + SLACK,
        "peak {} bytes above the {line}-byte line for a {}-byte message",
        usage.peak,
        text.len()
    );
}
