//! The incremental normalizer for Claude Code's `stream-json` output (S and C rules).

use std::collections::{BTreeMap, HashMap};

use harness_core::backend::json::Loose;
use harness_core::backend::text::truncate_chars;
use harness_core::backend::{Decoder, Driver, Emitter, NotJson, Summary, parse_value};
use harness_core::{
    Event, EventBody, LineRange, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus,
    UnknownReason, WarningSource, add_numbers,
};
use serde_json::{Map, Number, Value};

use crate::tools::{Context, Mapping, map_tool};
use crate::wire::{self, Block, Body, Content, LineParts, ResultFields, ToolUseResult};

/// The most characters of a tool's failure text an `error` field carries (J6).
const MAX_TEXT: usize = 1_000;

/// The thread a line belongs to: its non-empty `parent_tool_use_id`, `None` for the main one.
type Thread = Option<String>;

/// An assistant message being assembled (C3).
#[derive(Debug)]
struct Message {
    thread: Thread,
    id: Option<String>,
    reasoning: String,
    reasoning_line: Option<u64>,
    text: String,
    text_line: Option<u64>,
    tool_ids: Vec<String>,
}

/// A recorded tool use waiting for its result (C9).
#[derive(Debug)]
struct ToolUse {
    id: String,
    name: Option<String>,
    thread: Thread,
    /// The `tool_use` block as written; parsed only when its events are made.
    block: Box<str>,
}

/// Parses JSON text the normalizer already knows to be valid (a raw piece of a checked line,
/// or a `Value` written back out). `null` if that ever fails, rather than a panic.
fn reparse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

/// The JSON of a line, made only when an event needs raw input (J8).
type LineValue<'a> = &'a dyn Fn() -> Value;

/// A content block's JSON: its kept text, or else the line's `message.content[index]`.
fn block_value(raw: Option<&str>, index: usize, line: LineValue<'_>) -> Value {
    match raw {
        Some(raw) => reparse(raw),
        None => line()
            .pointer(&format!("/message/content/{index}"))
            .cloned()
            .unwrap_or(Value::Null),
    }
}

/// A `tool_result` block and what its line says about it.
struct ResultRef<'a> {
    /// The block as written, when kept.
    raw: Option<&'a str>,
    /// Its place in the message's content.
    index: usize,
    /// Its `tool_use_id`, when a string.
    tool_use_id: Option<&'a str>,
    /// Whether the line's `tool_use_result` belongs to this result (C10), and what it is.
    tool_use_result: ToolUseResult,
    /// The whole line, for raw JSON.
    line: LineValue<'a>,
}

impl ResultRef<'_> {
    fn value(&self) -> Value {
        block_value(self.raw, self.index, self.line)
    }

    fn tool_use_result_value(&self) -> Option<Value> {
        match self.tool_use_result {
            ToolUseResult::None => None,
            _ => (self.line)().get("tool_use_result").cloned(),
        }
    }
}

/// What is pending under one tool use id: one use, or several (C11).
#[derive(Debug)]
enum Pending {
    One(u64),
    Ambiguous(Vec<u64>),
}

/// Token figures of one result (O2).
#[derive(Debug, Clone, Default)]
struct Tokens {
    input: Option<Number>,
    output: Option<Number>,
    cache_read: Option<Number>,
    cache_creation: Option<Number>,
}

/// The Claude Code normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`ClaudeDecoder`] the S and C rules.
pub type ClaudeNormalizer = Driver<ClaudeDecoder>;

/// The decoding of Claude Code's `stream-json` lines (S and C rules, O2).
#[derive(Debug, Default)]
pub struct ClaudeDecoder {
    /// The working directory when the stream names none (C14a).
    config_cwd: Option<String>,
    /// Where skills live (C14a).
    workspace: Option<String>,
    session_id: Option<String>,
    init_cwd: Option<String>,

    /// Messages being assembled, by first-seen order.
    messages: BTreeMap<u64, Message>,
    /// The open message of each thread (C4: at most one).
    open_by_thread: HashMap<Thread, u64>,
    /// Tool use id → the open messages that contain a use with that id.
    owners: HashMap<String, Vec<u64>>,
    next_message: u64,

    /// Recorded tool uses, by record order (S9).
    uses: BTreeMap<u64, ToolUse>,
    pending: HashMap<String, Pending>,
    next_use: u64,

    any_error: bool,
    final_output: Option<String>,
    structured_output: Option<Value>,
    model_tokens: Option<Tokens>,
    usage_tokens: Tokens,
    total_cost_usd: Option<Number>,
    duration_api_ms: Option<Number>,
    duration_ms: Option<Number>,
    num_turns: Option<Number>,
}

fn str_field<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// A figure, when it is a number (O2: booleans and strings are ignored).
fn number(value: &Loose<'_>) -> Option<Number> {
    match value {
        Loose::Number(n) => Some(n.clone()),
        _ => None,
    }
}

fn add_opt(total: &mut Option<Number>, n: Option<Number>) {
    if let Some(n) = n {
        *total = Some(match total.take() {
            Some(t) => add_numbers(&t, &n),
            None => n,
        });
    }
}

/// The failure text of a tool result (C10a): its string content, or its text blocks joined.
fn result_text(result: &Value) -> Option<String> {
    let text = match result.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| str_field(b, "type") == Some("text"))
            .filter_map(|b| str_field(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    (!text.is_empty()).then(|| truncate_chars(&text, MAX_TEXT).to_string())
}

/// An integer as serde_json keeps one, widened so no arithmetic on it can overflow.
fn integer(value: Option<&Value>) -> Option<i128> {
    let n = value?.as_number()?;
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn to_u64(n: i128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

impl ClaudeDecoder {
    fn emit_here(&mut self, out: &mut Emitter<'_>, body: EventBody, parent: &Thread) {
        out.emit_in(body, parent.clone());
    }

    fn unknown_here(
        &mut self,
        out: &mut Emitter<'_>,
        reason: UnknownReason,
        raw: Value,
        parent: &Thread,
    ) {
        let body = EventBody::Unknown {
            reason,
            raw,
            tool: ToolRef::default(),
        };
        self.emit_here(out, body, parent);
    }

    fn current_cwd(&self) -> Option<&str> {
        self.init_cwd.as_deref().or(self.config_cwd.as_deref())
    }

    // ---- messages (C3, C4) ----

    /// C4: the open message whose own tool use started the thread of this line.
    fn flush_for_parent(&self, parent: &Thread, set: &mut Vec<u64>) {
        if let Some(p) = parent {
            if let Some(seqs) = self.owners.get(p) {
                set.extend_from_slice(seqs);
            }
        }
    }

    /// C4: the open message of the sub-agent thread started by tool use `id` (that sub-agent
    /// has finished).
    fn flush_thread(&self, id: &str, set: &mut Vec<u64>) {
        if let Some(&seq) = self.open_by_thread.get(&Some(id.to_string())) {
            set.push(seq);
        }
    }

    /// Flushes the given messages in the order they were first seen (C4).
    fn flush(&mut self, mut seqs: Vec<u64>, out: &mut Emitter<'_>) {
        seqs.sort_unstable();
        seqs.dedup();
        for seq in seqs {
            if let Some(message) = self.messages.remove(&seq) {
                self.close(seq, message, out);
            }
        }
    }

    fn flush_all(&mut self, out: &mut Emitter<'_>) {
        while let Some((seq, message)) = self.messages.pop_first() {
            self.close(seq, message, out);
        }
    }

    fn close(&mut self, seq: u64, message: Message, out: &mut Emitter<'_>) {
        if self.open_by_thread.get(&message.thread) == Some(&seq) {
            self.open_by_thread.remove(&message.thread);
        }
        for id in &message.tool_ids {
            if let Some(seqs) = self.owners.get_mut(id) {
                seqs.retain(|&s| s != seq);
                if seqs.is_empty() {
                    self.owners.remove(id);
                }
            }
        }
        if let Some(line) = message.reasoning_line {
            let event = Event::new(EventBody::Reasoning {
                text: message.reasoning,
            })
            .at_line(line)
            .with_parent(message.thread.clone());
            out.event(event);
        }
        if let Some(line) = message.text_line {
            let event = Event::new(EventBody::Agent { text: message.text })
                .at_line(line)
                .with_parent(message.thread);
            out.event(event);
        }
    }

    fn message_mut(&mut self, seq: u64) -> Option<&mut Message> {
        self.messages.get_mut(&seq)
    }

    // ---- lines ----

    /// A line that `serde_json` parsed (the exact path, S2).
    fn on_value(&mut self, value: Value, out: &mut Emitter<'_>) {
        if !value.is_object() {
            self.unknown_here(out, UnknownReason::NotAnEvent, value, &None);
            return;
        }
        let text = value.to_string();
        match wire::parse(&text) {
            Some(parts) => self.on_parts(parts, &text, Some(value), out),
            // Unreachable: a view reads any JSON object; keep the line all the same.
            None => self.unknown_here(out, UnknownReason::MalformedMessage, value, &None),
        }
    }

    /// One object line, read through its typed view. `text` is the line's JSON; `value`, when
    /// the exact path already built it.
    fn on_parts(
        &mut self,
        parts: LineParts<'_>,
        text: &str,
        value: Option<Value>,
        out: &mut Emitter<'_>,
    ) {
        if self.session_id.is_none() {
            if let Some(id) = parts.session_id.non_empty_str() {
                self.session_id = Some(id.to_string());
            }
        }
        let parent: Thread = parts.parent.non_empty_str().map(str::to_string);
        let line_value = || value.clone().unwrap_or_else(|| reparse(text));
        match parts.body {
            Body::Assistant { id, content } => {
                out.consumed_by("C2");
                self.on_assistant(&id, content, &line_value, parent, out);
            }
            Body::User {
                content,
                tool_use_result,
            } => {
                out.consumed_by("C5");
                self.on_user(content, tool_use_result, &line_value, parent, out);
            }
            Body::System {
                subtype,
                cwd,
                tool_use_id,
            } => {
                out.consumed_by("C1");
                let mut set = Vec::new();
                self.flush_for_parent(&parent, &mut set);
                if subtype.as_str() == Some("task_notification") {
                    // C4: a sub-agent run in the background has finished.
                    if let Some(id) = tool_use_id.as_str() {
                        self.flush_thread(id, &mut set);
                    }
                }
                self.flush(set, out);
                match subtype.as_str() {
                    Some("init") => {
                        if let Some(cwd) = cwd.non_empty_str() {
                            self.init_cwd = Some(cwd.to_string());
                        }
                    }
                    Some("status" | "thinking_tokens") => {}
                    _ => self.unknown_here(
                        out,
                        UnknownReason::UnknownSystemSubtype,
                        line_value(),
                        &parent,
                    ),
                }
            }
            Body::StreamEvent => {
                out.consumed_by("C8");
                self.flush_line_default(&parent, out);
            }
            Body::Result(result) => {
                out.terminal();
                self.flush_all(out);
                self.on_result(&result, &parent, out);
            }
            Body::Other => {
                let line = line_value();
                match line.get("type").and_then(Value::as_str) {
                    Some("rate_limit_event") => {
                        out.consumed_by("C6");
                        self.flush_line_default(&parent, out);
                        self.on_rate_limit(&line, &parent, out);
                    }
                    Some(_) => {
                        self.flush_line_default(&parent, out);
                        self.unknown_here(out, UnknownReason::UnknownType, line, &parent);
                    }
                    None => {
                        self.flush_line_default(&parent, out);
                        self.unknown_here(out, UnknownReason::NotAnEvent, line, &parent);
                    }
                }
            }
        }
    }

    /// The only flush a line other than assistant, user and result can cause (C4).
    fn flush_line_default(&mut self, parent: &Thread, out: &mut Emitter<'_>) {
        let mut set = Vec::new();
        self.flush_for_parent(parent, &mut set);
        if !set.is_empty() {
            self.flush(set, out);
        }
    }

    fn on_rate_limit(&mut self, line: &Value, parent: &Thread, out: &mut Emitter<'_>) {
        let info = line.get("rate_limit_info");
        let status = info.and_then(|i| i.get("status"));
        if status.and_then(Value::as_str) == Some("allowed") {
            return;
        }
        let describe = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut message = match status {
            Some(s) => format!("rate limit status {}", describe(s)),
            None => "rate limit status unknown".to_string(),
        };
        if let Some(kind) = info.and_then(|i| i.get("rateLimitType")) {
            message.push_str(&format!(", limit {}", describe(kind)));
        }
        if let Some(reset) = info.and_then(|i| i.get("resetsAt")) {
            message.push_str(&format!(", resets at {}", describe(reset)));
        }
        let body = EventBody::Warning {
            message,
            source: WarningSource::RateLimit,
        };
        self.emit_here(out, body, parent);
    }

    fn on_result(&mut self, line: &ResultFields<'_>, parent: &Thread, out: &mut Emitter<'_>) {
        let subtype = line.subtype.as_str();
        let is_error = line.is_error.is_true() || subtype.is_some_and(|s| s.starts_with("error"));

        self.final_output = line.result.as_str().map(str::to_string);
        self.structured_output = line.structured_output.clone();
        if let Some(models) = line.model_usage.as_ref().filter(|m| !m.is_empty()) {
            let mut tokens = Tokens::default();
            for (_, model) in models {
                add_opt(&mut tokens.input, number(&model.input));
                add_opt(&mut tokens.output, number(&model.output));
                add_opt(&mut tokens.cache_read, number(&model.cache_read));
                add_opt(&mut tokens.cache_creation, number(&model.cache_creation));
            }
            self.model_tokens = Some(tokens);
        }
        self.usage_tokens = Tokens {
            input: number(&line.usage.input),
            output: number(&line.usage.output),
            cache_read: number(&line.usage.cache_read),
            cache_creation: number(&line.usage.cache_creation),
        };
        self.total_cost_usd = number(&line.total_cost_usd);
        self.duration_api_ms = number(&line.duration_api_ms);
        add_opt(&mut self.duration_ms, number(&line.duration_ms));
        add_opt(&mut self.num_turns, number(&line.num_turns));

        if is_error {
            self.any_error = true;
            let errors = line
                .errors
                .iter()
                .filter(|s| !s.is_empty())
                .map(|s| s.as_ref())
                .collect::<Vec<_>>()
                .join("\n");
            let message = match line.result.non_empty_str() {
                Some(text) => text.to_string(),
                None if !errors.is_empty() => errors,
                None => subtype.unwrap_or("error").to_string(),
            };
            self.emit_here(out, EventBody::Error { message }, parent);
        }
    }

    fn on_assistant(
        &mut self,
        id: &Loose<'_>,
        content: Content<'_>,
        line: LineValue<'_>,
        thread: Thread,
        out: &mut Emitter<'_>,
    ) {
        let id = id.as_str();
        let mut set = Vec::new();
        if let Some(&seq) = self.open_by_thread.get(&thread) {
            let open_id = self.messages.get(&seq).and_then(|m| m.id.as_deref());
            if id.is_none() || open_id != id {
                set.push(seq);
            }
        }
        self.flush_for_parent(&thread, &mut set);
        self.flush(set, out);

        let Content::List(blocks) = content else {
            self.unknown_here(out, UnknownReason::MalformedMessage, line(), &thread);
            return;
        };

        let seq = match self.open_by_thread.get(&thread) {
            Some(&seq) => seq,
            None => {
                let seq = self.next_message;
                self.next_message += 1;
                self.messages.insert(
                    seq,
                    Message {
                        thread: thread.clone(),
                        id: id.map(str::to_string),
                        reasoning: String::new(),
                        reasoning_line: None,
                        text: String::new(),
                        text_line: None,
                        tool_ids: Vec::new(),
                    },
                );
                self.open_by_thread.insert(thread.clone(), seq);
                seq
            }
        };

        let line_no = out.line().unwrap_or_default();
        for (index, Block { view, raw }) in blocks.into_iter().enumerate() {
            let view = view.unwrap_or_default();
            let text = raw;
            let raw = || block_value(text, index, line);
            match view.kind.as_str() {
                Some("text") => match view.text.as_str() {
                    Some(text) => {
                        if let Some(m) = self.message_mut(seq) {
                            append(&mut m.text, &mut m.text_line, text, line_no);
                        }
                        if !text.is_empty() {
                            out.defer();
                        }
                    }
                    None => self.unknown_block(raw(), &thread, out),
                },
                Some("thinking") => match view.thinking.as_str() {
                    Some(text) => {
                        if let Some(m) = self.message_mut(seq) {
                            append(&mut m.reasoning, &mut m.reasoning_line, text, line_no);
                        }
                        if !text.is_empty() {
                            out.defer();
                        }
                    }
                    None => self.unknown_block(raw(), &thread, out),
                },
                Some("redacted_thinking") => {}
                Some("tool_use") => {
                    let text: Box<str> = match text {
                        Some(text) => text.into(),
                        None => raw().to_string().into(),
                    };
                    self.record_tool_use(&view, text, seq, &thread, out);
                }
                _ => self.unknown_block(raw(), &thread, out),
            }
        }
    }

    /// C2: a block this backend does not know, emitted at once.
    fn unknown_block(&mut self, raw: Value, thread: &Thread, out: &mut Emitter<'_>) {
        self.unknown_here(out, UnknownReason::UnknownBlock, raw, thread);
    }

    /// C9, C11, C13: records a tool use, or emits it at once when it has no string id.
    fn record_tool_use(
        &mut self,
        block: &wire::BlockView<'_>,
        text: Box<str>,
        seq: u64,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let name = block.name.as_str().map(str::to_string);
        let Some(id) = block.id.as_str() else {
            let raw = tool_raw(reparse(&text), Value::Null, None);
            let body = EventBody::Unknown {
                reason: UnknownReason::MalformedToolUse,
                raw,
                tool: ToolRef {
                    tool: name,
                    tool_use_id: None,
                },
            };
            self.emit_here(out, body, thread);
            return;
        };
        if let Some(m) = self.message_mut(seq) {
            m.tool_ids.push(id.to_string());
        }
        self.owners.entry(id.to_string()).or_default().push(seq);

        out.defer();
        if out.wants_started() {
            let tool = ToolRef {
                tool: name.clone(),
                tool_use_id: Some(id.to_string()),
            };
            self.started(&text, tool, thread, out);
        }
        let use_seq = self.next_use;
        self.next_use += 1;
        self.uses.insert(
            use_seq,
            ToolUse {
                id: id.to_string(),
                name,
                thread: thread.clone(),
                block: text,
            },
        );
        match self.pending.get_mut(id) {
            None => {
                self.pending.insert(id.to_string(), Pending::One(use_seq));
            }
            Some(entry) => {
                let earlier = match entry {
                    Pending::One(first) => vec![*first, use_seq],
                    Pending::Ambiguous(list) => {
                        let mut list = std::mem::take(list);
                        list.push(use_seq);
                        list
                    }
                };
                *entry = Pending::Ambiguous(earlier);
            }
        }
    }

    fn on_user(
        &mut self,
        content: Content<'_>,
        tool_use_result: ToolUseResult,
        line: LineValue<'_>,
        thread: Thread,
        out: &mut Emitter<'_>,
    ) {
        let results: Vec<(usize, &wire::BlockView<'_>, Option<&str>)> = match &content {
            Content::List(blocks) => blocks
                .iter()
                .enumerate()
                .filter_map(|(i, b)| Some((i, b.view.as_ref()?, b.raw)))
                .filter(|(_, v, _)| v.kind.as_str() == Some("tool_result"))
                .collect(),
            _ => Vec::new(),
        };

        let mut set = Vec::new();
        if let Some(&seq) = self.open_by_thread.get(&thread) {
            set.push(seq);
        }
        self.flush_for_parent(&thread, &mut set);
        for (_, view, _) in &results {
            if let Some(id) = view.tool_use_id.as_str() {
                self.flush_thread(id, &mut set);
            }
        }
        self.flush(set, out);

        match content {
            Content::Text => {}
            Content::List(_) => {
                let tool_use_result = if results.len() == 1 {
                    tool_use_result
                } else {
                    ToolUseResult::None
                };
                for &(index, view, raw) in &results {
                    let result = ResultRef {
                        raw,
                        index,
                        tool_use_id: view.tool_use_id.as_str(),
                        tool_use_result,
                        line,
                    };
                    self.resolve(&result, view.is_error.is_true(), &thread, out);
                }
            }
            Content::Other => {
                self.unknown_here(out, UnknownReason::MalformedMessage, line(), &thread)
            }
        }
    }

    /// C9-C12: a tool result resolves its recorded use, or is recovered, or is unpaired.
    fn resolve(
        &mut self,
        result: &ResultRef<'_>,
        is_error: bool,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let interrupted = matches!(
            result.tool_use_result,
            ToolUseResult::Object { interrupted: true }
        );
        let success = !is_error && !interrupted;
        let status = ToolStatus {
            success,
            error: if success {
                None
            } else {
                result_text(&result.value())
            },
        };
        let id = result.tool_use_id;
        match id.and_then(|id| self.pending.remove(id)) {
            Some(Pending::One(seq)) => {
                if let Some(tool_use) = self.uses.remove(&seq) {
                    self.emit_tool(tool_use, result, status, out);
                }
            }
            Some(Pending::Ambiguous(seqs)) => {
                let candidates: Vec<Value> = seqs
                    .iter()
                    .filter_map(|seq| self.uses.remove(seq))
                    .map(|u| reparse(&u.block))
                    .collect();
                let raw = tool_raw(
                    Value::Array(candidates),
                    result.value(),
                    result.tool_use_result_value(),
                );
                let body = EventBody::Unknown {
                    reason: UnknownReason::AmbiguousToolUseId,
                    raw,
                    tool: ToolRef {
                        tool: None,
                        tool_use_id: id.map(str::to_string),
                    },
                };
                self.emit_here(out, body, thread);
            }
            None => self.unpaired(result, status, thread, out),
        }
    }

    /// C12: a result with no pending use.
    fn unpaired(
        &mut self,
        result: &ResultRef<'_>,
        status: ToolStatus,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let tool_use_id = result.tool_use_id.map(str::to_string);
        let tool_use_result = result.tool_use_result_value();
        let file = tool_use_result.as_ref().and_then(|t| t.get("file"));
        let file_path = file
            .and_then(|f| str_field(f, "filePath"))
            .filter(|p| !p.is_empty());
        let body = match (file, file_path) {
            (Some(file), Some(path)) => {
                let start = integer(file.get("startLine"));
                let lines = integer(file.get("numLines"));
                let range = match (start, lines) {
                    (Some(start), Some(lines)) if lines >= 1 => {
                        let start = start.max(1);
                        Some(LineRange {
                            start: to_u64(start),
                            end: Some(to_u64(start + lines - 1)),
                        })
                    }
                    _ => None,
                };
                EventBody::Read {
                    path: harness_core::backend::paths::resolve(path, self.current_cwd()),
                    range,
                    command: None,
                    status,
                    tool: ToolRef {
                        tool: Some("Read".to_string()),
                        tool_use_id,
                    },
                }
            }
            _ => EventBody::Unknown {
                reason: UnknownReason::UnpairedResult,
                raw: tool_raw(Value::Null, result.value(), tool_use_result),
                tool: ToolRef {
                    tool: None,
                    tool_use_id,
                },
            },
        };
        self.emit_here(out, body, thread);
    }

    /// What a tool use block maps to (C13-C15), with the working directory now in effect.
    fn mapping(&self, block: &str, status: &ToolStatus, tool: &ToolRef) -> Mapping {
        let input = wire::tool_input(block);
        match (tool.tool.as_deref(), &input) {
            (Some(name), Some(input)) => {
                let cx = Context {
                    cwd: self.current_cwd(),
                    workspace: self.workspace.as_deref(),
                };
                map_tool(name, input, status, tool, &cx)
            }
            _ => Mapping::Malformed,
        }
    }

    /// L1: the `started` event of a tool use just recorded, from what it would give on
    /// success (nothing expected of `StructuredOutput`, an unmapped or a malformed use).
    fn started(&self, block: &str, tool: ToolRef, thread: &Thread, out: &mut Emitter<'_>) {
        let ok = ToolStatus {
            success: true,
            error: None,
        };
        match self.mapping(block, &ok, &tool) {
            Mapping::Events(bodies) => out.started_from(tool, &bodies, thread.clone()),
            Mapping::Nothing | Mapping::UnknownTool | Mapping::Malformed => {
                out.started(tool, None, Vec::new(), thread.clone())
            }
        }
    }

    /// Emits the events of a resolved tool use (C13-C15), on the result's line.
    fn emit_tool(
        &mut self,
        tool_use: ToolUse,
        result: &ResultRef<'_>,
        status: ToolStatus,
        out: &mut Emitter<'_>,
    ) {
        let tool = ToolRef {
            tool: tool_use.name.clone(),
            tool_use_id: Some(tool_use.id.clone()),
        };
        let mapping = self.mapping(&tool_use.block, &status, &tool);
        let reason = match mapping {
            Mapping::Events(bodies) => {
                for body in bodies {
                    self.emit_here(out, body, &tool_use.thread);
                }
                return;
            }
            Mapping::Nothing => return,
            Mapping::UnknownTool => UnknownReason::UnknownTool,
            Mapping::Malformed => UnknownReason::MalformedToolUse,
        };
        let raw = tool_raw(
            reparse(&tool_use.block),
            result.value(),
            result.tool_use_result_value(),
        );
        let body = EventBody::Unknown { reason, raw, tool };
        self.emit_here(out, body, &tool_use.thread);
    }

    fn metrics(&self) -> Metrics {
        let tokens = self
            .model_tokens
            .clone()
            .unwrap_or_else(|| self.usage_tokens.clone());
        let mut metrics = Metrics::default();
        metrics.input_tokens = tokens.input;
        metrics.output_tokens = tokens.output;
        metrics.cache_read_input_tokens = tokens.cache_read;
        metrics.cache_creation_input_tokens = tokens.cache_creation;
        metrics.total_cost_usd = self.total_cost_usd.clone();
        metrics.duration_api_ms = self.duration_api_ms.clone();
        metrics.duration_ms = self.duration_ms.clone();
        metrics.num_turns = self.num_turns.clone();
        metrics
    }
}

/// Adds one block's text to a message: non-empty texts are joined with a blank line, and the
/// line of the last one is kept (C4, J2).
fn append(buffer: &mut String, line: &mut Option<u64>, text: &str, line_no: u64) {
    if text.is_empty() {
        return;
    }
    if !buffer.is_empty() {
        buffer.push_str("\n\n");
    }
    buffer.push_str(text);
    *line = Some(line_no);
}

/// The `raw` of an event about one Claude tool use (J8).
fn tool_raw(tool_use: Value, tool_result: Value, tool_use_result: Option<Value>) -> Value {
    let mut raw = Map::new();
    raw.insert("tool_use".to_string(), tool_use);
    raw.insert("tool_result".to_string(), tool_result);
    if let Some(t) = tool_use_result {
        raw.insert("tool_use_result".to_string(), t);
    }
    Value::Object(raw)
}

impl Decoder for ClaudeDecoder {
    fn new(config: &NormalizerConfig) -> Self {
        ClaudeDecoder {
            config_cwd: config.cwd.clone(),
            workspace: config.workspace.clone(),
            ..ClaudeDecoder::default()
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // The fast path: a borrowed view, which exists exactly when the line parses into a
        // `Value` (S2). Other lines (not UTF-8, not an object) take the `Value` path.
        let fast = std::str::from_utf8(line)
            .ok()
            .filter(|t| t.trim_start().starts_with('{'));
        let parts = fast.and_then(|text| Some((text, wire::parse(text)?)));
        match parts {
            Some((text, parts)) => self.on_parts(parts, text, None, out),
            None => self.on_value(parse_value(line)?, out),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush_all(out);
        // One use at a time, its memory freed as its event goes out (S7, S9).
        while let Some((_, tool_use)) = self.uses.pop_first() {
            self.pending.remove(&tool_use.id);
            let body = EventBody::Unknown {
                reason: UnknownReason::UnresolvedToolUse,
                raw: tool_raw(reparse(&tool_use.block), Value::Null, None),
                tool: ToolRef {
                    tool: tool_use.name,
                    tool_use_id: Some(tool_use.id),
                },
            };
            out.emit_in(body, tool_use.thread);
        }
        self.pending.clear();
    }

    fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        summary.failed = self.any_error;
        summary.final_output = self.final_output.clone();
        summary.structured_output = self.structured_output.clone();
        summary.metrics = self.metrics();
        summary
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn cwd(&self) -> Option<&str> {
        self.init_cwd.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses
            .values()
            .map(|u| PendingToolUse {
                id: u.id.clone(),
                tool: u.name.clone(),
                thread: u.thread.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use harness_core::{Disposition, Normalizer, Outcome};

    use super::*;

    /// The disposition of each line of a small session, in order.
    fn dispositions(lines: &[&str]) -> Vec<Disposition> {
        let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
        harness_core::testkit::dispositions(&mut normalizer, lines)
    }

    #[test]
    fn every_line_is_accounted_for() {
        let got = dispositions(&[
            r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"s"}"#,
            "  ",
            r#"{"type":"stream_event","event":{}}"#,
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"thinking","thinking":"hm"}]}}"#,
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"redacted_thinking","data":"x"}]}}"#,
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"a"}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"x"}]}}"#,
            r#"{"type":"user","message":{"content":"echoed prompt"}}"#,
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}"#,
            "banner",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#,
        ]);
        assert_eq!(
            got,
            [
                Disposition::Consumed("C1"),
                Disposition::Blank,
                Disposition::Consumed("C8"),
                Disposition::Deferred,
                Disposition::Consumed("C2"),
                Disposition::Deferred,
                Disposition::Emitted,
                Disposition::Consumed("C5"),
                Disposition::Consumed("C6"),
                Disposition::Emitted,
                Disposition::Outcome,
            ]
        );
    }

    #[test]
    fn a_flush_caused_by_a_line_is_not_its_own_emission() {
        let got = dispositions(&[
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"type":"user","message":{"content":"next prompt"}}"#,
        ]);
        assert_eq!(got, [Disposition::Deferred, Disposition::Consumed("C5")]);
    }

    fn run(lines: &[&str]) -> (Vec<Event>, Outcome) {
        let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
        let mut out = Vec::new();
        for line in lines {
            normalizer.push_line(line.as_bytes(), &mut out);
        }
        let outcome = normalizer.finish(&mut out);
        (out, outcome)
    }

    /// S2, J8: a repeated key keeps its last value, as `serde_json::Value` does, in every part
    /// the typed views read.
    #[test]
    fn s2_repeated_keys_keep_their_last_value_everywhere() {
        let (events, outcome) = run(&[
            r#"{"type":"system","subtype":"init","cwd":"/a","cwd":"/b","session_id":"s"}"#,
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"x","file_path":"y","limit":0,"limit":2}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"zz","tool_use_id":"t","content":"ok"}]}}"#,
            r#"{"type":"result","subtype":"success","result":"a","result":"b","modelUsage":{"m1":{"inputTokens":1},"m2":{"inputTokens":10},"m1":{"inputTokens":100}},"usage":{"input_tokens":5}}"#,
        ]);
        let json: Vec<Value> = events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .collect();
        assert_eq!(
            json,
            [serde_json::json!({
                "kind": "read", "path": "/b/y", "range": {"start": 1, "end": 2},
                "success": true, "tool": "Read", "tool_use_id": "t", "line": 3
            })]
        );
        assert_eq!(outcome.final_output.as_deref(), Some("b"));
        assert_eq!(outcome.metrics.input_tokens, Some(110.into()));
    }

    /// S2: a line `serde_json` rejects is a warning even where the typed view would skip the
    /// offending part (a number out of range, a lone surrogate, nesting of 128 levels).
    #[test]
    fn s2_what_value_rejects_in_skipped_parts_is_still_non_json() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let lines = [
            r#"{"type":"stream_event","event":{"n":1e400}}"#.to_string(),
            r#"{"type":"user","message":{"content":"\ud800"}}"#.to_string(),
            // The line's object and 127 lists: 128 levels.
            format!(r#"{{"type":"stream_event","event":{}}}"#, deep(127)),
            // 127 levels are fine: consumed (C8).
            format!(r#"{{"type":"stream_event","event":{}}}"#, deep(126)),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let (events, _) = run(&refs);
        let kinds: Vec<_> = events
            .iter()
            .map(|e| match &e.body {
                EventBody::Warning { source, .. } => format!("warning {source:?} {:?}", e.line),
                other => format!("{:?}", other.kind()),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "warning NonJson Some(1)",
                "warning NonJson Some(2)",
                "warning NonJson Some(3)",
                "Error"
            ]
        );
    }

    /// S9: `finish_each` hands out exactly the events `finish` appends, in the same order, and
    /// the same outcome.
    #[test]
    fn s9_finish_each_streams_what_finish_collects() {
        let lines = [
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"x"}},{"type":"tool_use","id":"b","name":"Bash","input":{"command":"ls"}}]}}"#,
            r#"{"type":"assistant","message":{"id":"n","content":[{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"y"}}]},"parent_tool_use_id":"b"}"#,
        ];
        let feed = || {
            let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
            let mut out = Vec::new();
            for line in lines {
                normalizer.push_line(line.as_bytes(), &mut out);
            }
            (normalizer, out.len())
        };
        let (mut collecting, before) = feed();
        let mut collected = Vec::new();
        let outcome = collecting.finish(&mut collected);
        let (mut streaming, _) = feed();
        let mut streamed = Vec::new();
        let streamed_outcome = streaming.finish_each(&mut |e| streamed.push(e));
        assert_eq!(streamed, collected);
        assert_eq!(streamed_outcome, outcome);
        // The sub-agent line flushed the first message (C4); the end gives three unresolved
        // uses in record order (two share an id) and the S9 error.
        assert_eq!(before, 1);
        let ids: Vec<_> = collected
            .iter()
            .map(|e| match &e.body {
                EventBody::Unknown { tool, .. } => tool.tool_use_id.clone().unwrap_or_default(),
                other => other.kind().as_str().to_string(),
            })
            .collect();
        assert_eq!(ids, ["a", "b", "a", "error"]);
        assert_eq!(outcome.counts.values().sum::<u64>(), 5);
    }
}
