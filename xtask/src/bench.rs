//! `cargo xtask corpus` and `cargo xtask bench`: the benchmark corpora and the figures table.
//!
//! With `--smoke`, both run small, for CI: corpora of about a megabyte in `target/corpus-smoke/`,
//! each criterion bench for a moment (ten samples, short warm-up and measurement, its results in
//! `target/criterion-smoke/`), the peak RSS of the debug binary. The figures mean nothing; the
//! run shows every step still builds and runs.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::{root, status};

/// The `big` corpus must be at least this large.
const BIG_BYTES: u64 = 100 * 1024 * 1024;
/// The `small` corpus must have at least this many lines.
const SMALL_LINES: u64 = 200_000;
/// Every this many repetitions, `big` gets a long tool result.
const LONG_EVERY: u64 = 8;
/// The size of each long tool result's text.
const LONG_BYTES: usize = 512 * 1024;

/// How large the corpora are: the full ones, or the smoke run's.
#[derive(Debug, Clone, Copy)]
pub struct Scale {
    /// `big` is at least this many bytes.
    big_bytes: u64,
    /// `small` has at least this many lines.
    small_lines: u64,
    /// The folder under the target folder the corpora go to.
    folder: &'static str,
    /// The folder criterion keeps its results in.
    criterion: &'static str,
}

impl Scale {
    /// The benchmark's corpora.
    pub const FULL: Scale = Scale {
        big_bytes: BIG_BYTES,
        small_lines: SMALL_LINES,
        folder: "corpus",
        criterion: "criterion",
    };
    /// A smoke run's.
    pub const SMOKE: Scale = Scale {
        big_bytes: 1024 * 1024,
        small_lines: 2_000,
        folder: "corpus-smoke",
        criterion: "criterion-smoke",
    };

    /// Where the corpora go (never committed: `target/` is ignored).
    fn corpus_dir(self) -> PathBuf {
        root().join("target").join(self.folder)
    }
}

/// The tool-use ids of a recording, so each repetition can make them unique.
fn tool_use_ids(text: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for line in text.lines() {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let blocks = value
            .pointer("/message/content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for block in blocks {
            let key = match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => "id",
                Some("tool_result") => "tool_use_id",
                _ => continue,
            };
            if let Some(id) = block.get(key).and_then(Value::as_str) {
                ids.insert(id.to_string());
            }
        }
    }
    ids
}

/// A recording with its tool-use ids suffixed by `rep`, so pairing still works when repeated.
fn with_unique_ids(text: &str, ids: &BTreeSet<String>, rep: u64) -> String {
    let mut out = text.to_string();
    for id in ids {
        out = out.replace(&format!("\"{id}\""), &format!("\"{id}_{rep}\""));
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A Read tool use answered by a long result, as a Claude session would print it.
fn long_result(rep: u64) -> String {
    let id = format!("toolu_long_{rep}");
    // JSON-escaped source text: quotes and newlines as the binary writes them.
    let text = r#"fn main() { println!(\"hello\"); }\n"#.repeat(LONG_BYTES / 36);
    format!(
        concat!(
            r#"{{"type":"assistant","message":{{"id":"msg_long_{rep}","type":"message","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{"file_path":"/home/dev/project/src/main.rs"}}}}]}},"parent_tool_use_id":null,"session_id":"s"}}"#,
            "\n",
            r#"{{"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{id}","type":"tool_result","content":"{text}"}}]}},"parent_tool_use_id":null,"session_id":"s"}}"#,
            "\n"
        ),
        rep = rep,
        id = id,
        text = text
    )
}

/// Writes `big.jsonl` and `small.jsonl` of `scale` unless they exist.
pub fn corpus(force: bool, scale: Scale) -> Result<()> {
    let dir = scale.corpus_dir();
    std::fs::create_dir_all(&dir)?;
    let big = dir.join("big.jsonl");
    if force || !big.exists() {
        let sources: Vec<(String, BTreeSet<String>)> = crate::claude_recordings()?
            .into_iter()
            .map(|text| {
                let ids = tool_use_ids(&text);
                (text, ids)
            })
            .collect();
        let mut out = BufWriter::new(File::create(&big)?);
        let (mut written, mut rep) = (0u64, 0u64);
        while written < scale.big_bytes {
            for (text, ids) in &sources {
                let chunk = with_unique_ids(text, ids, rep);
                out.write_all(chunk.as_bytes())?;
                written += chunk.len() as u64;
            }
            if rep % LONG_EVERY == 0 {
                let chunk = long_result(rep);
                out.write_all(chunk.as_bytes())?;
                written += chunk.len() as u64;
            }
            rep += 1;
        }
        out.flush()?;
        println!(
            "wrote {} ({written} bytes, {rep} repetitions)",
            big.display()
        );
    }
    let small = dir.join("small.jsonl");
    if force || !small.exists() {
        let path = root().join("fixtures/claude/r_partial_messages.jsonl");
        let text = std::fs::read_to_string(&path)?;
        let ids = tool_use_ids(&text);
        let per_rep = text.lines().count() as u64;
        let mut out = BufWriter::new(File::create(&small)?);
        let (mut lines, mut rep) = (0u64, 0u64);
        while lines < scale.small_lines {
            out.write_all(with_unique_ids(&text, &ids, rep).as_bytes())?;
            lines += per_rep;
            rep += 1;
        }
        out.flush()?;
        println!("wrote {} ({lines} lines)", small.display());
    }
    Ok(())
}

/// Size, line count and longest line of a corpus file, read in blocks: the xtask process must
/// stay small, since a child's peak RSS on Linux includes its parent's size when it is spawned.
fn shape(path: &Path) -> Result<(u64, u64, u64)> {
    use std::io::Read;
    let mut file = File::open(path).with_context(|| format!("reading {}", path.display()))?;
    let mut block = vec![0u8; 1 << 20];
    let (mut size, mut lines, mut longest, mut current) = (0u64, 0u64, 0u64, 0u64);
    loop {
        let n = file.read(&mut block)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        for &b in &block[..n] {
            if b == b'\n' {
                lines += u64::from(current > 0);
                longest = longest.max(current);
                current = 0;
            } else {
                current += 1;
            }
        }
    }
    lines += u64::from(current > 0);
    Ok((size, lines, longest.max(current)))
}

/// The mean time of one criterion benchmark, in seconds.
fn criterion_mean(scale: Scale, group: &str, function: &str) -> Result<f64> {
    let path = root()
        .join("target")
        .join(scale.criterion)
        .join(format!("{group}/{function}/new/estimates.json"));
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading {} (did the bench run?)", path.display()))?;
    let value: Value = serde_json::from_str(&text)?;
    let ns = value
        .pointer("/mean/point_estimate")
        .and_then(Value::as_f64)
        .context("no mean in criterion's estimates")?;
    Ok(ns / 1e9)
}

/// Runs `harness normalize FILE > /dev/null` and returns its peak RSS in bytes (`ru_maxrss`,
/// an upper bound: it also counts this process's resident size when the child was spawned).
fn peak_rss(harness: &Path, file: &Path) -> Result<u64> {
    let child = Command::new(harness)
        .arg("normalize")
        .arg(file)
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", harness.display()))?;
    let usage = crate::rusage::wait(child)?;
    if !usage.success {
        bail!(
            "harness normalize failed (wait status {})",
            usage.wait_status
        );
    }
    Ok(usage.peak_rss)
}

fn mb(bytes: f64) -> f64 {
    bytes / (1024.0 * 1024.0)
}

/// Generates the corpora, runs the criterion benches, and prints the figures table; with
/// `smoke`, all of it small and quick (see the module's docs).
pub fn bench(smoke: bool) -> Result<()> {
    let scale = if smoke { Scale::SMOKE } else { Scale::FULL };
    corpus(false, scale)?;
    // A smoke run's criterion: one short sample set per bench.
    let quick: &[&str] = if smoke {
        &[
            "--warm-up-time",
            "0.01",
            "--measurement-time",
            "0.05",
            "--sample-size",
            "10",
        ]
    } else {
        &[]
    };
    let bench = |package: &str, name: &str, filter: &[&str]| {
        let mut cmd = Command::new("cargo");
        cmd.args(["bench", "-p", package, "--bench", name, "--"])
            .args(filter)
            .args(quick)
            .env("HARNESS_CORPUS_DIR", scale.corpus_dir())
            .env(
                "CRITERION_HOME",
                root().join("target").join(scale.criterion),
            );
        status(&mut cmd)
    };
    bench(crate::packages::CLAUDE, "normalize", &[])?;
    bench(
        crate::packages::CLASSIFIER,
        "classify",
        &["corpus/classify"],
    )?;
    let binaries = crate::build(smoke, &["-p", crate::packages::CLI])?;

    println!();
    println!("| figure | value | target |");
    println!("|---|---|---|");
    for name in ["big", "small"] {
        let path = scale.corpus_dir().join(format!("{name}.jsonl"));
        let (bytes, lines, _) = shape(&path)?;
        let normalize = criterion_mean(scale, name, "normalize")?;
        let floor = criterion_mean(scale, name, "floor")?;
        let (n_mbs, f_mbs) = (mb(bytes as f64) / normalize, mb(bytes as f64) / floor);
        println!(
            "| normalize `{name}` ({:.0} MB, {lines} lines) | {n_mbs:.0} MB/s, {:.0} lines/s | |",
            mb(bytes as f64),
            lines as f64 / normalize
        );
        println!(
            "| floor `{name}` (`from_slice::<Value>` per line) | {f_mbs:.0} MB/s, {:.0} lines/s | |",
            lines as f64 / floor
        );
        println!(
            "| ratio `{name}` (normalize / floor) | {:.2} × | ≥ 1.5 × |",
            n_mbs / f_mbs
        );
    }
    let cases = std::fs::read_to_string(root().join("fixtures/shell/cases.jsonl"))?;
    let rows = cases.lines().filter(|l| !l.trim().is_empty()).count();
    let classify = criterion_mean(scale, "corpus", "classify")?;
    println!(
        "| classifier ({rows} shell cases) | {:.0} commands/s | ≥ 300,000 /s |",
        rows as f64 / classify
    );
    let harness = binaries.join("harness");
    let big = scale.corpus_dir().join("big.jsonl");
    let (_, _, longest) = shape(&big)?;
    let rss = peak_rss(&harness, &big)?;
    println!(
        "| peak RSS, `harness normalize big > /dev/null` (longest line {:.1} MB) | {:.1} MB | ≤ {:.1} MB |",
        mb(longest as f64),
        mb(rss as f64),
        mb((2 * longest) as f64) + 32.0
    );
    Ok(())
}
