//! A rollout's figures without its events: [`RolloutTally`], the [`Tally`] of
//! `harness sessions list` and `stats` (R1, R2, R4, R6, R9, R10 of `docs/sessions.md`).
//!
//! Only the lines whose figures count are read: `session_meta` (R1), `turn_context` (R2), a
//! `UserMessage` item or a legacy `user_message` (the prompts, R4, R10), `token_count` (R6),
//! tool calls (R9), and every line until the first timestamp is known. The rest (messages,
//! command output, `world_state`) can change only the last timestamp: the caller passes over
//! them and offers them back at the end. A line that is read is read as the decoder reads it,
//! the same members of the same `Value`, through the core's entry point, so it adds exactly
//! what it adds there, and nothing when it is not JSON (S2).

use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

use harness_agents_core::backend::json::{self, Checked, FieldsSeed, Loose, Member, Scan};
use harness_agents_core::stored::{Accounting, Sieve, Tally, Tokens};
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The names of a running total the figures read (R6).
const TOTAL: [&str; 4] = [
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "cache_write_input_tokens",
];

harness_agents_core::json_view! {
    /// The members of a rollout line its figures read.
    struct LineView<'a> {
        /// `timestamp`.
        timestamp: "timestamp",
        /// `type`.
        kind: "type",
        /// `payload`, when an object.
        payload: "payload" => Option<PayloadView<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The members of a line's `payload` its figures read.
    struct PayloadView<'a> {
        /// `type`.
        kind: "type",
        /// `cwd` (`session_meta`, `turn_context`).
        cwd: "cwd",
        /// `id` (`session_meta`).
        id: "id",
        /// `history_mode` (`session_meta`).
        history_mode: "history_mode",
        /// `model` (`turn_context`).
        model: "model",
        /// `name` of a tool call.
        name: "name",
        /// `message` of a legacy `user_message`.
        message: "message",
        /// `item` of an `item_completed`, when an object.
        item: "item" => Option<ItemView<'a>>,
        /// `info` of a `token_count`, when an object.
        info: "info" => Option<InfoView<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The members of an item its figures read.
    struct ItemView<'a> {
        /// `type`.
        kind: "type",
        /// `content`: its text parts.
        content: "content" => Parts<'a>,
    }
}

harness_agents_core::json_view! {
    /// The members of a `token_count`'s `info` the figures read.
    struct InfoView<'a> {
        /// `total_token_usage`.
        total: "total_token_usage" => Total<'a>,
    }
}

/// A `total_token_usage`: whether it is there (whatever its value: `null` counts as a total of
/// nothing, as the decoder reads it), and its figures when it is an object.
#[derive(Debug, Default)]
struct Total<'a> {
    present: bool,
    fields: Option<[Loose<'a>; 4]>,
}

impl<'de> Member<'de> for Total<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        self.present = true;
        self.fields = FieldsSeed(&TOTAL).deserialize(deserializer)?;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        self.present = true;
        self.fields = scan.fields(&TOTAL)?;
        Some(())
    }
}

/// An item's `content` as the decoder joins it: each part that is a string, or an object
/// with a string `text`; nothing when it is not a list.
#[derive(Debug, Default)]
struct Parts<'a>(Vec<Cow<'a, str>>);

harness_agents_core::json_view! {
    /// A content part's text.
    struct PartView<'a> {
        /// `text`.
        text: "text",
    }
}

/// One content part: its text, when it has one.
#[derive(Debug, Default)]
struct Part<'a>(Option<Cow<'a, str>>);

impl<'de> Member<'de> for Part<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        struct PartVisitor;
        impl<'de> Visitor<'de> for PartVisitor {
            type Value = Option<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a content part")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Borrowed(text)))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Some(Cow::Owned(text.to_string())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let mut view: Option<PartView<'de>> = None;
                Member::read(
                    &mut view,
                    serde::de::value::MapAccessDeserializer::new(map),
                    false,
                )?;
                Ok(view.and_then(|v| match v.text {
                    Loose::Str(text) => Some(text),
                    _ => None,
                }))
            }
        }
        self.0 = deserializer.deserialize_any(PartVisitor)?;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        self.0 = match scan.peek()? {
            b'"' => match scan.loose()? {
                Loose::Str(text) => Some(text),
                _ => return None,
            },
            b'{' => {
                let mut view: Option<PartView<'de>> = None;
                Member::scan(&mut view, scan, false)?;
                view.and_then(|v| match v.text {
                    Loose::Str(text) => Some(text),
                    _ => None,
                })
            }
            _ => {
                scan.skip()?;
                None
            }
        };
        Some(())
    }
}

impl<'de> Member<'de> for Parts<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        struct PartsVisitor;
        impl<'de> Visitor<'de> for PartsVisitor {
            type Value = Vec<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("content parts")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Vec::new())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut parts = Vec::new();
                loop {
                    let mut part = Part::default();
                    let seed = json::MemberSeed(&mut part, false);
                    if seq.next_element_seed(seed)?.is_none() {
                        break;
                    }
                    parts.extend(part.0);
                }
                Ok(parts)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Vec::new())
            }
        }
        self.0 = deserializer.deserialize_any(PartsVisitor)?;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        let mut parts = Vec::new();
        if scan.peek()? == b'[' {
            scan.elements(|scan| {
                let mut part = Part::default();
                part.scan(scan, false)?;
                parts.extend(part.0);
                Some(())
            })?;
        } else {
            scan.skip()?;
        }
        self.0 = parts;
        Some(())
    }
}

/// The words a rollout line's figures hang on (besides the first lines'): the line and
/// payload types R1, R2, R4, R6 and R10 read, and the end of every tool call's type (R9).
const WORDS: [&str; 6] = [
    "\"session_meta\"",
    "\"turn_context\"",
    "\"UserMessage\"",
    "\"token_count\"",
    "\"user_message\"",
    "_call\"",
];

/// The sieve of [`WORDS`], built once.
static SIEVE: LazyLock<Sieve> = LazyLock::new(|| Sieve::new(&WORDS));

/// A rollout's figures, read as [`crate::RolloutDecoder`] reads them, without its events: the
/// same [`Accounting`] and session id, from the lines that can change them.
///
/// ```
/// use harness_agents_codex::RolloutTally;
/// use harness_agents_core::stored::Tally;
///
/// let mut tally = RolloutTally::new();
/// for line in [
///     r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"t1","cwd":"/p"}}"#,
///     r#"{"timestamp":"2026-01-01T00:00:01Z","type":"turn_context","payload":{"model":"gpt-5"}}"#,
///     r#"{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":5}}}}"#,
/// ] {
///     assert!(tally.wants(line.as_bytes()));
///     tally.line(line.as_bytes());
/// }
/// let (id, accounting) = tally.finish();
/// assert_eq!(id.as_deref(), Some("t1"));
/// assert_eq!(accounting.models["gpt-5"].input, 60);
/// ```
#[derive(Debug)]
pub struct RolloutTally {
    session_id: Option<String>,
    /// The model of the current turn (R2).
    model: Option<String>,
    /// The last running total (R6).
    last_tokens: Tokens,
    /// Tools called since the last `token_count`.
    tools: Vec<String>,
    /// The legacy history mode (R10).
    legacy: bool,
    accounting: Accounting,
}

impl Default for RolloutTally {
    fn default() -> Self {
        Self::new()
    }
}

impl RolloutTally {
    /// A tally of one rollout.
    pub fn new() -> Self {
        RolloutTally {
            session_id: None,
            model: None,
            last_tokens: Tokens::default(),
            tools: Vec::new(),
            legacy: false,
            accounting: Accounting::default(),
        }
    }

    /// R6, as `RolloutDecoder::token_count`.
    fn token_count(&mut self, total: &Total<'_>) {
        if !total.present {
            return;
        }
        let n = |i: usize| match total.fields.as_ref().map(|f| &f[i]) {
            Some(Loose::Number(n)) => n.as_u64().unwrap_or(0),
            _ => 0,
        };
        let (input, cached) = (n(0), n(1));
        let tokens = Tokens {
            input: input.saturating_sub(cached),
            output: n(2),
            cache_read: cached,
            cache_write: n(3),
        };
        let last = self.last_tokens;
        let delta = Tokens {
            input: tokens.input.saturating_sub(last.input),
            output: tokens.output.saturating_sub(last.output),
            cache_read: tokens.cache_read.saturating_sub(last.cache_read),
            cache_write: tokens.cache_write.saturating_sub(last.cache_write),
        };
        let model = self.model.clone().unwrap_or_else(|| "unknown".to_string());
        let tools = std::mem::take(&mut self.tools);
        self.accounting.message(&model, &delta, &tools);
        self.last_tokens = tokens;
        self.accounting.reported_tokens = true;
    }
}

impl Tally for RolloutTally {
    fn wants(&self, line: &[u8]) -> bool {
        self.accounting.first_timestamp.is_none() || SIEVE.keeps(line)
    }

    fn line(&mut self, line: &[u8]) -> bool {
        let Ok(Some(line)) = json::read_line::<LineView<'_>>(line) else {
            return false;
        };
        // What `RolloutDecoder::on_line` reads, in its order.
        let timestamp = line.timestamp.as_str();
        if let Some(at) = timestamp {
            self.accounting.timestamp(at);
        }
        let empty = PayloadView::default();
        let payload = line.payload.as_ref().unwrap_or(&empty);
        match (line.kind.as_str(), payload.kind.as_str()) {
            (Some("session_meta"), _) => {
                if let Some(cwd) = payload.cwd.as_str() {
                    self.accounting.cwd.get_or_insert_with(|| cwd.to_string());
                }
                self.legacy = payload.history_mode.as_str() != Some("paginated");
                if self.session_id.is_none() {
                    self.session_id = payload.id.non_empty_str().map(str::to_string);
                }
            }
            (Some("turn_context"), _) => {
                if let Some(model) = payload.model.as_str() {
                    self.model = Some(model.to_string());
                }
                if let Some(cwd) = payload.cwd.as_str() {
                    self.accounting.cwd.get_or_insert_with(|| cwd.to_string());
                }
            }
            (Some("event_msg"), Some("item_completed")) => {
                if let Some(item) = &payload.item {
                    if item.kind.as_str() == Some("UserMessage") {
                        self.accounting.prompt(&item.content.0.join("\n"));
                    }
                }
            }
            (Some("event_msg"), Some("token_count")) => {
                if let Some(info) = &payload.info {
                    self.token_count(&info.total);
                }
            }
            (Some("event_msg"), Some("user_message")) if self.legacy => {
                if let Some(text) = payload.message.as_str() {
                    self.accounting.prompt(text);
                }
            }
            (
                Some("response_item"),
                Some("function_call" | "custom_tool_call" | "local_shell_call"),
            ) => {
                let name = payload.name.as_str().unwrap_or("local_shell");
                self.tools.push(name.to_string());
            }
            (Some("response_item"), Some(kind @ ("web_search_call" | "tool_search_call"))) => {
                self.tools.push(kind.to_string());
            }
            _ => {}
        }
        timestamp.is_some()
    }

    fn late_timestamp(&mut self, line: &[u8]) -> bool {
        let Ok(Some(stamp)) = json::read_line::<Stamp<'_>>(line) else {
            return false;
        };
        stamp.timestamp.as_str().is_some_and(|at| {
            self.accounting.timestamp(at);
            true
        })
    }

    fn finish(self) -> (Option<String>, Accounting) {
        (self.session_id, self.accounting)
    }
}

harness_agents_core::json_view! {
    /// A line's timestamp alone.
    struct Stamp<'a> {
        /// `timestamp`.
        timestamp: "timestamp",
    }
}
