//! Stored sessions: Claude Code's transcripts and Codex's rollouts, found on disk, decoded in
//! parallel, summed up (rules in `docs/sessions.md`).
//!
//! ```no_run
//! use harness_agents::sessions::{Locations, discover, scan};
//! use harness_agents::prices::PriceTable;
//!
//! let files = discover(&Locations::from_env());
//! for session in scan(files, &PriceTable::bundled(), 0) {
//!     let session = session?;
//!     println!("{} {} {:?}", session.backend, session.id, session.cost_usd);
//! }
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! Files are streamed line by line (memory holds one line and what the decoder keeps pending,
//! never a file). `list` and `stats` ([`summarize`]) read only the lines whose figures count
//! (see [`Tally`]); `show` decodes every line. Sessions are read on one thread per core, and
//! at least [`MIN_THREADS`]: a cold read waits on the disk, which serves several reads at once
//! faster than one.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

mod chunks;

use crate::prices::{PriceTable, Tokens, round_cost};
use chunks::{CHUNK, Chunks};
use harness_agents_claude::{TranscriptDecoder, TranscriptNormalizer, TranscriptTally};
use harness_agents_codex::{RolloutNormalizer, RolloutTally};
use harness_agents_core::backend::Driver;
use harness_agents_core::stored::{Accounting, Tally};
use harness_agents_core::{Event, Normalizer, NormalizerConfig, Outcome};
use serde::{Deserialize, Serialize};

/// Where each agent keeps its sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// Claude Code's `projects` folders: each folder of `$CLAUDE_CONFIG_DIR` (comma-separated;
    /// a configuration folder, or its `projects/` itself), else `$XDG_CONFIG_HOME/claude/projects`
    /// (`~/.config/claude/projects`, where some releases of Claude Code keep them) and
    /// `~/.claude/projects`, the ones that exist.
    pub claude: Vec<PathBuf>,
    /// Codex's `sessions` and `archived_sessions` folders, under `$CODEX_HOME`, else under
    /// `~/.codex`.
    pub codex: Vec<PathBuf>,
}

impl Locations {
    /// The default locations, from `CLAUDE_CONFIG_DIR`, `XDG_CONFIG_HOME`, `CODEX_HOME` and
    /// `HOME`.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let home = var("HOME").map(PathBuf::from);
        let claude = match var("CLAUDE_CONFIG_DIR") {
            Some(dirs) => dirs
                .to_string_lossy()
                .split(',')
                .filter(|d| !d.trim().is_empty())
                .map(|d| Self::claude_projects(Path::new(d.trim())))
                .collect(),
            None => {
                let config = var("XDG_CONFIG_HOME")
                    .map(PathBuf::from)
                    .or_else(|| home.as_ref().map(|h| h.join(".config")));
                let found: Vec<PathBuf> = config
                    .map(|c| c.join("claude/projects"))
                    .into_iter()
                    .chain(home.iter().map(|h| h.join(".claude/projects")))
                    .collect();
                let mut claude = Vec::new();
                for dir in found {
                    // Both may be one folder (a link): read it once.
                    let real = std::fs::canonicalize(&dir).ok();
                    let seen = claude
                        .iter()
                        .any(|d: &PathBuf| real.is_some() && std::fs::canonicalize(d).ok() == real);
                    if dir.is_dir() && !seen {
                        claude.push(dir);
                    }
                }
                if claude.is_empty() {
                    claude.extend(home.iter().map(|h| h.join(".claude/projects")));
                }
                claude
            }
        };
        let codex = match var("CODEX_HOME") {
            Some(dir) => Self::codex_sessions(Path::new(&dir)),
            None => home
                .iter()
                .flat_map(|h| Self::codex_sessions(&h.join(".codex")))
                .collect(),
        };
        Locations { claude, codex }
    }

    /// The `projects` folder of a Claude Code configuration folder, or `dir` itself when it is
    /// one (its name is `projects`).
    pub fn claude_projects(dir: &Path) -> PathBuf {
        if dir.file_name().is_some_and(|n| n == "projects") {
            dir.to_path_buf()
        } else {
            dir.join("projects")
        }
    }

    /// The folders of rollouts under a Codex home: `sessions` and `archived_sessions`.
    pub fn codex_sessions(home: &Path) -> Vec<PathBuf> {
        vec![home.join("sessions"), home.join("archived_sessions")]
    }
}

/// Which agent stored a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Backend::Claude => "claude",
            Backend::Codex => "codex",
        })
    }
}

/// The files of one stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFiles {
    /// Who wrote it.
    pub backend: Backend,
    /// The session's id: the file name without `.jsonl` (Claude), or the id at the end of a
    /// rollout's name (Codex).
    pub id: String,
    /// The main transcript or rollout.
    pub main: PathBuf,
    /// Claude sub-agent transcripts, each with the tool use that started it when known (T8).
    pub subagents: Vec<(PathBuf, Option<String>)>,
    /// The project folder name Claude Code filed it under.
    pub project_dir: Option<String>,
}

/// Finds every stored session under `locations`, in path order.
pub fn discover(locations: &Locations) -> Vec<SessionFiles> {
    let mut found = Vec::new();
    for root in &locations.claude {
        let Ok(projects) = std::fs::read_dir(root) else {
            continue;
        };
        let mut projects: Vec<PathBuf> = projects.flatten().map(|e| e.path()).collect();
        projects.sort();
        for project in projects.into_iter().filter(|p| p.is_dir()) {
            let Ok(files) = std::fs::read_dir(&project) else {
                continue;
            };
            let mut files: Vec<PathBuf> = files.flatten().map(|e| e.path()).collect();
            files.sort();
            for main in files {
                if main.extension().is_none_or(|e| e != "jsonl") || !main.is_file() {
                    continue;
                }
                let Some(id) = main.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                    continue;
                };
                let subagents = subagent_files(&project.join(&id).join("subagents"));
                let project_dir = project
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                found.push(SessionFiles {
                    backend: Backend::Claude,
                    id,
                    main,
                    subagents,
                    project_dir,
                });
            }
        }
    }
    for root in &locations.codex {
        let mut rollouts = Vec::new();
        walk(root, &mut rollouts, 0);
        rollouts.sort();
        for main in rollouts {
            let name = main
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !name.starts_with("rollout-") {
                continue;
            }
            // rollout-YYYY-MM-DDTHH-MM-SS-<id>: the id is what follows the 19-character time.
            let id = name
                .get("rollout-".len() + 20..)
                .unwrap_or(&name)
                .to_string();
            found.push(SessionFiles {
                backend: Backend::Codex,
                id,
                main,
                subagents: Vec::new(),
                project_dir: None,
            });
        }
    }
    found
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() && depth < 6 {
            walk(&path, out, depth + 1);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
}

/// The sub-agent transcripts in `dir`, each with the `toolUseId` of its `.meta.json`.
fn subagent_files(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let meta = path.with_extension("meta.json");
            let tool_use = std::fs::read(&meta)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                .and_then(|v| v.get("toolUseId")?.as_str().map(str::to_string));
            (path, tool_use)
        })
        .collect()
}

/// Tokens and cost of one model, or of one tool.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Usage {
    /// Input tokens not read from the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Priced cost in US dollars; absent when a model has no price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    fn of(models: &BTreeMap<String, Tokens>, prices: &PriceTable) -> Usage {
        let mut usage = Usage {
            cost_usd: Some(0.0),
            ..Usage::default()
        };
        for (model, tokens) in models {
            usage.add_tokens(tokens);
            if *tokens != Tokens::default() {
                usage.cost_usd = match (usage.cost_usd, prices.cost(model, tokens)) {
                    (Some(a), Some(b)) => Some(round_cost(a + b)),
                    _ => None,
                };
            }
        }
        usage
    }

    fn add_tokens(&mut self, tokens: &Tokens) {
        self.input_tokens += tokens.input;
        self.output_tokens += tokens.output;
        self.cache_read_input_tokens += tokens.cache_read;
        self.cache_creation_input_tokens += tokens.cache_write;
    }

    /// Adds another usage (a cost stays known only while both are).
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(round_cost(a + b)),
            _ => None,
        };
    }
}

/// One stored session, summed up: a row of `harness sessions list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Session {
    /// Who wrote it.
    pub backend: Backend,
    /// Its id (see [`SessionFiles::id`]).
    pub id: String,
    /// The working directory it names, else Claude Code's project folder name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// The main file.
    pub path: String,
    /// First timestamp (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// Last timestamp (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// Milliseconds from the first to the last timestamp.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// User prompts.
    pub turns: u64,
    /// Model messages (API responses).
    pub messages: u64,
    /// Input tokens not read from the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the cache.
    pub cache_creation_input_tokens: u64,
    /// Cost in US dollars: the agent's own figure when it stored one, else priced from the
    /// table; absent when a model has no price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Which figures were computed rather than stored by the agent (`tokens`, `cost_usd`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub computed: Vec<String>,
    /// The first prompt, cut to 200 characters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_prompt: Option<String>,
    /// Messages, tokens and priced cost by model.
    pub models: BTreeMap<String, ModelUsage>,
    /// Uses, tokens and priced cost by tool (each use charged an equal share of the model
    /// message that made it).
    pub tools: BTreeMap<String, ToolUsage>,
}

/// One model's figures in a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ModelUsage {
    /// Model messages (API responses) of this model.
    pub messages: u64,
    /// Its tokens and priced cost.
    #[serde(flatten)]
    pub usage: Usage,
}

/// One tool's figures in a session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolUsage {
    /// Times used.
    pub uses: u64,
    /// Its share of tokens and cost.
    #[serde(flatten)]
    pub usage: Usage,
}

/// Reads `path` line by line into `normalizer`; events are handed to `sink` as they come.
fn feed(
    path: &Path,
    normalizer: &mut dyn Normalizer,
    sink: &mut dyn FnMut(Event),
) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut line = Vec::new();
    let mut events = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        normalizer.push_line(&line, &mut events);
        for event in events.drain(..) {
            sink(event);
        }
    }
    Ok(())
}

/// One file of a session decoded: its events go to `sink`; its outcome and accounting come
/// back.
fn decode_file(
    backend: Backend,
    path: &Path,
    thread: Option<String>,
    sink: &mut dyn FnMut(Event),
) -> io::Result<(Outcome, Accounting)> {
    let config = NormalizerConfig::default();
    match backend {
        Backend::Claude => {
            let decoder = TranscriptDecoder::for_subagent(&config, thread);
            let mut normalizer: TranscriptNormalizer = Driver::with_decoder(decoder, config);
            feed(path, &mut normalizer, sink)?;
            let outcome = normalizer.finish_each(sink);
            Ok((outcome, normalizer.decoder().accounting()))
        }
        Backend::Codex => {
            let mut normalizer = RolloutNormalizer::new(config);
            feed(path, &mut normalizer, sink)?;
            let outcome = normalizer.finish_each(sink);
            Ok((outcome, normalizer.decoder().accounting()))
        }
    }
}

/// A session's events (its main file's, then each sub-agent's) and the outcome of each file.
pub fn events(files: &SessionFiles, sink: &mut dyn FnMut(Event)) -> io::Result<Vec<Outcome>> {
    let mut outcomes = Vec::new();
    let (outcome, _) = decode_file(files.backend, &files.main, None, sink)?;
    outcomes.push(outcome);
    for (path, thread) in &files.subagents {
        let (outcome, _) = decode_file(files.backend, path, thread.clone(), sink)?;
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// Reads `path` into `tally`: every line it wants, and the lines passed over offered back for
/// the last timestamp (see [`Tally`]). `buf` holds the chunk buffer, reused from file to file.
fn tally_file<T: Tally>(
    path: &Path,
    mut tally: T,
    buf: &mut Vec<u8>,
) -> io::Result<(Option<String>, Accounting)> {
    let mut chunks = Chunks::open(path, buf)?;
    // Where the lines after the last one read that had a timestamp start, and whether one of
    // them was passed over: only those can hold a later timestamp.
    let (mut floor, mut passed) = (0u64, false);
    let mut line = |tally: &mut T, line: &[u8], at: u64| {
        if !tally.wants(line) {
            passed = true;
        } else if tally.line(line) {
            floor = at + line.len() as u64 + 1;
            passed = false;
        }
    };
    // A line that runs past its chunk is assembled in `carry`; it starts at `carry_at`.
    let (mut carry, mut carry_at) = (Vec::new(), 0u64);
    // Where the chunk being split starts in the file.
    let mut base = 0u64;
    // The last chunk read: its start in the file and its length.
    let mut last = (0u64, 0usize);
    loop {
        let chunk = chunks.next()?;
        if chunk.is_empty() {
            break;
        }
        last = (base, chunk.len());
        let mut start = 0;
        if !carry.is_empty() {
            let Some(at) = memchr::memchr(b'\n', chunk) else {
                carry.extend_from_slice(chunk);
                base += chunk.len() as u64;
                continue;
            };
            carry.extend_from_slice(&chunk[..at]);
            line(&mut tally, &carry, carry_at);
            carry.clear();
            start = at + 1;
        }
        let from = start;
        for at in memchr::memchr_iter(b'\n', &chunk[from..]) {
            let end = from + at;
            line(&mut tally, &chunk[start..end], base + start as u64);
            start = end + 1;
        }
        if start < chunk.len() {
            carry_at = base + start as u64;
            carry.extend_from_slice(&chunk[start..]);
        }
        base += chunk.len() as u64;
    }
    if !carry.is_empty() {
        line(&mut tally, &carry, carry_at);
    }
    let end = base;
    if passed && floor < end {
        // The lines passed over are offered from what is still in memory, and only those
        // before it are read back: the file may have been read past the page cache.
        let (file, chunk) = chunks.last(last.1);
        let (from, held): (u64, &[u8]) = if !carry.is_empty() {
            (carry_at, &carry)
        } else if last.0 == 0 {
            (0, chunk)
        } else {
            // The chunk's first line may have started in an earlier chunk: it is left to the
            // reading back.
            match memchr::memchr(b'\n', chunk) {
                Some(at) => (last.0 + at as u64 + 1, &chunk[at + 1..]),
                None => (end, &[]),
            }
        };
        let from = from.max(floor);
        let held = &held[held.len() - (end - from) as usize..];
        if !offer_held(&mut tally, held) && floor < from {
            offer_back(file, &mut tally, floor, from)?;
        }
    }
    Ok(tally.finish())
}

/// Offers the lines of `held` (whole lines, the last one ending the file with or without a
/// newline), last first, to [`Tally::late_timestamp`]; `true` once one had a timestamp.
fn offer_held<T: Tally>(tally: &mut T, held: &[u8]) -> bool {
    let held = held.strip_suffix(b"\n").unwrap_or(held);
    if held.is_empty() {
        return false;
    }
    let mut hi = held.len();
    for at in memchr::memrchr_iter(b'\n', held) {
        if tally.late_timestamp(&held[at + 1..hi]) {
            return true;
        }
        hi = at;
    }
    tally.late_timestamp(&held[..hi])
}

/// Offers the lines of `file` between `floor` (a line's start) and `end` (where the reading
/// ended), last first, to [`Tally::late_timestamp`] until one has a timestamp. The bytes are
/// read back a chunk at a time, more for a longer line, so memory holds one line and a chunk
/// whatever the number of lines passed over.
fn offer_back<T: Tally>(file: &mut File, tally: &mut T, floor: u64, end: u64) -> io::Result<()> {
    // `data` holds the file's bytes from `lo`; the lines before `hi` are still to offer.
    let (mut data, mut lo, mut hi) = (Vec::new(), end, end);
    // A final newline ends the last line; it does not start an empty one (as when reading).
    let mut final_newline = true;
    loop {
        let len = (hi - lo) as usize;
        match memchr::memrchr(b'\n', &data[..len]) {
            Some(at) if final_newline && at + 1 == len => hi = lo + at as u64,
            Some(at) => {
                if tally.late_timestamp(&data[at + 1..len]) {
                    return Ok(());
                }
                hi = lo + at as u64;
            }
            None if lo == floor => {
                tally.late_timestamp(&data[..len]);
                return Ok(());
            }
            None => {
                let back = (len as u64).max(CHUNK as u64);
                let from = lo.saturating_sub(back).max(floor);
                let mut more = vec![0; (lo - from) as usize];
                io::Seek::seek(file, io::SeekFrom::Start(from))?;
                io::Read::read_exact(file, &mut more)?;
                more.extend_from_slice(&data[..len]);
                (data, lo) = (more, from);
                continue;
            }
        }
        final_newline = false;
    }
}

/// A session's figures from its files' tallies: its id (the main file's) and its accounting.
fn tally_session(
    files: &SessionFiles,
    buf: &mut Vec<u8>,
) -> io::Result<(Option<String>, Accounting)> {
    let (id, mut accounting) = match files.backend {
        Backend::Claude => tally_file(&files.main, TranscriptTally::new(), buf)?,
        Backend::Codex => tally_file(&files.main, RolloutTally::new(), buf)?,
    };
    for (path, thread) in &files.subagents {
        let (_, more) = match files.backend {
            Backend::Claude => {
                tally_file(path, TranscriptTally::for_subagent(thread.as_deref()), buf)?
            }
            Backend::Codex => tally_file(path, RolloutTally::new(), buf)?,
        };
        accounting.merge(more);
    }
    Ok((id, accounting))
}

/// Sums one session up: each file read for its figures only, as [`summarize_decoded`] sums it
/// up from every event (the same row, from far less reading: see [`Tally`]).
pub fn summarize(files: &SessionFiles, prices: &PriceTable) -> io::Result<Session> {
    summarize_with(files, prices, &mut Vec::new())
}

fn summarize_with(
    files: &SessionFiles,
    prices: &PriceTable,
    buf: &mut Vec<u8>,
) -> io::Result<Session> {
    let (id, accounting) = tally_session(files, buf)?;
    Ok(session(files, prices, id, accounting))
}

/// Decodes every line of one session, as `harness sessions show` does, and sums it up: the
/// reference [`summarize`] gives the same row as.
pub fn summarize_decoded(files: &SessionFiles, prices: &PriceTable) -> io::Result<Session> {
    let mut ignore = |_: Event| {};
    let (outcome, mut accounting) = decode_file(files.backend, &files.main, None, &mut ignore)?;
    for (path, thread) in &files.subagents {
        let (_, more) = decode_file(files.backend, path, thread.clone(), &mut ignore)?;
        accounting.merge(more);
    }
    Ok(session(files, prices, outcome.session_id, accounting))
}

/// The row of a session, from its id (when a file named one) and figures.
fn session(
    files: &SessionFiles,
    prices: &PriceTable,
    id: Option<String>,
    accounting: Accounting,
) -> Session {
    let tokens = accounting.tokens();
    let mut computed = Vec::new();
    if !accounting.reported_tokens {
        computed.push("tokens".to_string());
    }
    let cost_usd = match accounting.reported_cost {
        Some(cost) => Some(cost),
        None => {
            computed.push("cost_usd".to_string());
            prices.session_cost(&accounting)
        }
    };
    let models = accounting
        .models
        .iter()
        .map(|(model, tokens)| {
            let one = BTreeMap::from([(model.clone(), *tokens)]);
            let messages = accounting.model_messages.get(model).copied().unwrap_or(0);
            let usage = Usage::of(&one, prices);
            (model.clone(), ModelUsage { messages, usage })
        })
        .collect();
    let tools = accounting
        .tools
        .iter()
        .map(|(tool, tally)| {
            let usage = Usage::of(&tally.models, prices);
            (
                tool.clone(),
                ToolUsage {
                    uses: tally.uses,
                    usage,
                },
            )
        })
        .collect();
    let duration_ms = match (&accounting.first_timestamp, &accounting.last_timestamp) {
        (Some(a), Some(b)) => match (epoch_ms(a), epoch_ms(b)) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a)),
            _ => None,
        },
        _ => None,
    };
    Session {
        backend: files.backend,
        id: id.unwrap_or_else(|| files.id.clone()),
        project: accounting.cwd.clone().or(files.project_dir.clone()),
        path: files.main.display().to_string(),
        start: accounting.first_timestamp.clone(),
        end: accounting.last_timestamp.clone(),
        duration_ms,
        turns: accounting.prompts,
        messages: accounting.messages,
        input_tokens: tokens.input,
        output_tokens: tokens.output,
        cache_read_input_tokens: tokens.cache_read,
        cache_creation_input_tokens: tokens.cache_write,
        cost_usd,
        computed,
        first_prompt: accounting.first_prompt.clone(),
        models,
        tools,
    }
}

/// The fewest threads [`scan`] reads on by default, whatever the cores: on 2 cores, 8 threads
/// read a history cold in about three quarters of the time 2 take (`docs/performance.md`), and
/// cost nothing warm.
pub const MIN_THREADS: usize = 8;

/// Sums up every session, on `threads` threads (0: one per core, at least [`MIN_THREADS`]), in
/// the order given.
pub fn scan(
    files: Vec<SessionFiles>,
    prices: &PriceTable,
    threads: usize,
) -> Vec<io::Result<Session>> {
    let threads = match threads {
        0 => std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .max(MIN_THREADS),
        n => n,
    }
    .min(files.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<io::Result<Session>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut buf = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(one) = files.get(i) else {
                        break;
                    };
                    let session = summarize_with(one, prices, &mut buf);
                    if let Ok(mut results) = results.lock() {
                        results[i] = Some(session);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(io::Error::other("not scanned"))))
        .collect()
}

/// What a session's files were when it was summed up: each file's path, size and modification
/// time (nanoseconds since 1970). A cached row is reused only while this is unchanged.
fn stamp(files: &SessionFiles) -> Option<Vec<(String, u64, u128)>> {
    let mut stamp = Vec::new();
    for path in std::iter::once(&files.main).chain(files.subagents.iter().map(|(p, _)| p)) {
        let meta = std::fs::metadata(path).ok()?;
        let mtime = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        stamp.push((path.display().to_string(), meta.len(), mtime.as_nanos()));
    }
    Some(stamp)
}

/// One line of the cache file.
#[derive(Serialize, Deserialize)]
struct CacheEntry {
    stamp: Vec<(String, u64, u128)>,
    session: Session,
}

/// The first line of the cache file: its format and the prices its costs were made with.
#[derive(Serialize, Deserialize, PartialEq)]
struct CacheHeader {
    harness_sessions_cache: u32,
    prices: String,
}

/// [`scan`] with a cache file: a session whose files have the same paths, sizes and
/// modification times as when it was cached is not read again. The file is rewritten with
/// the sessions of this scan; one made with other prices (or unreadable) is ignored.
pub fn scan_cached(
    files: Vec<SessionFiles>,
    prices: &PriceTable,
    threads: usize,
    cache: &Path,
) -> io::Result<Vec<io::Result<Session>>> {
    let header = CacheHeader {
        harness_sessions_cache: 1,
        prices: format!("{prices:?}"),
    };
    let mut cached: std::collections::HashMap<String, Session> = Default::default();
    if let Ok(file) = File::open(cache) {
        let mut lines = BufReader::new(file).lines();
        let same = lines
            .next()
            .and_then(Result::ok)
            .and_then(|l| serde_json::from_str::<CacheHeader>(&l).ok())
            .is_some_and(|h| h == header);
        if same {
            for line in lines.map_while(Result::ok) {
                if let Ok(entry) = serde_json::from_str::<CacheEntry>(&line) {
                    if let Ok(key) = serde_json::to_string(&entry.stamp) {
                        cached.insert(key, entry.session);
                    }
                }
            }
        }
    }
    let stamps: Vec<Option<String>> = files
        .iter()
        .map(|f| stamp(f).and_then(|s| serde_json::to_string(&s).ok()))
        .collect();
    let mut results: Vec<Option<io::Result<Session>>> = stamps
        .iter()
        .map(|key| key.as_ref().and_then(|k| cached.remove(k)).map(Ok))
        .collect();
    let todo: Vec<usize> = (0..files.len()).filter(|&i| results[i].is_none()).collect();
    let fresh = scan(
        todo.iter().map(|&i| files[i].clone()).collect(),
        prices,
        threads,
    );
    for (i, session) in todo.into_iter().zip(fresh) {
        results[i] = Some(session);
    }
    let results: Vec<io::Result<Session>> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(io::Error::other("not scanned"))))
        .collect();
    if let Some(parent) = cache.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let temp = cache.with_extension("tmp");
    let mut out = io::BufWriter::new(File::create(&temp)?);
    serde_json::to_writer(&mut out, &header)?;
    io::Write::write_all(&mut out, b"\n")?;
    for (result, key) in results.iter().zip(&stamps) {
        let (Ok(session), Some(key)) = (result, key) else {
            continue;
        };
        let stamp: Vec<(String, u64, u128)> = serde_json::from_str(key)?;
        serde_json::to_writer(
            &mut out,
            &CacheEntry {
                stamp,
                session: session.clone(),
            },
        )?;
        io::Write::write_all(&mut out, b"\n")?;
    }
    io::Write::flush(&mut out)?;
    drop(out);
    std::fs::rename(&temp, cache)?;
    Ok(results)
}

/// Milliseconds since 1970 of an RFC 3339 UTC timestamp (`2026-01-02T03:04:05.678Z`).
pub fn epoch_ms(at: &str) -> Option<u64> {
    let b = at.as_bytes();
    let num =
        |from: usize, len: usize| -> Option<u64> { at.get(from..from + len)?.parse::<u64>().ok() };
    if b.len() < 19 || b[4] != b'-' || b[10] != b'T' {
        return None;
    }
    let days = days_from_civil(num(0, 4)? as i64, num(5, 2)?, num(8, 2)?)?;
    let secs = days * 86_400 + (num(11, 2)? * 3600 + num(14, 2)? * 60 + num(17, 2)?) as i64;
    let mut ms = 0;
    if b.get(19) == Some(&b'.') {
        let digits: String = at[20..]
            .chars()
            .take_while(char::is_ascii_digit)
            .take(3)
            .collect();
        ms = format!("{digits:0<3}").parse::<u64>().ok()?;
    }
    u64::try_from(secs).ok().map(|s| s * 1000 + ms)
}

/// Days since 1970-01-01 of a civil date.
fn days_from_civil(y: i64, m: u64, d: u64) -> Option<i64> {
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The ISO week (`2026-W01`) of an RFC 3339 timestamp.
pub fn iso_week(at: &str) -> Option<String> {
    let days = (epoch_ms(at)? / 86_400_000) as i64;
    // 1970-01-01 was a Thursday; ISO weeks start on Monday and belong to their Thursday's year.
    let weekday = (days + 3).rem_euclid(7); // Monday = 0
    let thursday = days - weekday + 3;
    let year = year_of(thursday);
    let jan1 = days_from_civil(year, 1, 1)?;
    let week = (thursday - jan1) / 7 + 1;
    Some(format!("{year}-W{week:02}"))
}

fn year_of(days: i64) -> i64 {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    yoe + era * 400 + i64::from(m <= 2)
}

/// How `harness sessions stats` groups sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    /// The agent that stored it (`claude`, `codex`).
    Agent,
    /// The start's date (UTC).
    Day,
    /// The start's ISO week.
    Week,
    /// Each model used.
    Model,
    /// The project.
    Project,
    /// Each tool used.
    Tool,
}

/// One row of `harness sessions stats`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StatsRow {
    /// The agent, day, week, model, project or tool.
    pub key: String,
    /// Sessions counted in this row.
    pub sessions: u64,
    /// Tool uses with `--by tool`, model messages by every other key.
    pub uses: u64,
    /// Tokens and cost.
    #[serde(flatten)]
    pub usage: Usage,
}

/// Groups sessions into rows, sorted by key.
pub fn stats(sessions: &[Session], by: GroupBy) -> Vec<StatsRow> {
    let mut rows: BTreeMap<String, StatsRow> = BTreeMap::new();
    let mut add = |key: String, uses: u64, usage: &Usage| {
        let row = rows.entry(key.clone()).or_insert_with(|| StatsRow {
            key,
            usage: Usage {
                cost_usd: Some(0.0),
                ..Usage::default()
            },
            ..StatsRow::default()
        });
        row.sessions += 1;
        row.uses += uses;
        row.usage.add(usage);
    };
    for session in sessions {
        let whole = Usage {
            input_tokens: session.input_tokens,
            output_tokens: session.output_tokens,
            cache_read_input_tokens: session.cache_read_input_tokens,
            cache_creation_input_tokens: session.cache_creation_input_tokens,
            cost_usd: session.cost_usd,
        };
        let start = session.start.as_deref().unwrap_or("");
        match by {
            GroupBy::Agent => add(session.backend.to_string(), session.messages, &whole),
            GroupBy::Day => add(
                start.get(..10).unwrap_or("unknown").to_string(),
                session.messages,
                &whole,
            ),
            GroupBy::Week => add(
                iso_week(start).unwrap_or_else(|| "unknown".into()),
                session.messages,
                &whole,
            ),
            GroupBy::Project => add(
                session.project.clone().unwrap_or_else(|| "unknown".into()),
                session.messages,
                &whole,
            ),
            GroupBy::Model => {
                for (model, usage) in &session.models {
                    add(model.clone(), usage.messages, &usage.usage);
                }
            }
            GroupBy::Tool => {
                for (tool, usage) in &session.tools {
                    add(tool.clone(), usage.uses, &usage.usage);
                }
            }
        }
    }
    rows.into_values().collect()
}

/// The JSON Schema (draft 2020-12) of one line of `harness sessions list --format json`.
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub fn session_schema() -> schemars::Schema {
    schemars::schema_for!(Session)
}

/// The JSON Schema (draft 2020-12) of one line of `harness sessions stats --format json`.
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub fn stats_schema() -> schemars::Schema {
    schemars::schema_for!(StatsRow)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tally that wants the lines starting with `w` and says each wanted line has a
    /// timestamp; it remembers the lines read and the late one offered back.
    #[derive(Default)]
    struct Lines {
        read: Vec<Vec<u8>>,
        late: Option<Vec<u8>>,
    }

    impl Tally for Lines {
        fn wants(&self, line: &[u8]) -> bool {
            line.first() == Some(&b'w')
        }
        fn line(&mut self, line: &[u8]) -> bool {
            self.read.push(line.to_vec());
            true
        }
        fn late_timestamp(&mut self, line: &[u8]) -> bool {
            self.late = Some(line.to_vec());
            true
        }
        fn finish(self) -> (Option<String>, Accounting) {
            let accounting = Accounting {
                first_prompt: self.late.map(|l| String::from_utf8_lossy(&l).into_owned()),
                ..Accounting::default()
            };
            let lines = self
                .read
                .iter()
                .map(|l| String::from_utf8_lossy(l).into_owned());
            (Some(lines.collect::<Vec<_>>().join("|")), accounting)
        }
    }

    /// Lines shorter than a chunk, as long as one, and spanning several are each read whole,
    /// wherever the chunks end, and the last line passed over is offered back.
    #[test]
    fn lines_are_read_whole_across_chunks() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let long = |c: u8, n: usize| {
            let mut l = vec![b'w'];
            l.resize(n, c);
            l
        };
        let lines: Vec<Vec<u8>> = vec![
            b"wa".to_vec(),
            long(b'b', CHUNK - 10),
            long(b'c', CHUNK),
            b"skipped".to_vec(),
            long(b'd', 2 * CHUNK + 5),
            b"w".to_vec(),
            b"last, passed over".to_vec(),
        ];
        let text = lines.join(&b'\n');
        for ending in [&b""[..], b"\n"] {
            let path = dir.path().join("t.jsonl");
            std::fs::write(&path, [&text[..], ending].concat())?;
            let (joined, accounting) = tally_file(&path, Lines::default(), &mut Vec::new())?;
            let wanted: Vec<String> = lines
                .iter()
                .filter(|l| l.first() == Some(&b'w'))
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            assert_eq!(joined, Some(wanted.join("|")));
            assert_eq!(
                accounting.first_prompt.as_deref(),
                Some("last, passed over")
            );
        }
        // The last line passed over is longer than a chunk: it is read back from the file.
        let mut long_last = vec![b'x'; 2 * CHUNK + 1];
        long_last[0] = b'l';
        for ending in [&b""[..], b"\n"] {
            let path = dir.path().join("long.jsonl");
            std::fs::write(&path, [&b"wa\n"[..], &long_last, ending].concat())?;
            let (joined, accounting) = tally_file(&path, Lines::default(), &mut Vec::new())?;
            assert_eq!(joined.as_deref(), Some("wa"));
            let late = accounting.first_prompt.unwrap_or_default();
            assert_eq!(late.as_bytes(), &long_last[..]);
        }
        Ok(())
    }

    #[test]
    fn timestamps_and_weeks() {
        assert_eq!(epoch_ms("1970-01-01T00:00:01.5Z"), Some(1500));
        assert_eq!(
            epoch_ms("2026-12-01T03:32:24.745Z"),
            Some(1_796_095_944_745)
        );
        assert_eq!(epoch_ms("yesterday"), None);
        assert_eq!(
            iso_week("2026-12-01T03:32:24Z").as_deref(),
            Some("2026-W49")
        );
        assert_eq!(
            iso_week("2021-01-03T00:00:00Z").as_deref(),
            Some("2020-W53")
        );
        assert_eq!(
            iso_week("2024-12-30T00:00:00Z").as_deref(),
            Some("2025-W01")
        );
    }
}
