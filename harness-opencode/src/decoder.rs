//! The decoder of `opencode run --format json` (the S rules and the P rules of
//! `docs/opencode.md`).

use std::sync::Arc;

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::text::Joined;
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, Summary, add_figure, reparse,
};
use harness_agents_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, ToolRef, UnknownReason,
};
use serde_json::{Number, Value};

use crate::server::{self, Seen, Server};
use crate::tools::{Tools, tool_events};
use crate::wire::{self, Line, Part};

/// The whole `part` of a line.
fn full_part(line: &[u8]) -> Value {
    match reparse(line) {
        Value::Object(mut map) => map.remove("part").unwrap_or(Value::Null),
        _ => Value::Null,
    }
}

/// The opencode normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`OpencodeDecoder`] the P rules.
pub type OpencodeNormalizer = Driver<OpencodeDecoder>;

/// The text being assembled for one message (P3): its reasoning and text parts so far.
#[derive(Debug, Default)]
struct Message {
    id: Option<String>,
    /// Its reasoning parts, joined with a blank line as they arrive (one copy of each, S7).
    reasoning: String,
    /// Its texts, joined; one part's is shared with its event and the outcome (S7).
    text: Joined,
    /// The last line that added non-empty text (J2).
    last_line: u64,
}

/// A tool use printed while still running (P7), waiting for its finished line.
#[derive(Debug)]
struct Running {
    /// Its id and tool.
    tool_use: PendingToolUse,
    /// The last part printed for it.
    part: Value,
}

/// Token and cost sums over every `step_finish` (P11), kept as the outcome's figures, and the
/// number of steps (its `num_turns`).
#[derive(Debug, Default, Clone)]
struct Usage {
    metrics: Metrics,
    steps: u64,
}

impl Usage {
    fn add_step(&mut self, part: &Part<'_>) {
        self.steps += 1;
        let sums = &mut self.metrics;
        let tokens = part.tokens.as_ref();
        add_figure(&mut sums.input_tokens, tokens.map(|t| &t.input));
        add_figure(&mut sums.output_tokens, tokens.map(|t| &t.output));
        add_figure(
            &mut sums.reasoning_output_tokens,
            tokens.map(|t| &t.reasoning),
        );
        let cache = tokens.and_then(|t| t.cache.as_ref());
        add_figure(
            &mut sums.cache_read_input_tokens,
            cache.map(|[read, _]| read),
        );
        add_figure(
            &mut sums.cache_creation_input_tokens,
            cache.map(|[_, write]| write),
        );
        add_figure(&mut sums.total_cost_usd, Some(&part.cost));
        sums.num_turns = Some(Number::from(self.steps));
    }
}

/// The decoding of `opencode run --format json` lines (P rules).
///
/// Its state is the message being assembled (at most one), the tool uses printed as running
/// and not finished, the sub-agent sessions seen, and the outcome's figures.
#[derive(Debug, Default)]
pub struct OpencodeDecoder {
    tools: Tools,
    message: Option<Message>,
    running: Vec<Running>,
    usage: Usage,
    /// The figures of a session's running turn (PS14): its own steps'.
    turn: Usage,
    /// The last `agent` text and its message (P12): the event's text, shared (S7).
    answer: Option<(Option<String>, Arc<str>)>,
    /// In a session's transcript, the tool parts seen that have not finished, for the
    /// permission requests that name them (PS3, PS6).
    seen: Vec<Seen>,
    /// In a session's transcript, the ids of the caller's prompts (PS2).
    prompts: std::collections::HashSet<String>,
}

impl OpencodeDecoder {
    /// P3: emits the message being assembled, reasoning first, then text.
    fn flush(&mut self, out: &mut Emitter<'_>) {
        let Some(message) = self.message.take() else {
            return;
        };
        let Message {
            id,
            reasoning,
            text,
            last_line,
        } = message;
        if !reasoning.is_empty() {
            let body = EventBody::Reasoning { text: reasoning };
            out.emit_at(body, Some(last_line));
        }
        if !text.is_empty() {
            let text = text.into_text();
            self.answer = Some((id, Arc::clone(&text)));
            let body = EventBody::Agent { text };
            out.emit_at(body, Some(last_line));
        }
    }

    fn on_view(&mut self, view: Option<&Line<'_>>, line: &[u8], out: &mut Emitter<'_>) {
        let Some((view, kind)) = view.and_then(|v| v.kind.as_str().map(|kind| (v, kind))) else {
            // S3: not an object, or no string `type`.
            self.flush(out);
            out.unknown(UnknownReason::NotAnEvent, reparse(line));
            return;
        };
        // P1: the first session id.
        if let Some(id) = view.session_id.non_empty_str() {
            out.session_id(id);
        }
        // P9: `opencode run` prints only its own session's parts: no event is in a sub-agent
        // (no `parent_tool_use_id`).
        let part = view.part.as_ref();
        match (kind, part) {
            ("text" | "reasoning", Some(part)) => self.on_text(kind, part, line, out),
            ("step_start", Some(_)) => {
                self.flush(out);
                out.consumed_by("P4");
            }
            ("step_finish", Some(part)) => {
                self.flush(out);
                self.on_step_finish(part, out);
            }
            ("tool_use", Some(part)) => {
                self.flush(out);
                self.on_tool(part, line, out);
            }
            ("error", _) => {
                self.flush(out);
                self.on_error(view.error.as_ref(), out);
            }
            ("text" | "reasoning" | "step_start" | "step_finish" | "tool_use", None) => {
                self.flush(out);
                out.unknown(UnknownReason::MalformedMessage, reparse(line));
            }
            _ => {
                self.flush(out);
                out.unknown(UnknownReason::UnknownType, reparse(line));
            }
        }
    }

    /// P2, P3: a whole text or reasoning part joins the message being assembled.
    fn on_text(&mut self, kind: &str, part: &Part<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let Some(text) = part.text.as_str() else {
            self.flush(out);
            out.unknown(UnknownReason::MalformedMessage, reparse(line));
            return;
        };
        if part.synthetic.is_true() {
            // P2: text opencode itself injected (after a compaction), not the agent's.
            self.flush(out);
            out.consumed_by("P2");
            return;
        }
        let id = part.message_id.as_str().map(str::to_string);
        let same = self
            .message
            .as_ref()
            .is_some_and(|m| id.is_some() && m.id == id);
        if !same {
            self.flush(out);
        }
        let message = self.message.get_or_insert_with(|| Message {
            id,
            ..Message::default()
        });
        if !text.is_empty() {
            if kind == "reasoning" {
                if !message.reasoning.is_empty() {
                    message.reasoning.push_str("\n\n");
                }
                message.reasoning.push_str(text);
            } else {
                message.text.push(text);
            }
            message.last_line = out.line().unwrap_or_default();
        }
        out.defer();
    }

    /// P10, P11, P12: a step ends; a reason other than `tool-calls` ends the turn.
    fn on_step_finish(&mut self, part: &Part<'_>, out: &mut Emitter<'_>) {
        self.usage.add_step(part);
        self.turn.add_step(part);
        let reason = part.reason.as_str();
        if reason == Some("tool-calls") {
            out.consumed_by("P10");
            return;
        }
        out.terminal();
        let message = part.message_id.as_str();
        out.final_output(match &self.answer {
            Some((id, text)) if id.is_some() && id.as_deref() == message => Some(Arc::clone(text)),
            _ => None,
        });
        if reason == Some("error") {
            out.fail();
            out.emit(EventBody::Error {
                message: "step finished with reason error".to_string(),
            });
        }
    }

    /// P13: an `error` line.
    fn on_error(&mut self, error: Option<&Value>, out: &mut Emitter<'_>) {
        fn text(v: Option<&Value>) -> Option<&str> {
            v.and_then(Value::as_str).filter(|s| !s.is_empty())
        }
        let message = text(error.and_then(|e| e.pointer("/data/message")))
            .or_else(|| text(error.and_then(|e| e.get("message"))))
            .or_else(|| text(error.and_then(|e| e.get("name"))))
            .unwrap_or("error")
            .to_string();
        out.fail();
        out.terminal();
        out.emit(EventBody::Error { message });
    }

    /// P5-P9: a tool part.
    fn on_tool(&mut self, part: &Part<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let id = part.call_id.non_empty_str();
        let status = part.state.as_ref().and_then(|s| s.status.as_str());
        let (Some(tool), Some(status)) = (part.tool.as_str(), status) else {
            // P5: no tool name or no state: nothing to pair or map.
            let tool = ToolRef {
                tool: part.tool.as_str().map(str::to_string),
                tool_use_id: id.map(str::to_string),
            };
            let body = EventBody::Unknown {
                reason: UnknownReason::MalformedToolUse,
                raw: full_part(line),
                tool,
            };
            self.settle(id);
            out.emit(body);
            return;
        };
        match status {
            "pending" | "running" => {
                // P7: still running: recorded, announced (L1), emitted when it finishes.
                let Some(id) = id else {
                    out.consumed_by("P7");
                    return;
                };
                let known = self.running.iter().position(|r| r.tool_use.id == id);
                match known {
                    Some(i) => self.running[i].part = full_part(line),
                    None => {
                        if out.wants_started() {
                            let would_be = tool_events(&self.tools, tool, part, true);
                            let tool_ref = ToolRef {
                                tool: Some(tool.to_string()),
                                tool_use_id: Some(id.to_string()),
                            };
                            out.started_from(tool_ref, &would_be, None);
                        }
                        self.running.push(Running {
                            tool_use: PendingToolUse::new(id, Some(tool)),
                            part: full_part(line),
                        });
                    }
                }
                out.defer();
            }
            _ => {
                self.settle(id);
                // The output is read only for a failed shell command's error text and an old
                // read's `<type>` line (P6a, P6c): then the line is read again, keeping it.
                let again = needs_output(tool, part)
                    .then(|| wire::parse(line, true).ok().flatten())
                    .flatten();
                let whole = again.as_ref().and_then(|l| l.part.as_ref()).unwrap_or(part);
                let completed = status == "completed";
                let events = tool_events(&self.tools, tool, whole, completed);
                let mut raw = None;
                for mut body in events {
                    if let EventBody::Unknown { raw: slot, .. } = &mut body {
                        // J8: the part as printed (the tool map leaves `raw` null).
                        *slot = raw.get_or_insert_with(|| full_part(line)).clone();
                    }
                    out.emit(body);
                }
            }
        }
    }

    /// A finished tool part settles the running use of its id, if any (P7).
    fn settle(&mut self, id: Option<&str>) {
        if let Some(id) = id {
            self.running.retain(|r| r.tool_use.id != id);
        }
    }
}

impl OpencodeDecoder {
    /// PS1-PS8: an event of `opencode serve`'s stream, in a session's transcript.
    fn on_server(&mut self, kind: &str, line: &[u8], out: &mut Emitter<'_>) {
        let event = reparse(line);
        // P1: the first session id named, here the event's.
        if let Some(own) = server::session_of(&event) {
            out.session_id(own);
        }
        let session = out.current_session_id().map(str::to_string);
        if let Some(seen) = server::seen_tool(&event) {
            if session.as_deref() == server::session_of(&event).or(session.as_deref()) {
                self.seen.retain(|s| s.call_id != seen.call_id);
                let status = event.pointer("/properties/part/state/status");
                if !matches!(status.and_then(Value::as_str), Some("completed" | "error")) {
                    self.seen.push(seen);
                }
            }
        }
        if let Some(id) = server::user_message(&event) {
            self.prompts.insert(id.to_string());
        }
        let prompts = &self.prompts;
        let read = server::read(&event, kind, session.as_deref(), |id| prompts.contains(id));
        match read {
            Server::Run(bytes) => {
                let mut view = None;
                match wire::parse_into(&bytes, false, &mut view) {
                    Ok(()) => self.on_view(view.as_ref(), &bytes, out),
                    // Never: the line was made from a parsed value.
                    Err(_) => out.unknown(UnknownReason::NotAnEvent, event),
                }
            }
            Server::Permission(props) => {
                self.flush(out);
                let call = props.get("tool").and_then(|t| t.get("callID"));
                let call = call.and_then(Value::as_str);
                let seen = self.seen.iter().find(|s| Some(s.call_id.as_str()) == call);
                let tools = &self.tools;
                let would_be = |tool: &str, input: &Value| {
                    let part = serde_json::json!({
                        "part": {"tool": tool, "state": {"status": "running", "input": input}},
                    })
                    .to_string();
                    match wire::parse(part.as_bytes(), false) {
                        Ok(Some(Line {
                            part: Some(part), ..
                        })) => tool_events(tools, tool, &part, true),
                        _ => Vec::new(),
                    }
                };
                server::permission(&props, seen, would_be, out);
            }
            Server::Idle => {
                // PS7: the turn is over; what the agent said is complete.
                self.flush(out);
                out.consumed_by("PS7");
            }
            Server::Consumed(rule) => out.consumed_by(rule),
            Server::Malformed(raw) => {
                self.flush(out);
                out.unknown(UnknownReason::MalformedMessage, raw);
            }
        }
    }
}

/// Whether a finished tool's events read its `output`, which the view leaves out: a shell
/// command that exited non-zero or was killed (its output is the error text, P6c) and a
/// successful `read` without `metadata.display.type` (its `<type>` line, P6a).
fn needs_output(tool: &str, part: &Part<'_>) -> bool {
    let metadata = part.state.as_ref().and_then(|s| s.metadata.as_ref());
    match tool {
        "bash" => match metadata.map(|m| &m.exit) {
            Some(Loose::Number(exit)) => exit.as_i64() != Some(0),
            Some(Loose::Null) => true,
            _ => false,
        },
        "read" => metadata.is_none_or(|m| m.display_type == Loose::Absent),
        _ => false,
    }
}

impl Decoder for OpencodeDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.tools = Tools::new(config);
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        let mut view = None;
        wire::parse_into(line, false, &mut view)?;
        let kind = view.as_ref().and_then(|v| v.kind.as_str());
        if let Some(kind) = kind.filter(|kind| server::is_server_type(kind)) {
            let kind = kind.to_string();
            self.on_server(&kind, line, out);
            return Ok(());
        }
        self.on_view(view.as_ref(), line, out);
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush(out);
        for running in std::mem::take(&mut self.running) {
            out.unresolved(running.tool_use, running.part);
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.usage.metrics.clone())
    }

    /// PS14: a session turn's figures are the sums over its own steps (opencode reports each
    /// step's), so they are not cumulative.
    fn turn_summary(&mut self) -> Summary {
        Summary::new(std::mem::take(&mut self.turn).metrics)
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.running.iter().map(|r| r.tool_use.clone()).collect()
    }
}
