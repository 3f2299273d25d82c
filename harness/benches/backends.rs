//! Every backend's normalizer against the floor: merely parsing each line into a
//! `serde_json::Value`. Each backend's corpus is its recordings in `fixtures/<name>/`, repeated
//! until it holds at least 100 MB, built in memory. `cargo bench -p harness-agents --bench backends`;
//! `cargo xtask bench` prints the ratios with the other figures.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/passes.rs"]
mod passes;

use passes::{corpus, floor, normalize};

/// The least a corpus holds.
const CORPUS_BYTES: usize = 100 * 1024 * 1024;

fn backends(c: &mut Criterion) {
    let registry = harness_agents::registry();
    for name in registry.names() {
        let Some(backend) = registry.get(name) else {
            continue;
        };
        let bytes = corpus(name, CORPUS_BYTES);
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
