//! The common lines are read without heap allocation; a huge line
//! costs a bounded multiple of itself (S7). A counting allocator (per thread, so parallel tests
//! do not disturb each other) measures what pushing lines costs.

use fixtures::alloc::{
    PeakAlloc, allocations, assert_within, decode, decode_answer, largest_allocation,
};
use harness_agents_claude::{ClaudeNormalizer, TranscriptNormalizer};
use harness_agents_core::{EventBody, Normalizer, NormalizerConfig};

#[global_allocator]
static PEAK: PeakAlloc = PeakAlloc;

/// How many allocations pushing `line` 100 times costs, after a first push to warm up.
fn cost_of(line: &str) -> u64 {
    let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
    let mut out = Vec::with_capacity(16);
    normalizer.push_line(line.as_bytes(), &mut out);
    out.clear();
    let before = allocations();
    for _ in 0..100 {
        normalizer.push_line(line.as_bytes(), &mut out);
        out.clear();
    }
    allocations() - before
}

#[test]
fn partial_message_lines_allocate_nothing() {
    // The shape of `--include-partial-messages` output: numbers, nesting, null.
    let line = r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a quoted line"}},"session_id":"aefb095f-1b8b-4e05-9346-ea35da448b60","parent_tool_use_id":null,"uuid":"6bc2d420-1a61-4af5-aa29-a15386464489"}"#;
    assert_eq!(cost_of(line), 0);
}

#[test]
fn escaped_strings_cost_only_the_parsers_scratch_buffer() {
    // A string with escapes is checked by unescaping it into serde_json's scratch buffer, which
    // each line's parser allocates afresh: at most two allocations (allocate, grow) a line.
    let line = r#"{"type":"stream_event","event":{"delta":{"text":"a \"quoted\"\nline"}},"session_id":"s"}"#;
    let cost = cost_of(line);
    assert!(cost <= 2 * 100, "{cost} allocations for 100 lines");
}

#[test]
fn system_status_lines_allocate_nothing() {
    let status = r#"{"type":"system","subtype":"status","status":"compacting","session_id":"s"}"#;
    assert_eq!(cost_of(status), 0);
    let init = r#"{"type":"system","subtype":"thinking_tokens","estimated_tokens":12,"tools":["Read","Bash"],"session_id":"s"}"#;
    assert_eq!(cost_of(init), 0);
}

#[test]
fn a_blank_or_echoed_prompt_line_allocates_nothing() {
    assert_eq!(cost_of("   "), 0);
    let echo = r#"{"type":"user","message":{"role":"user","content":"Read the file"},"parent_tool_use_id":null,"session_id":"s"}"#;
    assert_eq!(cost_of(echo), 0);
}

#[test]
fn s2_a_huge_non_json_line_is_not_decoded_whole_for_its_1000_character_warning() {
    // 8 MB of invalid UTF-8 decoded whole is 24 MB of U+FFFD, for a message
    // that keeps 1,000 characters.
    let line = vec![0xff_u8; 8 << 20];
    let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    let largest = largest_allocation(|| normalizer.push_line(&line, &mut out));
    assert!(largest < 64 * 1024, "largest allocation {largest} bytes");
    let harness_agents_core::EventBody::Warning { message, .. } = &out[0].body else {
        panic!("{:?}", out[0]);
    };
    assert_eq!(message.chars().count(), 1_000);
    assert!(message.chars().all(|c| c == '\u{fffd}'));
}

#[test]
fn c10a_a_huge_failing_tool_result_is_not_copied_for_its_1000_character_error() {
    // The error text was made from the whole result block, built as a Value,
    // then joined, then cut to 1,000 characters.
    let big = "x".repeat(8 << 20);
    let use_line = r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"make"}}]}}"#;
    for content in [
        serde_json::json!(big),
        serde_json::json!([{"type": "text", "text": "first"}, {"type": "text", "text": big}]),
    ] {
        let result = serde_json::json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t", "is_error": true, "content": content}
        ]}})
        .to_string();
        let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
        let mut out = Vec::new();
        normalizer.push_line(use_line.as_bytes(), &mut out);
        let largest = largest_allocation(|| normalizer.push_line(result.as_bytes(), &mut out));
        assert!(largest < 64 * 1024, "largest allocation {largest} bytes");
        let harness_agents_core::EventBody::Command { status, .. } = &out[0].body else {
            panic!("{:?}", out[0]);
        };
        let error = status.error.as_deref().unwrap_or_default();
        assert_eq!(error.chars().count(), 1_000);
        assert!(error.ends_with("xxx"), "{}", &error[..20]);
    }
}

fn assistant_text(id: &str, text: &str) -> String {
    serde_json::json!({"type": "assistant", "message": {"id": id, "content": [
        {"type": "text", "text": text}
    ]}, "session_id": "s"})
    .to_string()
}

#[test]
fn s7_a_huge_agent_text_is_held_once_by_its_event() {
    // A message's single text block is the event's text, not copied again
    // when the message closes.
    let text = "x".repeat(16 << 20);
    let lines = [
        assistant_text("m", &text),
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#.to_string(),
    ];
    let (events, _outcome, usage) =
        decode(ClaudeNormalizer::new(NormalizerConfig::default()), &lines);
    let EventBody::Agent { text: said } = &events[0].body else {
        panic!("{:?}", events[0]);
    };
    assert_eq!(said.len(), text.len());
    assert_within(usage.peak, 1, text.len());
}

#[test]
fn s7_a_huge_result_is_held_once_by_the_decoder_and_the_outcome() {
    // The outcome's `final_output` shares the decoder's copy of `result`.
    let text = "x".repeat(16 << 20);
    let result = serde_json::json!({"type": "result", "subtype": "success", "is_error": false,
        "result": text, "session_id": "s"})
    .to_string();
    let (_events, outcome, usage) = decode(
        ClaudeNormalizer::new(NormalizerConfig::default()),
        &[result],
    );
    assert_eq!(outcome.final_output.as_deref(), Some(text.as_str()));
    assert_within(usage.peak, 1, text.len());
}

#[test]
fn t10_a_huge_stored_message_is_held_by_its_event_and_once_for_the_outcome() {
    // A transcript keeps the main thread's last text for T10 beside the
    // event's (two copies); every outcome made from it shares that one.
    let text = "x".repeat(16 << 20);
    let usage = decode_answer(
        TranscriptNormalizer::new(NormalizerConfig::default()),
        &[assistant_text("m", &text)],
        &text,
    );
    assert_within(usage.peak, 2, text.len());
}
