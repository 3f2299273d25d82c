//! One pass of the `backends` benchmark, for counting instructions rather than timing them
//! (`valgrind --tool=callgrind`, `perf stat -e instructions:u`), which a shared machine does
//! not disturb: `cargo run --release -p harness-agents --example backend_pass -- codex
//! normalize 8` reads the Codex recordings repeated to 8 MB and normalizes them once; `floor`
//! instead parses each line into a `serde_json::Value`, as the benchmark's floor does.

use std::path::Path;

use harness_agents::{LineSplitter, NormalizerConfig};

/// The backend's recordings, one after another, repeated to `least` bytes.
fn corpus(name: &str, least: usize) -> Vec<u8> {
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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(mode)) = (args.first(), args.get(1)) else {
        eprintln!("usage: backend_pass BACKEND normalize|floor [MB]");
        std::process::exit(2);
    };
    let megabytes: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(8);
    let bytes = corpus(name, megabytes << 20);
    let mut splitter = LineSplitter::new();
    let total = match mode.as_str() {
        "floor" => {
            let mut parsed = 0usize;
            let mut each = |line: &[u8]| {
                parsed += usize::from(serde_json::from_slice::<serde_json::Value>(line).is_ok());
            };
            splitter.push(&bytes, &mut each);
            splitter.finish(&mut each);
            parsed
        }
        "normalize" => {
            let registry = harness_agents::registry();
            let Some(backend) = registry.get(name) else {
                eprintln!("no backend {name}");
                std::process::exit(2);
            };
            let mut normalizer = backend.normalizer(NormalizerConfig::default());
            let mut events = Vec::new();
            let mut total = 0usize;
            let mut each = |line: &[u8]| {
                normalizer.push_line(line, &mut events);
                total += events.len();
                events.clear();
            };
            splitter.push(&bytes, &mut each);
            splitter.finish(&mut each);
            let outcome = normalizer.finish(&mut events);
            total + events.len() + outcome.counts.len()
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    };
    println!("{name} {mode}: {} bytes, {total}", bytes.len());
}
