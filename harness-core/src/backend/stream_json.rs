//! The line shapes of a `stream-json` stream, read through borrowed, typed views: the parse
//! phase of the backends whose agents print one JSON object per line with a top-level `type`
//! of `system`, `assistant`, `user`, `stream_event` or `result`, messages made of content
//! blocks (`text`, `thinking`, `tool_use`, `tool_result`) and a closing `result` with the
//! run's figures. Where those agents differ (how they group blocks into lines, what a tool
//! result holds, which figures a result carries) is each backend's own decoding; what they
//! share is read here once: the views of a line, its blocks and a tool use's input
//! ([`parse`], [`read`], [`InputView`]), a tool result's failure text
//! ([`result_error_text`]), a block's JSON ([`block_value`]), the tool uses waiting for their
//! results ([`ToolUses`]) and the `init` line's version key ([`signed_by`], [`signed_by_other`]).
//!
//! One pass over a line reads the fields the rules need and skips the rest with [`Checked`].
//! Every field is [`Loose`] (any JSON value) and a repeated key keeps its last value, exactly as
//! `serde_json::Value` does, so a view fails exactly where `Value` parsing fails (S2). Parsing
//! here never changes state.
//!
//! Content blocks are read in one of two ways. A user line's blocks are read in place: their
//! JSON text is not kept, since only rare events need it, and those recover it from the line.
//! An assistant line's blocks are each kept as text as well (a recorded tool use needs its
//! block later, when the line is gone), and read from that text.

use std::borrow::Cow;
use std::fmt;

use crate::backend::NotJson;
use crate::backend::json::{
    self, Checked, FieldsSeed, JsonView, Key, Loose, Scan, ViewSeed, depth_exceeds, scan_into,
    view_of,
};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::PendingToolUse;
use crate::backend::pairing::{self, Waiting};
use crate::backend::reparse;

/// The deepest a content block may nest: `serde_json` allows 127 levels in a line, and a block
/// is the fourth (line, message, content list, block).
const MAX_BLOCK_DEPTH: usize = 127 - 3;

/// How the blocks of a message are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BlockMode {
    /// Views only, in the same pass (user lines).
    InPlace,
    /// Each block's text kept, then its view read from that text (assistant lines).
    Kept,
}

/// Implements the visits of the scalars a visitor is not after: the value is consumed and
/// `$other` returned.
macro_rules! other_scalars {
    ($other:expr) => {
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

/// Implements the visits of `null`: `$other` is returned.
macro_rules! other_null {
    ($other:expr) => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
        fn visit_none<E>(self) -> Result<Self::Value, E> {
            Ok($other)
        }
    };
}

/// Implements the visits of every scalar and `null`, returning `$other`.
macro_rules! other_values {
    ($other:expr) => {
        other_scalars!($other);
        other_null!($other);
    };
}

macro_rules! other_seq {
    ($other:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            while seq.next_element::<Checked>()?.is_some() {}
            Ok($other)
        }
    };
}

macro_rules! other_map {
    ($other:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            while map.next_entry::<Checked, Checked>()?.is_some() {}
            Ok($other)
        }
    };
}

crate::json_view! {
    /// The fields of a content block that rules read.
    pub struct BlockView<'a> {
        /// `type`.
        kind: "type",
        /// `text` of a text block.
        text: "text",
        /// `thinking` of a thinking block.
        thinking: "thinking",
        /// `id` of a tool use.
        id: "id",
        /// `name` of a tool use.
        name: "name",
        /// `tool_use_id` of a tool result.
        tool_use_id: "tool_use_id",
        /// `is_error` of a tool result.
        is_error: "is_error",
        /// `input` of a tool use (whether it is an object: C13).
        input: "input",
    }
}

/// One content block.
#[derive(Debug)]
pub struct Block<'a> {
    /// The fields rules read; `None` when the block is not an object.
    pub view: Option<BlockView<'a>>,
    /// The block as written, when it was kept (an assistant line's blocks are).
    pub raw: Option<&'a str>,
}

/// What a message's `content` is.
#[derive(Debug)]
pub enum Content<'a> {
    /// A list of blocks.
    List(Vec<Block<'a>>),
    /// A string.
    Text,
    /// Absent, `null`, or any other type.
    Other,
}

struct ContentSeed(BlockMode);

impl<'de> DeserializeSeed<'de> for ContentSeed {
    type Value = Content<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct ContentVisitor(BlockMode);
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
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Content::Text)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Content::Other)
            }
            other_map!(Content::Other);
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
                match self.0 {
                    BlockMode::InPlace => {
                        while let Some(view) =
                            seq.next_element_seed(ViewSeed::<BlockView<'de>>::new())?
                        {
                            blocks.push(Block { view, raw: None });
                        }
                    }
                    BlockMode::Kept => {
                        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                            let raw = raw.get();
                            // Taking the text skips the block unchecked; reading its view checks
                            // it, but counts nesting from the block, which `Value` counts from the
                            // line (a block sits inside the line, its message and the content).
                            if depth_exceeds(raw, MAX_BLOCK_DEPTH) {
                                return Err(de::Error::custom("recursion limit exceeded"));
                            }
                            let mut reader = serde_json::Deserializer::from_str(raw);
                            let view = BlockView::view(&mut reader).map_err(de::Error::custom)?;
                            blocks.push(Block {
                                view,
                                raw: Some(raw),
                            });
                        }
                    }
                }
                Ok(Content::List(blocks))
            }
        }
        deserializer.deserialize_any(ContentVisitor(self.0))
    }
}

/// A line's `message`.
#[derive(Debug)]
enum Message<'a> {
    /// Absent, or not an object.
    None,
    /// An object: its `id`, `content`, and (for a stored transcript's accounting) `model` and
    /// `usage`.
    Object {
        id: Loose<'a>,
        content: Content<'a>,
        model: Loose<'a>,
        usage: TokenFields<'a>,
    },
}

/// Reads a message with its blocks in `.0`; `.1` is whether its `model` and `usage` are read
/// (a stored transcript's accounting reads them; a live stream's rules never do, and skip them
/// checked, which costs less than reading them).
struct MessageSeed(BlockMode, bool);

impl<'de> DeserializeSeed<'de> for MessageSeed {
    type Value = Message<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct MessageVisitor(BlockMode, bool);
        impl<'de> Visitor<'de> for MessageVisitor {
            type Value = Message<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message")
            }
            other_values!(Message::None);
            other_seq!(Message::None);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut id, mut content) = (Loose::Absent, Content::Other);
                let (mut model, mut usage) = (Loose::Absent, TokenFields::default());
                while let Some(Key(key)) = map.next_key()? {
                    match key.as_ref() {
                        "id" => id = map.next_value()?,
                        "content" => content = map.next_value_seed(ContentSeed(self.0))?,
                        "model" if self.1 => model = map.next_value()?,
                        "usage" if self.1 => {
                            usage = map.next_value_seed(TokenSeed(&USAGE_NAMES))?
                        }
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(Message::Object {
                    id,
                    content,
                    model,
                    usage,
                })
            }
        }
        deserializer.deserialize_any(MessageVisitor(self.0, self.1))
    }
}

/// What a line's `tool_use_result` is (C10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolUseResult {
    /// Absent or `null`: it does not belong to any result.
    None,
    /// An object; whether it has `interrupted: true`.
    Object {
        /// `interrupted` is `true`.
        interrupted: bool,
    },
    /// Any other value.
    Other,
}

struct ToolUseResultSeed;

impl<'de> DeserializeSeed<'de> for ToolUseResultSeed {
    type Value = ToolUseResult;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct TurVisitor;
        impl<'de> Visitor<'de> for TurVisitor {
            type Value = ToolUseResult;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a tool_use_result")
            }
            other_scalars!(ToolUseResult::Other);
            other_null!(ToolUseResult::None);
            other_seq!(ToolUseResult::Other);
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                let seed = FieldsSeed(&["interrupted"]);
                let fields = seed.deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ToolUseResult::Object {
                    interrupted: fields.is_some_and(|[interrupted]| interrupted.is_true()),
                })
            }
        }
        deserializer.deserialize_any(TurVisitor)
    }
}

crate::json_view! {
    /// The fields of a tool use's `input` that the tool map reads (C13, C14).
    pub struct InputView<'a> {
        /// `file_path`.
        file_path: "file_path",
        /// `notebook_path`.
        notebook_path: "notebook_path",
        /// `offset`.
        offset: "offset",
        /// `limit`.
        limit: "limit",
        /// `pattern`.
        pattern: "pattern",
        /// `path`.
        path: "path",
        /// `command`.
        command: "command",
        /// `skill`.
        skill: "skill",
        /// `directory` (where a shell command runs).
        directory: "directory",
    }
}

crate::json_view! {
    /// A recorded tool use block, for its `input`.
    struct ToolUseBlock<'a> {
        /// `input`, when an object.
        input: "input" => Option<InputView<'a>>,
    }
}

/// The `input` of a recorded tool use block (kept as text), when it is an object. The text was
/// read as valid JSON when recorded, so `None` also covers what cannot happen.
pub fn tool_input(block: &str) -> Option<InputView<'_>> {
    view_of::<ToolUseBlock<'_>>(block)?.input
}

/// Token figures as a result reports them (O2); `Loose` so that non-numbers are ignored.
#[derive(Debug, Default)]
pub struct TokenFields<'a> {
    /// Input tokens.
    pub input: Loose<'a>,
    /// Output tokens.
    pub output: Loose<'a>,
    /// Input tokens read from the cache.
    pub cache_read: Loose<'a>,
    /// Input tokens written to the cache.
    pub cache_creation: Loose<'a>,
}

/// Reads token figures from an object under the given four names; anything else gives none.
struct TokenSeed(&'static [&'static str; 4]);

/// The names in a result's `usage`.
const USAGE_NAMES: [&str; 4] = [
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

/// The names in each model of a result's `modelUsage`.
const MODEL_NAMES: [&str; 4] = [
    "inputTokens",
    "outputTokens",
    "cacheReadInputTokens",
    "cacheCreationInputTokens",
];

impl<'de> DeserializeSeed<'de> for TokenSeed {
    type Value = TokenFields<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let fields = FieldsSeed(self.0).deserialize(deserializer)?;
        Ok(fields
            .map(|[input, output, cache_read, cache_creation]| TokenFields {
                input,
                output,
                cache_read,
                cache_creation,
            })
            .unwrap_or_default())
    }
}

/// A result's `modelUsage`: each model's figures, a repeated model keeping its last entry;
/// `None` when it is not an object.
struct ModelUsageSeed;

impl<'de> DeserializeSeed<'de> for ModelUsageSeed {
    type Value = Option<Vec<(Cow<'de, str>, TokenFields<'de>)>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct ModelsVisitor;
        impl<'de> Visitor<'de> for ModelsVisitor {
            type Value = Option<Vec<(Cow<'de, str>, TokenFields<'de>)>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("model usage")
            }
            other_values!(None);
            other_seq!(None);
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut models: Vec<(Cow<'de, str>, TokenFields<'de>)> = Vec::new();
                while let Some(Key(key)) = map.next_key()? {
                    let tokens = map.next_value_seed(TokenSeed(&MODEL_NAMES))?;
                    match models.iter_mut().find(|(name, _)| *name == key) {
                        Some(entry) => entry.1 = tokens,
                        None => models.push((key, tokens)),
                    }
                }
                Ok(Some(models))
            }
        }
        deserializer.deserialize_any(ModelsVisitor)
    }
}

/// A result's `errors`: its strings (other entries skipped); empty when it is not a list.
struct ErrorsSeed;

impl<'de> DeserializeSeed<'de> for ErrorsSeed {
    type Value = Vec<Cow<'de, str>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct ErrorsVisitor;
        impl<'de> Visitor<'de> for ErrorsVisitor {
            type Value = Vec<Cow<'de, str>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("errors")
            }
            other_values!(Vec::new());
            other_map!(Vec::new());
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut errors = Vec::new();
                while let Some(item) = seq.next_element::<Loose<'de>>()? {
                    if let Loose::Str(text) = item {
                        errors.push(text);
                    }
                }
                Ok(errors)
            }
        }
        deserializer.deserialize_any(ErrorsVisitor)
    }
}

/// The fields of a `result` line (C7, O2).
#[derive(Debug, Default)]
pub struct ResultFields<'a> {
    /// `subtype`.
    pub subtype: Loose<'a>,
    /// `is_error`.
    pub is_error: Loose<'a>,
    /// `result`.
    pub result: Loose<'a>,
    /// `structured_output`, when present and not `null`.
    pub structured_output: Option<serde_json::Value>,
    /// `modelUsage`, when an object.
    pub model_usage: Option<Vec<(Cow<'a, str>, TokenFields<'a>)>>,
    /// `usage`.
    pub usage: TokenFields<'a>,
    /// `total_cost_usd`.
    pub total_cost_usd: Loose<'a>,
    /// `duration_api_ms`.
    pub duration_api_ms: Loose<'a>,
    /// `duration_ms`.
    pub duration_ms: Loose<'a>,
    /// `num_turns`.
    pub num_turns: Loose<'a>,
    /// The strings of `errors`.
    pub errors: Vec<Cow<'a, str>>,
    /// `error.message`, when `error` is an object (an agent that reports a failed run's
    /// cause there rather than in `result`).
    pub error_message: Loose<'a>,
}

/// The parts of a line the normalizer reads.
#[derive(Debug)]
pub struct LineParts<'a> {
    /// `session_id` (a transcript's `sessionId`).
    pub session_id: Loose<'a>,
    /// `parent_tool_use_id` (never read from a transcript).
    pub parent: Loose<'a>,
    /// The rest, by `type`.
    pub body: Body<'a>,
    /// What a stored transcript's accounting reads (T rules); read only by a stored decoder.
    pub stored: Stored<'a>,
}

/// The fields of a transcript line its accounting reads (T rules in `docs/sessions.md`).
#[derive(Debug, Default)]
pub struct Stored<'a> {
    /// `type`.
    pub kind: Loose<'a>,
    /// `timestamp`.
    pub timestamp: Loose<'a>,
    /// `cwd`.
    pub cwd: Loose<'a>,
    /// `message.id`.
    pub message_id: Loose<'a>,
    /// `message.model` (read in the [`Dialect::Transcript`] only).
    pub model: Loose<'a>,
    /// `message.usage` (read in the [`Dialect::Transcript`] only).
    pub usage: TokenFields<'a>,
    /// A `cost-state` line's `totalCostUSD`.
    pub total_cost_usd: Loose<'a>,
}

/// Which of two forms of the same lines a line is in: what the agent prints, or what it
/// stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `--output-format stream-json` (snake_case `session_id`, `tool_use_result`).
    Stream,
    /// A stored transcript (camelCase `sessionId`, `toolUseResult`, `totalCostUSD`; no
    /// `parent_tool_use_id`).
    Transcript,
}

/// A line by its `type`.
#[derive(Debug)]
pub enum Body<'a> {
    /// `assistant`: the message id and content (blocks kept as text).
    Assistant {
        /// `message.id`.
        id: Loose<'a>,
        /// `message.content`.
        content: Content<'a>,
    },
    /// `user`: the message content (blocks read in place) and the line's `tool_use_result`.
    User {
        /// `message.content`.
        content: Content<'a>,
        /// `tool_use_result`.
        tool_use_result: ToolUseResult,
    },
    /// `system`.
    System {
        /// `subtype`.
        subtype: Loose<'a>,
        /// `cwd`.
        cwd: Loose<'a>,
        /// `tool_use_id` (a `task_notification` names the background sub-agent that finished).
        tool_use_id: Loose<'a>,
    },
    /// `stream_event`.
    StreamEvent,
    /// `result`.
    Result(Box<ResultFields<'a>>),
    /// Any other line: read through a `Value`.
    Other,
}

struct Line<'a> {
    kind: Loose<'a>,
    subtype: Loose<'a>,
    session_id: Loose<'a>,
    parent: Loose<'a>,
    cwd: Loose<'a>,
    tool_use_id: Loose<'a>,
    message: Message<'a>,
    tool_use_result: ToolUseResult,
    /// A result's fields, boxed when the first of them is read: most lines have none, and a
    /// line is moved several times on its way to its parts.
    result: Option<Box<ResultFields<'a>>>,
    timestamp: Loose<'a>,
}

impl Default for Line<'_> {
    fn default() -> Self {
        Line {
            kind: Loose::Absent,
            subtype: Loose::Absent,
            session_id: Loose::Absent,
            parent: Loose::Absent,
            cwd: Loose::Absent,
            tool_use_id: Loose::Absent,
            message: Message::None,
            tool_use_result: ToolUseResult::None,
            result: None,
            timestamp: Loose::Absent,
        }
    }
}

/// A line as the core's entry point reads it ([`json::read_line`]): the [`Line`] of one
/// dialect (`TRANSCRIPT`: a stored transcript's) with its blocks read in place (`IN_PLACE`) or
/// kept. The checked path reads every member the rules use (serde visitors); the fast one
/// ([`JsonView::scan_member`]) reads a live stream's scalar members and skips what no rule
/// reads, and is unsure of the rest (a message, a result's figures), so that a `system` or
/// `stream_event` line, often the longest of a run (an `init` line's lists of tools and
/// commands), is read by the fast path alone.
#[derive(Default)]
struct LineView<'a, const TRANSCRIPT: bool, const IN_PLACE: bool>(Line<'a>);

/// [`MessageSeed`] on the fast path, for a live stream's kept blocks (an assistant line's):
/// the same `id` and `content`, each block kept as written ([`Scan::raw`]) and its view read
/// from that text, fast when sure, else checked; `model` and `usage` skipped, as the stream
/// dialect skips them. `None` when unsure.
fn scan_message<'de>(scan: &mut Scan<'de>) -> Option<Message<'de>> {
    if scan.peek()? != b'{' {
        scan.skip()?;
        return Some(Message::None);
    }
    let (mut id, mut content) = (Loose::Absent, Content::Other);
    scan.members(|scan, key| {
        match key {
            "id" => id = scan.loose()?,
            "content" => content = scan_content(scan)?,
            _ => scan.skip()?,
        }
        Some(())
    })?;
    Some(Message::Object {
        id,
        content,
        model: Loose::Absent,
        usage: TokenFields::default(),
    })
}

/// [`ContentSeed`] with [`BlockMode::Kept`] on the fast path; `None` when unsure.
fn scan_content<'de>(scan: &mut Scan<'de>) -> Option<Content<'de>> {
    match scan.peek()? {
        b'[' => {
            let mut blocks = Vec::new();
            scan.elements(|scan| {
                let raw = scan.raw()?;
                let mut view = BlockView::default();
                let view = match scan_into(raw, &mut view, false) {
                    Some(()) => Some(view),
                    None => view_of::<BlockView<'_>>(raw),
                };
                blocks.push(Block {
                    view,
                    raw: Some(raw),
                });
                Some(())
            })?;
            Some(Content::List(blocks))
        }
        b'"' => scan.skip().map(|()| Content::Text),
        _ => scan.skip().map(|()| Content::Other),
    }
}

/// A line's result fields, boxed when the first is read.
fn result_fields<'l, 'a>(
    result: &'l mut Option<Box<ResultFields<'a>>>,
) -> &'l mut ResultFields<'a> {
    result.get_or_insert_with(Box::default)
}

/// The name a member of a line of the dialect (`transcript`) has in the stream: `""` for one
/// that dialect's rules never read.
fn stream_key(transcript: bool, key: &str) -> &str {
    match (transcript, key) {
        (true, "sessionId") => "session_id",
        (true, "toolUseResult") => "tool_use_result",
        (true, "totalCostUSD") => "total_cost_usd",
        (true, "timestamp") => "timestamp",
        (true, "session_id" | "tool_use_result" | "parent_tool_use_id")
        | (true, "total_cost_usd" | "modelUsage" | "usage")
        | (false, "timestamp") => "",
        (_, other) => other,
    }
}

impl<'de, const TRANSCRIPT: bool, const IN_PLACE: bool> JsonView<'de>
    for LineView<'de, TRANSCRIPT, IN_PLACE>
{
    /// A transcript's lines are nearly all messages, of which the fast path is unsure after
    /// a long prefix of bookkeeping members: it is not tried on them.
    const SCANS: bool = !TRANSCRIPT;

    fn read_member<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        _costly: bool,
    ) -> Result<bool, A::Error> {
        let line = &mut self.0;
        let key = stream_key(TRANSCRIPT, key);
        let slot = match key {
            "is_error" => &mut result_fields(&mut line.result).is_error,
            "result" => &mut result_fields(&mut line.result).result,
            "total_cost_usd" => &mut result_fields(&mut line.result).total_cost_usd,
            "duration_api_ms" => &mut result_fields(&mut line.result).duration_api_ms,
            "duration_ms" => &mut result_fields(&mut line.result).duration_ms,
            "num_turns" => &mut result_fields(&mut line.result).num_turns,
            "structured_output" => {
                let r = result_fields(&mut line.result);
                let value: serde_json::Value = map.next_value()?;
                r.structured_output = Some(value).filter(|v| !v.is_null());
                return Ok(true);
            }
            "modelUsage" => {
                let r = result_fields(&mut line.result);
                r.model_usage = map.next_value_seed(ModelUsageSeed)?;
                return Ok(true);
            }
            "usage" => {
                result_fields(&mut line.result).usage =
                    map.next_value_seed(TokenSeed(&USAGE_NAMES))?;
                return Ok(true);
            }
            "errors" => {
                result_fields(&mut line.result).errors = map.next_value_seed(ErrorsSeed)?;
                return Ok(true);
            }
            "error" => {
                let fields = map.next_value_seed(FieldsSeed(&["message"]))?;
                result_fields(&mut line.result).error_message =
                    fields.map_or(Loose::Absent, |[message]| message);
                return Ok(true);
            }
            "type" => &mut line.kind,
            "subtype" => &mut line.subtype,
            "session_id" => &mut line.session_id,
            "timestamp" => &mut line.timestamp,
            "parent_tool_use_id" => &mut line.parent,
            "cwd" => &mut line.cwd,
            "tool_use_id" => &mut line.tool_use_id,
            "message" => {
                let mode = if IN_PLACE {
                    BlockMode::InPlace
                } else {
                    BlockMode::Kept
                };
                line.message = map.next_value_seed(MessageSeed(mode, TRANSCRIPT))?;
                return Ok(true);
            }
            "tool_use_result" => {
                line.tool_use_result = map.next_value_seed(ToolUseResultSeed)?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        *slot = map.next_value()?;
        Ok(true)
    }

    fn scan_member(&mut self, key: &str, scan: &mut Scan<'de>, _costly: bool) -> Option<bool> {
        let line = &mut self.0;
        // The scalar members `read_member` reads as `Loose`, and nothing else: the same value
        // on both paths (`Loose`'s `Member`); any member read another way makes it unsure.
        let slot = match stream_key(TRANSCRIPT, key) {
            "is_error" => &mut result_fields(&mut line.result).is_error,
            "result" => &mut result_fields(&mut line.result).result,
            "total_cost_usd" => &mut result_fields(&mut line.result).total_cost_usd,
            "duration_api_ms" => &mut result_fields(&mut line.result).duration_api_ms,
            "duration_ms" => &mut result_fields(&mut line.result).duration_ms,
            "num_turns" => &mut result_fields(&mut line.result).num_turns,
            "type" => &mut line.kind,
            "subtype" => &mut line.subtype,
            "session_id" => &mut line.session_id,
            "timestamp" => &mut line.timestamp,
            "parent_tool_use_id" => &mut line.parent,
            "cwd" => &mut line.cwd,
            "tool_use_id" => &mut line.tool_use_id,
            "message" if !IN_PLACE && !TRANSCRIPT => {
                line.message = scan_message(scan)?;
                return Some(true);
            }
            "structured_output" | "modelUsage" | "usage" | "errors" | "error" | "message"
            | "tool_use_result" => return None,
            _ => return Some(false),
        };
        *slot = scan.loose()?;
        Some(true)
    }
}

/// Reads `text` as a line of `dialect` with its blocks in `mode`, through the core's entry
/// point; `None` when it is not a JSON object.
fn read_line(text: &str, mode: BlockMode, dialect: Dialect) -> Option<Line<'_>> {
    fn view<const T: bool, const I: bool>(text: &str) -> Option<Line<'_>> {
        // A line that starts with a user type holds a message whose blocks are read in place,
        // of which the fast path is unsure: the checked path reads it at once rather than
        // after the fast one gave up (the entry point's own checked path, the same reads).
        if text.starts_with(r#"{"type":"user""#) {
            let mut reader = serde_json::Deserializer::from_str(text);
            let view = LineView::<'_, T, I>::view(&mut reader).ok()??;
            reader.end().ok()?;
            return Some(view.0);
        }
        let view = json::read_object::<LineView<'_, T, I>>(text).ok()??;
        Some(view.0)
    }
    match (dialect, mode) {
        (Dialect::Stream, BlockMode::InPlace) => view::<false, true>(text),
        (Dialect::Stream, BlockMode::Kept) => view::<false, false>(text),
        (Dialect::Transcript, BlockMode::InPlace) => view::<true, true>(text),
        (Dialect::Transcript, BlockMode::Kept) => view::<true, false>(text),
    }
}

/// Reads one line of the live stream through the core's entry point ([`json::read_line`]):
/// its text and parts when it is a JSON object, `None` when it is JSON but no object (S3),
/// `NotJson` exactly where a `Value` parse fails (S2).
pub fn read(line: &[u8]) -> Result<Option<(&str, LineParts<'_>)>, NotJson> {
    if let Some((text, parts)) = json::object_text(line).and_then(|t| Some((t, parse(t)?))) {
        return Ok(Some((text, parts)));
    }
    // Not UTF-8, not an object, or not JSON: the entry point says which (never a view here,
    // since a line that is an object was read above).
    json::read_line::<LineView<'_, false, false>>(line).map(|_| None)
}

/// Reads the parts of a line that starts with `{`; `None` when it is not valid JSON.
pub fn parse(text: &str) -> Option<LineParts<'_>> {
    parse_in(text, Dialect::Stream)
}

/// [`parse`] for a line of the given format.
pub fn parse_in(text: &str, dialect: Dialect) -> Option<LineParts<'_>> {
    // The agents write `type` first: read a user line's blocks in place. Should the line end
    // up another type (a repeated `type` key), read it again keeping its blocks.
    // A transcript writes `parentUuid` and `isSidechain` first: its user lines are recognized
    // by their `"type":"user"` member after those.
    let user = match dialect {
        Dialect::Stream => text.starts_with(r#"{"type":"user""#),
        Dialect::Transcript => text
            .get(..400)
            .unwrap_or(text)
            .contains(r#","type":"user","#),
    };
    let mode = if user {
        BlockMode::InPlace
    } else {
        BlockMode::Kept
    };
    let mut line = read_line(text, mode, dialect)?;
    if mode == BlockMode::InPlace && line.kind.as_str() != Some("user") {
        line = read_line(text, BlockMode::Kept, dialect)?;
    }
    let (id, content, model, usage) = match line.message {
        Message::Object {
            id,
            content,
            model,
            usage,
        } => (id, content, model, usage),
        Message::None => (
            Loose::Absent,
            Content::Other,
            Loose::Absent,
            TokenFields::default(),
        ),
    };
    let stored = Stored {
        kind: line.kind.clone(),
        timestamp: line.timestamp,
        cwd: line.cwd.clone(),
        message_id: id.clone(),
        model,
        usage,
        total_cost_usd: if dialect == Dialect::Transcript {
            line.result
                .as_mut()
                .map(|r| std::mem::take(&mut r.total_cost_usd))
                .unwrap_or_default()
        } else {
            Loose::Absent
        },
    };
    let body = match line.kind.as_str() {
        Some("assistant") => Body::Assistant { id, content },
        Some("user") => Body::User {
            content,
            tool_use_result: line.tool_use_result,
        },
        Some("system") => Body::System {
            subtype: line.subtype,
            cwd: line.cwd,
            tool_use_id: line.tool_use_id,
        },
        Some("stream_event") => Body::StreamEvent,
        Some("result") => {
            let mut result = line.result.unwrap_or_default();
            result.subtype = line.subtype;
            Body::Result(result)
        }
        _ => Body::Other,
    };
    Some(LineParts {
        session_id: line.session_id,
        parent: line.parent,
        body,
        stored,
    })
}

/// The failure text of a tool result (C10a), read from its block's JSON text without building
/// it: the string `content`, or the `text` of its text blocks joined with `"\n"`; `None` when
/// that is empty. Only the first `limit` characters are kept (J6), so a huge result costs no
/// more than its line.
pub fn result_error_text(block: &str, limit: usize) -> Option<String> {
    read_text(block, Member("content", ContentText(limit)))
}

/// [`result_error_text`] for the result at `index` in a user line's `message.content`.
pub fn line_result_error_text(line: &str, index: usize, limit: usize) -> Option<String> {
    let block = Member("content", ContentText(limit));
    let seed = Member("message", Member("content", Nth(index, block)));
    read_text(line, seed)
}

/// The text `seed` reads from `json`; `None` when it is empty (or the JSON cannot be read).
fn read_text<'de>(
    json: &'de str,
    seed: impl DeserializeSeed<'de, Value = String>,
) -> Option<String> {
    let mut reader = serde_json::Deserializer::from_str(json);
    let text = seed.deserialize(&mut reader).ok()?;
    (!text.is_empty()).then_some(text)
}

/// The text `.1` reads from member `.0` of an object (its last value when repeated); empty when
/// the value is not an object or has no such member. Other members are skipped, checked.
#[derive(Clone, Copy)]
struct Member<S>(&'static str, S);

impl<'de, S: DeserializeSeed<'de, Value = String> + Copy> DeserializeSeed<'de> for Member<S> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct MemberV<S>(&'static str, S);
        impl<'de, S: DeserializeSeed<'de, Value = String> + Copy> Visitor<'de> for MemberV<S> {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            other_values!(String::new());
            other_seq!(String::new());
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut text = String::new();
                while let Some(Key(key)) = map.next_key()? {
                    if key == self.0 {
                        text = map.next_value_seed(self.1)?;
                    } else {
                        map.next_value::<Checked>()?;
                    }
                }
                Ok(text)
            }
        }
        d.deserialize_any(MemberV(self.0, self.1))
    }
}

/// The text `.1` reads from element `.0` of a list; empty when the value is not a list or is
/// shorter. Other elements are skipped, checked.
#[derive(Clone, Copy)]
struct Nth<S>(usize, S);

impl<'de, S: DeserializeSeed<'de, Value = String> + Copy> DeserializeSeed<'de> for Nth<S> {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct NthV<S>(usize, S);
        impl<'de, S: DeserializeSeed<'de, Value = String> + Copy> Visitor<'de> for NthV<S> {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            other_values!(String::new());
            other_map!(String::new());
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut text = String::new();
                let mut i = 0;
                loop {
                    if i == self.0 {
                        match seq.next_element_seed(self.1)? {
                            Some(t) => text = t,
                            None => break,
                        }
                    } else if seq.next_element::<Checked>()?.is_none() {
                        break;
                    }
                    i += 1;
                }
                Ok(text)
            }
        }
        d.deserialize_any(NthV(self.0, self.1))
    }
}

/// Appends up to `room` characters of `text` to `out`; returns the room left.
fn append_capped(out: &mut String, text: &str, room: usize) -> usize {
    let cut = crate::backend::text::truncate_chars(text, room);
    out.push_str(cut);
    room - cut.chars().count()
}

/// A result's `content`: the string, or its text blocks' `text` joined with `"\n"`, capped.
#[derive(Clone, Copy)]
struct ContentText(usize);

impl<'de> DeserializeSeed<'de> for ContentText {
    type Value = String;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        struct ContentV(usize);
        impl<'de> Visitor<'de> for ContentV {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("result content")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(String::new())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(String::new())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(String::new())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(String::new())
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                let mut out = String::new();
                append_capped(&mut out, v, self.0);
                Ok(out)
            }
            other_null!(String::new());
            other_map!(String::new());
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut out = String::new();
                let mut room = self.0;
                let mut first = true;
                while let Some(view) = seq.next_element_seed(ViewSeed::<TextBlock<'de>>::new())? {
                    let Some(view) = view else { continue };
                    let (Some("text"), Some(text)) = (view.kind.as_str(), view.text.as_str())
                    else {
                        continue;
                    };
                    if !first {
                        room = append_capped(&mut out, "\n", room);
                    }
                    first = false;
                    room = append_capped(&mut out, text, room);
                }
                Ok(out)
            }
        }
        d.deserialize_any(ContentV(self.0))
    }
}

crate::json_view! {
    /// A block of a result's `content`.
    struct TextBlock<'a> {
        /// `type`.
        kind: "type",
        /// `text`.
        text: "text",
    }
}

/// A content block's JSON (J8): its kept text (`raw`), or else `message.content[index]` of the
/// line `line` builds, `null` when there is none.
pub fn block_value(raw: Option<&str>, index: usize, line: impl FnOnce() -> Value) -> Value {
    match raw {
        Some(raw) => reparse(raw.as_bytes()),
        None => line()
            .pointer(&format!("/message/content/{index}"))
            .cloned()
            .unwrap_or(Value::Null),
    }
}

/// A `tool_use` block recorded and waiting for its result.
#[derive(Debug)]
pub struct ToolUse {
    /// Its `id`.
    pub id: String,
    /// Its `name`, when a string.
    pub name: Option<String>,
    /// The thread it was used in (J4).
    pub thread: Option<String>,
    /// The block as written; parsed only when its events are made.
    pub block: Box<str>,
}

impl Waiting for ToolUse {
    fn id(&self) -> &str {
        &self.id
    }

    fn pending(&self) -> PendingToolUse {
        PendingToolUse {
            id: self.id.clone(),
            tool: self.name.clone(),
            thread: self.thread.clone(),
        }
    }
}

/// What a tool result's `tool_use_id` finds among the `tool_use` blocks waiting.
pub type Paired = pairing::Paired<ToolUse>;

/// The `tool_use` blocks waiting for their results (C9, C11, S9): [`pairing::ToolUses`].
///
/// ```
/// use harness_agents_core::backend::stream_json::{Paired, ToolUse, ToolUses};
///
/// let tool_use = |id: &str| ToolUse {
///     id: id.to_string(),
///     name: Some("Read".to_string()),
///     thread: None,
///     block: r#"{"type":"tool_use"}"#.into(),
/// };
/// let mut uses = ToolUses::default();
/// uses.record(tool_use("a"));
/// uses.record(tool_use("b"));
/// uses.record(tool_use("b"));
/// assert!(matches!(uses.take(Some("a")), Paired::One(u) if u.id == "a"));
/// assert!(matches!(uses.take(Some("b")), Paired::Ambiguous(c) if c.len() == 2));
/// assert!(matches!(uses.take(Some("b")), Paired::None));
/// assert!(uses.pop_first().is_none());
/// ```
pub type ToolUses = pairing::ToolUses<ToolUse>;

/// Whether `line` is a `system` line that names the version of the agent that printed it
/// under `key` (a string): the signature the agents of this shape put in their `init` line.
///
/// ```
/// use harness_agents_core::backend::stream_json::{signed_by, signed_by_other};
/// use serde_json::json;
///
/// let init = json!({"type": "system", "subtype": "init", "x_code_version": "1.0"});
/// assert!(signed_by(&init, "x_code_version"));
/// assert!(signed_by_other(&init, "y_code_version"));
/// assert!(!signed_by_other(&init, "x_code_version"));
/// assert!(!signed_by_other(&json!({"type": "system"}), "y_code_version"));
/// ```
pub fn signed_by(line: &Value, key: &str) -> bool {
    is_system(line) && line.get(key).is_some_and(Value::is_string)
}

/// Whether `line` is a `system` line signed ([`signed_by`]) by another agent than the one
/// whose key is `own`: a string member whose key ends in `_code_version` and is not `own`.
/// A backend whose lines have the same shape as another's declines those lines when it picks
/// the backend of a stream (`Backend::recognizes`).
pub fn signed_by_other(line: &Value, own: &str) -> bool {
    is_system(line)
        && line.as_object().is_some_and(|members| {
            members
                .iter()
                .any(|(k, v)| k != own && k.ends_with("_code_version") && v.is_string())
        })
}

fn is_system(line: &Value) -> bool {
    line.get("type").and_then(Value::as_str) == Some("system")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_value_does() {
        let text = r#"{"type":"user","type":"assistant","message":{"id":"a","id":"b","content":[{"type":"text","text":"x","text":"y"}]}}"#;
        let parts = parse(text).unwrap();
        let Body::Assistant {
            id,
            content: Content::List(blocks),
        } = parts.body
        else {
            panic!("{:?}", parts.body)
        };
        assert_eq!(id.as_str(), Some("b"));
        let view = blocks[0].view.as_ref().unwrap();
        assert_eq!(view.text.as_str(), Some("y"));
        assert_eq!(
            blocks[0].raw,
            Some(r#"{"type":"text","text":"x","text":"y"}"#)
        );
    }

    #[test]
    fn fields_of_any_type_do_not_fail_a_view() {
        let text = r#"{"type":"assistant","session_id":5,"message":{"id":[1],"content":[7,{"type":"text","text":{}}]}}"#;
        let parts = parse(text).unwrap();
        assert_eq!(parts.session_id, Loose::Number(5.into()));
        let Body::Assistant {
            id,
            content: Content::List(blocks),
        } = parts.body
        else {
            panic!("{:?}", parts.body)
        };
        assert_eq!(id, Loose::Array);
        assert!(blocks[0].view.is_none());
        assert_eq!(blocks[0].raw, Some("7"));
        assert_eq!(
            blocks[1].view.as_ref().map(|v| &v.text),
            Some(&Loose::Object)
        );
    }

    #[test]
    fn user_blocks_are_read_in_place() {
        let text = r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","is_error":true,"content":"no"}]},"tool_use_result":{"interrupted":true}}"#;
        let parts = parse(text).unwrap();
        let Body::User {
            content: Content::List(blocks),
            tool_use_result,
        } = parts.body
        else {
            panic!("{:?}", parts.body)
        };
        assert_eq!(tool_use_result, ToolUseResult::Object { interrupted: true });
        assert_eq!(blocks[0].raw, None);
        let view = blocks[0].view.as_ref().unwrap();
        assert_eq!(view.tool_use_id.as_str(), Some("t"));
        assert!(view.is_error.is_true());
    }

    #[test]
    fn a_message_that_is_not_an_object_has_no_content() {
        let parts = parse(r#"{"type":"user","message":"hi"}"#).unwrap();
        assert!(matches!(
            parts.body,
            Body::User {
                content: Content::Other,
                ..
            }
        ));
        let parts =
            parse(r#"{"type":"user","message":{"content":"hi"},"tool_use_result":null}"#).unwrap();
        assert!(matches!(
            parts.body,
            Body::User {
                content: Content::Text,
                tool_use_result: ToolUseResult::None
            }
        ));
    }

    /// S2: a line is read exactly when `serde_json` parses it into a `Value`.
    #[test]
    fn s2_a_view_exists_exactly_when_value_parses() {
        let nested = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        let lines = [
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"x","v":{}}}]}}}}"#,
                nested(123)
            ),
            format!(
                r#"{{"type":"assistant","message":{{"content":[{{"type":"x","v":{}}}]}}}}"#,
                nested(124)
            ),
            format!(
                r#"{{"type":"user","message":{{"content":[{{"type":"x","v":{}}}]}}}}"#,
                nested(123)
            ),
            format!(
                r#"{{"type":"user","message":{{"content":[{{"type":"x","v":{}}}]}}}}"#,
                nested(124)
            ),
            format!(r#"{{"type":"system","x":{}}}"#, nested(126)),
            format!(r#"{{"type":"system","x":{}}}"#, nested(127)),
            r#"{"type":"assistant","message":{"content":[{"type":"x","v":1e999}]}}"#.to_string(),
            r#"{"type":"assistant","message":{"content":[{"type":"x","v":"\udfff"}]}}"#.to_string(),
            r#"{"type":"user","message":{"content":[{"type":"x","v":"\ud800"}]}}"#.to_string(),
            r#"{"type":"stream_event","event":{"n":-1e400}}"#.to_string(),
            r#"{"type":"stream_event","event":{"s":"\ud83d\ude00","n":2.5e10}}"#.to_string(),
        ];
        for line in &lines {
            let value = serde_json::from_str::<serde_json::Value>(line).is_ok();
            assert_eq!(
                parse(line).is_some(),
                value,
                "{}",
                &line[..line.len().min(80)]
            );
        }
    }

    /// The fast path reads a system line as the checked one does: a repeated key's last
    /// value, an escape decoded, a skipped list checked; it is unsure of a message.
    #[test]
    fn the_fast_path_reads_what_the_checked_one_reads() {
        let text = r#"{"type":"system","subtype":"init","cwd":"/a","cwd":"/b\u0041","session_id":"s","tools":["x",{"y":[1.5e3]}],"n":-0}"#;
        let mut scan = Scan::new(text).unwrap();
        let mut fast = LineView::<'_, false, false>::default();
        assert!(fast.scan_members(&mut scan, false).is_some());
        let mut reader = serde_json::Deserializer::from_str(text);
        let checked = LineView::<'_, false, false>::view(&mut reader)
            .unwrap()
            .unwrap();
        for line in [&fast.0, &checked.0] {
            assert_eq!(line.kind.as_str(), Some("system"));
            assert_eq!(line.subtype.as_str(), Some("init"));
            assert_eq!(line.cwd.as_str(), Some("/bA"));
            assert_eq!(line.session_id.as_str(), Some("s"));
        }
        // A user line's blocks, read in place: unsure.
        let user = r#"{"type":"user","message":{"content":[]}}"#;
        let mut scan = Scan::new(user).unwrap();
        let mut fast = LineView::<'_, false, true>::default();
        assert!(fast.scan_members(&mut scan, false).is_none());
        // An assistant line's kept blocks: the same id, blocks and views either way.
        let text = r#"{"type":"assistant","message":{"id":"a","model":"m","id":"b","content":[7,{"type":"text","text":"x\n","text":"y"},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"f"}}],"usage":{"input_tokens":1}}}"#;
        let mut scan = Scan::new(text).unwrap();
        let mut fast = LineView::<'_, false, false>::default();
        assert!(fast.scan_members(&mut scan, false).is_some());
        let mut reader = serde_json::Deserializer::from_str(text);
        let checked = LineView::<'_, false, false>::view(&mut reader)
            .unwrap()
            .unwrap();
        for line in [fast.0, checked.0] {
            let Message::Object { id, content, .. } = line.message else {
                panic!("no message")
            };
            assert_eq!(id.as_str(), Some("b"));
            let Content::List(blocks) = content else {
                panic!("no blocks")
            };
            let raws: Vec<_> = blocks.iter().map(|b| b.raw.unwrap()).collect();
            assert_eq!(raws[0], "7");
            assert_eq!(raws[1], r#"{"type":"text","text":"x\n","text":"y"}"#);
            assert!(blocks[0].view.is_none());
            let text = blocks[1].view.as_ref().unwrap();
            assert_eq!(text.text.as_str(), Some("y"));
            let tool = blocks[2].view.as_ref().unwrap();
            assert_eq!(
                (tool.id.as_str(), tool.input.clone()),
                (Some("t"), Loose::Object)
            );
        }
    }

    #[test]
    fn invalid_json_has_no_view() {
        assert!(parse(r#"{"type":"user""#).is_none());
        assert!(parse(r#"{"type":"user"} x"#).is_none());
        assert!(parse(r#"{"type":"user",}"#).is_none());
    }
}
