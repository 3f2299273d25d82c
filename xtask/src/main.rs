//! Repository automation, run as `cargo xtask <task>`.
//!
//! - `cargo xtask ci`: what CI runs (`.ci/run`): fmt check, clippy, tests, benches compile.
//! - `cargo xtask conformance [DIR]`: normalizes every Claude and Codex stream of the shared
//!   conformance data (default `../shared/conformance`) with the built `harness` and checks each
//!   against its expected file with the kit's own `compare.py`.
//! - `cargo xtask corpus [--force]`: writes the benchmark corpora `target/corpus/big.jsonl`
//!   (at least 100 MB: the recordings repeated with unique tool-use ids, plus long tool results)
//!   and `small.jsonl` (at least 200,000 short `--include-partial-messages` lines).
//! - `cargo xtask bench`: the corpora, the criterion benches, the peak RSS of the release binary,
//!   and a table of every figure with its target.
//! - `cargo xtask record [--backend claude|codex|opencode] [--check] [SCENARIO...]`: re-records
//!   the Claude Code (or Codex, or opencode) corpus from the real binary against a scripted API
//!   stand-in, or reports drift (`record`).
//! - `cargo xtask fuzz TARGET [--time SECS]`: a cargo-fuzz target (`claude_normalizer`,
//!   `codex_normalizer`, `classifier`) seeded from `fixtures/`, for SECS s (default 600).
//! - `cargo xtask stress [--scale F]`: hostile sizes through the release `harness` binary (a
//!   300 MB line, a 1 GB stream, a million pending tool uses, a 10 MB shell command), with the
//!   peak RSS and time of each.

mod bench;
mod fuzz;
mod record;
mod stress;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("conformance") => conformance(args.get(1).map(PathBuf::from)),
        Some("corpus") => bench::corpus(args.get(1).is_some_and(|a| a == "--force")),
        Some("bench") => bench::bench(),
        Some("record") => record::record(&args[1..]),
        Some("fuzz") => fuzz::fuzz(&args[1..]),
        Some("stress") => stress::stress(&args[1..]),
        _ => {
            eprintln!(
                "usage: cargo xtask <ci | conformance [DIR] | corpus [--force] | bench | record [--backend claude|codex|opencode] [--check] [SCENARIO...] | fuzz TARGET [--time SECS] | stress [--scale F]>"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's folder).
fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The recorded streams of a fixtures folder (`NAME.jsonl`, not the expected files), sorted.
fn recorded_streams(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".jsonl") && !name.ends_with(".expected.jsonl")
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// The text of every Claude recording in `fixtures/claude`, in name order.
fn claude_recordings() -> Result<Vec<String>> {
    recorded_streams(&root().join("fixtures/claude"))?
        .iter()
        .map(|p| std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display())))
        .collect()
}

fn status(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .current_dir(root())
        .status()
        .with_context(|| format!("running {shown}"))?;
    if !status.success() {
        bail!("{shown} failed: {status}");
    }
    Ok(())
}

fn ci() -> Result<()> {
    status(Command::new("bash").arg(".ci/run"))
}

fn conformance(dir: Option<PathBuf>) -> Result<()> {
    let dir = dir.unwrap_or_else(|| root().join("../shared/conformance"));
    let compare = dir.join("compare.py");
    if !compare.exists() {
        bail!("{} not found", compare.display());
    }
    status(Command::new("cargo").args(["build", "-q", "-p", "harness-cli"]))?;
    let harness = root().join("target/debug/harness");
    let (mut agree, mut total) = (0, 0);
    for folder in ["claude", "claude-edges", "codex", "codex-edges"] {
        // The Codex recordings assume the project directory they were recorded in.
        let backend: &[&str] = if folder.starts_with("codex") {
            &["--backend", "codex", "--cwd", "/home/dev2/project"]
        } else {
            &[]
        };
        let streams = recorded_streams(&dir.join(folder))?;
        for stream in streams {
            total += 1;
            let stem = stream.with_extension("");
            let expected = stem.with_extension("expected.jsonl");
            let stderr = stem.with_extension("stderr");
            let mut cmd = Command::new(&harness);
            cmd.arg("normalize").args(backend).arg(&stream);
            if std::fs::metadata(&stderr).is_ok_and(|m| m.len() > 0) {
                cmd.arg("--stderr").arg(&stderr);
            }
            let output = cmd.stderr(Stdio::inherit()).output()?;
            let actual = std::env::temp_dir().join("harness-conformance-actual.jsonl");
            std::fs::write(&actual, &output.stdout)?;
            let check = Command::new("python3")
                .arg(&compare)
                .arg(&expected)
                .arg(&actual)
                .output()
                .context("running python3 compare.py")?;
            if check.status.success() {
                agree += 1;
            } else {
                let first = String::from_utf8_lossy(&check.stdout);
                println!(
                    "{folder}/{}: {}",
                    stem.file_name().unwrap_or_default().to_string_lossy(),
                    first.lines().next().unwrap_or("differs")
                );
            }
        }
    }
    println!("{agree}/{total} streams agree");
    if agree != total {
        bail!("{} streams differ", total - agree);
    }
    Ok(())
}
