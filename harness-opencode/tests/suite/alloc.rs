//! S7: a huge agent text is held once. The message's single text part is
//! its event's text, and the outcome's `final_output` shares it (P12). A counting allocator
//! (per thread) measures the peak of live heap bytes.

use fixtures::alloc::{PeakAlloc, assert_within, decode, decode_answer};
use harness_agents_core::EventBody;
use harness_agents_opencode::OpencodeNormalizer;
use serde_json::json;

use super::config;

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

fn line(kind: &str, part: serde_json::Value) -> String {
    json!({"type": kind, "timestamp": 1, "sessionID": "ses_1", "part": part}).to_string()
}

#[test]
fn s7_p12_a_huge_agent_text_is_held_once_by_its_event_and_the_outcome() {
    let text = "x".repeat(16 << 20);
    let lines = [
        line(
            "text",
            json!({"type": "text", "messageID": "msg_1", "text": text}),
        ),
        line(
            "step_finish",
            json!({"type": "step-finish", "messageID": "msg_1", "reason": "stop"}),
        ),
    ];
    let usage = decode_answer(OpencodeNormalizer::new(config()), &lines, &text);
    assert_within(usage.peak, 1, text.len());
}

#[test]
fn s7_a_huge_reasoning_part_is_copied_once() {
    // Its parts were kept, then joined into a second copy.
    let text = "x".repeat(16 << 20);
    let lines = [
        line(
            "reasoning",
            json!({"type": "reasoning", "messageID": "msg_1", "text": text}),
        ),
        line(
            "step_finish",
            json!({"type": "step-finish", "messageID": "msg_1", "reason": "stop"}),
        ),
    ];
    let (events, _outcome, usage) = decode(OpencodeNormalizer::new(config()), &lines);
    let EventBody::Reasoning { text: thought } = &events[0].body else {
        panic!("{:?}", events[0]);
    };
    assert!(**thought == *text, "{} bytes of reasoning", thought.len());
    assert_within(usage.peak, 1, text.len());
}
