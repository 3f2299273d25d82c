//! SPEC B3: the classifier's work and memory grow linearly with the command.
//! A counting allocator (per thread, so parallel tests do not disturb each other) measures what
//! classifying costs: allocations and bytes allocated stand for work, the peak of live bytes
//! and of live blocks for memory. Counts, not timings: the same on any machine, under any load.

#![allow(unsafe_code)] // A global allocator is `unsafe impl GlobalAlloc`; it only counts.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use harness_agents_codex_shell::{ParsedCommand, classify_script};

struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
    static BYTES: Cell<u64> = const { Cell::new(0) };
    static LIVE_BYTES: Cell<i64> = const { Cell::new(0) };
    static PEAK_BYTES: Cell<i64> = const { Cell::new(0) };
    static LIVE_BLOCKS: Cell<i64> = const { Cell::new(0) };
    static PEAK_BLOCKS: Cell<i64> = const { Cell::new(0) };
}

fn add(
    cell: &'static std::thread::LocalKey<Cell<i64>>,
    peak: &'static std::thread::LocalKey<Cell<i64>>,
    by: i64,
) {
    let now = cell.with(|c| {
        c.set(c.get() + by);
        c.get()
    });
    peak.with(|p| p.set(p.get().max(now)));
}

fn size(bytes: usize) -> i64 {
    i64::try_from(bytes).unwrap_or(i64::MAX)
}

// SAFETY: every call is passed to the system allocator unchanged; only thread-local counters
// (const-initialized, so touching them never allocates) are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        BYTES.with(|n| n.set(n.get() + layout.size() as u64));
        add(&LIVE_BYTES, &PEAK_BYTES, size(layout.size()));
        add(&LIVE_BLOCKS, &PEAK_BLOCKS, 1);
        // SAFETY: the caller's contract is forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(&LIVE_BYTES, &PEAK_BYTES, -size(layout.size()));
        add(&LIVE_BLOCKS, &PEAK_BLOCKS, -1);
        // SAFETY: the caller's contract is forwarded as is.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        BYTES.with(|n| n.set(n.get() + new_size as u64));
        add(
            &LIVE_BYTES,
            &PEAK_BYTES,
            size(new_size) - size(layout.size()),
        );
        // SAFETY: the caller's contract is forwarded as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// What one call cost on this thread.
#[derive(Debug)]
struct Cost {
    allocations: u64,
    bytes: u64,
    peak_live_bytes: i64,
    peak_live_blocks: i64,
}

fn cost_of<T>(run: impl FnOnce() -> T) -> (T, Cost) {
    for cell in [&LIVE_BYTES, &PEAK_BYTES, &LIVE_BLOCKS, &PEAK_BLOCKS] {
        cell.with(|c| c.set(0));
    }
    let (allocations, bytes) = (ALLOCATIONS.with(Cell::get), BYTES.with(Cell::get));
    let result = run();
    let cost = Cost {
        allocations: ALLOCATIONS.with(Cell::get) - allocations,
        bytes: BYTES.with(Cell::get) - bytes,
        peak_live_bytes: PEAK_BYTES.with(Cell::get),
        peak_live_blocks: PEAK_BLOCKS.with(Cell::get),
    };
    (result, cost)
}

fn classify_cost(script: &str) -> (Vec<ParsedCommand>, Cost) {
    let (parts, cost) = cost_of(|| classify_script(script));
    (parts.into_iter().map(|part| part.parsed).collect(), cost)
}

fn read(cmd: &str, path: &str) -> ParsedCommand {
    ParsedCommand::Read {
        cmd: cmd.to_string(),
        name: "f".to_string(),
        path: path.to_string(),
    }
}

#[test]
fn cd_chain_costs_linear_work() {
    // `cd a && ` 1,000 and 4,000 times, then a read: the read's path is `a/a/.../a/f`.
    let cost = |n: usize| {
        let script = format!("{}cat f", "cd a && ".repeat(n));
        let (parts, cost) = classify_cost(&script);
        assert_eq!(parts, [read("cat f", &format!("{}f", "a/".repeat(n)))]);
        cost
    };
    let (small, large) = (cost(1_000), cost(4_000));
    eprintln!("{small:?}\n{large:?}");
    // Four times the chain: about four times the work (joining the path anew after each `cd`
    // gave sixteen times the bytes).
    assert!(large.bytes <= 5 * small.bytes, "{small:?} -> {large:?}");
    assert!(
        large.allocations <= 5 * small.allocations,
        "{small:?} -> {large:?}"
    );
}

#[test]
fn simplified_chains_cost_linear_work() {
    // Bare `nl`s and leading `echo`s are dropped one at a time (RULES §9): each removal used to
    // rescan (and re-split) every part.
    for program in ["nl -", "echo "] {
        let cost = |n: usize| {
            let chain: String = (0..n).map(|i| format!("{program}{i} && ")).collect();
            let (parts, cost) = classify_cost(&format!("{chain}cat f"));
            assert_eq!(parts, [read("cat f", "f")], "{program}");
            cost
        };
        let (small, large) = (cost(500), cost(2_000));
        eprintln!("{program}: {small:?}\n{large:?}");
        assert!(
            large.bytes <= 5 * small.bytes,
            "{program}: {small:?} -> {large:?}"
        );
        assert!(
            large.allocations <= 5 * small.allocations,
            "{program}: {small:?} -> {large:?}"
        );
    }
}

#[test]
fn many_word_commands_are_not_stored_word_by_word() {
    // One command of 65,536 one-letter words: a listing (every word kept until the end) and an
    // unknown program (re-read by the simplifications).
    let words = "a ".repeat(65_535);
    for (script, expected) in [
        (
            format!("ls {words}"),
            ParsedCommand::ListFiles {
                cmd: format!("ls {}", words.trim_end()),
                path: Some("a".to_string()),
            },
        ),
        (
            format!("frob {words}"),
            ParsedCommand::Unknown {
                cmd: format!("frob {words}"),
            },
        ),
    ] {
        let (parts, cost) = classify_cost(&script);
        eprintln!("{cost:?} for {} bytes", script.len());
        assert_eq!(parts, [expected]);
        // A handful of blocks, not one per word.
        assert!(cost.peak_live_blocks <= 64, "{cost:?}");
        // A slice (24 bytes) per word and a few copies of the text: under 16 times the input.
        assert!(cost.peak_live_bytes <= size(16 * script.len()), "{cost:?}");
    }
}
