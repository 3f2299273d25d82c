//! A transcript's figures without its events: [`TranscriptTally`], the [`Tally`] of
//! `harness sessions list` and `stats` (T3, T4, T7 of `docs/sessions.md`).
//!
//! Only the lines whose figures count are read: `assistant` lines (T3), `user` lines until the
//! first prompt is known (T4), whatever names `totalCostUSD` (T7), and every line until the
//! session's first timestamp, working directory and id are known (T1). The other lines, most
//! of a transcript's bytes (`attachment`, `api-request-shape`, tool results), can change only
//! the last timestamp: the caller passes over them ([`Tally::wants`]) and offers them back at
//! the end ([`Tally::late_timestamp`]).
//! A line that is read is read as the decoder reads it: the same members, through the core's
//! entry point (the fast reader, or the checked one when it is unsure), so it adds exactly what
//! it adds there, and nothing when it is not JSON (S2).

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use harness_agents_core::backend::json::{self, Checked, Loose, Member, MemberSeed, Scan};
use harness_agents_core::stored::{Accounting, Sieve, Tally, Tokens};
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};

use crate::transcript::{BOOKKEEPING, Messages};

/// The names of a message's `usage` the figures read (T3).
const USAGE: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

harness_agents_core::json_view! {
    /// The members of a transcript line its figures read.
    struct LineView<'a> {
        /// `type`.
        kind: "type",
        /// `timestamp`.
        timestamp: "timestamp",
        /// `cwd`.
        cwd: "cwd",
        /// `sessionId`.
        session_id: "sessionId",
        /// `totalCostUSD`.
        total_cost: "totalCostUSD",
        /// `isMeta`.
        is_meta: "isMeta",
        /// `message`, when an object.
        message: "message" => Option<MessageView<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The members of a line's `message` its figures read.
    struct MessageView<'a> {
        /// `id`.
        id: "id",
        /// `model`.
        model: "model",
        /// `usage`, when an object.
        usage: "usage"[USAGE],
        /// `content`.
        content: "content" => Content<'a>,
    }
}

harness_agents_core::json_view! {
    /// The members of a content block the figures read.
    struct BlockView<'a> {
        /// `type`.
        kind: "type",
        /// `name` of a tool use.
        name: "name",
        /// `text` of a text block, read only while a first prompt is wanted.
        text: "text" if costly,
    }
}

/// A message's `content`: a string (kept only while a first prompt is wanted), a list of
/// blocks, or anything else.
#[derive(Debug, Default)]
enum Content<'a> {
    #[default]
    Other,
    Text(Option<Cow<'a, str>>),
    List(Vec<Option<BlockView<'a>>>),
}

impl<'de> Member<'de> for Content<'de> {
    fn read<D: Deserializer<'de>>(
        &mut self,
        deserializer: D,
        costly: bool,
    ) -> Result<(), D::Error> {
        struct ContentVisitor(bool);
        impl<'de> Visitor<'de> for ContentVisitor {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("message content")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(self.0.then_some(Cow::Borrowed(text))))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(self.0.then(|| Cow::Owned(text.to_string()))))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                loop {
                    let mut block = None;
                    if seq
                        .next_element_seed(MemberSeed(&mut block, self.0))?
                        .is_none()
                    {
                        break;
                    }
                    blocks.push(block);
                }
                Ok(Content::List(blocks))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Content::Other)
            }
        }
        *self = deserializer.deserialize_any(ContentVisitor(costly))?;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, costly: bool) -> Option<()> {
        *self = match scan.peek()? {
            b'"' if costly => match scan.loose()? {
                Loose::Str(text) => Content::Text(Some(text)),
                _ => return None,
            },
            b'"' => {
                scan.skip()?;
                Content::Text(None)
            }
            b'[' => {
                let mut blocks = Vec::new();
                scan.elements(|scan| {
                    let mut block = None;
                    Member::scan(&mut block, scan, costly)?;
                    blocks.push(block);
                    Some(())
                })?;
                Content::List(blocks)
            }
            _ => {
                scan.skip()?;
                Content::Other
            }
        };
        Some(())
    }
}

/// The words a transcript line's figures hang on (besides the first lines'): the line types
/// T3 and T4 count, and T7's key.
const WORDS: [&str; 3] = ["\"assistant\"", "\"totalCostUSD\"", "\"user\""];

/// The sieve of [`WORDS`], built once.
static SIEVE: LazyLock<Sieve> = LazyLock::new(|| Sieve::new(&WORDS));

/// The sieve once the first prompt is known (or in a sub-agent's file): a `user` line then
/// changes no figure (T4 counts prompts until the first one), and tool results, often most of
/// a transcript, are passed over too.
static SIEVE_WITHOUT_USERS: LazyLock<Sieve> = LazyLock::new(|| Sieve::new(&WORDS[..2]));

/// A transcript's figures, read as [`crate::TranscriptDecoder`] reads them, without its
/// events: the same [`Accounting`] and session id, from the lines that can change them.
///
/// ```
/// use harness_agents_claude::TranscriptTally;
/// use harness_agents_core::stored::Tally;
///
/// let mut tally = TranscriptTally::new();
/// let lines = [
///     r#"{"type":"user","message":{"role":"user","content":"hi"},"sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
///     r#"{"type":"attachment","attachment":{"type":"file"},"timestamp":"2026-01-01T00:00:01Z"}"#,
///     r#"{"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello."}],"usage":{"input_tokens":10,"output_tokens":2}},"sessionId":"s1","timestamp":"2026-01-01T00:00:02Z"}"#,
///     r#"{"type":"attachment","attachment":{"type":"file"},"timestamp":"2026-01-01T00:00:03Z"}"#,
/// ];
/// let mut passed = Vec::new();
/// for line in lines {
///     if tally.wants(line.as_bytes()) {
///         if tally.line(line.as_bytes()) {
///             passed.clear();
///         }
///     } else {
///         passed.push(line);
///     }
/// }
/// // The last line was passed over: offered back, it gives the last timestamp.
/// assert_eq!(passed.len(), 1);
/// for line in passed.iter().rev() {
///     if tally.late_timestamp(line.as_bytes()) {
///         break;
///     }
/// }
/// let (id, accounting) = tally.finish();
/// assert_eq!(id.as_deref(), Some("s1"));
/// assert_eq!(accounting.models["claude-sonnet-4-5"].input, 10);
/// assert_eq!(accounting.first_prompt.as_deref(), Some("hi"));
/// assert_eq!(accounting.last_timestamp.as_deref(), Some("2026-01-01T00:00:03Z"));
/// ```
#[derive(Debug)]
pub struct TranscriptTally {
    /// Whether this is the file of a sub-agent whose tool use is known (T8): its lines give no
    /// first prompt, as they give none through the decoder.
    subagent: bool,
    session_id: Option<String>,
    messages: Messages,
    accounting: Accounting,
}

impl Default for TranscriptTally {
    fn default() -> Self {
        Self::new()
    }
}

impl TranscriptTally {
    /// A tally of a session's main transcript.
    pub fn new() -> Self {
        Self::for_subagent(None)
    }

    /// A tally of a sub-agent's transcript, started by the tool use `tool_use_id` (as
    /// [`crate::TranscriptDecoder::for_subagent`]: without one, or with an empty one, the file is
    /// read as a main one).
    pub fn for_subagent(tool_use_id: Option<&str>) -> Self {
        TranscriptTally {
            subagent: tool_use_id.is_some_and(|id| !id.is_empty()),
            session_id: None,
            messages: Messages::default(),
            accounting: Accounting::default(),
        }
    }

    /// Whether a line is still read whatever it holds: until the first timestamp, the working
    /// directory and the session id are known.
    fn unsettled(&self) -> bool {
        self.accounting.first_timestamp.is_none()
            || self.accounting.cwd.is_none()
            || self.session_id.is_none()
    }

    /// Whether the first prompt is still wanted (T4).
    fn wants_prompt(&self) -> bool {
        !self.subagent && self.accounting.first_prompt.is_none()
    }

    /// T4: the first prompt of a `user` line, as the decoder reads it from the line's `Value`.
    fn prompt(&mut self, line: &LineView<'_>) {
        if line.is_meta.is_true() {
            return;
        }
        let content = line.message.as_ref().map(|m| &m.content);
        let prompt = match content {
            Some(Content::Text(text)) => text.as_deref(),
            Some(Content::List(blocks)) => {
                let views = || blocks.iter().filter_map(Option::as_ref);
                if views().any(|b| b.kind.as_str() == Some("tool_result")) {
                    None
                } else {
                    views()
                        .find(|b| b.kind.as_str() == Some("text"))
                        .and_then(|b| b.text.as_str())
                }
            }
            _ => None,
        };
        if let Some(prompt) = prompt {
            self.accounting.prompt(prompt);
        }
    }
}

fn number(value: &Loose<'_>) -> u64 {
    match value {
        Loose::Number(n) => n.as_u64().unwrap_or(0),
        _ => 0,
    }
}

impl Tally for TranscriptTally {
    fn wants(&self, line: &[u8]) -> bool {
        let sieve = match self.wants_prompt() {
            true => &SIEVE,
            false => &SIEVE_WITHOUT_USERS,
        };
        self.unsettled() || sieve.keeps(line)
    }

    fn line(&mut self, line: &[u8]) -> bool {
        let costly = self.wants_prompt();
        let mut view = None;
        if json::read_line_into::<LineView<'_>>(line, &mut view, costly).is_err() {
            return false;
        }
        let Some(line) = view else {
            return false;
        };
        // What `TranscriptDecoder::account` reads, in its order.
        let timestamp = line.timestamp.as_str();
        if let Some(at) = timestamp {
            self.accounting.timestamp(at);
        }
        if self.accounting.cwd.is_none() {
            if let Some(cwd) = line.cwd.non_empty_str() {
                self.accounting.cwd = Some(cwd.to_string());
            }
        }
        if let Loose::Number(cost) = &line.total_cost {
            self.accounting.reported_cost = cost.as_f64();
        }
        let kind = line.kind.as_str();
        if kind == Some("assistant") {
            let message = line.message.as_ref();
            let usage = message.and_then(|m| m.usage.as_ref());
            let tokens = usage.map_or_else(Tokens::default, |[i, o, r, w]| Tokens {
                input: number(i),
                output: number(o),
                cache_read: number(r),
                cache_write: number(w),
            });
            let blocks = match message.map(|m| &m.content) {
                Some(Content::List(blocks)) => blocks.as_slice(),
                _ => &[],
            };
            let tools = blocks
                .iter()
                .filter_map(Option::as_ref)
                .filter(|b| b.kind.as_str() == Some("tool_use"))
                .map(|b| b.name.as_str().unwrap_or("?"));
            self.messages.add(
                message.and_then(|m| m.id.as_str()),
                message.and_then(|m| m.model.as_str()).unwrap_or("unknown"),
                tokens,
                tools,
            );
        }
        // The decoder's dispatch: which lines name the session (S5) and give the prompt.
        let named = match kind {
            Some("user") => {
                if self.wants_prompt() {
                    self.prompt(&line);
                }
                true
            }
            Some("assistant" | "system") => true,
            Some("cost-state" | "result") => false,
            Some(kind) => !BOOKKEEPING.contains(&kind),
            None => true,
        };
        if named && self.session_id.is_none() {
            if let Some(id) = line.session_id.non_empty_str() {
                self.session_id = Some(id.to_string());
            }
        }
        timestamp.is_some()
    }

    fn late_timestamp(&mut self, line: &[u8]) -> bool {
        json_view_timestamp(line).is_some_and(|at| {
            self.accounting.timestamp(&at);
            true
        })
    }

    fn finish(self) -> (Option<String>, Accounting) {
        (self.session_id, self.messages.accounting(&self.accounting))
    }
}

harness_agents_core::json_view! {
    /// A line's timestamp alone.
    struct Stamp<'a> {
        /// `timestamp`.
        timestamp: "timestamp",
    }
}

/// The `timestamp` string of a line, read as every other member is (S2).
fn json_view_timestamp(line: &[u8]) -> Option<String> {
    let stamp = json::read_line::<Stamp<'_>>(line).ok()??;
    stamp.timestamp.as_str().map(str::to_string)
}
