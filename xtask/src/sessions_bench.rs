//! `cargo xtask sessions-bench`: `harness sessions list` over a generated history, side by side
//! with ccusage (`ccusage session --json --offline`), the floor of a plain
//! `serde_json::Value` pass over the same files, and the time their bytes alone take to read.
//!
//! The history is made of the real transcripts and rollouts of `fixtures/sessions/` (what
//! Claude Code 2.1.332 and Codex 0.171.0 wrote), each file repeated with fresh message, tool
//! use, line and session ids until it reaches its size: by default 2,000 sessions (7 in 8
//! Claude Code, each eighth Codex) and 1 GiB in all, sizes spread from a tenth to twice the
//! mean, plus one session of `--big-mb` (default 128) to show memory stays bounded. Each copy
//! happens an hour after the one before, and a repeated rollout's running token total keeps
//! growing from copy to copy, as one long session's does.
//! It is written to a temporary folder under the target folder and removed at the end.
//!
//! ccusage is the pinned npm package [`CCUSAGE`], installed with npm into
//! `<target>/sessions-bench/` on the first run (never into the repository); its native binary
//! is timed directly, not through the package's Node.js launcher, so Node's start is not
//! charged to it. It reads every agent it finds under `$HOME`, so it runs with `HOME` an empty
//! folder and `CLAUDE_CONFIG_DIR` and `CODEX_HOME` pointing into the history.
//!
//! Each tool runs `--runs` times (default 5) cold and as many warm, the tools taking turns in
//! each round so that a change of load hits them alike; the medians are reported. Cold: the
//! page cache is dropped before each run (`/proc/sys/vm/drop_caches`, as root), else only the
//! history's files are evicted (`posix_fadvise` `DONTNEED`). Warm: the bench reads every file
//! once before the warm runs, and each run reads them again.
//! Beside them, the bytes alone: every file read and nothing parsed (`value_pass --read-only`,
//! 8 threads, biggest first; cold, past the page cache as harness reads a file not in it), the
//! time no reader of these files can beat on this disk.
//! Reported: wall time, CPU time (user and system) and peak RSS (`wait4`, through a small
//! process of its own, `xtask measure`, so that this one's size does not count) of each, the ratios
//! ccusage / harness and harness / the bytes alone, and the load average around each set. The run then checks that both
//! tools list the same sessions with the same input and output tokens, and fails when they do
//! not.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::rusage;

/// The ccusage release compared with: npm package and version.
pub const CCUSAGE: (&str, &str) = ("ccusage", "20.0.24");

/// The arguments of `cargo xtask sessions-bench`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sessions to generate.
    #[arg(long, default_value_t = 2000)]
    files: u64,
    /// Total size in GiB (the big session included).
    #[arg(long, default_value_t = 1.0)]
    gib: f64,
    /// The size of the one big session, in MiB (0: none).
    #[arg(long, default_value_t = 128)]
    big_mb: u64,
    /// Timed runs of each tool, cold and warm each; medians are reported.
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// ccusage: `auto` (the pinned npm package, installed on the first run when npm is here;
    /// skipped otherwise), `off`, or the path of a ccusage binary.
    #[arg(long, default_value = "auto", value_name = "auto|off|PATH")]
    ccusage: String,
    /// Threads `harness sessions list` decodes on (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Keep the generated history in this folder (and reuse it when it is there).
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Use the debug build: a smoke run (CI, with tiny sizes), whose figures mean nothing.
    #[arg(long)]
    debug: bool,
}

/// One template: a real stored session's lines, and its size.
struct Template {
    /// The session id the template's lines name (its file's, for Claude Code; its rollout
    /// name's, for Codex), replaced by each copy's own.
    id: String,
    lines: Vec<String>,
    bytes: u64,
    /// For a rollout: the last running token total, which each copy adds to its own.
    total: Option<serde_json::Value>,
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
        let stem = path.file_stem().unwrap_or_default().to_string_lossy();
        // A rollout's name ends with its id, after `rollout-` and a 19-character time.
        let id = match backend {
            "codex" => stem.get("rollout-".len() + 20..).unwrap_or(&stem),
            _ => &stem,
        }
        .to_string();
        let total = lines
            .iter()
            .filter_map(|l| total_usage(l).map(|(_, total)| total))
            .next_back();
        out.push(Template {
            id,
            bytes: text.len() as u64,
            lines,
            total,
        });
    }
    if out.is_empty() {
        bail!("no stored sessions under {}", dir.display());
    }
    Ok(out)
}

/// A rollout's `token_count` line, as a `Value`, and its running total.
fn total_usage(line: &str) -> Option<(serde_json::Value, serde_json::Value)> {
    if !line.contains(r#""token_count""#) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let total = value.pointer("/payload/info/total_token_usage")?.clone();
    Some((value, total))
}

/// `line`, a `token_count` line of copy `copy`, with `before` (the total of one whole copy)
/// added `copy` times to its running total.
fn shifted_total(line: &str, before: &serde_json::Value, copy: u64) -> Option<String> {
    let (mut value, _) = total_usage(line)?;
    let total = value.pointer_mut("/payload/info/total_token_usage")?;
    for (key, n) in total.as_object_mut()?.iter_mut() {
        let add = before
            .get(key)
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        if let Some(old) = n.as_u64() {
            *n = (old + add * copy).into();
        }
    }
    Some(value.to_string())
}

/// Days since 1970-01-01 of a civil date, and back (Howard Hinnant's algorithms).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// `line` with every time in it (`YYYY-MM-DDTHH:`) `hours` later: each copy of a session
/// happens after the one before, as a long session's turns do (ccusage counts a rollout's
/// token counts with the same time once).
fn later(line: &str, hours: u64) -> String {
    let b = line.as_bytes();
    let digits = |at: usize, n: usize| -> Option<i64> {
        let text = line.get(at..at + n)?;
        text.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| text.parse().ok())?
    };
    let mut out = String::with_capacity(line.len());
    let mut i = 0;
    while i < b.len() {
        let stamp = (b.get(i + 4) == Some(&b'-')
            && b.get(i + 7) == Some(&b'-')
            && b.get(i + 10) == Some(&b'T')
            && b.get(i + 13) == Some(&b':'))
        .then(|| {
            Some((
                digits(i, 4)?,
                digits(i + 5, 2)?,
                digits(i + 8, 2)?,
                digits(i + 11, 2)?,
            ))
        })
        .flatten();
        match stamp {
            Some((y, m, d, h)) => {
                let hours = days_from_civil(y, m, d) * 24 + h + hours as i64;
                let (y, m, d) = civil_from_days(hours.div_euclid(24));
                out.push_str(&format!(
                    "{y:04}-{m:02}-{d:02}T{:02}:",
                    hours.rem_euclid(24)
                ));
                i += 14;
            }
            None => {
                let next = line[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&line[i..i + next]);
                i += next;
            }
        }
    }
    out
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
/// gets ids and times of its own, and the session the id `id`. Returns the bytes written.
fn write_session(path: &Path, template: &Template, size: u64, tag: &str, id: &str) -> Result<u64> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut copy = 0u64;
    while written < size.max(1) {
        for line in &template.lines {
            let shifted = match (&template.total, copy) {
                (Some(total), 1..) => shifted_total(line, total, copy),
                _ => None,
            };
            let line = shifted.as_deref().unwrap_or(line);
            let line = match copy {
                0 => line.to_string(),
                _ => later(line, copy),
            };
            let line = line
                .replace(&template.id, id)
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
        let (path, template, id) = if i % 8 == 7 {
            let t = &codex[(rng.next() % codex.len() as u64) as usize];
            let day = 1 + i % 28;
            let id = format!("0000{i:04x}-0000-7000-8000-{i:012x}");
            let path = dir.join(format!(
                "codex/sessions/2026/11/{day:02}/rollout-2026-11-{day:02}T10-00-00-{id}.jsonl"
            ));
            (path, t, id)
        } else {
            let t = &claude[(rng.next() % claude.len() as u64) as usize];
            let id = format!("0000{i:04x}-0000-4000-8000-{i:012x}");
            let path = dir.join(format!("claude/projects/{project}/{id}.jsonl"));
            (path, t, id)
        };
        bytes += write_session(
            &path,
            template,
            size.max(template.bytes / 4),
            &i.to_string(),
            &id,
        )?;
    }
    Ok((args.files, bytes))
}

/// How a cold run starts cold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Eviction {
    /// The whole page cache dropped (`/proc/sys/vm/drop_caches`).
    DropCaches,
    /// Only the history's files evicted (`posix_fadvise`).
    Fadvise,
}

/// Empties the page cache of the history: the whole cache when this process may drop it,
/// else every file under `dir` (`posix_fadvise`, `DONTNEED`: only these files' pages).
fn evict(dir: &Path) -> Result<Eviction> {
    rustix::fs::sync();
    if std::fs::write("/proc/sys/vm/drop_caches", "3\n").is_ok() {
        return Ok(Eviction::DropCaches);
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    for path in files {
        let file = std::fs::File::open(&path)?;
        rustix::fs::fadvise(&file, 0, None, rustix::fs::Advice::DontNeed)
            .with_context(|| format!("posix_fadvise failed on {}", path.display()))?;
    }
    Ok(Eviction::Fadvise)
}

/// Reads every file of the history under `dir` through the page cache, so that it is there.
fn fill_cache(dir: &Path) -> Result<()> {
    let mut files = Vec::new();
    walk(dir, &mut files);
    let mut buf = vec![0; 1 << 20];
    for path in files {
        let mut file = std::fs::File::open(&path)?;
        while std::io::Read::read(&mut file, &mut buf)? > 0 {}
    }
    Ok(())
}

/// What one timed run took.
#[derive(Debug, Clone)]
struct Run {
    seconds: f64,
    cpu: f64,
    peak_rss: u64,
    stdout: String,
}

/// A command that runs `program` through `xtask measure`, a small process of its own, so
/// that the peak RSS measured is the program's, not this process's (see [`rusage::measure`]).
fn measured(program: &Path) -> Result<Command> {
    let mut command = Command::new(std::env::current_exe()?);
    command.arg("measure").arg(program);
    Ok(command)
}

fn timed(command: &mut Command) -> Result<Run> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {command:?}"))?;
    let mut pipe = child.stdout.take().context("no stdout")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut text);
        text
    });
    let mut errors = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        std::io::Read::read_to_string(&mut pipe, &mut errors)?;
    }
    let status = child.wait()?;
    let stdout = reader.join().unwrap_or_default();
    let mut figures = None;
    for line in errors.lines() {
        match line.strip_prefix(rusage::MEASURED) {
            Some(rest) => figures = Some(rest.split_whitespace().collect::<Vec<_>>()),
            None => eprintln!("{line}"),
        }
    }
    let figure = |i: usize| -> Result<f64> {
        let text = figures.as_ref().and_then(|f| f.get(i)).copied();
        Ok(text.context("xtask measure reported nothing")?.parse()?)
    };
    if !status.success() || figure(3)? != 0.0 {
        bail!("{command:?} failed ({status}, wait status {})", figure(3)?);
    }
    Ok(Run {
        seconds: figure(0)?,
        cpu: figure(1)?,
        peak_rss: figure(2)? as u64,
        stdout,
    })
}

/// The ccusage binary to compare with, if any: `--ccusage PATH`, or under `auto` the pinned
/// package's native binary, installed with npm into the bench's own folder when missing.
fn ccusage(choice: &str) -> Result<Option<PathBuf>> {
    match choice {
        "off" => return Ok(None),
        "auto" => {}
        path => return Ok(Some(PathBuf::from(path))),
    }
    let (package, version) = CCUSAGE;
    let dir = crate::target_dir()
        .join("sessions-bench")
        .join(format!("{package}-{version}"));
    let native = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "ccusage-linux-x64",
        ("linux", "aarch64") => "ccusage-linux-arm64",
        ("macos", "x86_64") => "ccusage-darwin-x64",
        ("macos", "aarch64") => "ccusage-darwin-arm64",
        (os, arch) => {
            println!("ccusage: no native package for {os} {arch}; compared with nothing");
            return Ok(None);
        }
    };
    let binary = dir.join(format!("node_modules/@ccusage/{native}/bin/ccusage"));
    if !binary.exists() {
        std::fs::create_dir_all(&dir)?;
        println!(
            "ccusage: installing {package}@{version} into {}",
            dir.display()
        );
        let installed = Command::new("npm")
            .args([
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(&dir)
            .arg(format!("{package}@{version}"))
            .status();
        match installed {
            Ok(status) if status.success() => {}
            Ok(status) => {
                println!("ccusage: npm install failed ({status}); compared with nothing");
                return Ok(None);
            }
            Err(e) => {
                println!("ccusage: npm is not available ({e}); compared with nothing");
                return Ok(None);
            }
        }
    }
    // npm may unpack the binary without its execute bit (the launcher sets it on first use).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mut permissions = std::fs::metadata(&binary)
            .with_context(|| format!("{} is missing after npm install", binary.display()))?
            .permissions();
        permissions.set_mode(permissions.mode() | 0o755);
        std::fs::set_permissions(&binary, permissions)?;
    }
    Ok(Some(binary))
}

/// The median of `values` (the mean of the middle two for an even count).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// Median wall, CPU and peak RSS of a tool's runs.
#[derive(Debug, Clone, Copy)]
struct Medians {
    wall: f64,
    cpu: f64,
    rss_mib: f64,
}

fn medians(runs: &[Run]) -> Medians {
    Medians {
        wall: median(runs.iter().map(|r| r.seconds).collect()),
        cpu: median(runs.iter().map(|r| r.cpu).collect()),
        rss_mib: median(
            runs.iter()
                .map(|r| r.peak_rss as f64 / f64::from(1u32 << 20))
                .collect(),
        ),
    }
}

fn load_average() -> String {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    load.split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Input and output tokens of one session, by a key both tools can name: `claude ID` (the
/// session id) or `codex PATH` (the rollout's path under `sessions/`, without `.jsonl`).
type Tokens = BTreeMap<String, (u64, u64)>;

fn harness_tokens(stdout: &str, codex_sessions: &Path) -> Result<Tokens> {
    let mut tokens = Tokens::new();
    for line in stdout.lines() {
        let row: serde_json::Value = serde_json::from_str(line)
            .context("harness sessions list printed a line that is not JSON")?;
        let n = |key: &str| row[key].as_u64().unwrap_or(0);
        let key = match row["backend"].as_str() {
            Some("codex") => {
                let path = Path::new(row["path"].as_str().unwrap_or_default());
                let relative = path.strip_prefix(codex_sessions).unwrap_or(path);
                format!("codex {}", relative.with_extension("").display())
            }
            backend => format!(
                "{} {}",
                backend.unwrap_or("?"),
                row["id"].as_str().unwrap_or("")
            ),
        };
        tokens.insert(key, (n("input_tokens"), n("output_tokens")));
    }
    Ok(tokens)
}

fn ccusage_tokens(stdout: &str) -> Result<Tokens> {
    let report: serde_json::Value =
        serde_json::from_str(stdout).context("ccusage printed no JSON report")?;
    let mut tokens = Tokens::new();
    for row in report["session"].as_array().into_iter().flatten() {
        let n = |key: &str| row[key].as_u64().unwrap_or(0);
        let key = format!(
            "{} {}",
            row["agent"].as_str().unwrap_or("?"),
            row["period"].as_str().unwrap_or("")
        );
        let entry = tokens.entry(key).or_insert((0, 0));
        entry.0 += n("inputTokens");
        entry.1 += n("outputTokens");
    }
    Ok(tokens)
}

/// Fails unless both tools list the same sessions with the same input and output tokens.
fn compare(harness: &Tokens, ccusage: &Tokens) -> Result<()> {
    let mut differ = Vec::new();
    // ccusage lists no session without tokens (an API error, an interrupted first turn).
    let mut empty = 0;
    for (key, mine) in harness {
        match ccusage.get(key) {
            Some(theirs) if theirs == mine => {}
            None if *mine == (0, 0) => empty += 1,
            theirs => differ.push(format!("{key}: harness {mine:?}, ccusage {theirs:?}")),
        }
    }
    for key in ccusage.keys().filter(|k| !harness.contains_key(*k)) {
        differ.push(format!("{key}: listed by ccusage only"));
    }
    if differ.is_empty() {
        println!(
            "same sessions, same tokens: {} sessions with tokens listed by both, input and output \
             tokens equal in each; {empty} without tokens, which only harness lists",
            harness.len() - empty
        );
        return Ok(());
    }
    for line in differ.iter().take(10) {
        println!("differs: {line}");
    }
    bail!(
        "{} of {} sessions differ from ccusage",
        differ.len(),
        harness.len()
    )
}

/// Entry point of `cargo xtask sessions-bench`.
pub fn sessions_bench(args: Args) -> Result<()> {
    let release = crate::build(
        args.debug,
        &[
            "-p",
            crate::packages::CLI,
            // Naming an example builds only the targets named: the binary too.
            "--bin",
            "harness",
            "--example",
            "value_pass",
            "-p",
            crate::packages::FACADE,
        ],
    )?;
    let ccusage = ccusage(&args.ccusage)?;
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
    let gib = bytes as f64 / f64::from(1u32 << 30);
    println!(
        "history: {files} sessions, {gib:.2} GiB in {} ({:.0} s to write)",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("machine: {cores} cores; load average {}", load_average());

    let harness_command = || {
        let mut command = measured(&release.join("harness"))?;
        command
            .args(["sessions", "list", "--format", "json", "--threads"])
            .arg(args.threads.to_string())
            // The generated history only: no other agent's folders under the real HOME.
            .args(["--backend", "claude,codex"])
            .arg("--claude-dir")
            .arg(dir.join("claude"))
            .arg("--codex-home")
            .arg(dir.join("codex"));
        Ok::<_, anyhow::Error>(command)
    };
    // ccusage reads every agent it finds under $HOME: an empty one, and the history's folders.
    let home = dir.join("empty-home");
    std::fs::create_dir_all(&home)?;
    let ccusage_command = |binary: &Path| {
        let mut command = measured(binary)?;
        command
            .args(["session", "--json", "--offline"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("TZ", "UTC")
            .env("CLAUDE_CONFIG_DIR", dir.join("claude"))
            .env("CODEX_HOME", dir.join("codex"));
        Ok::<_, anyhow::Error>(command)
    };
    let floor_command = || {
        let mut command = measured(&release.join("examples/value_pass"))?;
        command.arg(&dir);
        Ok::<_, anyhow::Error>(command)
    };
    // The bytes alone: what the disk (cold) or the page cache (warm) gives before any parsing.
    let read_command = |cold: bool| {
        let mut command = measured(&release.join("examples/value_pass"))?;
        command.arg("--read-only");
        if cold {
            command.arg("--direct");
        }
        command.arg(&dir);
        Ok::<_, anyhow::Error>(command)
    };

    let mut last = (String::new(), String::new());
    let mut results = Vec::new();
    for cold in [true, false] {
        let mode = if cold { "cold" } else { "warm" };
        let before = load_average();
        let (mut harness, mut theirs, mut floor, mut bytes_alone) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut eviction = None;
        if !cold {
            // The history is read once into the page cache, by none of the tools: a tool that
            // reads past the cache (harness does, for a file not in it) would leave it empty.
            fill_cache(&dir)?;
        }
        let mut cold_start = || -> Result<()> {
            if cold {
                eviction = Some(evict(&dir)?);
            }
            Ok(())
        };
        for _ in 0..args.runs.max(1) {
            cold_start()?;
            let mut run = timed(&mut harness_command()?)?;
            last.0 = std::mem::take(&mut run.stdout);
            harness.push(run);
            if let Some(binary) = &ccusage {
                cold_start()?;
                let mut run = timed(&mut ccusage_command(binary)?)?;
                last.1 = std::mem::take(&mut run.stdout);
                theirs.push(run);
            }
            cold_start()?;
            let mut run = timed(&mut floor_command()?)?;
            if floor.is_empty() {
                println!("floor: {}", run.stdout.trim());
            }
            run.stdout.clear();
            floor.push(run);
            cold_start()?;
            let mut run = timed(&mut read_command(cold)?)?;
            run.stdout.clear();
            bytes_alone.push(run);
        }
        let how = match eviction {
            Some(Eviction::DropCaches) => " (page cache dropped before each run)",
            Some(Eviction::Fadvise) => " (the history's files evicted before each run)",
            None => " (the history in the page cache)",
        };
        println!(
            "{mode}{how}: load average {before} before, {} after",
            load_average()
        );
        results.push((
            mode,
            medians(&harness),
            (!theirs.is_empty()).then(|| medians(&theirs)),
            medians(&floor),
            medians(&bytes_alone),
        ));
    }

    println!(
        "\nmedians of {} runs; {files} sessions, {gib:.2} GiB; {cores} cores",
        args.runs.max(1),
    );
    println!("| run | wall s | CPU s | GiB/s | peak RSS MiB |");
    println!("|---|---|---|---|---|");
    for (mode, harness, theirs, floor, bytes_alone) in &results {
        let (package, version) = CCUSAGE;
        let mut rows = vec![(format!("harness sessions list, {mode}"), *harness)];
        if let Some(theirs) = theirs {
            rows.push((format!("{package} {version} session, {mode}"), *theirs));
        }
        rows.push((format!("serde_json::Value pass, {mode}"), *floor));
        let how = if *mode == "cold" { "O_DIRECT, " } else { "" };
        rows.push((
            format!("the bytes alone ({how}8 threads, nothing parsed), {mode}"),
            *bytes_alone,
        ));
        for (name, m) in rows {
            println!(
                "| {name} | {:.2} | {:.2} | {:.2} | {:.1} |",
                m.wall,
                m.cpu,
                gib / m.wall,
                m.rss_mib
            );
        }
    }
    for (mode, harness, theirs, _, bytes_alone) in &results {
        println!(
            "{mode}: harness takes {:.2}x the wall time of reading the bytes alone",
            harness.wall / bytes_alone.wall
        );
        if let Some(theirs) = theirs {
            println!(
                "{mode}: ccusage / harness: {:.2}x wall, {:.2}x CPU; peak RSS {:.1} MiB against {:.1} MiB",
                theirs.wall / harness.wall,
                theirs.cpu / harness.cpu,
                harness.rss_mib,
                theirs.rss_mib
            );
        }
    }

    let codex_sessions = dir.join("codex").join("sessions");
    let mine = harness_tokens(&last.0, &codex_sessions)?;
    if mine.len() as u64 != files {
        bail!("{} sessions listed, {files} generated", mine.len());
    }
    if ccusage.is_some() {
        compare(&mine, &ccusage_tokens(&last.1)?)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_copy_moves_every_time() {
        let line = r#"{"timestamp":"2026-12-31T23:59:01.5Z","x":"é","t":"2026-01-01T00:00:00Z"}"#;
        assert_eq!(
            later(line, 1),
            r#"{"timestamp":"2027-01-01T00:59:01.5Z","x":"é","t":"2026-01-01T01:00:00Z"}"#
        );
        assert_eq!(later(line, 24 * 60), later(&later(line, 24 * 30), 24 * 30));
        assert_eq!(later("no time 2026-1", 5), "no time 2026-1");
    }
}
