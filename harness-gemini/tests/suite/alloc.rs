//! Issue 18 item 8 (S7): a huge agent text is held once. A turn's single chunk is its event's
//! text, and the outcome's `final_output` shares it (O1). A counting allocator (per thread)
//! measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, SLACK, decode};
use harness_agents_gemini::GeminiNormalizer;
use harness_core::EventBody;

use super::{chunk, config, init, result};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

#[test]
fn s7_a_huge_agent_text_is_held_once_by_its_event_and_the_outcome() {
    let text = "x".repeat(16 << 20);
    let lines = [init("s"), chunk(&text), result()].map(|line| line.to_string());
    let (events, outcome, usage) = decode(GeminiNormalizer::new(config()), &lines);
    let EventBody::Agent { text: said } = &events[0].body else {
        panic!("{:?}", events[0]);
    };
    assert_eq!(&**said, text.as_str());
    assert_eq!(outcome.final_output.as_deref(), Some(text.as_str()));
    assert!(
        usage.peak <= text.len() + SLACK,
        "peak {} bytes",
        usage.peak
    );
}
