//! S7: a huge agent text is held once. A turn's single chunk is its event's
//! text, and the outcome's `final_output` shares it (O1). A counting allocator (per thread)
//! measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, assert_within, decode_answer};
use harness_agents_gemini::GeminiNormalizer;

use super::{chunk, config, init, result};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

#[test]
fn s7_a_huge_agent_text_is_held_once_by_its_event_and_the_outcome() {
    let text = "x".repeat(16 << 20);
    let lines = [init("s"), chunk(&text), result()].map(|line| line.to_string());
    let usage = decode_answer(GeminiNormalizer::new(config()), &lines, &text);
    assert_within(usage.peak, 1, text.len());
}
