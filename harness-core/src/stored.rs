//! What a stored session's decoder gathers beyond the events and the outcome: the figures of
//! `harness sessions` (`docs/sessions.md`). Behind the `sessions` feature, which the backends'
//! features of that name (their transcript and rollout decoders) turn on.
//!
//! A transcript or rollout decoder fills an [`Accounting`] as it reads; the facade's scanner
//! merges the accountings of a session's files and prices their [`Tokens`] (its `prices`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::{Event, Normalizer, Outcome};

mod chunks;

use chunks::{CHUNK, Chunks};

/// Token counts of one model's use, as integers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Input tokens not read from the cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Input tokens written to the cache.
    pub cache_write: u64,
}

impl Tokens {
    /// Adds `other` into `self` (saturating).
    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
    }
}

/// The tokens one tool use is charged with: an equal share of the model message that made it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolTally {
    /// How many times the tool was used.
    pub uses: u64,
    /// Its share of the tokens, by model.
    pub models: BTreeMap<String, Tokens>,
}

/// The figures of one stored session (or one of its files).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accounting {
    /// Tokens by model, each model message counted once.
    pub models: BTreeMap<String, Tokens>,
    /// Model messages (API responses) counted.
    pub messages: u64,
    /// Model messages by model.
    pub model_messages: BTreeMap<String, u64>,
    /// User prompts (turns) seen.
    pub prompts: u64,
    /// The session's cost as the agent itself stored it, when it did.
    pub reported_cost: Option<f64>,
    /// Whether the tokens were read from the agent's own running total (Codex) rather than
    /// summed per message.
    pub reported_tokens: bool,
    /// The first and last timestamps (RFC 3339, as written).
    pub first_timestamp: Option<String>,
    /// The last timestamp.
    pub last_timestamp: Option<String>,
    /// The working directory the session names.
    pub cwd: Option<String>,
    /// The first prompt, cut to [`MAX_PROMPT`] characters.
    pub first_prompt: Option<String>,
    /// Tool uses and their share of the tokens, by tool name.
    pub tools: BTreeMap<String, ToolTally>,
}

/// A stored session's figures read without its events: what `harness sessions list` and
/// `stats` need, the same [`Accounting`] (and session id) the backend's stored-session decoder
/// gathers, from far less reading.
///
/// Most of a stored session's bytes are lines whose only figure is their timestamp (Claude
/// Code's `attachment` and `api-request-*` bookkeeping, Codex's `world_state`, a command's
/// output). A tally says which lines it must read ([`Tally::wants`], from a [`Sieve`] over the
/// line's bytes), and the caller passes over the others; since a line passed over can change
/// only the last timestamp, the caller offers those lines again at the end, last first, to
/// [`Tally::late_timestamp`], until one has a timestamp. Every line a tally reads is read
/// exactly as the decoder reads it (S2): a line that is not JSON adds nothing.
pub trait Tally {
    /// Whether the line may add to the figures (anything but a later last timestamp).
    fn wants(&self, line: &[u8]) -> bool;

    /// Reads one line (one the tally wants, or any other: the result is the same); `true`
    /// when it had a timestamp.
    fn line(&mut self, line: &[u8]) -> bool;

    /// Reads a line passed over, for its timestamp only, as the last one; `true` when it had
    /// one (the caller stops offering earlier lines).
    fn late_timestamp(&mut self, line: &[u8]) -> bool;

    /// The session id (the first one the decoder would name, S5) and the figures.
    fn finish(self) -> (Option<String>, Accounting);
}

/// The words a line must hold to be worth reading, found in one pass over its bytes (SIMD,
/// several words at once, where the processor has it).
///
/// A tally lists every word its figures hang on (a line type, a key), and `\u`: a line that
/// spells one of those words with an escape holds a `\u`, so the test never passes over a line
/// that matters.
#[derive(Debug, Clone)]
pub struct Sieve {
    /// Teddy, where the processor has the instructions it needs.
    packed: Option<aho_corasick::packed::Searcher>,
    /// Otherwise an automaton; `None` too when the words could not be built into one: every
    /// line is kept.
    automaton: Option<aho_corasick::AhoCorasick>,
}

impl Sieve {
    /// A sieve that keeps lines holding any of `words` (or a `\u` escape).
    pub fn new(words: &[&str]) -> Self {
        let mut all: Vec<&str> = words.to_vec();
        all.push("\\u");
        let packed = aho_corasick::packed::Searcher::new(all.iter().copied());
        let automaton = match packed {
            Some(_) => None,
            None => aho_corasick::AhoCorasick::new(&all).ok(),
        };
        Sieve { packed, automaton }
    }

    /// Whether `line` holds one of the words.
    #[inline]
    pub fn keeps(&self, line: &[u8]) -> bool {
        match (&self.packed, &self.automaton) {
            (Some(packed), _) => packed.find(line).is_some(),
            (None, Some(automaton)) => automaton.is_match(line),
            (None, None) => true,
        }
    }
}

/// The most characters of a first prompt kept.
pub const MAX_PROMPT: usize = 200;

impl Accounting {
    /// Notes a timestamp (kept as the first when there is none yet, and as the last).
    pub fn timestamp(&mut self, at: &str) {
        if self.first_timestamp.is_none() {
            self.first_timestamp = Some(at.to_string());
        }
        match &mut self.last_timestamp {
            Some(last) => {
                last.clear();
                last.push_str(at);
            }
            None => self.last_timestamp = Some(at.to_string()),
        }
    }

    /// Notes the first prompt, unless one is known.
    pub fn prompt(&mut self, text: &str) {
        self.prompts += 1;
        if self.first_prompt.is_none() && !text.trim().is_empty() {
            let cut: String = text.trim().chars().take(MAX_PROMPT).collect();
            self.first_prompt = Some(cut);
        }
    }

    /// Adds one model message: its model, tokens and the tools it called.
    pub fn message(&mut self, model: &str, tokens: &Tokens, tools: &[String]) {
        self.messages += 1;
        *self.model_messages.entry(model.to_string()).or_default() += 1;
        self.models
            .entry(model.to_string())
            .or_default()
            .add(tokens);
        if tools.is_empty() {
            return;
        }
        let n = tools.len() as u64;
        let share = Tokens {
            input: tokens.input / n,
            output: tokens.output / n,
            cache_read: tokens.cache_read / n,
            cache_write: tokens.cache_write / n,
        };
        for tool in tools {
            let tally = self.tools.entry(tool.clone()).or_default();
            tally.uses += 1;
            tally
                .models
                .entry(model.to_string())
                .or_default()
                .add(&share);
        }
    }

    /// Merges another file's figures of the same session into these.
    pub fn merge(&mut self, other: Accounting) {
        for (model, tokens) in other.models {
            self.models.entry(model).or_default().add(&tokens);
        }
        self.messages += other.messages;
        for (model, n) in other.model_messages {
            *self.model_messages.entry(model).or_default() += n;
        }
        self.prompts += other.prompts;
        self.reported_cost = match (self.reported_cost, other.reported_cost) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        self.reported_tokens |= other.reported_tokens;
        if other.first_timestamp < self.first_timestamp || self.first_timestamp.is_none() {
            self.first_timestamp = other.first_timestamp.or(self.first_timestamp.take());
        }
        if other.last_timestamp > self.last_timestamp {
            self.last_timestamp = other.last_timestamp;
        }
        if self.cwd.is_none() {
            self.cwd = other.cwd;
        }
        if self.first_prompt.is_none() {
            self.first_prompt = other.first_prompt;
        }
        for (tool, tally) in other.tools {
            let mine = self.tools.entry(tool).or_default();
            mine.uses += tally.uses;
            for (model, tokens) in tally.models {
                mine.models.entry(model).or_default().add(&tokens);
            }
        }
    }

    /// All tokens, every model together.
    pub fn tokens(&self) -> Tokens {
        let mut total = Tokens::default();
        for tokens in self.models.values() {
            total.add(tokens);
        }
        total
    }
}

/// One agent's stored history: where it keeps its sessions, how a session's files are found,
/// decoded and summed up. Each backend crate that reads its agent's stored sessions provides
/// one (behind its `sessions` feature); the facade's scanner holds the list
/// (`harness_agents::sessions::histories`) and knows nothing else of any agent.
pub trait History: Send + Sync {
    /// The agent's name, as `--backend` and the rows spell it (`claude`).
    fn name(&self) -> &'static str;

    /// The environment variables that move the agent's folders, in the order they are read.
    fn env_vars(&self) -> &'static [&'static str];

    /// The folders read by default, from the environment (`var` gives a variable, `None` when
    /// unset or empty; `HOME` among them).
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf>;

    /// The folders read for a folder the user named for this agent (its configuration or data
    /// folder, or one of the folders [`History::default_roots`] gives).
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf>;

    /// Adds the sessions stored under `root` to `found`, in path order.
    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>);

    /// Decodes file `index` of a session (0: [`SessionFiles::main`], then each of
    /// [`SessionFiles::subagents`]): its events go to `sink`; its outcome and figures come back.
    fn decode(
        &self,
        files: &SessionFiles,
        index: usize,
        sink: &mut dyn FnMut(Event),
    ) -> io::Result<(Outcome, Accounting)>;

    /// Sums file `index` of a session up without its events: the session id the decoder
    /// names (main file) and the same figures as [`History::decode`]. `buf` is reused from
    /// file to file.
    fn tally(
        &self,
        files: &SessionFiles,
        index: usize,
        buf: &mut Vec<u8>,
    ) -> io::Result<(Option<String>, Accounting)>;

    /// The files whose size and modification time say whether a session changed (a cached
    /// row is reused while none did): by default its main file and its sub-agents'.
    fn stamp_files(&self, files: &SessionFiles) -> Vec<PathBuf> {
        std::iter::once(files.main.clone())
            .chain(files.subagents.iter().map(|(p, _)| p.clone()))
            .collect()
    }
}

/// The error of [`History::decode`] and [`History::tally`] for a file index the session does
/// not have.
pub fn no_such_file() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no such file in the session")
}

/// [`each_line`] as text: a line that is not UTF-8 still comes, marked where it breaks
/// (lossy), and one of nothing but whitespace (Unicode's too) is skipped. How a history whose
/// records are JSON text reads them.
pub fn each_text_line(path: &Path, line: &mut dyn FnMut(&str)) -> io::Result<()> {
    each_line(path, &mut |bytes| {
        let text = String::from_utf8_lossy(bytes);
        if !text.trim().is_empty() {
            line(&text);
        }
    })
}

/// How a history whose sessions are one file each reads that file: the live lines its records
/// stand for, handed to `line` as they come, and the session id and figures the records give.
/// The reading [`decode_one_file`] and [`tally_one_file`] share.
pub type ReadFile<L> = fn(&Path, &mut dyn FnMut(&L)) -> io::Result<(Option<String>, Accounting)>;

/// [`History::decode`] of a session kept in one file (`index` 0): each live line `read` gives
/// goes through `normalizer` as it comes, its events to `sink`; then the end of input.
pub fn decode_one_file<L: AsRef<[u8]> + ?Sized>(
    files: &SessionFiles,
    index: usize,
    mut normalizer: impl Normalizer,
    read: ReadFile<L>,
    sink: &mut dyn FnMut(Event),
) -> io::Result<(Outcome, Accounting)> {
    if index > 0 {
        return Err(no_such_file());
    }
    let mut events = Vec::new();
    let (_, accounting) = read(&files.main, &mut |line: &L| {
        normalizer.push_line(line.as_ref(), &mut events);
        for event in events.drain(..) {
            sink(event);
        }
    })?;
    Ok((normalizer.finish_each(sink), accounting))
}

/// [`History::tally`] of a session kept in one file (`index` 0): the figures `read` gives,
/// its lines decoded by no one.
pub fn tally_one_file<L: ?Sized>(
    files: &SessionFiles,
    index: usize,
    read: ReadFile<L>,
) -> io::Result<(Option<String>, Accounting)> {
    if index > 0 {
        return Err(no_such_file());
    }
    read(&files.main, &mut |_| {})
}

/// The first line of the file at `path` as JSON, when it is a JSON line: where an agent's
/// session file names its id or directory.
pub fn first_line_value(path: &Path) -> Option<serde_json::Value> {
    let mut first = String::new();
    BufReader::new(File::open(path).ok()?)
        .read_line(&mut first)
        .ok()?;
    serde_json::from_str(&first).ok()
}

/// The files of one stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionFiles {
    /// Who wrote it: its [`History::name`].
    pub backend: &'static str,
    /// The session's id as its files name it (a file name, or a database row's key).
    pub id: String,
    /// The main file (a transcript, a rollout, a database).
    pub main: PathBuf,
    /// Sub-agent files, each with the tool use that started it when known.
    pub subagents: Vec<(PathBuf, Option<String>)>,
    /// The project the agent filed it under, when its folders say (a folder name).
    pub project_dir: Option<String>,
}

impl SessionFiles {
    /// The file at `index`: 0 the main file, then the sub-agents'.
    pub fn file(&self, index: usize) -> Option<(&Path, Option<&str>)> {
        match index {
            0 => Some((self.main.as_path(), None)),
            n => self
                .subagents
                .get(n - 1)
                .map(|(p, thread)| (p.as_path(), thread.as_deref())),
        }
    }
}

/// Reads `path` a line at a time into `line`, each without the `\n` and `\r` that end it;
/// lines of nothing but ASCII whitespace are skipped. Memory holds one line, never the file:
/// the reading a history does when it turns its agent's records into live lines.
pub fn each_line(path: &Path, line: &mut dyn FnMut(&[u8])) -> io::Result<()> {
    let mut reader = BufReader::with_capacity(1 << 16, File::open(path)?);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        if reader.read_until(b'\n', &mut bytes)? == 0 {
            return Ok(());
        }
        let mut text = bytes.as_slice();
        while let [rest @ .., b'\n' | b'\r'] = text {
            text = rest;
        }
        if !text.iter().all(u8::is_ascii_whitespace) {
            line(text);
        }
    }
}

/// Reads `path` line by line into `normalizer`; events are handed to `sink` as they come.
/// Memory holds one line and what the decoder keeps pending, never the file.
pub fn feed(
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

/// Reads `path` into `tally`: every line it wants, and the lines passed over offered back for
/// the last timestamp (see [`Tally`]). `buf` holds the chunk buffer, reused from file to file.
/// Generic, so each backend's tally is read without a call through a pointer per line.
pub fn tally_file<T: Tally>(
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

/// The entries of `dir` that `keep`, in path order; none when `dir` cannot be read (a history
/// without that folder has no sessions there).
pub fn sorted_paths(dir: &Path, keep: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| keep(p))
        .collect();
    paths.sort();
    paths
}

/// The first of the folders `inner` (paths under `dir`) that exists, else `dir` itself: what
/// a history reads for a folder the user named, which may be a home, the agent's own folder or
/// the folder of sessions.
pub fn first_folder(dir: &Path, inner: &[&str]) -> Vec<PathBuf> {
    let found = inner.iter().map(|i| dir.join(i)).find(|d| d.is_dir());
    vec![found.unwrap_or_else(|| dir.to_path_buf())]
}

/// The files with extension `ext` in `dir` and its folders down to `depth` levels, unsorted.
pub fn walk(dir: &Path, ext: &str, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if depth > 0 {
                walk(&path, ext, depth - 1, out);
            }
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// The RFC 3339 UTC timestamp (`2026-12-01T03:32:24.745Z`) of a time in milliseconds since
/// 1970, for agents that store epoch times ([`Accounting::timestamp`] takes RFC 3339).
pub fn rfc3339_of_ms(ms: u64) -> String {
    let (days, rest) = ((ms / 86_400_000) as i64, ms % 86_400_000);
    // Days to a civil date (proleptic Gregorian), eras of 400 years from 0000-03-01.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
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
    fn epoch_times_read_as_rfc3339() {
        assert_eq!(rfc3339_of_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_of_ms(1_796_095_944_745), "2026-12-01T03:32:24.745Z");
        assert_eq!(rfc3339_of_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn a_message_shares_its_tokens_among_its_tools() {
        let mut a = Accounting::default();
        let tokens = Tokens {
            input: 10,
            output: 7,
            ..Tokens::default()
        };
        a.message("m", &tokens, &["Read".to_string(), "Bash".to_string()]);
        a.message("m", &tokens, &[]);
        assert_eq!(a.messages, 2);
        assert_eq!(a.tokens().input, 20);
        assert_eq!(a.tools["Read"].uses, 1);
        assert_eq!(a.tools["Read"].models["m"].output, 3);
        let mut b = Accounting::default();
        b.timestamp("2026-01-02T00:00:00Z");
        b.message("n", &tokens, &["Read".to_string()]);
        a.timestamp("2026-01-03T00:00:00Z");
        a.merge(b);
        assert_eq!(a.first_timestamp.as_deref(), Some("2026-01-02T00:00:00Z"));
        assert_eq!(a.last_timestamp.as_deref(), Some("2026-01-03T00:00:00Z"));
        assert_eq!(a.tools["Read"].uses, 2);
        assert_eq!(a.models.len(), 2);
    }
}
