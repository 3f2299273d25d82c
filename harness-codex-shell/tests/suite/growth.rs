//! SPEC B3: the classifier's work and memory grow linearly with the command.
//! The fixtures' counting allocator (per thread, so parallel tests do not disturb each other)
//! measures what classifying costs: allocations and bytes allocated stand for work, the peak of
//! live bytes and of live blocks for memory. Counts, not timings: the same on any machine,
//! under any load.

use fixtures::alloc::{Cost, PeakAlloc, cost_of};
use harness_agents_codex_shell::{ParsedCommand, classify_script};

#[global_allocator]
static COUNTING: PeakAlloc = PeakAlloc;

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
        assert!(cost.peak_blocks <= 64, "{cost:?}");
        // A slice (24 bytes) per word and a few copies of the text: under 16 times the input.
        assert!(cost.peak_bytes <= 16 * script.len(), "{cost:?}");
    }
}
