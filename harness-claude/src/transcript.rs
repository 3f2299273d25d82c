//! Claude Code's stored transcripts (`~/.claude/projects/<project>/<session>.jsonl`, sub-agents
//! under `<session>/subagents/agent-<id>.jsonl`): the T rules of `docs/sessions.md`.
//!
//! A transcript holds the same `assistant` and `user` messages as the live stream, with
//! camelCase bookkeeping (`sessionId`, `toolUseResult`, `uuid`/`parentUuid`, `isSidechain`)
//! and lines of its own (`attachment`, `summary`, `file-history-snapshot`, ...). Its messages
//! go through the live decoder's rules (C2-C15), so a transcript gives the events of the live
//! stream of the same run; it has no `result` line, so the outcome's tokens are summed from each
//! API message's `usage` (each message once, however many lines it spans) and its cost is the
//! one the transcript stored (`cost-state`), else priced by the caller.
//!
//! ```
//! use harness_agents_claude::TranscriptNormalizer;
//! use harness_agents_core::{Normalizer, NormalizerConfig};
//!
//! let lines = [
//!     r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hi"},"sessionId":"s1","timestamp":"2026-01-01T00:00:00Z","cwd":"/p"}"#,
//!     r#"{"parentUuid":"a","isSidechain":false,"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello."}],"usage":{"input_tokens":10,"output_tokens":2}},"sessionId":"s1","timestamp":"2026-01-01T00:00:01Z"}"#,
//!     r#"{"type":"summary","summary":"Greeting","leafUuid":"b"}"#,
//! ];
//! let mut normalizer = TranscriptNormalizer::new(NormalizerConfig::default());
//! let mut events = Vec::new();
//! for line in lines {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//! assert_eq!(events.len(), 1); // the agent's text
//! assert_eq!(outcome.session_id.as_deref(), Some("s1"));
//! assert_eq!(outcome.metrics.input_tokens, Some(10.into()));
//! assert_eq!(outcome.computed, ["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "num_turns"]);
//! let accounting = normalizer.decoder().accounting();
//! assert_eq!(accounting.first_prompt.as_deref(), Some("hi"));
//! ```

use std::borrow::Cow;
use std::collections::HashMap;

use harness_agents_core::backend::json::{self, Loose};
use harness_agents_core::backend::text::Joined;
use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson, Summary, parse_value};
use harness_agents_core::stored::{Accounting, Tokens};
use harness_agents_core::{Metrics, NormalizerConfig, PendingToolUse, UnknownReason};
use serde_json::{Number, Value};

use crate::decoder::ClaudeDecoder;
use harness_agents_core::backend::stream_json::{
    self, Body, Content, Dialect, LineParts, TokenFields,
};

/// A stored Claude Code transcript's normalizer: the core's [`Driver`] around a
/// [`TranscriptDecoder`].
pub type TranscriptNormalizer = Driver<TranscriptDecoder>;

/// The line types a transcript keeps for Claude Code's own bookkeeping, consumed by T6.
pub const BOOKKEEPING: &[&str] = &[
    "summary",
    "custom-title",
    "ai-title",
    "tag",
    "agent-name",
    "progress",
    "attachment",
    "file-history-snapshot",
    "queue-operation",
    "last-prompt",
    "atis-latch",
    "api-request",
    "api-request-shape",
    "api-request-blob",
    "tools-used",
    "pr-link",
    "mode",
];

/// One API message's figures: the last usage seen for its id (T3).
#[derive(Debug, Default)]
struct MessageFigures {
    model: String,
    tokens: Tokens,
    tools: Vec<String>,
}

/// The API messages of a transcript by id, in first-seen order (T3): what the decoder and the
/// tally ([`crate::TranscriptTally`]) both count.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    by_id: HashMap<String, usize>,
    messages: Vec<MessageFigures>,
}

impl Messages {
    /// One assistant line's message: its id (a line without one is a message of its own), its
    /// model, its usage and the tools its blocks call.
    pub(crate) fn add<'t>(
        &mut self,
        id: Option<&str>,
        model: &str,
        tokens: Tokens,
        tools: impl Iterator<Item = &'t str>,
    ) {
        let index = match id {
            Some(id) => match self.by_id.get(id) {
                Some(&i) => i,
                None => {
                    self.by_id.insert(id.to_string(), self.messages.len());
                    self.messages.push(MessageFigures::default());
                    self.messages.len() - 1
                }
            },
            None => {
                self.messages.push(MessageFigures::default());
                self.messages.len() - 1
            }
        };
        let figures = &mut self.messages[index];
        if tokens != Tokens::default() {
            figures.tokens = tokens;
        }
        if figures.model.is_empty() || model != "unknown" {
            figures.model = model.to_string();
        }
        figures.tools.extend(tools.map(str::to_string));
    }

    /// `accounting` with every message added.
    pub(crate) fn accounting(&self, accounting: &Accounting) -> Accounting {
        let mut accounting = accounting.clone();
        // T3: Claude Code's `<synthetic>` messages (an API error or an interruption it writes
        // as a message of its own) made no API call: no model's message to count or price.
        // They still count as turns, as the live stream's `num_turns` does.
        for message in &self.messages {
            if message.model == SYNTHETIC {
                accounting.messages += 1;
            } else {
                accounting.message(&message.model, &message.tokens, &message.tools);
            }
        }
        accounting
    }
}

/// The decoding of a stored transcript: the live rules for its messages (C rules), the T
/// rules for the rest, and the accounting of `harness sessions`.
#[derive(Debug, Default)]
pub struct TranscriptDecoder {
    inner: ClaudeDecoder,
    /// The sub-agent's tool use, for a file under `subagents/` (T8).
    thread: Option<String>,
    /// API messages by id, in first-seen order (T3).
    messages: Messages,
    accounting: Accounting,
    /// The main thread's last message with text: its id and its texts joined (T10).
    last_text: Option<(Option<String>, Joined)>,
}

/// The model name Claude Code gives the messages it writes itself (T3).
pub(crate) const SYNTHETIC: &str = "<synthetic>";

impl TranscriptDecoder {
    /// A decoder for a sub-agent's transcript: its events carry `parent_tool_use_id` = the
    /// tool use that started it (T8; `toolUseId` in its `.meta.json`, or the `agentId` of the
    /// main transcript's `toolUseResult`).
    pub fn for_subagent(config: &NormalizerConfig, tool_use_id: Option<String>) -> Self {
        let mut decoder = <Self as Decoder>::new(config);
        decoder.thread = tool_use_id.filter(|id| !id.is_empty());
        decoder
    }

    /// What the transcript says about its session: tokens by model, timestamps, first prompt,
    /// tools (before any price is applied).
    pub fn accounting(&self) -> Accounting {
        self.messages.accounting(&self.accounting)
    }

    fn account(&mut self, parts: &LineParts<'_>) {
        let stored = &parts.stored;
        if let Some(at) = stored.timestamp.as_str() {
            self.accounting.timestamp(at);
        }
        if self.accounting.cwd.is_none() {
            if let Some(cwd) = stored.cwd.non_empty_str() {
                self.accounting.cwd = Some(cwd.to_string());
                self.inner.set_cwd(cwd);
            }
        }
        if let Loose::Number(cost) = &stored.total_cost_usd {
            self.accounting.reported_cost = cost.as_f64();
        }
        let Body::Assistant { content, .. } = &parts.body else {
            return;
        };
        if self.thread.is_none() {
            let texts: Vec<&str> = match content {
                Content::List(blocks) => blocks
                    .iter()
                    .filter_map(|b| b.view.as_ref())
                    .filter(|v| v.kind.as_str() == Some("text"))
                    .filter_map(|v| v.text.as_str())
                    .filter(|t| !t.is_empty())
                    .collect(),
                _ => Vec::new(),
            };
            if !texts.is_empty() {
                let id = stored.message_id.as_str().map(str::to_string);
                match &mut self.last_text {
                    Some((last, text)) if id.is_some() && *last == id => {
                        for more in texts {
                            text.push(more);
                        }
                    }
                    _ => {
                        let mut text = Joined::default();
                        for more in texts {
                            text.push(more);
                        }
                        self.last_text = Some((id, text));
                    }
                }
            }
        }
        let tools = match content {
            Content::List(blocks) => blocks.as_slice(),
            _ => &[],
        };
        let tools = tools
            .iter()
            .filter_map(|b| b.view.as_ref())
            .filter(|v| v.kind.as_str() == Some("tool_use"))
            .map(|v| v.name.as_str().unwrap_or("?"));
        // A message without a string id is a message of its own (as in C3).
        self.messages.add(
            stored.message_id.as_str(),
            stored.model.as_str().unwrap_or("unknown"),
            tokens_of(&stored.usage),
            tools,
        );
    }

    /// T4: the first prompt, read again from the line (once per session).
    fn note_prompt(&mut self, text: &str) {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            return;
        };
        if value.get("isMeta") == Some(&Value::Bool(true)) {
            return;
        }
        let prompt = match value.pointer("/message/content") {
            Some(Value::String(s)) => Some(s.as_str()),
            Some(Value::Array(blocks)) => {
                if blocks
                    .iter()
                    .any(|b| b.get("type") == Some(&"tool_result".into()))
                {
                    None
                } else {
                    blocks
                        .iter()
                        .find(|b| b.get("type") == Some(&"text".into()))
                        .and_then(|b| b.get("text"))
                        .and_then(Value::as_str)
                }
            }
            _ => None,
        };
        if let Some(prompt) = prompt {
            self.accounting.prompt(prompt);
        }
    }

    fn on_parts(&mut self, mut parts: LineParts<'_>, text: &str, out: &mut Emitter<'_>) {
        self.account(&parts);
        if let Some(thread) = &self.thread {
            parts.parent = Loose::Str(Cow::Owned(thread.clone()));
        }
        let kind = parts.stored.kind.as_str().map(str::to_string);
        match kind.as_deref() {
            Some("assistant" | "user" | "system") => {
                if kind.as_deref() == Some("user")
                    && self.accounting.first_prompt.is_none()
                    && self.thread.is_none()
                {
                    self.note_prompt(text);
                }
                self.inner.on_parts(parts, text, None, out);
            }
            Some("cost-state") => out.consumed_by("T7"),
            Some(kind) if BOOKKEEPING.contains(&kind) => out.consumed_by("T6"),
            // A `result` has no place in a transcript: keep it as an unknown line rather than
            // end the session (T9).
            Some("result") => {
                let raw = parse_value(text.as_bytes()).unwrap_or(Value::Null);
                out.unknown_in(UnknownReason::UnknownType, raw, self.thread.clone());
            }
            _ => self.inner.on_parts(parts, text, None, out),
        }
    }
}

fn tokens_of(usage: &TokenFields<'_>) -> Tokens {
    let n = |v: &Loose<'_>| match v {
        Loose::Number(n) => n.as_u64().unwrap_or(0),
        _ => 0,
    };
    Tokens {
        input: n(&usage.input),
        output: n(&usage.output),
        cache_read: n(&usage.cache_read),
        cache_write: n(&usage.cache_creation),
    }
}

impl Decoder for TranscriptDecoder {
    const EXPECTS_TERMINAL: bool = false;

    fn configure(&mut self, config: &NormalizerConfig) {
        self.inner.configure(config);
        self.inner.set_transcript();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        if let Some(text) = json::object_text(line) {
            if let Some(parts) = stream_json::parse_in(text, Dialect::Transcript) {
                self.on_parts(parts, text, out);
                return Ok(());
            }
        }
        // Not UTF-8 or not an object: the exact path decides (S2, S3).
        let value = parse_value(line)?;
        let text = value.to_string();
        match stream_json::parse_in(&text, Dialect::Transcript) {
            Some(parts) => self.on_parts(parts, &text, out),
            None => {
                let raw = value;
                out.unknown_in(UnknownReason::NotAnEvent, raw, self.thread.clone());
            }
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.inner.end(out);
        // T10: the last main-thread text is the final answer; one block's text is shared with
        // its event, and a joined one is copied once, here (S7).
        out.final_output(self.last_text.take().map(|(_, text)| text.into_text()));
    }

    fn summary(&self) -> Summary {
        let accounting = self.accounting();
        let tokens = accounting.tokens();
        let mut metrics = Metrics::default();
        metrics.input_tokens = Some(Number::from(tokens.input));
        metrics.output_tokens = Some(Number::from(tokens.output));
        metrics.cache_read_input_tokens = Some(Number::from(tokens.cache_read));
        metrics.cache_creation_input_tokens = Some(Number::from(tokens.cache_write));
        metrics.num_turns = Some(Number::from(accounting.messages));
        metrics.total_cost_usd = accounting.reported_cost.and_then(Number::from_f64);
        let mut summary = Summary::new(metrics);
        summary.computed = [
            "input_tokens",
            "output_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "num_turns",
        ]
        .map(str::to_string)
        .to_vec();
        summary
    }

    fn cwd(&self) -> Option<&str> {
        Decoder::cwd(&self.inner)
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.inner.pending_tool_uses()
    }
}

#[cfg(test)]
mod tests {
    use harness_agents_core::{EventBody, Kind, Outcome, Status};

    use super::*;

    fn run(
        decoder: TranscriptDecoder,
        lines: &[&str],
    ) -> (Vec<harness_agents_core::Event>, Outcome, Accounting) {
        let mut normalizer =
            TranscriptNormalizer::with_decoder(decoder, NormalizerConfig::default());
        let lines: Vec<&[u8]> = lines.iter().map(|line| line.as_bytes()).collect();
        let (events, outcome) =
            harness_agents_core::testkit::normalize_lines(&mut normalizer, &lines, &[]);
        (events, outcome, normalizer.decoder().accounting())
    }

    fn fresh() -> TranscriptDecoder {
        TranscriptDecoder::new(&NormalizerConfig::default())
    }

    const PROMPT: &str = r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"Read a.txt"},"uuid":"u1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","sessionId":"s1"}"#;
    const TEXT: &str = r#"{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Reading."}],"usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}},"uuid":"a1","timestamp":"2026-01-01T00:00:01.000Z","sessionId":"s1"}"#;
    const TOOL: &str = r#"{"parentUuid":"a1","isSidechain":false,"type":"assistant","message":{"id":"m1","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a.txt"}}],"usage":{"input_tokens":10,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}},"uuid":"a2","timestamp":"2026-01-01T00:00:02.000Z","sessionId":"s1"}"#;
    const RESULT: &str = r#"{"parentUuid":"a2","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hello"}]},"toolUseResult":{"type":"text","file":{"filePath":"/p/a.txt"}},"uuid":"u2","timestamp":"2026-01-01T00:00:03.000Z","sessionId":"s1"}"#;

    /// T3: a message split over two lines counts once, with its last usage; T1: `sessionId`
    /// and the line's `cwd` are read; T9: no S9 error, status `success`; T7: the stored cost.
    #[test]
    fn a_split_message_counts_once() {
        let cost = r#"{"type":"cost-state","totalCostUSD":0.25,"sessionId":"s1"}"#;
        let (events, outcome, accounting) = run(fresh(), &[PROMPT, TEXT, TOOL, RESULT, cost]);
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind()).collect();
        assert_eq!(kinds, [Kind::Agent, Kind::Read]);
        let EventBody::Read { path, .. } = &events[1].body else {
            panic!("{events:?}")
        };
        assert_eq!(path, "/p/a.txt");
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(outcome.session_id.as_deref(), Some("s1"));
        assert_eq!(outcome.metrics.input_tokens, Some(10.into()));
        assert_eq!(outcome.metrics.output_tokens, Some(7.into()));
        assert_eq!(outcome.metrics.cache_read_input_tokens, Some(100.into()));
        assert_eq!(outcome.metrics.cache_creation_input_tokens, Some(5.into()));
        assert_eq!(outcome.metrics.num_turns, Some(1.into()));
        assert_eq!(
            outcome.metrics.total_cost_usd.and_then(|c| c.as_f64()),
            Some(0.25)
        );
        assert!(!outcome.computed.contains(&"total_cost_usd".to_string()));
        assert_eq!(outcome.final_output.as_deref(), Some("Reading."));
        assert_eq!(accounting.messages, 1);
        assert_eq!(accounting.prompts, 1);
        assert_eq!(accounting.first_prompt.as_deref(), Some("Read a.txt"));
        assert_eq!(accounting.tools["Read"].uses, 1);
        assert_eq!(
            accounting.first_timestamp.as_deref(),
            Some("2026-01-01T00:00:00.000Z")
        );
        assert_eq!(
            accounting.last_timestamp.as_deref(),
            Some("2026-01-01T00:00:03.000Z")
        );
        assert_eq!(accounting.models["claude-sonnet-4-5"].output, 7);
    }

    /// T1: the transcript's `toolUseResult` is the result's structured output (C12 recovers
    /// an unpaired read from it); a snake_case `tool_use_result` is not read.
    #[test]
    fn tool_use_result_is_camel_case() {
        let (events, _, _) = run(fresh(), &[RESULT]);
        assert_eq!(events.len(), 1);
        assert!(matches!(&events[0].body, EventBody::Read { path, .. } if path == "/p/a.txt"));
        let snake = RESULT.replace("toolUseResult", "tool_use_result");
        let (events, _, _) = run(fresh(), &[&snake]);
        assert!(matches!(
            &events[0].body,
            EventBody::Unknown {
                reason: UnknownReason::UnpairedResult,
                ..
            }
        ));
    }

    /// T8: a sub-agent's events carry the tool use that started it; a `parent_tool_use_id`
    /// written on the line is not read.
    #[test]
    fn subagent_events_carry_their_parent() {
        let decoder =
            TranscriptDecoder::for_subagent(&NormalizerConfig::default(), Some("toolu_A".into()));
        let tool = TOOL.replace(
            r#""uuid":"a2""#,
            r#""uuid":"a2","parent_tool_use_id":"elsewhere""#,
        );
        let (events, _, _) = run(decoder, &[TEXT, &tool, RESULT]);
        assert_eq!(events.len(), 2);
        assert!(
            events
                .iter()
                .all(|e| e.parent_tool_use_id.as_deref() == Some("toolu_A"))
        );
        let (events, _, _) = run(fresh(), &[TEXT, &tool, RESULT]);
        assert!(events.iter().all(|e| e.parent_tool_use_id.is_none()));
    }

    /// T9: a tool use without a result is unresolved at the end, but there is no S9 error.
    #[test]
    fn an_unfinished_transcript_has_no_s9_error() {
        let (events, outcome, _) = run(fresh(), &[TEXT, TOOL]);
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind()).collect();
        assert_eq!(kinds, [Kind::Agent, Kind::Unknown]);
        assert_eq!(outcome.status, Status::Success);
    }
}
