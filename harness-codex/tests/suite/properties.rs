//! Properties (S6-S8, O1): no panic on any bytes; the same events however the input is split
//! into chunks; counts equal the events; every item yields its events at most once.

use harness_agents_codex::CodexNormalizer;
use harness_agents_core::{Event, LineSplitter, Normalizer};
use proptest::prelude::*;
use serde_json::Value;

use super::config;

/// Lines Codex prints, pieces of them, and lines that are not events at all.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let known = prop::sample::select(vec![
        r#"{"type":"thread.started","thread_id":"th"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.started","item":{"id":"a","type":"command_execution","command":"/bin/bash -lc 'cat README.md'","status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"a","type":"command_execution","command":"/bin/bash -lc 'cat README.md'","exit_code":0,"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"b","type":"command_execution","command":"bash -lc 'rg -n foo src | head'","exit_code":1,"status":"failed"}}"#,
        r#"{"type":"item.started","item":{"id":"t","type":"todo_list","items":[{"text":"x","completed":false}]}}"#,
        r#"{"type":"item.updated","item":{"id":"t","type":"todo_list","items":[{"text":"x","completed":true}]}}"#,
        r#"{"type":"item.completed","item":{"id":"f","type":"file_change","status":"completed","changes":[{"path":"a","kind":"add"},{"kind":"x"}]}}"#,
        r#"{"type":"item.completed","item":{"id":"m","type":"agent_message","text":"hi"}}"#,
        r#"{"type":"item.updated","item":{"id":"m","type":"agent_message","text":""}}"#,
        r#"{"type":"item.completed","item":{"id":"w","type":"web_search"}}"#,
        r#"{"type":"item.completed","item":{"type":7}}"#,
        r#"{"type":"error","message":"Reconnecting..."}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}"#,
        r#"{"type":"turn.failed","error":{"message":"boom"}}"#,
        r#"{"type":"mystery"}"#,
        // Skipped strings the fast reader checks: escapes, a pair, a lone surrogate (S2).
        r#"{"type":"item.completed","item":{"id":"a","type":"command_execution","command":"bash -lc 'echo \"x\"'","aggregated_output":"x\n\t\\\u00e9\ud83d\ude00","exit_code":0,"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"a","type":"command_execution","command":"ls","aggregated_output":"\ud800","status":"completed"}}"#,
        "[1,2]",
        "not json",
        "",
        "  ",
    ])
    .prop_map(|s| s.as_bytes().to_vec());
    prop_oneof![
        4 => known,
        // Any bytes but the line end, so each generated line stays one line.
        1 => prop::collection::vec(any::<u8>(), 0..40)
            .prop_map(|bytes| bytes.into_iter().filter(|&b| b != b'\n').collect()),
    ]
}

/// The events and the outcome (as JSON) of a byte stream fed in chunks of `chunk` bytes.
fn normalize(bytes: &[u8], chunk: usize) -> (Vec<Event>, Value) {
    let mut normalizer = CodexNormalizer::new(config());
    let mut events = Vec::new();
    let mut splitter = LineSplitter::new();
    for piece in bytes.chunks(chunk.max(1)) {
        splitter.push(piece, |line| normalizer.push_line(line, &mut events));
    }
    splitter.finish(|line| normalizer.push_line(line, &mut events));
    let outcome = normalizer.finish(&mut events);
    (events, serde_json::to_value(&outcome).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn s6_s8_same_events_however_the_input_is_split(
        lines in prop::collection::vec(line(), 0..16),
        chunk in 1usize..64,
    ) {
        let bytes = lines.join(&b'\n');
        let (whole, whole_outcome) = normalize(&bytes, bytes.len());
        let (split, split_outcome) = normalize(&bytes, chunk);
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(&whole_outcome, &split_outcome);

        // O1: counts equal the events emitted.
        let mut tally = std::collections::BTreeMap::<String, u64>::new();
        for event in &whole {
            *tally.entry(event.kind().as_str().to_string()).or_insert(0) += 1;
        }
        let counts: std::collections::BTreeMap<String, u64> =
            serde_json::from_value(whole_outcome["counts"].clone()).unwrap();
        prop_assert_eq!(counts, tally);

        // No event points past the last line, and every unresolved item is reported once.
        let last = u64::try_from(lines.len()).unwrap();
        prop_assert!(whole.iter().all(|e| e.line.is_none_or(|l| l >= 1 && l <= last)));
        let unresolved: Vec<_> = whole
            .iter()
            .filter(|e| e.line.is_none())
            .filter_map(|e| match &e.body {
                harness_agents_core::EventBody::Unknown { tool, .. } => tool.tool_use_id.clone(),
                _ => None,
            })
            .collect();
        let mut deduped = unresolved.clone();
        deduped.sort();
        deduped.dedup();
        prop_assert_eq!(unresolved.len(), deduped.len());
    }
}
