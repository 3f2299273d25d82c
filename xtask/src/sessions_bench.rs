//! `cargo xtask sessions-bench`: `harness sessions list` over a generated history, against the
//! floor of a plain `serde_json::Value` pass over the same files.
//!
//! The history is made of the real transcripts and rollouts of `fixtures/sessions/` (what
//! Claude Code 2.1.332 and Codex 0.171.0 wrote), each file repeated with fresh message, tool
//! use and line ids until it reaches its size: by default 8,000 sessions (7 in 8 Claude Code,
//! each eighth Codex) and 3 GiB in all, sizes spread from a few KB to 4 MB, plus one session of
//! `--big-mb` (default 512) to show memory stays bounded. It is written to a temporary folder
//! under the target folder and removed at the end.
//!
//! Every file is evicted from the page cache before each timed run (`posix_fadvise`
//! `DONTNEED`, only these files), so both runs read from disk: a cold start. Reported: wall
//! time, CPU time, peak RSS (`wait4`) of the release `harness` and of the `value_pass` example,
//! and their ratio. The run checks that every session was listed and that the tokens add up.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::rusage;

/// The arguments of `cargo xtask sessions-bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sessions to generate.
    #[arg(long, default_value_t = 8000)]
    files: u64,
    /// Total size in GiB (the big session included).
    #[arg(long, default_value_t = 3.0)]
    gib: f64,
    /// The size of the one big session, in MiB (0: none).
    #[arg(long, default_value_t = 512)]
    big_mb: u64,
    /// Keep the generated history in this folder (and reuse it when it is there).
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Use the debug build: a smoke run (CI, with tiny sizes), whose figures mean nothing.
    #[arg(long)]
    debug: bool,
}

/// One template: a real stored session's lines, and the tokens one copy of it is worth.
struct Template {
    lines: Vec<String>,
    bytes: u64,
}

fn templates(backend: &str) -> Result<Vec<Template>> {
    let dir = fixtures::root().join("sessions").join(backend);
    let mut files = Vec::new();
    walk(&dir, &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        // The live streams beside the folders are left out, and so are sub-agent files: a
        // copy of a session is its main file only.
        if path.parent() == Some(dir.as_path())
            || path.components().any(|c| c.as_os_str() == "subagents")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path)?;
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        if lines.is_empty() {
            continue;
        }
        out.push(Template {
            bytes: text.len() as u64,
            lines,
        });
    }
    if out.is_empty() {
        bail!("no stored sessions under {}", dir.display());
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// A small deterministic generator (xorshift), so the history is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Writes `template` repeated into `path` until it holds at least `size` bytes; every copy
/// gets ids of its own. Returns the bytes written.
fn write_session(path: &Path, template: &Template, size: u64, tag: &str) -> Result<u64> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut copy = 0u64;
    while written < size.max(1) {
        for line in &template.lines {
            let line = line
                .replace("msg_mock_", &format!("msg_mock_{tag}_{copy}_"))
                .replace("\"toolu_", &format!("\"toolu_{tag}_{copy}_"))
                .replace("\"call_", &format!("\"call_{tag}_{copy}_"))
                .replace("item_mock_", &format!("item_mock_{tag}_{copy}_"));
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            written += line.len() as u64 + 1;
        }
        copy += 1;
    }
    out.flush()?;
    Ok(written)
}

/// Generates the history into `dir`: `claude/projects/...` and `codex/sessions/...`.
fn generate(dir: &Path, args: &Args) -> Result<(u64, u64)> {
    let claude = templates("claude")?;
    let codex = templates("codex")?;
    let big = args.big_mb * (1 << 20);
    let total = (args.gib * f64::from(1u32 << 30)) as u64;
    let rest = total.saturating_sub(big);
    let mean = rest / args.files.max(1);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut bytes = 0u64;
    for i in 0..args.files {
        // Sizes from a tenth of the mean to 1.9 times it.
        let size = mean / 10 + rng.next() % (mean * 18 / 10).max(1);
        let size = if i == 0 && big > 0 { big } else { size };
        let project = format!("-home-dev-project{}", i % 40);
        let (path, template) = if i % 8 == 7 {
            let t = &codex[(rng.next() % codex.len() as u64) as usize];
            let day = 1 + i % 28;
            let path = dir.join(format!(
                "codex/sessions/2026/11/{day:02}/rollout-2026-11-{day:02}T10-00-00-0000{i:04x}-0000-7000-8000-{i:012x}.jsonl"
            ));
            (path, t)
        } else {
            let t = &claude[(rng.next() % claude.len() as u64) as usize];
            let path = dir.join(format!(
                "claude/projects/{project}/0000{i:04x}-0000-4000-8000-{i:012x}.jsonl"
            ));
            (path, t)
        };
        bytes += write_session(
            &path,
            template,
            size.max(template.bytes / 4),
            &i.to_string(),
        )?;
    }
    Ok((args.files, bytes))
}

/// Evicts every file under `dir` from the page cache (`posix_fadvise`, `DONTNEED`: only these
/// files' pages, whole files).
fn evict(dir: &Path) -> Result<()> {
    let mut files = Vec::new();
    walk(dir, &mut files);
    for path in files {
        let file = std::fs::File::open(&path)?;
        file.sync_all()?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .with_context(|| format!("posix_fadvise failed on {}", path.display()))?;
    }
    Ok(())
}

/// What one timed run took.
struct Run {
    seconds: f64,
    cpu: f64,
    peak_rss: u64,
    stdout: String,
}

fn timed(command: &mut Command) -> Result<Run> {
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    let mut pipe = child.stdout.take().context("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        text
    });
    let usage = rusage::wait(child)?;
    let seconds = started.elapsed().as_secs_f64();
    let stdout = reader.join().unwrap_or_default();
    if !usage.success {
        bail!("{command:?} failed (wait status {})", usage.wait_status);
    }
    Ok(Run {
        seconds,
        cpu: usage.cpu.as_secs_f64(),
        peak_rss: usage.peak_rss,
        stdout,
    })
}

/// Entry point of `cargo xtask sessions-bench`.
pub fn sessions_bench(args: Args) -> Result<()> {
    let release = crate::build(
        args.debug,
        &[
            "-p",
            crate::packages::CLI,
            "--example",
            "value_pass",
            "-p",
            crate::packages::FACADE,
        ],
    )?;
    let temp;
    let dir = match &args.keep {
        Some(dir) => dir.clone(),
        None => {
            temp = tempfile::Builder::new()
                .prefix("harness-sessions-bench-")
                .tempdir_in(crate::target_dir())?;
            temp.path().to_path_buf()
        }
    };
    let started = Instant::now();
    let (files, bytes) = if dir.join("claude").exists() {
        let mut all = Vec::new();
        walk(&dir, &mut all);
        let bytes = all
            .iter()
            .filter_map(|p| p.metadata().ok())
            .map(|m| m.len())
            .sum();
        (all.len() as u64, bytes)
    } else {
        generate(&dir, &args)?
    };
    println!(
        "history: {files} sessions, {:.2} GiB in {} ({:.0} s to write)",
        bytes as f64 / f64::from(1u32 << 30),
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average before: {}", load.trim());

    evict(&dir)?;
    let harness = timed(
        Command::new(release.join("harness"))
            .args(["sessions", "list", "--format", "json", "--claude-dir"])
            .arg(dir.join("claude"))
            .arg("--codex-home")
            .arg(dir.join("codex")),
    )?;
    evict(&dir)?;
    let floor = timed(Command::new(release.join("examples/value_pass")).arg(&dir))?;

    let rows: Vec<serde_json::Value> = harness
        .stdout
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()
        .context("harness sessions list printed a line that is not JSON")?;
    if rows.len() as u64 != files {
        bail!("{} sessions listed, {files} generated", rows.len());
    }
    let messages: u64 = rows.iter().filter_map(|r| r["messages"].as_u64()).sum();
    let gib = bytes as f64 / f64::from(1u32 << 30);
    println!("{}", floor.stdout.trim());
    println!("| pass | wall s | CPU s | GiB/s | peak RSS MiB |");
    println!("|---|---|---|---|---|");
    for (name, run) in [
        ("harness sessions list", &harness),
        ("serde_json::Value pass", &floor),
    ] {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.0} |",
            run.seconds,
            run.cpu,
            gib / run.seconds,
            run.peak_rss as f64 / f64::from(1u32 << 20)
        );
    }
    println!(
        "ratio to the floor: {:.2}x wall; {} sessions, {messages} model messages listed",
        harness.seconds / floor.seconds,
        rows.len()
    );
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load average after: {}", load.trim());
    Ok(())
}
