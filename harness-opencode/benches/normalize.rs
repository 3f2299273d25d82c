//! The opencode normalizer's throughput against the floor (parsing each line into a
//! `serde_json::Value`), on a corpus of its recordings: every stream of `fixtures/opencode/`,
//! repeated with its call ids made unique per repetition, until it holds 100 MB. Built in
//! memory; nothing is written. Run: `cargo bench -p harness-opencode --bench normalize`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_core::{LineSplitter, Normalizer, NormalizerConfig};
use harness_opencode::OpencodeNormalizer;

/// The corpus size.
const SIZE: usize = 100 * 1024 * 1024;

fn corpus() -> Vec<u8> {
    let mut streams = Vec::new();
    for fixture in fixtures::streams("opencode").unwrap_or_default() {
        if let Ok(text) = std::fs::read_to_string(&fixture.stream) {
            streams.push(text);
        }
    }
    let mut out = String::with_capacity(SIZE + 1024 * 1024);
    let mut rep = 0u64;
    while out.len() < SIZE && !streams.is_empty() {
        for stream in &streams {
            out.push_str(&stream.replace(
                "\"callID\":\"toolu_",
                &format!("\"callID\":\"r{rep}_toolu_"),
            ));
        }
        rep += 1;
    }
    out.into_bytes()
}

fn each_line(bytes: &[u8], mut f: impl FnMut(&[u8])) {
    let mut splitter = LineSplitter::new();
    splitter.push(bytes, &mut f);
    splitter.finish(&mut f);
}

fn normalize(bytes: &[u8]) -> usize {
    let mut config = NormalizerConfig::default();
    config.cwd = Some("/home/oc/project".into());
    let mut normalizer = OpencodeNormalizer::new(config);
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

fn recordings(c: &mut Criterion) {
    let bytes = corpus();
    eprintln!("opencode corpus: {} bytes", bytes.len());
    let mut group = c.benchmark_group("opencode");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("normalize", |b| b.iter(|| normalize(black_box(&bytes))));
    group.bench_function("floor", |b| b.iter(|| floor(black_box(&bytes))));
    group.finish();
}

criterion_group!(benches, recordings);
criterion_main!(benches);
