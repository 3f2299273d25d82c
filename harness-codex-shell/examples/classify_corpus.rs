//! Classifies every row of `fixtures/shell/cases.jsonl` ROUNDS times (default 100): the work
//! of the `corpus/classify` benchmark as a plain program. It prints commands per second of
//! wall time (what the benchmark measures, which falls when other processes share the cores)
//! and per second this thread spent on a CPU (which does not). Under callgrind it gives
//! instructions per command, a figure that does not move with the machine at all:
//!
//! ```sh
//! cargo build --profile profiling -p harness-agents-codex-shell --example classify_corpus
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     --toggle-collect='classify_corpus::classify_rounds*' \
//!     target/profiling/examples/classify_corpus 100
//! ```
//!
//! Callgrind then counts only `classify_rounds` (its `Collected` line); divided by the commands
//! this prints, it gives instructions per command.

// An example fails loudly when its fixture is missing.
#![allow(clippy::expect_used)]

use std::hint::black_box;

use harness_agents_codex_shell::classify;

/// Classifies every argv `rounds` times; the only code callgrind counts (`--toggle-collect`).
#[inline(never)]
fn classify_rounds(rows: &[Vec<String>], rounds: u64) {
    for _ in 0..rounds {
        for argv in rows {
            black_box(classify(black_box(argv)));
        }
    }
}

fn main() {
    let rounds: u64 = std::env::args()
        .nth(1)
        .map(|arg| arg.parse().expect("ROUNDS is a number"))
        .unwrap_or(100);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/shell/cases.jsonl");
    let text = std::fs::read_to_string(path).expect("read cases.jsonl");
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).expect("parse a row");
            serde_json::from_value(row["argv"].clone()).expect("argv is a list of strings")
        })
        .collect();
    // One round first, outside `classify_rounds` so uncounted: the grammar's parser is made on
    // first use.
    for argv in &rows {
        black_box(classify(argv));
    }
    let (start, cpu_start) = (std::time::Instant::now(), on_cpu());
    classify_rounds(&rows, rounds);
    let (wall, cpu) = (start.elapsed().as_secs_f64(), on_cpu());
    let commands = rows.len() as u64 * rounds;
    println!(
        "{commands} commands ({} rows x {rounds} rounds) in {wall:.3} s wall: {:.0} commands/s",
        rows.len(),
        commands as f64 / wall
    );
    if let (Some(before), Some(after)) = (cpu_start, cpu) {
        let cpu = after - before;
        println!(
            "on the CPU {cpu:.3} s ({:.0} % of the wall time): {:.0} commands per CPU second",
            100.0 * cpu / wall,
            commands as f64 / cpu
        );
    }
}

/// Seconds this thread has spent on a CPU (Linux's `/proc/thread-self/schedstat`): unlike wall
/// time, it leaves out the time other processes had the core.
fn on_cpu() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanos: f64 = stat.split_whitespace().next()?.parse().ok()?;
    Some(nanos / 1e9)
}
