//! Repository automation, run as `cargo xtask <task>`.
//!
//! - `cargo xtask ci`: what CI runs (`.ci/run`): fmt check, clippy, tests, benches compile.
//! - `cargo xtask conformance [DIR]`: normalizes every Claude and Codex stream of the shared
//!   conformance data (default `../shared/conformance`) with the built `harness` and checks each
//!   against its expected file with the kit's own `compare.py`.
//! - `cargo xtask corpus [--force] [--smoke]`: writes the benchmark corpora
//!   `target/corpus/big.jsonl` (at least 100 MB: the recordings repeated with unique tool-use
//!   ids, plus long tool results) and `small.jsonl` (at least 200,000 short
//!   `--include-partial-messages` lines).
//! - `cargo xtask bench [--smoke]`: the corpora, the criterion benches, the peak RSS of the
//!   release binary, and a table of every figure with its target.
//! - `cargo xtask record [--backend claude|codex|opencode] [--check] [SCENARIO...]`: re-records
//!   the Claude Code (or Codex, or opencode) corpus from the real binary against a scripted API
//!   stand-in, or reports drift (`record`).
//! - `cargo xtask codex-schema [--codex PATH]`: every message of the recorded Codex sessions,
//!   both directions, against the JSON Schema the recorded `codex app-server` generates
//!   (`codex_schema.rs`).
//! - `cargo xtask dist [--out DIR]`: every artifact of a release in one folder (`dist.rs`): the
//!   binary tarball with its checksum, the npm packages, the wheel and the crate packages, the
//!   binary and the wheel linked against glibc 2.17 and checked.
//! - `cargo xtask fuzz TARGET [--time SECS]`: a cargo-fuzz target (`claude_normalizer`,
//!   `codex_normalizer`, `copilot_normalizer`, `qwen_normalizer`, `pi_normalizer`,
//!   `classifier`) seeded from `fixtures/`, for SECS s (default 600).
//! - `cargo xtask session-bench [--backend B]... [--turns N] [--debug]`: the latency `harness
//!   session` adds between an agent's last words of a turn and the caller's outcome line
//!   (p50, p99), its turns per second and its resident memory over the turns, against a
//!   scripted agent of each backend with sessions (Claude Code, Codex, opencode, Gemini CLI).
//! - `cargo xtask sessions-bench [--files N] [--gib G] [--big-mb M] [--runs N] [--ccusage
//!   auto|off|PATH] [--threads N] [--keep DIR] [--debug]`: `harness sessions list` over a
//!   generated history of stored sessions, cold and warm, beside ccusage (the pinned npm
//!   package) and the floor of a `serde_json::Value` pass over the same files (medians of wall
//!   time, CPU time, peak RSS), then a check that both tools give every session the same tokens.
//! - `cargo xtask stress [--scale F] [--debug]`: hostile sizes through the release `harness`
//!   binary (a 300 MB line, a 1 GB stream, a million pending tool uses, a 10 MB shell command),
//!   with the peak RSS and time of each.
//!
//! `--debug` (and `--smoke`) run a task on the debug build, small: CI's smoke runs, whose
//! figures mean nothing but which build and run every package the task names.

mod bench;
mod codex_schema;
mod dist;
mod fuzz;
mod record;
mod rusage;
mod session_bench;
mod sessions_bench;
mod stress;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};

/// Repository automation for the harness workspace.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// What CI runs (`.ci/run`): fmt check, clippy, tests, benches compile.
    Ci,
    /// Normalizes every stream of the shared conformance data and checks it with `compare.py`.
    Conformance {
        /// The conformance folder (default `../shared/conformance`).
        dir: Option<PathBuf>,
    },
    /// Writes the benchmark corpora `target/corpus/{big,small}.jsonl`.
    Corpus {
        /// Rewrite them even when they exist.
        #[arg(long)]
        force: bool,
        /// Small corpora in `target/corpus-smoke/` instead (CI).
        #[arg(long)]
        smoke: bool,
    },
    /// The corpora, the criterion benches, the peak RSS, and a table of every figure.
    Bench {
        /// All of it small and quick, on the debug binary: CI's check that it runs.
        #[arg(long)]
        smoke: bool,
    },
    /// Re-records the fixtures from the real binaries, or reports drift.
    Record(record::Args),
    /// Checks every message of the recorded Codex sessions (`fixtures/codex-app-server/`),
    /// both directions, against the JSON Schema the recorded `codex app-server` release
    /// generates.
    CodexSchema(codex_schema::Args),
    /// Every artifact of a release in one folder (default `target/dist/`): the binary tarball
    /// and its checksum, the npm packages, the wheel, the crate packages; the binary and the
    /// wheel against glibc 2.17.
    Dist(dist::Args),
    /// Runs a cargo-fuzz target seeded from `fixtures/`.
    Fuzz {
        /// The target: `claude_normalizer` or `classifier`.
        target: String,
        /// How long to fuzz, in seconds.
        #[arg(long, default_value_t = 600)]
        time: u64,
        /// Arguments passed on to libFuzzer (after `--`).
        #[arg(last = true)]
        extra: Vec<String>,
    },
    /// `harness sessions list` over a generated history of stored sessions (1 GiB, 2,000
    /// files), cold and warm, beside ccusage and a plain `serde_json::Value` pass over the same
    /// files; checks that both tools give every session the same tokens.
    SessionsBench(sessions_bench::Args),
    /// The latency `harness session` adds per turn, its throughput and memory, against a
    /// scripted Claude Code session agent.
    SessionBench(session_bench::Args),
    /// Runs a program and reports its wall time, CPU time and peak RSS (for `sessions-bench`).
    #[command(hide = true)]
    Measure {
        /// The program and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        command: Vec<std::ffi::OsString>,
    },
    /// Hostile sizes through the release `harness` binary, with peak RSS and time of each.
    Stress {
        /// Scale every size by this factor.
        #[arg(long, default_value_t = 1.0)]
        scale: f64,
        /// Run only the case of this name.
        only: Option<String>,
        /// Use the debug build: a smoke run (CI), whose figures mean nothing.
        #[arg(long)]
        debug: bool,
    },
}

fn main() -> ExitCode {
    // `session-bench` starts this binary as the scripted agent of the session it measures.
    if std::env::var_os(session_bench::AGENT_VAR).is_some() {
        return match session_bench::agent() {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("xtask agent: {e:#}");
                ExitCode::FAILURE
            }
        };
    }
    let cli = Cli::parse();
    let result = match cli.task {
        Task::Ci => ci(),
        Task::Conformance { dir } => conformance(dir),
        Task::Corpus { force, smoke } => bench::corpus(
            force,
            if smoke {
                bench::Scale::SMOKE
            } else {
                bench::Scale::FULL
            },
        ),
        Task::Bench { smoke } => bench::bench(smoke),
        Task::Record(args) => record::record(args),
        Task::CodexSchema(args) => codex_schema::codex_schema(args),
        Task::Dist(args) => dist::dist(args),
        Task::Fuzz {
            target,
            time,
            extra,
        } => fuzz::fuzz(&target, time, &extra),
        Task::SessionsBench(args) => sessions_bench::sessions_bench(args),
        Task::SessionBench(args) => session_bench::session_bench(args),
        Task::Measure { command } => rusage::measure(&command),
        Task::Stress { scale, only, debug } => stress::stress(scale, only, debug),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The packages, and their targets, that tasks build or run by name (`cargo ... -p NAME`);
/// `every_package_and_target_a_task_names_is_in_the_workspace` fails on a rename.
mod packages {
    /// The CLI, binary `harness`.
    pub const CLI: &str = "harness-cli";
    /// The facade, with the `value_pass` example.
    pub const FACADE: &str = "harness-agents";
    /// The Claude Code backend, with the `normalize` bench.
    pub const CLAUDE: &str = "harness-agents-claude";
    /// The shell-command classifier, with the `classify` bench.
    pub const CLASSIFIER: &str = "harness-agents-codex-shell";
    /// Every `(package, target kind, target)` a task names.
    #[cfg(test)]
    pub const TARGETS: [(&str, &str, &str); 4] = [
        (CLI, "bin", "harness"),
        (FACADE, "example", "value_pass"),
        (CLAUDE, "bench", "normalize"),
        (CLASSIFIER, "bench", "classify"),
    ];
}

/// The workspace root (the parent of this crate's folder).
fn root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// `cargo metadata --no-deps` of the workspace, when cargo answers.
fn metadata() -> Option<serde_json::Value> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| serde_json::from_slice(&o.stdout).ok())
}

/// The workspace's target folder as cargo reports it (`CARGO_TARGET_DIR`, or a `target-dir`
/// from a cargo config, are honoured); `target/` under the root when cargo cannot say.
fn target_dir() -> PathBuf {
    metadata()
        .and_then(|v| v.get("target_directory")?.as_str().map(PathBuf::from))
        .unwrap_or_else(|| root().join("target"))
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

/// Builds `targets` (`-p PACKAGE`, `--example NAME`, ...) in release, or in debug with
/// `debug`; returns the folder the build went to (`target/release` or `target/debug`).
fn build(debug: bool, targets: &[&str]) -> Result<PathBuf> {
    let mut cmd = Command::new("cargo");
    cmd.arg("build");
    if !debug {
        cmd.arg("--release");
    }
    status(cmd.args(targets))?;
    Ok(target_dir().join(if debug { "debug" } else { "release" }))
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
    status(Command::new("cargo").args(["build", "-q", "-p", packages::CLI]))?;
    let harness = target_dir().join("debug/harness");
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
            let mut actual = tempfile::NamedTempFile::new()?;
            std::io::Write::write_all(&mut actual, &output.stdout)?;
            let check = Command::new("python3")
                .arg(&compare)
                .arg(&expected)
                .arg(actual.path())
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_package_and_target_a_task_names_is_in_the_workspace() {
        let metadata = metadata().expect("cargo metadata answers");
        let workspace = metadata["packages"].as_array().unwrap();
        for (package, kind, target) in packages::TARGETS {
            let found = workspace.iter().find(|p| p["name"] == package);
            let found = found.unwrap_or_else(|| panic!("no package {package} in the workspace"));
            let targets = found["targets"].as_array().unwrap();
            assert!(
                targets.iter().any(|t| t["name"] == target
                    && t["kind"].as_array().unwrap().iter().any(|k| k == kind)),
                "{package} has no {kind} target {target}"
            );
        }
    }
}
