//! Issue 18 item 8 (S7): a huge agent text is held once. A message's single chunk is its
//! event's text, and the outcome's `final_output` shares it. A counting allocator (per thread)
//! measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, SLACK, decode};
use harness_agents_acp::AcpNormalizer;
use harness_core::EventBody;
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
    let (events, outcome, usage) = decode(AcpNormalizer::new(config()), &lines);
    let EventBody::Agent { text: said } = &events[0].body else {
        panic!("{:?}", events[0]);
    };
    assert_eq!(&**said, text.as_str());
    assert_eq!(outcome.final_output.as_deref(), Some(text.as_str()));
    // The line is read into a `Value` (its text once more) before the chunk is taken from it.
    assert!(
        usage.peak <= 2 * text.len() + SLACK,
        "peak {} bytes",
        usage.peak
    );
    assert!(
        usage.kept <= text.len() + SLACK,
        "{} bytes kept",
        usage.kept
    );
}
