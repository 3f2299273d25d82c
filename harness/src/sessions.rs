//! Stored sessions: what each agent with a stored history ([`histories`]: Claude Code's
//! transcripts, Codex's rollouts, ...) keeps on disk, found, decoded in parallel, summed up
//! (rules in `docs/sessions.md`). Each agent's history is its backend crate's [`History`];
//! this module knows no agent.
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
//! (see [`harness_agents_core::stored::Tally`]); `show` decodes every line. Sessions are read on one thread per core, and
//! at least [`MIN_THREADS`]: a cold read waits on the disk, which serves several reads at once
//! faster than one.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::prices::{PriceTable, Tokens, round_cost};
use harness_agents_core::stored::Accounting;
pub use harness_agents_core::stored::{History, SessionFiles};
use harness_agents_core::{Event, Outcome};
use serde::{Deserialize, Serialize};

/// Every agent whose stored history this build reads, in the order `list` shows them. A
/// backend adds its history here, one line (its crate provides the rest: [`History`]).
pub fn histories() -> &'static [&'static dyn History] {
    &[
        &harness_agents_claude::TranscriptHistory,
        &harness_agents_codex::RolloutHistory,
        &harness_agents_opencode::OpencodeHistory,
        &harness_agents_gemini::ChatHistory,
        &harness_agents_pi::PiHistory,
        &harness_agents_qwen::QwenHistory,
        &harness_agents_copilot::CopilotHistory,
    ]
}

/// The history registered as `name`.
pub fn history(name: &str) -> Option<&'static dyn History> {
    histories().iter().copied().find(|h| h.name() == name)
}

/// Where each agent keeps its sessions: the folders read, by agent, in the order of
/// [`histories`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// Each agent's name and the folders of it that are read.
    pub roots: Vec<(&'static str, Vec<PathBuf>)>,
}

impl Locations {
    /// Every agent's default folders, each found from its own environment variables
    /// ([`History::env_vars`]) and `HOME`.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        Locations {
            roots: histories()
                .iter()
                .map(|h| (h.name(), h.default_roots(&var)))
                .collect(),
        }
    }

    /// Reads `dirs` (folders the user named, each as [`History::roots_of`] says) for `backend`
    /// instead of its default folders.
    pub fn set(&mut self, backend: &'static str, dirs: &[PathBuf]) {
        let Some(history) = history(backend) else {
            return;
        };
        let roots: Vec<PathBuf> = dirs.iter().flat_map(|d| history.roots_of(d)).collect();
        match self.roots.iter_mut().find(|(name, _)| *name == backend) {
            Some((_, mine)) => *mine = roots,
            None => self.roots.push((backend, roots)),
        }
    }

    /// Keeps only the agents in `backends`.
    pub fn keep_only(&mut self, backends: &[&str]) {
        self.roots.retain(|(name, _)| backends.contains(name));
    }

    /// The folders read for `backend` (none when it is not read).
    pub fn of(&self, backend: &str) -> &[PathBuf] {
        self.roots
            .iter()
            .find(|(name, _)| *name == backend)
            .map_or(&[], |(_, roots)| roots.as_slice())
    }
}

/// Finds every stored session under `locations`: agent by agent, each in path order.
pub fn discover(locations: &Locations) -> Vec<SessionFiles> {
    let mut found = Vec::new();
    for (name, roots) in &locations.roots {
        let Some(history) = history(name) else {
            continue;
        };
        for root in roots {
            history.discover(root, &mut found);
        }
    }
    found
}

/// The history of a session's agent, or an error naming it when this build has none.
fn history_of(files: &SessionFiles) -> io::Result<&'static dyn History> {
    history(files.backend).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::Unsupported,
            format!("no stored history for {}", files.backend),
        )
    })
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
    /// Who wrote it: its agent's name (`claude`, `codex`, ...).
    pub backend: String,
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

/// A session's events (its main file's, then each sub-agent's) and the outcome of each file.
pub fn events(files: &SessionFiles, sink: &mut dyn FnMut(Event)) -> io::Result<Vec<Outcome>> {
    let history = history_of(files)?;
    let mut outcomes = Vec::new();
    for index in 0..=files.subagents.len() {
        let (outcome, _) = history.decode(files, index, sink)?;
        outcomes.push(outcome);
    }
    Ok(outcomes)
}

/// A session's figures from its files' tallies: its id (the main file's) and its accounting.
fn tally_session(
    files: &SessionFiles,
    buf: &mut Vec<u8>,
) -> io::Result<(Option<String>, Accounting)> {
    let history = history_of(files)?;
    let (id, mut accounting) = history.tally(files, 0, buf)?;
    for index in 1..=files.subagents.len() {
        let (_, more) = history.tally(files, index, buf)?;
        accounting.merge(more);
    }
    Ok((id, accounting))
}

/// Sums one session up: each file read for its figures only, as [`summarize_decoded`] sums it
/// up from every event (the same row, from far less reading: see
/// [`harness_agents_core::stored::Tally`]).
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
    let history = history_of(files)?;
    let mut ignore = |_: Event| {};
    let (outcome, mut accounting) = history.decode(files, 0, &mut ignore)?;
    for index in 1..=files.subagents.len() {
        let (_, more) = history.decode(files, index, &mut ignore)?;
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
        backend: files.backend.to_string(),
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
    // The biggest sessions start first: one begun last would be read alone at the end, the
    // other threads idle, which costs most when the disk is the bound (a cold history).
    let mut order: Vec<(u64, usize)> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (std::fs::metadata(&f.main).map_or(0, |m| m.len()), i))
        .collect();
    order.sort_unstable_by(|a, b| b.cmp(a));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<io::Result<Session>>>> =
        Mutex::new((0..files.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut buf = Vec::new();
                while let Some(&(_, i)) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let one = &files[i];
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
    for path in history(files.backend)?.stamp_files(files) {
        let meta = std::fs::metadata(&path).ok()?;
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
    /// The agent that stored it (`claude`, `codex`, ...).
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
            GroupBy::Agent => add(session.backend.clone(), session.messages, &whole),
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
