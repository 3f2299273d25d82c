//! Throughput of the classifier: every conformance row in a loop, and one 10 MB script.

// A benchmark fails loudly when its fixture is missing.
#![allow(clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use harness_agents_codex_shell::{
    GRAMMAR_LIMIT, classify, classify_script, plain_commands_by_grammar,
};

/// The argv of every row of the conformance corpus.
fn corpus() -> Vec<Vec<String>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/shell/cases.jsonl");
    let text = std::fs::read_to_string(path).expect("read cases.jsonl");
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).expect("parse a row");
            serde_json::from_value(row["argv"].clone()).expect("argv is a list of strings")
        })
        .collect()
}

fn corpus_benches(c: &mut Criterion) {
    let rows = corpus();
    let mut group = c.benchmark_group("corpus");
    group.throughput(Throughput::Elements(rows.len() as u64));
    group.bench_function("classify", |b| {
        b.iter(|| {
            for argv in &rows {
                black_box(classify(black_box(argv)));
            }
        })
    });
    // The same scripts through the grammar alone, to show what the fast path saves.
    let scripts: Vec<&String> = rows
        .iter()
        .filter(|argv| argv.len() == 3)
        .map(|argv| &argv[2])
        .collect();
    group.throughput(Throughput::Elements(scripts.len() as u64));
    group.bench_function("grammar_only_parse", |b| {
        b.iter(|| {
            for script in &scripts {
                black_box(plain_commands_by_grammar(black_box(script)));
            }
        })
    });
    group.finish();
}

fn huge_benches(c: &mut Criterion) {
    // About 10 MB of plain reads joined by `&&`: the lexer's path, every byte looked at.
    let unit = "cat crates/some_module/src/lib.rs && ";
    let mut plain = unit.repeat(10_000_000 / unit.len());
    plain.push_str("cat end.rs");
    // About 10 MB of words with backslashes: doubtful to the lexer, over the grammar limit.
    let mut escaped = String::from("cat ");
    escaped.push_str(&"a\\ b".repeat(10_000_000 / 4));
    // Just under the grammar limit, the same words: what tree-sitter costs per byte.
    let mut parsed = String::from("cat ");
    parsed.push_str(&"a\\ b".repeat((GRAMMAR_LIMIT - 8) / 4));
    let mut group = c.benchmark_group("long");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(plain.len() as u64));
    group.bench_function("10MB_plain_script", |b| {
        b.iter(|| black_box(classify_script(black_box(&plain))))
    });
    group.throughput(Throughput::Bytes(escaped.len() as u64));
    group.bench_function("10MB_doubtful_script", |b| {
        b.iter(|| black_box(classify_script(black_box(&escaped))))
    });
    group.throughput(Throughput::Bytes(parsed.len() as u64));
    group.bench_function("256KiB_grammar_script", |b| {
        b.iter(|| black_box(classify_script(black_box(&parsed))))
    });
    group.finish();
}

criterion_group!(benches, corpus_benches, huge_benches);
criterion_main!(benches);
