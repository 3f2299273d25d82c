//! Issue 18 item 8 (S7): a huge agent message is held once. Its event and the outcome's
//! `final_output` share one text, so a caller that keeps both holds the message once beside the
//! line it read. A counting allocator (per thread) measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, Usage, assert_within, decode_answer};
use harness_agents_codex::CodexNormalizer;
use serde_json::json;

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
