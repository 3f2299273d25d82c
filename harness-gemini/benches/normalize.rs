//! Normalizer throughput against the floor (merely parsing each line into a
//! `serde_json::Value`) on a corpus of at least 100 MB made of the Gemini CLI recordings in
//! `fixtures/gemini/`, repeated with unique session and tool ids so that every tool use pairs.
//! The corpus is built in memory at the start. Run: `cargo bench -p harness-gemini`; criterion
//! prints both throughputs, and the ratio is normalize / floor.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_core::{LineSplitter, Normalizer, NormalizerConfig};
use harness_gemini::GeminiNormalizer;

/// The corpus size.
const BYTES: usize = 100 * 1024 * 1024;

/// Every recording, repeated until [`BYTES`], each repetition's ids made unique.
fn corpus() -> Vec<u8> {
    let mut recordings = Vec::new();
    for fixture in fixtures::streams("gemini").unwrap_or_default() {
        if let Ok(text) = std::fs::read_to_string(&fixture.stream) {
            recordings.push(text);
        }
    }
    assert!(!recordings.is_empty(), "no recordings in fixtures/gemini");
    let mut out = String::with_capacity(BYTES + (1 << 20));
    let mut rep = 0u64;
    while out.len() < BYTES {
        for text in &recordings {
            let unique = text
                .replace(r#""tool_id":""#, &format!(r#""tool_id":"r{rep}-"#))
                .replace(r#""session_id":""#, &format!(r#""session_id":"r{rep}-"#));
            out.push_str(&unique);
        }
        rep += 1;
    }
    out.into_bytes()
}

/// Calls `f` on each line of `bytes`, split as the CLI splits them.
fn each_line(bytes: &[u8], mut f: impl FnMut(&[u8])) {
    let mut splitter = LineSplitter::new();
    splitter.push(bytes, &mut f);
    splitter.finish(&mut f);
}

fn normalize(bytes: &[u8]) -> usize {
    let mut config = NormalizerConfig::default();
    config.cwd = Some("/home/gemini/project".into());
    let mut normalizer = GeminiNormalizer::new(config);
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

fn floor(bytes: &[u8]) -> usize {
    let mut parsed = 0;
    each_line(bytes, |line| {
        if serde_json::from_slice::<serde_json::Value>(line).is_ok() {
            parsed += 1;
        }
    });
    parsed
}

fn gemini_corpus(c: &mut Criterion) {
    let bytes = corpus();
    let mut group = c.benchmark_group("gemini");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("normalize", |b| b.iter(|| normalize(black_box(&bytes))));
    group.bench_function("floor", |b| b.iter(|| floor(black_box(&bytes))));
    group.finish();
}

criterion_group!(benches, gemini_corpus);
criterion_main!(benches);
