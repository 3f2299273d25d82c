//! `cargo xtask fuzz TARGET [--time SECS] [-- LIBFUZZER_ARGS...]`: runs a cargo-fuzz (libFuzzer) target from `fuzz/`,
//! seeded from `fixtures/`, and prints its figures (executions, coverage, crashes).
//!
//! Targets: one normalizer target per backend named in [`NORMALIZERS`] (bytes → lines → the
//! normalizer, then `finish`; seeded from that backend's recordings) and `classifier` (bytes → a
//! script and an argv → the shell classifier; seeded from `fixtures/shell/cases.jsonl`).
//! cargo-fuzz needs nightly flags: on a stable toolchain this sets `RUSTC_BOOTSTRAP=1`.
//!
//! It needs `cargo-fuzz`, which it does not install itself (that compiles it for minutes and
//! writes to `~/.cargo/bin`): when `cargo fuzz` is missing it stops at once and names the
//! command, `cargo install cargo-fuzz`. When the run fails it says why: the build failed, or
//! the fuzzer found a crash (and where the input was written), never a crash that is not there.
//! Crashes land in `fuzz/artifacts/TARGET/`; the corpus grows in `fuzz/corpus/TARGET/` (both
//! ignored by git). Not part of CI.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::root;

/// The normalizer targets, each with the `fixtures/` folders its seeds come from.
const NORMALIZERS: [(&str, &[&str]); 5] = [
    ("claude_normalizer", &["claude", "claude-edges"]),
    ("codex_normalizer", &["codex", "codex-edges"]),
    ("copilot_normalizer", &["copilot"]),
    ("qwen_normalizer", &["qwen"]),
    ("pi_normalizer", &["pi"]),
];

/// The target that is no normalizer.
const CLASSIFIER: &str = "classifier";

/// What to run when `cargo fuzz` is missing.
const INSTALL: &str = "cargo install cargo-fuzz";

/// Writes the seed corpus of `target` under `target/fuzz-seeds/TARGET` and returns the folder.
fn seeds(target: &str) -> Result<PathBuf> {
    let dir = root().join("target/fuzz-seeds").join(target);
    std::fs::create_dir_all(&dir)?;
    let mut count = 0;
    let mut write = |bytes: &[u8]| -> Result<()> {
        count += 1;
        std::fs::write(dir.join(format!("seed-{count:04}")), bytes)?;
        Ok(())
    };
    let normalizer = NORMALIZERS.iter().find(|(name, _)| *name == target);
    match (normalizer, target) {
        (Some((_, folders)), _) => {
            for folder in *folders {
                for path in crate::recorded_streams(&root().join("fixtures").join(folder))? {
                    let bytes = std::fs::read(&path)?;
                    // The first byte picks the chunk size; the stream follows.
                    let mut seed = vec![7u8];
                    seed.extend_from_slice(&bytes);
                    write(&seed)?;
                }
            }
        }
        (None, CLASSIFIER) => {
            let cases = std::fs::read_to_string(root().join("fixtures/shell/cases.jsonl"))?;
            for line in cases.lines().filter(|l| !l.trim().is_empty()) {
                let row: Value = serde_json::from_str(line)?;
                let argv: Vec<&str> = row
                    .get("argv")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                if let [_, "-lc" | "-c", script] = argv.as_slice() {
                    write(script.as_bytes())?;
                }
                write(argv.join("\0").as_bytes())?;
            }
        }
        (None, _) => {
            let known: Vec<&str> = NORMALIZERS.iter().map(|(name, _)| *name).collect();
            bail!(
                "unknown fuzz target '{target}' (known: {}, {CLASSIFIER})",
                known.join(", ")
            )
        }
    }
    Ok(dir)
}

/// `cargo xtask fuzz TARGET [--time SECS] [-- LIBFUZZER_ARGS...]` (parsed in `main.rs`).
pub fn fuzz(target: &str, secs: u64, extra: &[String]) -> Result<()> {
    run(target, secs, extra)
}

/// The version line of `cargo fuzz`, or `None` when cargo has no `fuzz` command.
fn cargo_fuzz_version() -> Option<String> {
    let output = Command::new("cargo")
        .args(["fuzz", "--version"])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.status.success() && !version.is_empty()).then_some(version)
}

/// What the fuzzer's output said about a crash.
#[derive(Default)]
struct Crash {
    /// libFuzzer's summary line (`SUMMARY: libFuzzer: deadly signal`, ...).
    summary: Option<String>,
    /// Where libFuzzer wrote the crashing input.
    input: Option<String>,
}

impl Crash {
    fn read(&mut self, line: &str) {
        if line.starts_with("SUMMARY: libFuzzer:") || line.starts_with("SUMMARY: AddressSanitizer")
        {
            self.summary.get_or_insert_with(|| line.to_string());
        }
        if let Some(path) = line.split("Test unit written to ").nth(1) {
            self.input = Some(path.trim().to_string());
        }
    }
}

fn run(target: &str, secs: u64, extra: &[String]) -> Result<()> {
    let Some(version) = cargo_fuzz_version() else {
        bail!(
            "`cargo fuzz` is not installed (cargo has no `fuzz` command): run `{INSTALL}`, then this again"
        );
    };
    println!("fuzz {target} with {version}");
    let seeds = seeds(target)?;
    let fuzz_dir = root().join("fuzz");
    let corpus = fuzz_dir.join("corpus").join(target);
    std::fs::create_dir_all(&corpus)?;
    let mut child = Command::new("cargo")
        .current_dir(&fuzz_dir)
        .env("RUSTC_BOOTSTRAP", "1")
        .args(["fuzz", "run", "-O", target])
        .arg(&corpus)
        .arg(&seeds)
        .arg("--")
        .arg(format!("-max_total_time={secs}"))
        .arg("-rss_limit_mb=4096")
        .arg("-print_final_stats=1")
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("running cargo fuzz (install it with `{INSTALL}`)"))?;
    // libFuzzer reports on stderr: pass it through, keep the last status line and the stats.
    let mut last_status = String::new();
    let mut stats = Vec::new();
    let mut crash = Crash::default();
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let line = line?;
            eprintln!("{line}");
            crash.read(&line);
            if line.starts_with('#') && line.contains("cov:") {
                last_status = line.clone();
            }
            if line.starts_with("stat::") || line.starts_with("Done ") {
                stats.push(line);
            }
        }
    }
    let status = child.wait()?;
    let artifacts = fuzz_dir.join("artifacts").join(target);
    let crashes = std::fs::read_dir(&artifacts)
        .map(|d| d.filter_map(|e| e.ok()).count())
        .unwrap_or(0);
    println!("fuzz {target}: {secs} s");
    println!("  last status: {last_status}");
    for line in &stats {
        println!("  {line}");
    }
    println!(
        "  artifacts in {}: {crashes}",
        artifacts
            .strip_prefix(root())
            .unwrap_or(&artifacts)
            .display()
    );
    if status.success() {
        return Ok(());
    }
    match (crash.summary, crash.input) {
        (summary, Some(input)) => bail!(
            "the fuzzer found a crash ({}); the input is {input}: reproduce it with `RUSTC_BOOTSTRAP=1 cargo fuzz run -O {target} {input}` in fuzz/",
            summary.as_deref().unwrap_or("see the report above")
        ),
        (Some(summary), None) => {
            bail!("the fuzzer stopped with {status}: {summary} (see the report above)")
        }
        (None, None) if last_status.is_empty() => bail!(
            "cargo fuzz failed with {status} before fuzzing started (the build, most likely): see its output above"
        ),
        (None, None) => bail!(
            "the fuzzer stopped with {status} without reporting a crash: see its output above"
        ),
    }
}
