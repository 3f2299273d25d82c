//! Every backend's normalizer against the floor: merely parsing each line into a
//! `serde_json::Value`. Each backend's corpus is its recordings in `fixtures/<name>/`, repeated
//! until it holds at least 100 MB, built in memory. `cargo bench -p harness-agents --bench backends`;
//! `cargo xtask bench` prints the ratios with the other figures.

use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_agents::{Harness, LineSplitter, NormalizerConfig};

/// The least a corpus holds.
const CORPUS_BYTES: usize = 100 * 1024 * 1024;

/// The backend's recordings, one after another, repeated to [`CORPUS_BYTES`]; empty when it has
/// none.
fn corpus(name: &str) -> Vec<u8> {
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
    if one.is_empty() {
        return one;
    }
    let mut all = Vec::with_capacity(CORPUS_BYTES + one.len());
    while all.len() < CORPUS_BYTES {
        all.extend_from_slice(&one);
    }
    all
}

fn each_line(bytes: &[u8], mut f: impl FnMut(&[u8])) {
    let mut splitter = LineSplitter::new();
    splitter.push(bytes, &mut f);
    splitter.finish(&mut f);
}

fn normalize(backend: &dyn Harness, bytes: &[u8]) -> usize {
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

fn floor(bytes: &[u8]) -> usize {
    let mut parsed = 0;
    each_line(bytes, |line| {
        if serde_json::from_slice::<serde_json::Value>(line).is_ok() {
            parsed += 1;
        }
    });
    parsed
}

fn backends(c: &mut Criterion) {
    let registry = harness_agents::registry();
    for name in registry.names() {
        let Some(backend) = registry.get(name) else {
            continue;
        };
        let bytes = corpus(name);
        if bytes.is_empty() {
            eprintln!("{name}: no recordings in fixtures/{name}/; skipping");
            continue;
        }
        let mut group = c.benchmark_group(format!("backend-{name}"));
        group.sample_size(10);
        group.warm_up_time(Duration::from_secs(1));
        group.measurement_time(Duration::from_secs(8));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_function("normalize", |b| {
            b.iter(|| normalize(backend, black_box(&bytes)))
        });
        group.bench_function("floor", |b| b.iter(|| floor(black_box(&bytes))));
        group.finish();
    }
}

criterion_group!(benches, backends);
criterion_main!(benches);
