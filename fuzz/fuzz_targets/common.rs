//! What every normalizer target checks, for any backend: bytes → lines (through
//! `LineSplitter`, in chunks whose size the first byte picks) → the backend's normalizer, then
//! `finish()`. Besides "no panic" (S8): the outcome's counts equal the events (O1), nothing is
//! pending after the end (S9), the same bytes read whole give the same events (S6), and
//! `started` events come only with the setting (L1, never counted).
//!
//! The first byte: its low seven bits pick the chunk size (1-128), its top bit turns on the
//! `started` setting.

use std::collections::BTreeMap;

use harness_agents_core::{Backend, Event, Kind, LineSplitter, NormalizerConfig, Outcome};

fn normalize(
    harness: &dyn Backend,
    cwd: &str,
    bytes: &[u8],
    chunk: usize,
    started: bool,
) -> (Vec<Event>, Outcome) {
    let mut config = NormalizerConfig::default();
    config.cwd = Some(cwd.into());
    config.started = started;
    let mut normalizer = harness.normalizer(config);
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

/// Runs one fuzz input through `harness`, relative paths resolved against `cwd`.
pub fn check(harness: &dyn Backend, cwd: &str, data: &[u8]) {
    let Some((&first, bytes)) = data.split_first() else {
        return;
    };
    let started = first & 0x80 != 0;
    let chunk = usize::from(first & 0x7f) + 1;
    let (events, outcome) = normalize(harness, cwd, bytes, chunk, started);
    let mut tally = BTreeMap::new();
    for event in &events {
        // Every event serializes (J1-J11).
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
    let (whole, whole_outcome) = normalize(harness, cwd, bytes, bytes.len(), started);
    assert_eq!(events, whole, "S6: events depend on chunking");
    assert_eq!(outcome, whole_outcome, "S6: outcome depends on chunking");
}
