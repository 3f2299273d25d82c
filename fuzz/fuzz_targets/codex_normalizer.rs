//! Bytes → lines (through `LineSplitter`, in chunks whose size the first byte picks) → the
//! Codex normalizer, then `finish()`. Besides "no panic" (S8) it checks that the outcome's
//! counts equal the events (O1; `started` events are not counted, L1), that nothing is pending
//! after the end (S9) and that the same bytes read whole give the same events (S6).
//!
//! The first byte: its low seven bits pick the chunk size (1-128), its top bit turns on the
//! `started` setting (L1).

#![no_main]

use std::collections::BTreeMap;

use harness_codex::CodexNormalizer;
use harness_core::{Event, Kind, LineSplitter, Normalizer, NormalizerConfig, Outcome};
use libfuzzer_sys::fuzz_target;

fn normalize(bytes: &[u8], chunk: usize, started: bool) -> (Vec<Event>, Outcome) {
    // The project directory the Codex recordings were made in (X9 resolves paths against it).
    let config = NormalizerConfig {
        cwd: Some("/home/dev2/project".into()),
        started,
        ..NormalizerConfig::default()
    };
    let mut normalizer = CodexNormalizer::new(config);
    let mut events = Vec::new();
    let mut splitter = LineSplitter::new();
    for piece in bytes.chunks(chunk.max(1)) {
        splitter.push(piece, |line| {
            normalizer.push_line(line, &mut events);
            let _ = (normalizer.session_id(), normalizer.cwd());
            let _ = normalizer.last_disposition();
        });
    }
    splitter.finish(|line| normalizer.push_line(line, &mut events));
    let _ = normalizer.pending_tool_uses();
    let outcome = normalizer.finish(&mut events);
    assert!(
        normalizer.pending_tool_uses().is_empty(),
        "S9: pending after finish"
    );
    (events, outcome)
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, bytes)) = data.split_first() else {
        return;
    };
    let started = first & 0x80 != 0;
    let (events, outcome) = normalize(bytes, usize::from(first & 0x7f) + 1, started);
    let mut tally = BTreeMap::new();
    for event in &events {
        // Every event serializes (J1-J10).
        assert!(serde_json::to_vec(event).is_ok(), "J1: {event:?}");
        if event.kind() != Kind::Started {
            *tally.entry(event.kind()).or_insert(0u64) += 1;
        }
    }
    if !started {
        assert!(
            events.iter().all(|event| event.kind() != Kind::Started),
            "L1: a started event without the setting"
        );
    }
    assert_eq!(outcome.counts, tally, "O1: counts != events");
    let (whole, whole_outcome) = normalize(bytes, bytes.len(), started);
    assert_eq!(events, whole, "S6: events depend on chunking");
    assert_eq!(outcome, whole_outcome, "S6: outcome depends on chunking");
});
