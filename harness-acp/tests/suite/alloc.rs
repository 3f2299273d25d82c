//! S7: a huge agent text is held once. A message's single chunk is its
//! event's text, and the outcome's `final_output` shares it. A counting allocator (per thread)
//! measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, assert_within, decode_answer};
use harness_agents_acp::AcpNormalizer;
use serde_json::json;

use super::{config, end_turn, start, update};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

#[test]
fn s7_a_huge_agent_text_is_held_once_by_its_event_and_the_outcome() {
    let text = "x".repeat(16 << 20);
    let mut lines = start();
    lines.push(update(json!({"sessionUpdate": "agent_message_chunk",
                             "content": {"type": "text", "text": text}})));
    lines.push(end_turn());
    let lines: Vec<String> = lines.iter().map(|line| line.to_string()).collect();
    let usage = decode_answer(AcpNormalizer::new(config()), &lines, &text);
    // The line is read into a `Value` (its text once more) before the chunk is taken from it.
    assert_within(usage.peak, 2, text.len());
    assert_within(usage.kept, 1, text.len());
}
