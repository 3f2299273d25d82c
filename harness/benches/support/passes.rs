//! The passes the `backends` benchmark times and `examples/backend_pass.rs` counts: each
//! backend's corpus, a normalize pass and the floor (every line parsed into a
//! `serde_json::Value`). Both include this file (`#[path]`), so they measure the same code.

use std::path::Path;

use harness_agents::{Backend, LineSplitter, NormalizerConfig};

/// The backend's recordings, one after another, repeated to `least` bytes.
pub fn corpus(name: &str, least: usize) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    let mut one = Vec::new();
    for file in files {
        let name = file.to_string_lossy();
        if name.ends_with(".jsonl") && !name.ends_with(".expected.jsonl") {
            one.extend(std::fs::read(&file).unwrap_or_default());
            if !one.ends_with(b"\n") {
                one.push(b'\n');
            }
        }
    }
    let mut all = Vec::with_capacity(least + one.len());
    while !one.is_empty() && all.len() < least {
        all.extend_from_slice(&one);
    }
    all
}

fn each_line(bytes: &[u8], mut f: impl FnMut(&[u8])) {
    let mut splitter = LineSplitter::new();
    splitter.push(bytes, &mut f);
    splitter.finish(&mut f);
}

/// The benchmark's `normalize`: every event counted, then dropped.
pub fn normalize(backend: &dyn Backend, bytes: &[u8]) -> usize {
    let mut normalizer = backend.normalizer(NormalizerConfig::default());
    let mut events = Vec::new();
    let mut total = 0;
    each_line(bytes, |line| {
        normalizer.push_line(line, &mut events);
        total += events.len();
        events.clear();
    });
    let outcome = normalizer.finish(&mut events);
    total + events.len() + outcome.counts.len()
}

/// The benchmark's floor: every line parsed into a `serde_json::Value`.
pub fn floor(bytes: &[u8]) -> usize {
    let mut parsed = 0;
    each_line(bytes, |line| {
        parsed += usize::from(serde_json::from_slice::<serde_json::Value>(line).is_ok());
    });
    parsed
}
