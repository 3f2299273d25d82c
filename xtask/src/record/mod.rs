//! `cargo xtask record`: re-records the Claude Code and Codex corpora from the real binaries
//! against scripted API stand-ins on 127.0.0.1, and reports drift.
//!
//! ```text
//! cargo xtask record [--backend claude|codex] [--check] [--claude PATH | --codex PATH]
//!                    [--version V] [--out DIR] [SCENARIO...]
//! cargo xtask record --latest [--backend claude|codex]
//! ```
//!
//! - Without `--claude`/`--codex`, installs the corpus's version (or `--version V`) with npm
//!   into `CARGO_TARGET_DIR/record-cache/` (the target folder cargo reports) and runs the
//!   platform binary (about 400 MB each; needs Node.js and npm).
//! - Writes `NAME.jsonl` (stdout), `NAME.stderr` and `NAME.cmd` (argv, environment, working
//!   directory) into `fixtures/BACKEND/` (or `--out DIR`), then checks each fresh recording's
//!   normalized events against `fixtures/BACKEND/NAME.expected.jsonl` (ids, durations and
//!   costs neutralized, see [`drift`]) and prints one line per scenario. A new scenario has no
//!   expected file yet: it is reported, to be written with `harness normalize` and reviewed
//!   against the SPEC by hand.
//! - `--check` records into a temporary folder (removed afterwards; `--out DIR` keeps the
//!   recordings) and reports drift against the committed recordings: new or vanished
//!   top-level types, system subtypes, content block types, tool names, `tool_use_result`
//!   shapes, Codex item types, and any difference in the normalized events. Exits non-zero on
//!   drift.
//! - `--latest` asks npm for the newest published version of each backend (or of the one
//!   `--backend` names), installs it into a temporary folder, and runs `--check` with it: the
//!   drift report of a new release in one command.
//!
//! The parts: [`claude`] and [`codex`] run each binary; [`anthropic`] and [`openai`] are the
//! stand-ins, on the loopback HTTP server [`server`], which knows nothing of either API
//! ([`chat`] is the OpenAI chat-completions one, for agents that speak that API);
//! [`scenario`] is the Claude scenario format; [`drift`] the comparison; [`shared`] what every
//! backend's recorder does alike (the throwaway HOME, the scenario's files, the stand-in behind
//! its server and its notes, the `.cmd` file, the offline environment, a live run's events, the
//! comparison with the committed recording or the expected events). Not run in CI: it needs
//! npm, the network for the install, and a few minutes.
//!
//! `--backend acp` records ACP transcripts of Gemini CLI (`--acp`) and opencode (`acp`), each
//! driven by `harness run --backend acp`'s code path against the same stand-ins (see [`acp`]):
//! scenarios in `fixtures/acp/scenarios/`, reusing those two corpora's scenarios.
//!
//! `--backend claude-session` records Claude Code sessions driven through the library's own
//! session (`ClaudeHarness::session`) by a caller scripted per scenario (see
//! [`claude_session`]): scenarios in `fixtures/claude-session/scenarios/`, each session's
//! transcript and live outcomes in `fixtures/claude-session/`.
//!
//! `--backend opencode` records `opencode run` (see [`opencode`]) through the same Anthropic
//! stand-in: scenarios in `fixtures/opencode/scenarios/`, recordings (the corpus itself) in
//! `fixtures/opencode/`; `--claude PATH` then names an `opencode` binary, `--version` the
//! `opencode-ai` version (default [`opencode::OPENCODE_VERSION`]), `--rg PATH` the ripgrep.
//! `--backend opencode-sessions` records opencode sessions through `opencode serve` the same
//! way (see [`opencode_session`]): scenarios and recordings in `fixtures/opencode/sessions/`.
//!
//! `--backend pi` records `pi --mode json` (see [`pi`]) through the same Anthropic stand-in:
//! scenarios in `fixtures/pi/scenarios/`, recordings in `fixtures/pi/`; `--claude PATH` then
//! names a `pi` binary, `--version` the `@mariozechner/pi-coding-agent` version (default
//! [`pi::PI_VERSION`]), `--rg PATH` the ripgrep (and `$RECORD_FD` the fd) its `grep` and
//! `find` run. `--backend pi-session` records Pi sessions through `pi --mode rpc` the same
//! way (see [`pi_session`]): scenarios and recordings in `fixtures/pi-session/`.
//!
//! `--backend qwen` records Qwen Code's `--output-format stream-json` (see [`qwen`]) through the
//! chat-completions stand-in [`chat`]: scenarios in `fixtures/qwen/scenarios/`, recordings in
//! `fixtures/qwen/`; `--claude PATH` then names a `qwen` binary, `--version` the
//! `@qwen-code/qwen-code` version (default [`qwen::QWEN_VERSION`]). `--backend qwen-session`
//! records Qwen Code sessions through `qwen --acp` (see [`qwen_session`]): scenarios and
//! recordings in `fixtures/qwen-session/`.
//!
//! `--backend copilot` records `copilot -p --output-format json` (see [`copilot`]) offline
//! through the chat-completions stand-in ([`chat`]): scenarios in
//! `fixtures/copilot/scenarios/`, recordings in `fixtures/copilot/`; `--claude PATH` then
//! names a `copilot` binary, `--version` the `@github/copilot` version (default
//! [`copilot::COPILOT_VERSION`]). `--backend copilot-session` records Copilot's sessions
//! through `copilot --acp` (see [`copilot_session`]) into `fixtures/copilot-session/`.

pub mod acp;
pub mod acp_session;
pub mod anthropic;
pub mod chat;
pub mod claude;
pub mod claude_session;
pub mod codex;
pub mod codex_session;
pub mod copilot;
pub mod copilot_session;
pub mod drift;
pub mod gemini;
pub mod gemini_api;
pub mod openai;
pub mod opencode;
pub mod opencode_session;
pub mod pi;
pub mod pi_session;
pub mod procs;
pub mod qwen;
pub mod qwen_session;
pub mod scenario;
pub mod server;
pub mod shared;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// Which agent's corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Claude Code (`fixtures/claude/`).
    Claude,
    /// Claude Code sessions driven through `ClaudeHarness::session` (`fixtures/claude-session/`).
    ClaudeSession,
    /// Codex (`fixtures/codex/`).
    Codex,
    /// Codex sessions through `codex app-server` (`fixtures/codex-app-server/`).
    CodexSession,
    /// opencode (`fixtures/opencode/`).
    Opencode,
    /// opencode sessions through `opencode serve` (`fixtures/opencode/sessions/`).
    OpencodeSessions,
    /// Gemini CLI (`fixtures/gemini/`).
    Gemini,
    /// ACP agents (`fixtures/acp/`): Gemini CLI `--acp` and opencode `acp`.
    Acp,
    /// ACP sessions (`fixtures/acp-session/`): Gemini CLI and opencode, several turns each,
    /// driven through `Backend::session` by a scripted caller.
    AcpSession,
    /// Pi (`fixtures/pi/`).
    Pi,
    /// Qwen Code (`fixtures/qwen/`).
    Qwen,
    /// Qwen Code sessions through `qwen --acp` (`fixtures/qwen-session/`), driven through
    /// `Backend::session` by a scripted caller.
    QwenSession,
    /// Pi sessions through `pi --mode rpc` (`fixtures/pi-session/`), driven through
    /// `Backend::session` by a scripted caller.
    PiSession,
    /// GitHub Copilot CLI (`fixtures/copilot/`).
    Copilot,
    /// GitHub Copilot CLI sessions through `copilot --acp` (`fixtures/copilot-session/`),
    /// driven through `Backend::session` by a scripted caller.
    CopilotSession,
}

/// The arguments of `cargo xtask record`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which corpus to record (default: claude; with --latest, every one).
    #[arg(long, value_enum)]
    backend: Option<Backend>,
    /// Record into a temporary folder and report drift against the committed recordings;
    /// exit 1 on drift.
    #[arg(long)]
    check: bool,
    /// Install the newest published version(s) into a temporary folder and report their drift
    /// (implies --check).
    #[arg(long, conflicts_with_all = ["version", "claude", "codex", "gemini", "out"])]
    latest: bool,
    /// A Claude Code binary to record with, instead of the installed corpus version.
    #[arg(long, value_name = "PATH", conflicts_with = "codex")]
    claude: Option<PathBuf>,
    /// A Codex binary to record with (implies --backend codex unless codex-session).
    #[arg(long, value_name = "PATH")]
    codex: Option<PathBuf>,
    /// A Gemini CLI binary to record with (implies --backend gemini).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["claude", "codex"])]
    gemini: Option<PathBuf>,
    /// The npm version to install and record with (default: the corpus's version).
    #[arg(long, value_name = "V")]
    version: Option<String>,
    /// Where to write the recordings (default: fixtures/BACKEND/; with --check, a temporary
    /// folder).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The ripgrep opencode's runs get (default: `$RECORD_RG`, else `rg` on PATH).
    #[arg(long, value_name = "PATH")]
    rg: Option<PathBuf>,
    /// Also keep each run's stored session (Claude Code's `~/.claude/projects/` transcripts,
    /// Codex's `~/.codex/sessions/` rollouts, opencode's database, Gemini CLI's
    /// `~/.gemini/tmp/` chats, Pi's `~/.pi/agent/sessions/` files, Qwen Code's
    /// `~/.qwen/projects/` chats, Copilot's `~/.copilot/session-state/` folders) beside its live
    /// stream, in `fixtures/sessions/BACKEND/` (or `--out DIR`): `NAME.jsonl` and `NAME.stderr`
    /// are the live stream, `NAME/` the files the binary stored. Claude, Codex, opencode,
    /// Gemini CLI, Pi, Qwen Code and Copilot only.
    #[arg(long)]
    sessions: bool,
    /// Only these scenarios (default: all).
    #[arg(value_name = "SCENARIO")]
    names: Vec<String>,
}

/// What one backend's run is asked to do.
#[derive(Debug, Default, Clone)]
pub(crate) struct Options {
    /// The binary to run; installed from npm when `None`.
    binary: Option<PathBuf>,
    /// The npm version to install.
    version: Option<String>,
    /// Where recordings go.
    out: Option<PathBuf>,
    /// Report drift instead of re-recording the fixtures.
    check: bool,
    /// The scenarios, all when empty.
    names: Vec<String>,
    /// The ripgrep opencode's runs get.
    rg: Option<PathBuf>,
    /// Keep the stored sessions of each run (`--sessions`).
    sessions: bool,
}

/// Entry point of `cargo xtask record`.
pub fn record(args: Args) -> Result<()> {
    let mut options = Options {
        binary: args
            .claude
            .clone()
            .or(args.codex.clone())
            .or(args.gemini.clone()),
        version: args.version.clone(),
        out: args.out.clone(),
        check: args.check || args.latest,
        names: args.names.clone(),
        rg: args.rg.clone(),
        sessions: args.sessions,
    };
    let backend = match (args.backend, &args.codex) {
        (Some(Backend::Claude), Some(_)) => {
            bail!("--codex names a Codex binary: not with --backend claude")
        }
        (Some(Backend::CodexSession), Some(_)) => Some(Backend::CodexSession),
        (_, Some(_)) => Some(Backend::Codex),
        (_, None) if args.gemini.is_some() => Some(Backend::Gemini),
        (backend, None) => backend,
    };
    if args.sessions
        && !matches!(
            backend.unwrap_or(Backend::Claude),
            Backend::Claude
                | Backend::Codex
                | Backend::Opencode
                | Backend::Gemini
                | Backend::Pi
                | Backend::Qwen
                | Backend::Copilot
        )
    {
        bail!(
            "--sessions keeps the stored sessions of claude, codex, opencode, gemini, pi, qwen \
             and copilot only"
        );
    }
    if !args.latest {
        return match backend.unwrap_or(Backend::Claude) {
            Backend::Claude => claude::record(&options),
            Backend::ClaudeSession => claude_session::record(&options),
            Backend::Codex => codex::record(&options),
            Backend::CodexSession => codex_session::record(&options),
            Backend::Opencode => opencode::record(&options),
            Backend::OpencodeSessions => opencode_session::record(&options),
            Backend::Gemini => gemini::record(&options),
            Backend::Acp => acp::record(&options),
            Backend::AcpSession => acp_session::record(&options),
            Backend::Pi => pi::record(&options),
            Backend::Qwen => qwen::record(&options),
            Backend::QwenSession => qwen_session::record(&options),
            Backend::PiSession => pi_session::record(&options),
            Backend::Copilot => copilot::record(&options),
            Backend::CopilotSession => copilot_session::record(&options),
        };
    }
    if matches!(
        backend,
        Some(Backend::Acp | Backend::AcpSession | Backend::CopilotSession | Backend::QwenSession)
    ) {
        bail!("--latest: the acp corpus records the gemini and opencode corpora's versions");
    }
    if backend == Some(Backend::CodexSession) {
        bail!("--latest: the codex-session corpus records the codex corpus's version");
    }
    if backend == Some(Backend::ClaudeSession) {
        bail!("--latest: use --backend claude-session --version V --check");
    }
    let backends = match backend {
        Some(one) => vec![one],
        None => vec![
            Backend::Claude,
            Backend::Codex,
            Backend::Opencode,
            Backend::Gemini,
            Backend::Pi,
            Backend::Qwen,
            Backend::Copilot,
        ],
    };
    let cache = tempfile::Builder::new()
        .prefix("harness-record-latest-")
        .tempdir()
        .context("creating a temporary folder for the install")?;
    let mut failed = Vec::new();
    for backend in backends {
        let (package, current) = match backend {
            Backend::Claude => (claude::PACKAGE, claude::CLAUDE_VERSION),
            Backend::Codex => (codex::PACKAGE, codex::CODEX_VERSION),
            Backend::Opencode => (opencode::PACKAGE, opencode::OPENCODE_VERSION),
            Backend::Gemini => (gemini::PACKAGE, gemini::GEMINI_VERSION),
            Backend::Pi => (pi::PACKAGE, pi::PI_VERSION),
            Backend::Qwen => (qwen::PACKAGE, qwen::QWEN_VERSION),
            Backend::Copilot => (copilot::PACKAGE, copilot::COPILOT_VERSION),
            Backend::Acp
            | Backend::AcpSession
            | Backend::CodexSession
            | Backend::ClaudeSession
            | Backend::OpencodeSessions
            | Backend::PiSession
            | Backend::CopilotSession
            | Backend::QwenSession => continue,
        };
        let newest = newest_version(package)?;
        println!("{package}: newest {newest}, fixtures recorded with {current}");
        let binary = match backend {
            Backend::Claude => claude::install(cache.path(), &newest)?,
            Backend::Codex => codex::install(cache.path(), &newest)?,
            Backend::Opencode => opencode::install(cache.path(), &newest)?,
            Backend::Gemini => gemini::install(cache.path(), &newest)?,
            Backend::Pi => pi::install(cache.path(), &newest)?,
            Backend::Qwen => qwen::install(cache.path(), &newest)?,
            Backend::Copilot => copilot::install(cache.path(), &newest)?,
            Backend::Acp
            | Backend::AcpSession
            | Backend::CodexSession
            | Backend::ClaudeSession
            | Backend::OpencodeSessions
            | Backend::PiSession
            | Backend::CopilotSession
            | Backend::QwenSession => continue,
        };
        options.binary = Some(binary);
        let result = match backend {
            Backend::Claude => claude::record(&options),
            Backend::Codex => codex::record(&options),
            Backend::Opencode => opencode::record(&options),
            Backend::Gemini => gemini::record(&options),
            Backend::Pi => pi::record(&options),
            Backend::Qwen => qwen::record(&options),
            Backend::Copilot => copilot::record(&options),
            Backend::Acp
            | Backend::AcpSession
            | Backend::CodexSession
            | Backend::ClaudeSession
            | Backend::OpencodeSessions
            | Backend::PiSession
            | Backend::CopilotSession
            | Backend::QwenSession => continue,
        };
        if let Err(e) = result {
            println!("{package}@{newest}: {e:#}");
            failed.push(format!("{package}@{newest}"));
        }
    }
    if !failed.is_empty() {
        bail!(
            "drift on {}; to promote a release see README \"Re-recording the fixtures\"",
            failed.join(", ")
        );
    }
    Ok(())
}

/// The newest published version of an npm package (`npm view PACKAGE version`).
fn newest_version(package: &str) -> Result<String> {
    let output = Command::new("npm")
        .args(["view", package, "version"])
        .output()
        .context("running npm (Node.js and npm are needed to record)")?;
    let version = String::from_utf8_lossy(&output.stdout).trim().to_string();
    if !output.status.success() || version.is_empty() || version.contains(char::is_whitespace) {
        bail!(
            "npm view {package} version failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(version)
}

/// Where installed binaries are kept between runs: `record-cache/` in the target folder.
pub(crate) fn cache_dir() -> PathBuf {
    crate::target_dir().join("record-cache")
}

/// The folder recordings go to: `--out`, a temporary folder for `--check` (removed when
/// dropped), or the fixtures folder.
pub(crate) struct Output {
    path: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

impl Output {
    fn new(options: &Options, fixtures_dir: &Path) -> Result<Output> {
        // `--sessions` keeps the live streams beside the stored sessions, never over the
        // backend's own recordings: `fixtures/sessions/BACKEND/`.
        let sessions_dir;
        let fixtures_dir = if options.sessions {
            let backend = fixtures_dir.file_name().unwrap_or_default();
            sessions_dir = fixtures::root().join("sessions").join(backend);
            sessions_dir.as_path()
        } else {
            fixtures_dir
        };
        let (path, temp) = match (&options.out, options.check) {
            (Some(out), _) => (out.clone(), None),
            (None, true) => {
                let temp = tempfile::Builder::new()
                    .prefix("harness-record-check-")
                    .tempdir()?;
                (temp.path().to_path_buf(), Some(temp))
            }
            (None, false) => (fixtures_dir.to_path_buf(), None),
        };
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Output { path, _temp: temp })
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// The per-scenario lines and the summary of one backend's run.
pub(crate) struct Report {
    check: bool,
    ran: usize,
    skipped: usize,
    /// New scenarios whose events were written for review (`NAME.unreviewed.jsonl`).
    unreviewed: usize,
    failures: Vec<String>,
}

impl Report {
    fn new(check: bool) -> Report {
        Report {
            check,
            ran: 0,
            skipped: 0,
            unreviewed: 0,
            failures: Vec::new(),
        }
    }

    fn skip(&mut self, name: &str, why: &str) {
        println!("{name}: skipped: {why}");
        self.skipped += 1;
    }

    fn add(&mut self, name: &str, about: &str, problems: Vec<String>) {
        self.ran += 1;
        if problems.is_empty() {
            println!("{name}: ok");
        } else {
            println!("{name} ({about}): {} difference(s)", problems.len());
            for problem in problems.iter().take(12) {
                println!("    {problem}");
            }
            self.failures.push(name.to_string());
        }
        let _ = std::io::stdout().flush();
    }

    fn finish(self, backend: &str, out: &Path) -> Result<()> {
        let what = if self.check {
            "without drift"
        } else {
            "reproducing the golden events"
        };
        let mut skipped = if self.skipped > 0 {
            format!(" ({} skipped)", self.skipped)
        } else {
            String::new()
        };
        if self.unreviewed > 0 {
            let n = self.unreviewed;
            skipped.push_str(&format!(
                " ({n} new, events in NAME.unreviewed.jsonl to review)"
            ));
        }
        let place = if self.check {
            String::new()
        } else {
            format!("; recordings in {}", out.display())
        };
        println!(
            "{}/{} {backend} scenarios {what}{skipped}{place}",
            self.ran - self.failures.len(),
            self.ran,
        );
        if !self.failures.is_empty() {
            bail!(
                "{} scenario(s) differ: {}",
                self.failures.len(),
                self.failures.join(", ")
            );
        }
        Ok(())
    }
}

/// The differences between a fresh recording's events and the expected file; `old_raw` is
/// the recording the expected file was written from (its ids are neutralized with it).
fn golden(expected: &Path, old_raw: &str, events: &str, raw: &str) -> Vec<String> {
    if !expected.exists() {
        return vec![format!(
            "no {}: write it with `harness normalize` and review it against the SPEC",
            expected.display()
        )];
    }
    drift::event_drift(&read(expected), old_raw, events, raw)
        .into_iter()
        .map(|p| format!("golden: {p}"))
        .collect()
}

/// Copies the folder `from` (the stored sessions a run left in its throwaway HOME) into `to`,
/// keeping the relative paths; nothing when `from` does not exist.
pub(crate) fn keep_sessions(from: &Path, to: &Path) -> Result<()> {
    if !from.exists() {
        return Ok(());
    }
    if to.exists() {
        std::fs::remove_dir_all(to).with_context(|| format!("removing {}", to.display()))?;
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            keep_sessions(&entry.path(), &target)?;
        } else if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// The scenario names to record: those `given`, else every `NAME.json` in `dir`, sorted.
fn scenario_names(given: &[String], dir: &Path) -> Result<Vec<String>> {
    if !given.is_empty() {
        return Ok(given.to_vec());
    }
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        if let Some(name) = entry?
            .path()
            .file_name()
            .and_then(|f| f.to_str())
            .and_then(|f| f.strip_suffix(".json"))
        {
            names.push(name.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// A file's text, empty when it cannot be read.
fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Installs `package` (`name@version`) with npm into `cache` unless `binary`, the file it
/// provides, is already there; returns `binary`.
pub(crate) fn npm_install(cache: &Path, package: &str, binary: PathBuf) -> Result<PathBuf> {
    if binary.exists() {
        return Ok(binary);
    }
    std::fs::create_dir_all(cache)?;
    eprintln!("installing {package} into {}", cache.display());
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
        ])
        .arg(cache)
        .arg(package)
        .status()
        .context("running npm (Node.js and npm are needed to record)")?;
    if !status.success() || !binary.exists() {
        bail!(
            "npm install failed ({status}); expected {}",
            binary.display()
        );
    }
    Ok(binary)
}

/// Appends a request's body (one line) to `path`, when there is one.
pub(crate) fn dump_request(path: Option<&Path>, request: &server::Request) {
    if let Some(path) = path
        && let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
    {
        let _ = file.write_all(&request.body);
        let _ = file.write_all(b"\n");
    }
}

/// A recorded agent's process under a watchdog: killed once `limit` has passed since
/// `started`, its standard error read on a thread of its own (so neither pipe can stall it).
pub(crate) struct Watched {
    child: std::sync::Arc<std::sync::Mutex<std::process::Child>>,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    watchdog: std::thread::JoinHandle<bool>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

impl Watched {
    /// Takes `child`'s stderr pipe (its stdout stays with the caller) and starts the watchdog.
    pub(crate) fn start(
        mut child: std::process::Child,
        started: std::time::Instant,
        limit: std::time::Duration,
    ) -> Result<Watched> {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};

        let mut pipe = child.stderr.take().context("no stderr pipe")?;
        let stderr = std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = std::io::Read::read_to_end(&mut pipe, &mut bytes);
            bytes
        });
        let child = Arc::new(Mutex::new(child));
        let done = Arc::new(AtomicBool::new(false));
        let (watched, watch_done) = (Arc::clone(&child), Arc::clone(&done));
        let watchdog = std::thread::spawn(move || {
            while !watch_done.load(Ordering::Relaxed) {
                if started.elapsed() > limit {
                    if let Ok(mut child) = watched.lock() {
                        let _ = child.kill();
                    }
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            false
        });
        Ok(Watched {
            child,
            done,
            watchdog,
            stderr,
        })
    }

    /// The process, to close its stdin or interrupt it while it runs.
    pub(crate) fn child(&self) -> &std::sync::Mutex<std::process::Child> {
        &self.child
    }

    /// Waits for the process to end: its status, whether the watchdog killed it, its stderr.
    pub(crate) fn wait(self) -> Result<(std::process::ExitStatus, bool, Vec<u8>)> {
        let status = loop {
            if let Ok(mut child) = self.child.lock()
                && let Some(status) = child.try_wait()?
            {
                break status;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        let timed_out = self.watchdog.join().unwrap_or(false);
        let stderr = self.stderr.join().unwrap_or_default();
        Ok((status, timed_out, stderr))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Cli::try_parse_from(std::iter::once("record").chain(args.iter().copied())).map(|c| c.args)
    }

    #[test]
    fn options() {
        let a = parse(&["--check", "--claude", "/x/claude", "a_plain_text"]).unwrap();
        assert!(a.check);
        assert_eq!(a.claude, Some(PathBuf::from("/x/claude")));
        assert_eq!(a.names, ["a_plain_text"]);
        assert!(parse(&["--bogus"]).is_err());
        assert_eq!(
            parse(&["--backend", "codex"]).unwrap().backend,
            Some(Backend::Codex)
        );
        assert!(parse(&["--backend", "no-such"]).is_err());
        assert_eq!(
            parse(&["--backend", "gemini"]).unwrap().backend,
            Some(Backend::Gemini)
        );
        assert!(parse(&["--gemini", "/a", "--codex", "/b"]).is_err());
        assert!(parse(&["--latest", "--version", "1.0.0"]).is_err());
        assert!(parse(&["--claude", "/a", "--codex", "/b"]).is_err());
        let codex = parse(&["--codex", "/x/codex"]).unwrap();
        assert_eq!(codex.codex, Some(PathBuf::from("/x/codex")));
    }

    #[test]
    fn check_recordings_go_to_a_folder_that_is_removed() {
        let options = Options {
            check: true,
            ..Options::default()
        };
        let out = Output::new(&options, Path::new("/nonexistent")).unwrap();
        let path = out.path().to_path_buf();
        std::fs::write(path.join("a.jsonl"), "{}").unwrap();
        drop(out);
        assert!(!path.exists(), "{} left behind", path.display());
        let fixtures = tempfile::tempdir().unwrap();
        let kept = Output::new(&Options::default(), fixtures.path()).unwrap();
        assert_eq!(kept.path(), fixtures.path());
    }

    #[test]
    fn a_scenario_without_expected_events_is_reported() {
        let problems = golden(Path::new("/nonexistent/x.expected.jsonl"), "", "", "");
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("no /nonexistent/x.expected.jsonl"));
    }

    #[test]
    fn the_watchdog_kills_a_run_past_its_limit_and_keeps_its_stderr() {
        use std::process::{Command, Stdio};
        use std::time::{Duration, Instant};

        let spawn = |script: &str| {
            Command::new("sh")
                .args(["-c", script])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let started = Instant::now();
        let slow =
            super::Watched::start(spawn("exec sleep 30"), started, Duration::from_millis(200));
        let (status, timed_out, _) = slow.unwrap().wait().unwrap();
        assert!(timed_out && !status.success());
        let quick = super::Watched::start(
            spawn("echo oops >&2"),
            Instant::now(),
            Duration::from_secs(60),
        );
        let (status, timed_out, stderr) = quick.unwrap().wait().unwrap();
        assert!(!timed_out && status.success());
        assert_eq!(stderr, b"oops\n");
    }
}
