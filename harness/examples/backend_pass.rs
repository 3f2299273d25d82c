//! One pass of the `backends` benchmark, for counting instructions rather than timing them
//! (`valgrind --tool=callgrind`, `perf stat -e instructions:u`), which a shared machine does
//! not disturb: `cargo run --release -p harness-agents --example backend_pass -- codex
//! normalize 8` reads the Codex recordings repeated to 8 MB and normalizes them once; `floor`
//! instead parses each line into a `serde_json::Value`, as the benchmark's floor does; `ratio`
//! runs both in turn, nine times each, and prints the fastest of each and floor/normalize,
//! which load on the machine disturbs less than one timing. The times printed are the passes
//! alone, without building the corpus.

use std::time::{Duration, Instant};

#[path = "../benches/support/passes.rs"]
mod passes;

use passes::{corpus, floor, normalize};

fn timed(pass: impl FnOnce() -> usize) -> (usize, Duration) {
    let started = Instant::now();
    let total = std::hint::black_box(pass());
    (total, started.elapsed())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(mode)) = (args.first(), args.get(1)) else {
        eprintln!("usage: backend_pass BACKEND normalize|floor|ratio [MB]");
        std::process::exit(2);
    };
    let megabytes: usize = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(8);
    let bytes = corpus(name, megabytes << 20);
    let registry = harness_agents::registry();
    let Some(backend) = registry.get(name) else {
        eprintln!("no backend {name}");
        std::process::exit(2);
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    match mode.as_str() {
        "floor" => {
            let (total, took) = timed(|| floor(&bytes));
            println!(
                "{name} floor: {} bytes, {total}, {:.1} ms",
                bytes.len(),
                ms(took)
            );
        }
        "normalize" => {
            let (total, took) = timed(|| normalize(backend, &bytes));
            println!(
                "{name} normalize: {} bytes, {total}, {:.1} ms",
                bytes.len(),
                ms(took)
            );
        }
        "ratio" => {
            let (mut fastest_normalize, mut fastest_floor) = (Duration::MAX, Duration::MAX);
            for _ in 0..9 {
                fastest_normalize = fastest_normalize.min(timed(|| normalize(backend, &bytes)).1);
                fastest_floor = fastest_floor.min(timed(|| floor(&bytes)).1);
            }
            println!(
                "{name}: normalize {:.1} ms, floor {:.1} ms, floor/normalize {:.2}",
                ms(fastest_normalize),
                ms(fastest_floor),
                fastest_floor.as_secs_f64() / fastest_normalize.as_secs_f64()
            );
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    }
}
