//! S7: a huge agent text is held once. A message's single text block is its event's text, and
//! the outcome's `final_output` shares it (O1). A counting allocator (per thread) measures the
//! peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, assert_within, decode_answer};
use harness_agents_pi::PiNormalizer;
use serde_json::json;

use super::{agent_end, assistant, config, session, text};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

#[test]
fn s7_a_huge_agent_text_is_held_once_by_its_event_and_the_outcome() {
    let big = "x".repeat(16 << 20);
    let lines = [
        session("s", "/p"),
        assistant(json!([text(&big)]), "stop"),
        agent_end(),
    ]
    .map(|line| line.to_string());
    let usage = decode_answer(PiNormalizer::new(config()), &lines, &big);
    assert_within(usage.peak, 1, big.len());
}
