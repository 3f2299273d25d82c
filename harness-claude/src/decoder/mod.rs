//! The decoder of Claude Code's `stream-json` output (S and C rules).

use std::collections::{BTreeMap, HashMap};

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, PermissionRequest, Summary, add_numbers, parse_value,
    reparse,
};
use harness_agents_core::{
    Decision, EventBody, LineRange, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus,
    UnknownReason, WarningSource,
};
use serde_json::{Map, Number, Value};

mod messages;
mod metrics;
mod pairing;

use messages::Message;
use metrics::Tokens;
use pairing::tool_raw;

use crate::tools::{Context, Mapping, map_tool};
use harness_agents_core::backend::stream_json::{
    self, Block, Body, Content, LineParts, Paired, ResultFields, ToolUse, ToolUseResult, ToolUses,
    block_value,
};

/// The most characters of a tool's failure text an `error` field carries (J6).
const MAX_TEXT: usize = 1_000;

/// The thread a line belongs to: its non-empty `parent_tool_use_id`, `None` for the main one.
type Thread = Option<String>;

/// The JSON of a line, made only when an event needs raw input (J8).
type LineValue<'a> = &'a dyn Fn() -> Value;

/// The Claude Code normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`ClaudeDecoder`] the S and C rules.
pub type ClaudeNormalizer = Driver<ClaudeDecoder>;

/// The decoding of Claude Code's `stream-json` lines (S and C rules, O2).
#[derive(Debug, Default)]
pub struct ClaudeDecoder {
    /// The working directory when the stream names none (C14a).
    config_cwd: Option<String>,
    /// Whether the stream is a session's: the CS rules apply to its control lines.
    session: bool,
    /// Where skills live (C14a).
    workspace: Option<String>,
    init_cwd: Option<String>,

    /// Messages being assembled, by first-seen order.
    messages: BTreeMap<u64, Message>,
    /// The open message of each thread (C4: at most one).
    open_by_thread: HashMap<Thread, u64>,
    /// Tool use id → the open messages that contain a use with that id.
    owners: HashMap<String, Vec<u64>>,
    next_message: u64,

    /// Recorded tool uses, by record order (S9).
    uses: ToolUses,

    /// Whether the lines are a stored transcript's (T1: camelCase `toolUseResult`).
    transcript: bool,

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

impl ClaudeDecoder {
    /// Sets the working directory a stored transcript names on its lines (T rules), unless an
    /// `init` line did.
    #[cfg(feature = "sessions")]
    pub(crate) fn set_cwd(&mut self, cwd: &str) {
        if self.init_cwd.is_none() {
            self.init_cwd = Some(cwd.to_string());
        }
    }

    /// Reads the lines as a stored transcript's (T1).
    #[cfg(feature = "sessions")]
    pub(crate) fn set_transcript(&mut self) {
        self.transcript = true;
    }

    /// The key of a line's tool use result (C10, T1).
    fn tool_use_result_key(&self) -> &'static str {
        if self.transcript {
            "toolUseResult"
        } else {
            "tool_use_result"
        }
    }

    fn current_cwd(&self) -> Option<&str> {
        self.init_cwd.as_deref().or(self.config_cwd.as_deref())
    }

    // ---- lines ----

    /// A line that `serde_json` parsed (the exact path, S2).
    fn on_value(&mut self, value: Value, out: &mut Emitter<'_>) {
        if !value.is_object() {
            out.unknown_in(UnknownReason::NotAnEvent, value, None);
            return;
        }
        let text = value.to_string();
        match stream_json::parse(&text) {
            Some(parts) => self.on_parts(parts, &text, Some(value), out),
            // Unreachable: a view reads any JSON object; keep the line all the same.
            None => out.unknown_in(UnknownReason::MalformedMessage, value, None),
        }
    }

    /// One object line, read through its typed view. `text` is the line's JSON; `value`, when
    /// the exact path already built it.
    pub(crate) fn on_parts(
        &mut self,
        parts: LineParts<'_>,
        text: &str,
        value: Option<Value>,
        out: &mut Emitter<'_>,
    ) {
        if let Some(id) = parts.session_id.non_empty_str() {
            out.session_id(id);
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
                self.on_user(content, tool_use_result, &line_value, text, parent, out);
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
                    _ => out.unknown_in(
                        UnknownReason::UnknownSystemSubtype,
                        line_value(),
                        parent.clone(),
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
                    Some("control_request") if self.session => {
                        self.flush_line_default(&parent, out);
                        self.on_control_request(line, &parent, out);
                    }
                    // CS3: the agent's answer to a control request of the session (an
                    // interrupt); CS4: it withdrew a permission request (the session forgets
                    // it). Both are the session's business, not events.
                    Some("control_response") if self.session => {
                        out.consumed_by("CS3");
                        self.flush_line_default(&parent, out);
                    }
                    Some("control_cancel_request") if self.session => {
                        out.consumed_by("CS4");
                        self.flush_line_default(&parent, out);
                    }
                    Some(_) => {
                        self.flush_line_default(&parent, out);
                        out.unknown_in(UnknownReason::UnknownType, line, parent.clone());
                    }
                    None => {
                        self.flush_line_default(&parent, out);
                        out.unknown_in(UnknownReason::NotAnEvent, line, parent.clone());
                    }
                }
            }
        }
    }

    /// A `control_request` line of a session. CS1: `can_use_tool` is a `permission` event
    /// (I4): the request's id, the three decisions (Claude Code takes a session rule for
    /// "always"), the tool and its input with what its use would give. CS2: any other
    /// subtype (hooks, MCP messages) is answered with an error by the session and emits
    /// nothing; a request without a string id or a `can_use_tool` without a tool name is an
    /// `unknown` (`malformed_message`), since nobody could answer it.
    fn on_control_request(&mut self, line: Value, parent: &Thread, out: &mut Emitter<'_>) {
        let request = line.get("request");
        let subtype = request
            .and_then(|r| r.get("subtype"))
            .and_then(Value::as_str);
        let id = line.get("request_id").and_then(Value::as_str);
        let name = request
            .and_then(|r| r.get("tool_name"))
            .and_then(Value::as_str);
        match (subtype, id, name) {
            (Some("can_use_tool"), Some(id), Some(name)) => {
                out.consumed_by("CS1");
                let input = request.and_then(|r| r.get("input")).cloned();
                let tool = ToolRef {
                    tool: Some(name.to_string()),
                    tool_use_id: request
                        .and_then(|r| r.get("tool_use_id"))
                        .and_then(Value::as_str)
                        .map(str::to_string),
                };
                let would_be = match &input {
                    Some(input) => {
                        let block = serde_json::json!({ "input": input }).to_string();
                        let ok = ToolStatus {
                            success: true,
                            error: None,
                        };
                        match self.mapping(&block, &ok, &tool) {
                            Mapping::Events(bodies) => bodies,
                            Mapping::Nothing | Mapping::UnknownTool | Mapping::Malformed => {
                                Vec::new()
                            }
                        }
                    }
                    None => Vec::new(),
                };
                let request = PermissionRequest {
                    id: id.to_string(),
                    options: Decision::ALL.to_vec(),
                    tool,
                    input,
                    would_be,
                };
                out.permission(request, parent.clone());
            }
            (Some(subtype), Some(_), _) if subtype != "can_use_tool" => out.consumed_by("CS2"),
            _ => out.unknown_in(UnknownReason::MalformedMessage, line, parent.clone()),
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
        out.emit_in(body, parent.clone());
    }
}

impl Decoder for ClaudeDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.config_cwd = config.cwd.clone();
        self.session = config.session;
        self.workspace = config.workspace.clone();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // The core's entry point: a borrowed view, which exists exactly when the line parses
        // into a `Value` object (S2); JSON that is no object takes the `Value` path (S3).
        match stream_json::read(line)? {
            Some((text, parts)) => self.on_parts(parts, text, None, out),
            None => self.on_value(parse_value(line)?, out),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush_all(out);
        // One use at a time, its memory freed as its event goes out (S7, S9).
        while let Some(tool_use) = self.uses.pop_first() {
            let body = EventBody::Unknown {
                reason: UnknownReason::UnresolvedToolUse,
                raw: tool_raw(reparse(tool_use.block.as_bytes()), Value::Null, None),
                tool: ToolRef {
                    tool: tool_use.name,
                    tool_use_id: Some(tool_use.id),
                },
            };
            out.emit_in(body, tool_use.thread);
        }
    }

    fn summary(&self) -> Summary {
        let mut summary = Summary::new(self.metrics());
        summary.structured_output = self.structured_output.clone();
        summary
    }

    fn cwd(&self) -> Option<&str> {
        self.init_cwd.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses.pending()
    }
}

#[cfg(test)]
mod tests {
    use harness_agents_core::{Disposition, Event, Normalizer, Outcome};

    use super::*;

    /// The disposition of each line of a small session, in order.
    fn dispositions(lines: &[&str]) -> Vec<Disposition> {
        let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
        harness_agents_core::testkit::dispositions(&mut normalizer, lines)
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
