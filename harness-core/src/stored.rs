//! What a stored session's decoder gathers beyond the events and the outcome: the figures of
//! `harness sessions` (`docs/sessions.md`). Behind the `sessions` feature, which the backends'
//! features of that name (their transcript and rollout decoders) turn on.
//!
//! A transcript or rollout decoder fills an [`Accounting`] as it reads; the facade's scanner
//! merges the accountings of a session's files and prices their [`Tokens`] (its `prices`).

use std::collections::BTreeMap;

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

#[cfg(test)]
mod tests {
    use super::*;

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
