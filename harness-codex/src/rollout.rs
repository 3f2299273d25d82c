//! Codex's stored sessions (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`): the R rules of
//! `docs/sessions.md`.
//!
//! A rollout line is `{"timestamp", "type", "payload"}`. Codex writes each finished item of a
//! turn as an `event_msg` of type `item_completed`; those are the items `codex exec --json`
//! prints, in another spelling (`CommandExecution` for `command_execution`, an argv for a
//! command line, a map of changes for a list). A [`RolloutDecoder`] spells each one as the
//! live item and hands it to the live decoder ([`CodexDecoder`], X rules), so a rollout gives
//! the events of the live stream of the same run; `task_complete` is the turn's terminal line,
//! with the running token total of the last `token_count`.
//!
//! The usual `item_completed` line of a message, a reasoning summary or a command is read
//! with the core's fast reader ([`Scan`]) straight into the live decoder's view of the item,
//! never built as a `Value` nor written out again: a huge message or summary is decoded once,
//! into its event, and a command's output is checked but never copied (S7). Any other line,
//! and any such line the fast reader is unsure of or that has an unusual shape (several text
//! parts, an argv that is not a list), is read as a `Value`, which decides what is JSON (S2).
//!
//! ```
//! use harness_agents_codex::RolloutNormalizer;
//! use harness_agents_core::{Normalizer, NormalizerConfig, Status};
//!
//! let lines = [
//!     r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"t1","cwd":"/p"}}"#,
//!     r#"{"timestamp":"2026-01-01T00:00:01Z","type":"turn_context","payload":{"model":"gpt-5"}}"#,
//!     r#"{"timestamp":"2026-01-01T00:00:02Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"a","content":[{"type":"Text","text":"Done."}]}}}"#,
//!     r#"{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":5,"reasoning_output_tokens":0}}}}"#,
//!     r#"{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"task_complete"}}"#,
//! ];
//! let mut normalizer = RolloutNormalizer::new(NormalizerConfig::default());
//! let mut events = Vec::new();
//! for line in lines {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//! assert_eq!(events.len(), 1);
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("t1"));
//! assert_eq!(outcome.metrics.cache_read_input_tokens, Some(40.into()));
//! assert_eq!(normalizer.decoder().accounting().models["gpt-5"].input, 60);
//! ```

use std::borrow::Cow;

use harness_agents_core::backend::json::{self, Loose, Member, Scan, Text, scan_into};
use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson, Summary, parse_value};
use harness_agents_core::stored::{Accounting, Tokens};
use harness_agents_core::{EventBody, NormalizerConfig, PendingToolUse, ToolRef, UnknownReason};
use serde::de::{self, Deserializer};
use serde_json::{Map, Value, json};

use crate::decoder::CodexDecoder;
use crate::wire::{Item, ItemView};

/// A stored Codex rollout's normalizer: the core's [`Driver`] around a [`RolloutDecoder`].
pub type RolloutNormalizer = Driver<RolloutDecoder>;

/// The top-level types a rollout keeps for Codex's own bookkeeping, consumed by R9 (which also
/// consumes `response_item` lines once their tool calls are counted, and every `event_msg` no
/// other rule reads).
pub const BOOKKEEPING: &[&str] = &["compacted", "world_state", "token_usage_record"];

/// The decoding of a rollout: R rules in front of the live decoder's X rules.
#[derive(Debug, Default)]
pub struct RolloutDecoder {
    inner: CodexDecoder,
    /// The model of the current turn (`turn_context`).
    model: Option<String>,
    /// The last running total (`token_count`), as the live `usage` spells it.
    total: Option<Value>,
    /// The last running total, for the accounting's deltas.
    last_tokens: Tokens,
    /// Tools called since the last `token_count`.
    tools: Vec<String>,
    /// `update_plan` calls waiting for their output (R5), by call id.
    plans: Vec<(String, Value)>,
    /// Whether the rollout is in the legacy history mode (R10): its `session_meta` has no
    /// `history_mode: "paginated"`.
    legacy: bool,
    accounting: Accounting,
}

fn u64_at(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

impl RolloutDecoder {
    /// What the rollout says about its session: tokens by model (Codex's own running total,
    /// split by the model of each turn), timestamps, first prompt, tools.
    pub fn accounting(&self) -> Accounting {
        self.accounting.clone()
    }

    /// Feeds a line of the live format to the live decoder.
    fn live(&mut self, line: Value, out: &mut Emitter<'_>) {
        let text = line.to_string();
        // A huge message is not held a third time while the live decoder reads it (S7).
        drop(line);
        // The live decoder reads any JSON object line: `NotJson` cannot come back.
        let _ = self.inner.line(text.as_bytes(), out);
    }

    /// R4: an `item_completed`'s item, spelled as `codex exec --json` spells it.
    fn item(&mut self, item: &Value, out: &mut Emitter<'_>) {
        let id = item.get("id").cloned().unwrap_or(Value::Null);
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let text_of = |key: &str, join: &str| -> String {
            let parts = item.get(key).and_then(Value::as_array);
            parts
                .map(|parts| {
                    parts
                        .iter()
                        .filter_map(|p| p.as_str().or_else(|| p.get("text")?.as_str()))
                        .collect::<Vec<_>>()
                        .join(join)
                })
                .unwrap_or_default()
        };
        let live = match kind {
            "UserMessage" => {
                out.consumed_by("R4");
                let text = text_of("content", "\n");
                self.accounting.prompt(&text);
                return;
            }
            "AgentMessage" => {
                json!({"id": id, "type": "agent_message", "text": text_of("content", "")})
            }
            "Reasoning" => {
                json!({"id": id, "type": "reasoning", "text": text_of("summary_text", "\n")})
            }
            "CommandExecution" => {
                let command = match item.get("command") {
                    Some(Value::Array(argv)) => {
                        let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                        shlex::try_join(words.iter().copied())
                            .map(Value::String)
                            .unwrap_or_else(|_| Value::String(words.join(" ")))
                    }
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                json!({
                    "id": id,
                    "type": "command_execution",
                    "command": command,
                    "aggregated_output": item.get("aggregated_output").cloned().unwrap_or_default(),
                    "exit_code": item.get("exit_code").cloned().unwrap_or(Value::Null),
                    "status": item.get("status").cloned().unwrap_or(Value::Null),
                })
            }
            "FileChange" => {
                let changes = match item.get("changes") {
                    Some(Value::Object(map)) => Value::Array(
                        map.iter()
                            .map(|(path, change)| {
                                let kind = change.get("type").cloned().unwrap_or(Value::Null);
                                json!({"path": path, "kind": kind})
                            })
                            .collect(),
                    ),
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                json!({"id": id, "type": "file_change", "changes": changes,
                       "status": item.get("status").cloned().unwrap_or(Value::Null)})
            }
            "McpToolCall" => {
                let mut live = item.as_object().cloned().unwrap_or_default();
                live.insert("type".into(), "mcp_tool_call".into());
                Value::Object(live)
            }
            "WebSearch" => {
                json!({"id": id, "type": "web_search",
                       "query": item.get("query").cloned().unwrap_or(Value::Null)})
            }
            _ => {
                out.unknown(UnknownReason::UnknownItem, item.clone());
                return;
            }
        };
        self.live(json!({"type": "item.completed", "item": live}), out);
    }

    /// R5: an accepted `update_plan` call is the live stream's to-do list, one per session
    /// (X5).
    fn plan(&mut self, payload: &Value, out: &mut Emitter<'_>) {
        let arguments = payload.get("arguments").and_then(Value::as_str);
        let plan = arguments.and_then(|a| serde_json::from_str::<Value>(a).ok());
        let Some(Value::Array(steps)) = plan.as_ref().and_then(|p| p.get("plan")) else {
            out.consumed_by("R5");
            return;
        };
        let items: Vec<Value> = steps
            .iter()
            .map(|step| {
                let done = step.get("status").and_then(Value::as_str) == Some("completed");
                json!({"text": step.get("step").cloned().unwrap_or(Value::Null), "completed": done})
            })
            .collect();
        let item = json!({"id": "update_plan", "type": "todo_list", "items": items});
        self.live(json!({"type": "item.updated", "item": item}), out);
    }

    /// R6: Codex's running total; the tokens since the last one go to the turn's model.
    fn token_count(&mut self, payload: &Value) {
        let Some(total) = payload.pointer("/info/total_token_usage") else {
            return;
        };
        let input = u64_at(total, "input_tokens");
        let cached = u64_at(total, "cached_input_tokens");
        let tokens = Tokens {
            input: input.saturating_sub(cached),
            output: u64_at(total, "output_tokens"),
            cache_read: cached,
            cache_write: u64_at(total, "cache_write_input_tokens"),
        };
        let delta = Tokens {
            input: tokens.input.saturating_sub(self.last_tokens.input),
            output: tokens.output.saturating_sub(self.last_tokens.output),
            cache_read: tokens
                .cache_read
                .saturating_sub(self.last_tokens.cache_read),
            cache_write: tokens
                .cache_write
                .saturating_sub(self.last_tokens.cache_write),
        };
        let model = self.model.clone().unwrap_or_else(|| "unknown".to_string());
        let tools = std::mem::take(&mut self.tools);
        self.accounting.message(&model, &delta, &tools);
        self.last_tokens = tokens;
        self.total = Some(total.clone());
        self.accounting.reported_tokens = true;
    }

    /// A line read as a `Value` (S2 decides here), every R rule.
    fn value_line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        match parse_value(line)? {
            Value::Object(map) => self.on_line(map, out),
            other => out.unknown(UnknownReason::NotAnEvent, other),
        }
        Ok(())
    }

    /// R4 for a line the fast reader read: what [`RolloutDecoder::on_line`] does with it.
    fn on_fast(&mut self, fast: Fast<'_>, out: &mut Emitter<'_>) {
        if let Some(at) = fast.timestamp.as_str() {
            self.accounting.timestamp(at);
        }
        let item = Item {
            view: fast.view,
            // Not read: a message's and a summary's events come from the view, and so do a
            // command's when its command line is a string, which it always is here.
            raw: "",
        };
        self.inner.item_completed(&item, out);
    }

    fn on_line(&mut self, line: Map<String, Value>, out: &mut Emitter<'_>) {
        if let Some(at) = line.get("timestamp").and_then(Value::as_str) {
            self.accounting.timestamp(at);
        }
        let empty = Value::Null;
        let payload = line.get("payload").unwrap_or(&empty);
        let payload_type = payload.get("type").and_then(Value::as_str);
        match line.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                if let Some(cwd) = payload.get("cwd").and_then(Value::as_str) {
                    self.accounting.cwd.get_or_insert_with(|| cwd.to_string());
                    self.inner.set_cwd(cwd);
                }
                self.legacy =
                    payload.get("history_mode").and_then(Value::as_str) != Some("paginated");
                let id = payload.get("id").cloned().unwrap_or(Value::Null);
                self.live(json!({"type": "thread.started", "thread_id": id}), out);
                out.consumed_by("R1");
            }
            Some("turn_context") => {
                out.consumed_by("R2");
                if let Some(model) = payload.get("model").and_then(Value::as_str) {
                    self.model = Some(model.to_string());
                }
                if let Some(cwd) = payload.get("cwd").and_then(Value::as_str) {
                    self.accounting.cwd.get_or_insert_with(|| cwd.to_string());
                }
            }
            Some("event_msg") => match payload_type {
                Some("task_started") => out.consumed_by("R3"),
                Some("item_completed") => match payload.get("item") {
                    Some(item) if item.is_object() => self.item(item, out),
                    _ => out.unknown(UnknownReason::UnknownItem, Value::Object(line)),
                },
                Some("task_complete") => {
                    let usage = self.total.clone().unwrap_or(Value::Null);
                    self.live(json!({"type": "turn.completed", "usage": usage}), out);
                }
                Some("token_count") => {
                    out.consumed_by("R6");
                    self.token_count(payload);
                }
                Some("turn_aborted") => out.consumed_by("R7"),
                // R10: a legacy rollout's messages.
                Some("agent_message") if self.legacy => {
                    let text = payload.get("message").cloned().unwrap_or(Value::Null);
                    let item = json!({"type": "agent_message", "text": text});
                    self.live(json!({"type": "item.completed", "item": item}), out);
                }
                Some("agent_reasoning") if self.legacy => {
                    let text = payload.get("text").cloned().unwrap_or(Value::Null);
                    let item = json!({"type": "reasoning", "text": text});
                    self.live(json!({"type": "item.completed", "item": item}), out);
                }
                Some("user_message") if self.legacy => {
                    out.consumed_by("R10");
                    if let Some(text) = payload.get("message").and_then(Value::as_str) {
                        self.accounting.prompt(text);
                    }
                }
                Some(
                    "patch_apply_end" | "mcp_tool_call_end" | "web_search_end" | "exec_command_end",
                ) if self.legacy => {
                    legacy_unknown(payload, payload_type, UnknownReason::UnknownItem, out);
                }
                Some("error") => {
                    let message = payload.get("message").cloned().unwrap_or(Value::Null);
                    self.live(
                        json!({"type": "turn.failed", "error": {"message": message}}),
                        out,
                    );
                }
                Some("stream_error") => {
                    let message = payload.get("message").cloned().unwrap_or(Value::Null);
                    self.live(json!({"type": "error", "message": message}), out);
                }
                _ => out.consumed_by("R9"),
            },
            Some("response_item")
                if payload_type == Some("function_call")
                    && payload.get("name").and_then(Value::as_str) == Some("update_plan") =>
            {
                // R5: the plan counts once Codex accepted it (its output, below).
                out.consumed_by("R5");
                self.tools.push("update_plan".to_string());
                let call = payload.get("call_id").and_then(Value::as_str);
                self.plans
                    .push((call.unwrap_or_default().to_string(), payload.clone()));
            }
            Some("response_item")
                if payload_type == Some("function_call_output")
                    && self.plans.iter().any(|(id, _)| {
                        payload.get("call_id").and_then(Value::as_str) == Some(id.as_str())
                    }) =>
            {
                let call = payload.get("call_id").and_then(Value::as_str);
                let at = self
                    .plans
                    .iter()
                    .position(|(id, _)| call == Some(id.as_str()));
                let plan = at.map(|i| self.plans.remove(i).1);
                let accepted =
                    payload.get("output").and_then(Value::as_str) == Some("Plan updated");
                match plan {
                    Some(plan) if accepted => self.plan(&plan, out),
                    _ => out.consumed_by("R5"),
                }
            }
            Some("response_item") => {
                out.consumed_by("R9");
                if let Some("function_call" | "custom_tool_call" | "local_shell_call") =
                    payload_type
                {
                    let name = payload.get("name").and_then(Value::as_str);
                    self.tools.push(name.unwrap_or("local_shell").to_string());
                    if self.legacy {
                        // R10: a legacy rollout's tool calls have no item: kept, unmapped.
                        let tool = Some(name.unwrap_or("local_shell"));
                        legacy_unknown(payload, tool, UnknownReason::UnknownTool, out);
                    }
                } else if let Some(kind @ ("web_search_call" | "tool_search_call")) = payload_type {
                    self.tools.push(kind.to_string());
                }
            }
            Some(kind) if BOOKKEEPING.contains(&kind) => out.consumed_by("R9"),
            Some(_) => out.unknown(UnknownReason::UnknownType, Value::Object(line)),
            None => out.unknown(UnknownReason::NotAnEvent, Value::Object(line)),
        }
    }
}

impl Decoder for RolloutDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.inner.configure(config);
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        if let Some(fast) = json::object_text(line).and_then(Fast::read) {
            self.on_fast(fast, out);
            return Ok(());
        }
        self.value_line(line, out)
    }

    /// Every line read as a `Value` (the fast path's reference, S2).
    fn exact_line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        self.value_line(line, out)
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.inner.end(out);
    }

    fn summary(&self) -> Summary {
        self.inner.summary()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.inner.pending_tool_uses()
    }
}

harness_agents_core::json_view! {
    /// The parts of a rollout line the fast path reads (R4).
    struct StoredLine<'a> {
        /// `timestamp`.
        timestamp: "timestamp",
        /// `type`.
        kind: "type",
        /// `payload`, when an object.
        payload: "payload" => Option<StoredPayload<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The parts of an `event_msg`'s payload the fast path reads.
    struct StoredPayload<'a> {
        /// `type`.
        kind: "type",
        /// `item`, when an object.
        item: "item" => Option<StoredItem<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The parts of a stored item the fast path reads, as [`RolloutDecoder::item`] reads them.
    struct StoredItem<'a> {
        /// `id`.
        id: "id",
        /// `type`.
        kind: "type",
        /// `content` of an `AgentMessage`.
        content: "content" => Parts<'a>,
        /// `summary_text` of a `Reasoning`.
        summary: "summary_text" => Parts<'a>,
        /// `command` of a `CommandExecution`.
        command: "command" => Argv<'a>,
        /// `exit_code` of a `CommandExecution`.
        exit_code: "exit_code",
        /// `status` of a `CommandExecution`.
        status: "status",
    }
}

/// The text parts of a list, as `text_of` in [`RolloutDecoder::item`] takes them: each
/// string element, and each object element's `text` when a string; none when not a list.
#[derive(Debug, Default)]
struct Parts<'a> {
    texts: Vec<Text<'a>>,
}

/// A string read as a [`Text`]: borrowed from the line, an escaped one decoded only when used.
fn text_member<'a>(scan: &mut Scan<'a>) -> Option<Text<'a>> {
    let mut text = Text::default();
    text.scan(scan, false)?;
    Some(text)
}

impl<'de> Member<'de> for Parts<'de> {
    /// Read by the fast reader only: a line it is unsure of is read as a `Value`.
    fn read<D: Deserializer<'de>>(&mut self, _: D, _: bool) -> Result<(), D::Error> {
        Err(de::Error::custom("read by the fast reader only"))
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        // A repeated key keeps its last value, as in a `Value`.
        self.texts.clear();
        if scan.peek()? != b'[' {
            return scan.skip();
        }
        let texts = &mut self.texts;
        scan.elements(|scan| match scan.peek()? {
            b'"' => {
                texts.push(text_member(scan)?);
                Some(())
            }
            b'{' => {
                let mut text = None;
                scan.members(|scan, key| {
                    if key != "text" {
                        return scan.skip();
                    }
                    text = None;
                    if scan.peek()? == b'"' {
                        text = Some(text_member(scan)?);
                        return Some(());
                    }
                    scan.skip()
                })?;
                texts.extend(text);
                Some(())
            }
            _ => scan.skip(),
        })
    }
}

impl<'a> Parts<'a> {
    /// The one text of the list (none is an empty text); `None` for several, which are
    /// joined on the `Value` path.
    fn one(mut self) -> Option<Text<'a>> {
        match self.texts.len() {
            0 => Some(Text::default()),
            1 => self.texts.pop(),
            _ => None,
        }
    }
}

/// A `CommandExecution`'s `command`: an argv (its strings; other elements are dropped, as
/// the `Value` path drops them) or any other value.
#[derive(Debug, Default)]
enum Argv<'a> {
    #[default]
    Absent,
    Words(Vec<Cow<'a, str>>),
    Other(Loose<'a>),
}

impl<'de> Member<'de> for Argv<'de> {
    /// Read by the fast reader only: a line it is unsure of is read as a `Value`.
    fn read<D: Deserializer<'de>>(&mut self, _: D, _: bool) -> Result<(), D::Error> {
        Err(de::Error::custom("read by the fast reader only"))
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        if scan.peek()? != b'[' {
            *self = Argv::Other(scan.loose()?);
            return Some(());
        }
        let mut words = Vec::new();
        scan.elements(|scan| {
            if let Loose::Str(word) = scan.loose()? {
                words.push(word);
            }
            Some(())
        })?;
        *self = Argv::Words(words);
        Some(())
    }
}

impl<'a> Argv<'a> {
    /// The live command line (R4): the argv joined as a shell would read it; `None` when the
    /// command is not a list or a string (the live item is then kept whole: the `Value` path).
    fn line(self) -> Option<Loose<'a>> {
        match self {
            Argv::Words(words) => {
                let line =
                    shlex::try_join(words.iter().map(|w| &**w)).unwrap_or_else(|_| words.join(" "));
                Some(Loose::Str(Cow::Owned(line)))
            }
            Argv::Other(line @ Loose::Str(_)) => Some(line),
            Argv::Absent | Argv::Other(_) => None,
        }
    }
}

/// An `item_completed` line of an `AgentMessage` (one text part), a `Reasoning` (one summary
/// part) or a `CommandExecution` (an argv or a string command), read by the fast reader as
/// the live decoder's view of the live item (R4).
#[derive(Debug)]
struct Fast<'a> {
    timestamp: Loose<'a>,
    /// The live item's view, its `type` the live one.
    view: ItemView<'a>,
}

impl<'a> Fast<'a> {
    /// The line, when it is surely JSON ([`Scan`]) and of one of the usual shapes; `None`
    /// otherwise, and the `Value` path reads it.
    fn read(text: &'a str) -> Option<Self> {
        // Most lines are not items: not scanned twice.
        if !text.contains("item_completed") {
            return None;
        }
        let mut line = StoredLine::default();
        scan_into(text, &mut line, false)?;
        let payload = line
            .payload
            .filter(|_| line.kind.as_str() == Some("event_msg"))?;
        let item = payload
            .item
            .filter(|_| payload.kind.as_str() == Some("item_completed"))?;
        let mut view = ItemView {
            id: item.id,
            ..ItemView::default()
        };
        let kind = match item.kind.as_str()? {
            "AgentMessage" => {
                view.text = item.content.one()?;
                "agent_message"
            }
            "Reasoning" => {
                view.text = item.summary.one()?;
                "reasoning"
            }
            "CommandExecution" => {
                view.command = item.command.line()?;
                view.exit_code = item.exit_code;
                view.status = item.status;
                "command_execution"
            }
            _ => return None,
        };
        view.kind = Loose::Str(Cow::Borrowed(kind));
        Some(Fast {
            timestamp: line.timestamp,
            view,
        })
    }
}

/// R10: a legacy rollout's tool call, kept whole as `unknown`, named by `tool` and its
/// `call_id`.
fn legacy_unknown(
    payload: &Value,
    tool: Option<&str>,
    reason: UnknownReason,
    out: &mut Emitter<'_>,
) {
    let tool = ToolRef {
        tool: tool.map(str::to_string),
        tool_use_id: payload
            .get("call_id")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    out.emit(EventBody::Unknown {
        reason,
        raw: payload.clone(),
        tool,
    });
}

#[cfg(test)]
mod tests {
    use harness_agents_core::{Event, Kind, Outcome, Status};

    use super::*;

    const META: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"t1","cwd":"/p","cli_version":"0.171.0","history_mode":"paginated"}}"#;
    const CONTEXT: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"turn_context","payload":{"model":"gpt-5","cwd":"/p"}}"#;
    const STARTED: &str = r#"{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started"}}"#;
    const PROMPT: &str = r#"{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u","content":[{"type":"text","text":"Show src/a.py"}]}}}"#;
    const CALL: &str = r#"{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}"#;
    const COMMAND: &str = r#"{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_1","command":["/bin/bash","-lc","cat src/a.py"],"status":"completed","exit_code":0,"aggregated_output":"x"}}}"#;
    const COUNT: &str = r#"{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":50,"reasoning_output_tokens":10}}}}"#;
    const ANSWER: &str = r#"{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","id":"m","content":[{"type":"Text","text":"It prints x."}]}}}"#;
    const DONE: &str = r#"{"timestamp":"2026-01-01T00:00:06Z","type":"event_msg","payload":{"type":"task_complete","last_agent_message":"It prints x."}}"#;

    fn run(lines: &[&str]) -> (Vec<Event>, Outcome, Accounting) {
        let mut normalizer = RolloutNormalizer::new(NormalizerConfig::default());
        let lines: Vec<&[u8]> = lines.iter().map(|line| line.as_bytes()).collect();
        let (events, outcome) =
            harness_agents_core::testkit::normalize_lines(&mut normalizer, &lines, &[]);
        (events, outcome, normalizer.decoder().accounting())
    }

    /// R1, R4: the command's argv is the live command line, its relative path resolved
    /// against the session's cwd; R6, R7: the running total is the outcome's usage (O3) and
    /// the accounting's tokens, cached input apart.
    #[test]
    fn a_turn_gives_the_live_events_and_usage() {
        let (events, outcome, accounting) = run(&[
            META, CONTEXT, STARTED, PROMPT, CALL, COMMAND, COUNT, ANSWER, DONE,
        ]);
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind()).collect();
        assert_eq!(kinds, [Kind::Read, Kind::Agent]);
        let json = serde_json::to_value(&events[0]).unwrap_or_default();
        assert_eq!(json["path"], "/p/src/a.py");
        assert_eq!(json["command"], "cat src/a.py");
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(outcome.session_id.as_deref(), Some("t1"));
        assert_eq!(outcome.final_output.as_deref(), Some("It prints x."));
        assert_eq!(outcome.metrics.input_tokens, Some(1000.into()));
        assert_eq!(outcome.metrics.cache_read_input_tokens, Some(600.into()));
        assert_eq!(outcome.metrics.reasoning_output_tokens, Some(10.into()));
        assert!(outcome.computed.is_empty());
        let tokens = accounting.models["gpt-5"];
        assert_eq!(
            (tokens.input, tokens.cache_read, tokens.output),
            (400, 600, 50)
        );
        assert!(accounting.reported_tokens);
        assert_eq!(accounting.tools["exec_command"].uses, 1);
        assert_eq!(accounting.first_prompt.as_deref(), Some("Show src/a.py"));
    }

    /// R6: tokens since the previous total go to the model of the turn that spent them.
    #[test]
    fn tokens_follow_the_turns_model() {
        let second = CONTEXT.replace("gpt-5", "gpt-5-mini");
        let later = COUNT
            .replace("1000", "1500")
            .replace("\"output_tokens\":50", "\"output_tokens\":80");
        let (_, _, accounting) = run(&[META, CONTEXT, COUNT, DONE, &second, &later, DONE]);
        assert_eq!(accounting.models["gpt-5"].input, 400);
        assert_eq!(accounting.models["gpt-5-mini"].input, 500);
        assert_eq!(accounting.models["gpt-5-mini"].output, 30);
    }

    /// R5: an `update_plan` the tool accepted is a plan (X5); a refused one is nothing.
    #[test]
    fn accepted_plans_only() {
        let call = |id: &str| {
            format!(
                r#"{{"type":"response_item","payload":{{"type":"function_call","name":"update_plan","call_id":"{id}","arguments":"{{\"plan\":[{{\"step\":\"Read\",\"status\":\"completed\"}},{{\"step\":\"Edit\",\"status\":\"pending\"}}]}}"}}}}"#
            )
        };
        let output = |id: &str, text: &str| {
            format!(
                r#"{{"type":"response_item","payload":{{"type":"function_call_output","call_id":"{id}","output":"{text}"}}}}"#
            )
        };
        let (a, b) = (call("c1"), output("c1", "Plan updated"));
        let (c, d) = (call("c2"), output("c2", "unsupported call: update_plan"));
        let (events, _, _) = run(&[META, &a, &b, &c, &d]);
        let plans: Vec<Value> = events
            .iter()
            .filter(|e| e.kind() == Kind::Plan)
            .map(|e| serde_json::to_value(e).unwrap_or_default()["items"].clone())
            .collect();
        assert_eq!(
            plans,
            [json!([{"text": "Read", "completed": true}, {"text": "Edit", "completed": false}])]
        );
    }

    /// R10: a legacy rollout (no `history_mode: "paginated"`) keeps its messages as events
    /// and its tool calls as `unknown`, never dropping them; a paginated one reads them from
    /// its items only.
    #[test]
    fn legacy_rollouts_lose_nothing() {
        let legacy = META.replace(r#","history_mode":"paginated""#, "");
        let lines = [
            r#"{"type":"event_msg","payload":{"type":"user_message","message":"hi"}}"#,
            r#"{"type":"event_msg","payload":{"type":"agent_reasoning","text":"Thinking."}}"#,
            r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#,
            r#"{"type":"event_msg","payload":{"type":"patch_apply_end","call_id":"c2","success":true}}"#,
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":"Done."}}"#,
            DONE,
        ];
        let mut all = vec![legacy.as_str()];
        all.extend(lines);
        let (events, outcome, accounting) = run(&all);
        let kinds: Vec<Kind> = events.iter().map(|e| e.kind()).collect();
        assert_eq!(
            kinds,
            [Kind::Reasoning, Kind::Unknown, Kind::Unknown, Kind::Agent]
        );
        let tool = |e: &Event| serde_json::to_value(e).unwrap_or_default()["tool"].clone();
        assert_eq!(tool(&events[1]), "shell");
        assert_eq!(tool(&events[2]), "patch_apply_end");
        assert_eq!(outcome.final_output.as_deref(), Some("Done."));
        assert_eq!(accounting.first_prompt.as_deref(), Some("hi"));
        let mut paginated = vec![META];
        paginated.extend(lines);
        let (events, _, _) = run(&paginated);
        assert!(events.is_empty(), "{events:?}");
    }

    /// Pushes `lines` through the normalizer and through the `Value` path alone, asserting the
    /// same disposition for each line, then the same events, outcome and accounting; returns
    /// how many lines the fast path read.
    fn agree(name: &str, lines: &[&str]) -> usize {
        use harness_agents_core::Normalizer;

        let config = NormalizerConfig::with_cwd("/w");
        let mut fast = RolloutNormalizer::new(config.clone());
        let mut slow =
            Driver::<harness_agents_core::backend::ExactOnly<RolloutDecoder>>::new(config.clone());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let mut read = 0;
        for line in lines {
            let bytes = line.as_bytes();
            read += usize::from(json::object_text(bytes).and_then(Fast::read).is_some());
            fast.push_line(bytes, &mut a);
            slow.push_line(bytes, &mut b);
            assert_eq!(
                fast.last_disposition(),
                slow.last_disposition(),
                "{name}: {line}"
            );
        }
        let (fast_outcome, slow_outcome) = (fast.finish(&mut a), slow.finish(&mut b));
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        assert_eq!(
            format!("{fast_outcome:?}"),
            format!("{slow_outcome:?}"),
            "{name}"
        );
        assert_eq!(
            fast.decoder().accounting(),
            slow.decoder().0.accounting(),
            "{name}"
        );
        read
    }

    /// Every stored rollout under `dir`.
    fn rollouts(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                rollouts(&path, found);
            } else if path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
            {
                found.push(path);
            }
        }
    }

    /// S7, R4: the fast path reads every stored rollout's lines as the `Value` path does:
    /// the same dispositions, events, outcome and accounting.
    #[test]
    fn r4_the_fast_path_agrees_with_the_value_path_on_every_stored_rollout() {
        let mut files = Vec::new();
        rollouts(&fixtures::root().join("sessions/codex"), &mut files);
        assert!(files.len() > 40, "{} rollouts", files.len());
        let mut read = 0;
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
            read += agree(&path.display().to_string(), &lines);
        }
        // Every message, one-part summary and command line of the rollouts: 66 such lines, one
        // of them a two-part summary, which the `Value` path joins.
        assert_eq!(read, 65, "lines read by the fast path");
    }

    /// S2, S7, R4: unusual `item_completed` lines (repeated keys, escaped keys, several or odd
    /// parts, odd commands, lines that are not JSON) read alike on both paths.
    #[test]
    fn r4_edge_lines_read_alike_on_both_paths() {
        let item = |item: &str| {
            format!(
                r#"{{"timestamp":"2026-01-01T00:00:02Z","type":"event_msg","payload":{{"type":"item_completed","item":{item}}}}}"#
            )
        };
        let mut lines: Vec<String> = [
            r#"{"type":"AgentMessage","id":"m","content":[{"type":"Text","text":"a\n\"b\"\u00e9\ud83d\ude00"}]}"#,
            r#"{"type":"AgentMessage","id":"m","content":[{"type":"Text","text":"a"},{"type":"Text","text":"b"}]}"#,
            r#"{"type":"AgentMessage","id":"m","content":["plain",{"text":5},{"x":"y"},7,null]}"#,
            r#"{"type":"AgentMessage","id":"m","content":[{"text":"a","text":5}]}"#,
            r#"{"type":"AgentMessage","id":"m","content":[{"text":5,"text":"a"}]}"#,
            r#"{"type":"AgentMessage","id":"m","content":[{"t\u0065xt":"a"}]}"#,
            r#"{"type":"AgentMessage","id":"m","content":[{"text":"a"}],"content":"b"}"#,
            r#"{"type":"AgentMessage","id":"m","content":{"text":"a"}}"#,
            r#"{"type":"AgentMessage","id":"m","content":[]}"#,
            r#"{"type":"AgentMessage","id":"m","content":[{"text":""}]}"#,
            r#"{"type":"AgentMessage","id":7}"#,
            r#"{"type":"AgentM\u0065ssage","id":"m","content":[{"text":"a"}]}"#,
            r#"{"type":"Reasoning","id":"r","summary_text":["one"],"raw_content":[]}"#,
            r#"{"type":"Reasoning","id":"r","summary_text":["one","two"]}"#,
            r#"{"type":"Reasoning","id":"r","summary_text":[{"text":"t\tab"}]}"#,
            r#"{"type":"Reasoning","id":"r","summary_text":"one"}"#,
            r#"{"type":"Reasoning","id":"r","summary_text":[]}"#,
            r#"{"type":"CommandExecution","id":"c","command":["/bin/bash","-lc","cat a.py"],"aggregated_output":"x","exit_code":0,"status":"completed"}"#,
            r#"{"type":"CommandExecution","id":"c","command":["ls",7,"a b","it's",null],"exit_code":2,"status":"failed"}"#,
            r#"{"type":"CommandExecution","id":"c","command":[],"exit_code":-1}"#,
            r#"{"type":"CommandExecution","id":"c","command":"rg -n foo src","exit_code":1.5,"status":"completed"}"#,
            r#"{"type":"CommandExecution","id":"c","command":7,"aggregated_output":"x"}"#,
            r#"{"type":"CommandExecution","id":"c","aggregated_output":"x"}"#,
            r#"{"type":"CommandExecution","id":"c","command":["cat","a"],"command":"ls","exit_code":0,"exit_code":"0"}"#,
            r#"{"type":"CommandExecution","id":"c","command":["cat","a\u0000b"],"exit_code":12345678901234567890}"#,
            r#"{"type":"UserMessage","id":"u","content":[{"type":"text","text":"hi"}]}"#,
            r#"{"type":"FileChange","id":"f","changes":{"a.rs":{"type":"add"}},"status":"completed"}"#,
            r#"{"type":"Other","id":"o"}"#,
            r#"{"id":"o"}"#,
            r#"7"#,
        ]
        .iter()
        .map(|i| item(i))
        .collect();
        lines.extend(
            [
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"a"}]}},"payload":5}"#,
                r#"{"type":"event_msg","payload":5,"payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"a"}]}}}"#,
                r#"{"type":"event_msg","type":"response_item","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"a"}]}}}"#,
                r#"{"timestamp":7,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"b"}]}}}"#,
                r#"{"timestamp":"2026-01-01T00:00:0\u0033Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"Reasoning","summary_text":["c"]}}}"#,
                r#"{"type":"event_msg","payload":{"type":"agent_message","message":"item_completed"}}"#,
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"\ud800"}]}}}"#,
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"a"}]}}"#,
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"AgentMessage","content":[{"text":"a"}]}}} x"#,
                r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","command":["ls"],"exit_code":1e400}}}"#,
                "{\"type\":\"event_msg\",\"payload\":{\"type\":\"item_completed\",\"item\":{\"type\":\"AgentMessage\",\"content\":[{\"text\":\"a\tb\"}]}}}",
                "{\"type\":\"event_msg\",\t\"payload\":{\"type\":\"item_completed\",\"item\":{\"type\":\"AgentMessage\",\"content\":[{\"text\":\"a\"}]}}}",
                r#" {"type" : "event_msg" , "payload" : {"type":"item_completed","item":{"type":"Reasoning","summary_text":["d"]}} } "#,
            ]
            .map(str::to_string),
        );
        let deep = format!(
            r#"{{"type":"event_msg","payload":{{"type":"item_completed","item":{{"type":"AgentMessage","content":[{{"text":"a"}}],"x":{}0{}}}}}}}"#,
            "[".repeat(124),
            "]".repeat(124)
        );
        lines.push(deep);
        // Each line on its own after the session's first line, then all of them together.
        let mut read = 0;
        for line in &lines {
            read += agree(line, &[META, line.as_str()]);
        }
        let mut all = vec![META];
        all.extend(lines.iter().map(String::as_str));
        agree("all", &all);
        // The others have several parts, no usable command, another item type, or are not
        // surely JSON (an escaped key, a control character, a long number, deep nesting).
        assert_eq!(read, 23, "edge lines read by the fast path");
    }

    /// R7: an aborted turn has no terminal line: S9 gives its error, and the run is incomplete.
    #[test]
    fn an_aborted_turn_is_incomplete() {
        let aborted =
            r#"{"type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#;
        let (events, outcome, _) = run(&[META, STARTED, aborted]);
        assert_eq!(outcome.status, Status::Incomplete);
        assert!(matches!(&events[..], [e] if e.kind() == Kind::Error));
    }
}
