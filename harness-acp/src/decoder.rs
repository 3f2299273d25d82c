//! The normalizer of an ACP transcript: the A rules of `docs/acp.md`.

use std::collections::HashMap;

use harness_core::backend::text::truncate_chars;
use harness_core::backend::{Decoder, Driver, Emitter, MAX_WARNING_TEXT, NotJson, Summary};
use harness_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, PlanItem, ToolRef, UnknownReason,
    WarningSource, add_numbers,
};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::tools;
use crate::wire::{
    ContentBlock, ContentChunk, From, PermissionRequest, Plan, PlanEntryStatus, ToolCallStatus,
    id_key,
};

/// The normalizer of the `acp` backend: [`AcpDecoder`] in the core's [`Driver`].
pub type AcpNormalizer = Driver<AcpDecoder>;

/// One tool call being followed (A6): every field its notifications gave, the later replacing
/// the earlier, kept as JSON.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// The order it was first seen in (A11).
    seq: u64,
    /// The merged fields, `toolCallId` included.
    pub(crate) fields: Map<String, Value>,
}

/// The decoder of an ACP transcript (A1-A11).
#[derive(Debug)]
pub struct AcpDecoder {
    /// The working directory: the caller's, until `session/new` names one (A2).
    cwd: Option<String>,
    session_id: Option<String>,
    /// The client's requests still waiting for their answers: id -> method (A2, A3).
    requests: HashMap<String, String>,
    /// Tool calls not yet completed or failed (A6).
    calls: HashMap<String, Call>,
    next_seq: u64,
    /// The message being assembled (A5): its reasoning, its text, and the last line of each.
    thought: String,
    thought_line: Option<u64>,
    text: String,
    text_line: Option<u64>,
    /// The last `agent` text (O1's `final_output`).
    final_output: Option<String>,
    failed: bool,
    metrics: Metrics,
}

impl AcpDecoder {
    /// A5: the message being assembled, as `reasoning` then `agent`.
    fn flush(&mut self, out: &mut Emitter<'_>) {
        for (text, line, agent) in [
            (
                std::mem::take(&mut self.thought),
                self.thought_line.take(),
                false,
            ),
            (std::mem::take(&mut self.text), self.text_line.take(), true),
        ] {
            if text.is_empty() {
                continue;
            }
            if agent {
                self.final_output = Some(text.clone());
            }
            let body = if agent {
                EventBody::Agent { text }
            } else {
                EventBody::Reasoning { text }
            };
            let mut event = harness_core::Event::new(body);
            if let Some(line) = line {
                event = event.at_line(line);
            }
            out.event(event);
        }
    }

    fn unknown(out: &mut Emitter<'_>, reason: UnknownReason, raw: Value, tool: ToolRef) {
        out.emit(EventBody::Unknown { reason, raw, tool });
    }

    fn error(&mut self, out: &mut Emitter<'_>, message: String) {
        self.failed = true;
        out.emit(EventBody::Error { message });
    }

    /// A2: a message the client sent.
    fn client(&mut self, message: &Value, out: &mut Emitter<'_>) {
        let method = message.get("method").and_then(Value::as_str);
        if let (Some(id), Some(method)) = (message.get("id"), method) {
            self.requests.insert(id_key(id), method.to_string());
            if method == "session/new" {
                if let Some(cwd) = message.pointer("/params/cwd").and_then(Value::as_str) {
                    self.cwd = Some(cwd.to_string());
                }
            }
        }
        out.consumed_by("A2");
    }

    /// A message the agent sent: an answer (A3), a notification (A4) or a request (A9).
    fn agent(&mut self, message: Value, out: &mut Emitter<'_>) {
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_string);
        let id = message.get("id").cloned();
        match (id, method) {
            (Some(id), None) => self.answer(&id, message, out),
            (None, Some(method)) if method == "session/update" => self.update(message, out),
            (Some(_), Some(method)) if method == "session/request_permission" => {
                self.permission(message, out);
            }
            (_, Some(_)) => {
                Self::unknown(out, UnknownReason::UnknownType, message, ToolRef::default())
            }
            (None, None) => {
                Self::unknown(out, UnknownReason::NotAnEvent, message, ToolRef::default())
            }
        }
    }

    /// A3: the answer to one of the client's requests.
    fn answer(&mut self, id: &Value, message: Value, out: &mut Emitter<'_>) {
        let Some(method) = self.requests.remove(&id_key(id)) else {
            Self::unknown(
                out,
                UnknownReason::UnpairedResult,
                message,
                ToolRef::default(),
            );
            return;
        };
        if let Some(error) = message.get("error") {
            let text = error.get("message").and_then(Value::as_str).unwrap_or("");
            let code = error.get("code").map(Value::to_string).unwrap_or_default();
            out.terminal();
            self.error(out, format!("{method} failed: {text} (code {code})"));
            return;
        }
        let result = message.get("result").unwrap_or(&Value::Null);
        match method.as_str() {
            "session/new" => {
                if self.session_id.is_none() {
                    if let Some(session) = result.get("sessionId").and_then(Value::as_str) {
                        self.session_id = Some(session.to_string());
                    }
                }
                out.consumed_by("A3");
            }
            "session/prompt" => self.prompt_answer(result, out),
            _ => out.consumed_by("A3"),
        }
    }

    /// A10: the prompt's answer ends the run.
    fn prompt_answer(&mut self, result: &Value, out: &mut Emitter<'_>) {
        out.terminal();
        let count = |key: &str| {
            result
                .pointer(&format!("/usage/{key}"))
                .and_then(Value::as_number)
                .cloned()
        };
        let add = |total: &mut Option<Number>, value: Option<Number>| {
            if let Some(value) = value {
                *total = Some(match total.take() {
                    Some(total) => add_numbers(&total, &value),
                    None => value,
                });
            }
        };
        let m = &mut self.metrics;
        add(&mut m.input_tokens, count("inputTokens"));
        add(&mut m.output_tokens, count("outputTokens"));
        add(&mut m.cache_read_input_tokens, count("cachedReadTokens"));
        add(
            &mut m.cache_creation_input_tokens,
            count("cachedWriteTokens"),
        );
        add(&mut m.reasoning_output_tokens, count("thoughtTokens"));
        add(&mut m.num_turns, Some(Number::from(1u64)));
        match result.get("stopReason").and_then(Value::as_str) {
            Some("end_turn") => {}
            Some(reason) => self.error(out, format!("the agent's turn ended: {reason}")),
            None => self.error(out, "the prompt's answer has no stopReason".to_string()),
        }
    }

    /// A4: a `session/update` notification.
    fn update(&mut self, message: Value, out: &mut Emitter<'_>) {
        if self.session_id.is_none() {
            if let Some(session) = message.pointer("/params/sessionId").and_then(Value::as_str) {
                self.session_id = Some(session.to_string());
            }
        }
        let Some(update) = message.pointer("/params/update") else {
            Self::unknown(out, UnknownReason::NotAnEvent, message, ToolRef::default());
            return;
        };
        let kind = update
            .get("sessionUpdate")
            .and_then(Value::as_str)
            .unwrap_or("");
        match kind {
            "agent_message_chunk" | "agent_thought_chunk" => {
                match ContentChunk::deserialize(update) {
                    Ok(ContentChunk {
                        content: ContentBlock::Text { text },
                    }) => {
                        let line = out.line();
                        if kind == "agent_message_chunk" {
                            self.text.push_str(&text);
                            self.text_line = line;
                        } else {
                            self.thought.push_str(&text);
                            self.thought_line = line;
                        }
                        out.defer();
                    }
                    Ok(_) => {
                        self.flush(out);
                        Self::unknown(
                            out,
                            UnknownReason::UnknownBlock,
                            message,
                            ToolRef::default(),
                        );
                    }
                    Err(_) => {
                        self.flush(out);
                        Self::unknown(
                            out,
                            UnknownReason::MalformedMessage,
                            message,
                            ToolRef::default(),
                        );
                    }
                }
            }
            _ => {
                self.flush(out);
                match kind {
                    "tool_call" | "tool_call_update" => self.tool_call(update, &message, out),
                    "plan" => self.plan(update, &message, out),
                    "usage_update" => self.usage(update, out),
                    "user_message_chunk"
                    | "available_commands_update"
                    | "current_mode_update"
                    | "config_option_update"
                    | "session_info_update" => out.consumed_by("A8"),
                    _ => {
                        Self::unknown(out, UnknownReason::UnknownType, message, ToolRef::default())
                    }
                }
            }
        }
    }

    /// A6: a tool call notification, merged into the call it updates; its events when it
    /// reaches `completed` or `failed`.
    fn tool_call(&mut self, update: &Value, message: &Value, out: &mut Emitter<'_>) {
        // A tool call update needs a string `toolCallId`; its other fields are read leniently.
        let Some(id) = update.get("toolCallId").and_then(Value::as_str) else {
            let tool = ToolRef {
                tool: None,
                tool_use_id: None,
            };
            Self::unknown(out, UnknownReason::MalformedToolUse, message.clone(), tool);
            return;
        };
        let id = id.to_string();
        let new = self.merge(&id, update);
        match ToolCallStatus::of(update.get("status")) {
            Some(ToolCallStatus::Completed | ToolCallStatus::Failed) => self.finish_call(&id, out),
            _ => {
                if new {
                    self.announce(&id, out);
                }
                out.defer();
            }
        }
    }

    /// L1: a call first seen and not yet finished is announced, with the events it would give
    /// on success.
    fn announce(&self, id: &str, out: &mut Emitter<'_>) {
        if !out.wants_started() {
            return;
        }
        let Some(call) = self.calls.get(id) else {
            return;
        };
        let mut fields = call.fields.clone();
        fields.insert("status".into(), Value::String("completed".into()));
        let tool = ToolRef {
            tool: tools::kind_name(&fields),
            tool_use_id: Some(id.to_string()),
        };
        match tools::events(&fields, self.cwd.as_deref()) {
            Ok(would_be) => out.started_from(tool, &would_be, None),
            Err(_) => out.started(tool, None, Vec::new(), None),
        }
    }

    /// Merges `fields` (an object) into call `id`, recording it when new; whether it was.
    fn merge(&mut self, id: &str, fields: &Value) -> bool {
        let next = self.next_seq;
        let call = self.calls.entry(id.to_string()).or_insert_with(|| Call {
            seq: next,
            fields: Map::new(),
        });
        let new = call.seq == next;
        if new {
            self.next_seq += 1;
        }
        if let Some(fields) = fields.as_object() {
            for (key, value) in fields {
                if key != "sessionUpdate" {
                    call.fields.insert(key.clone(), value.clone());
                }
            }
        }
        new
    }

    /// A7: the events of a call that completed or failed.
    fn finish_call(&mut self, id: &str, out: &mut Emitter<'_>) {
        let Some(call) = self.calls.remove(id) else {
            return;
        };
        match tools::events(&call.fields, self.cwd.as_deref()) {
            Ok(events) => events.into_iter().for_each(|body| out.emit(body)),
            Err((reason, tool)) => {
                Self::unknown(out, reason, Value::Object(call.fields), tool);
            }
        }
    }

    /// A9: a permission request names a tool call (often before any notification of it).
    fn permission(&mut self, message: Value, out: &mut Emitter<'_>) {
        let params = message.get("params").unwrap_or(&Value::Null);
        match PermissionRequest::deserialize(params) {
            Ok(request) => {
                let id = request.tool_call.tool_call_id;
                if let Some(fields) = message.pointer("/params/toolCall") {
                    if self.merge(&id, fields) {
                        self.announce(&id, out);
                    }
                }
                out.defer();
            }
            Err(_) => Self::unknown(
                out,
                UnknownReason::MalformedToolUse,
                message,
                ToolRef::default(),
            ),
        }
    }

    /// A4: a `plan` update.
    fn plan(&mut self, update: &Value, message: &Value, out: &mut Emitter<'_>) {
        match Plan::deserialize(update) {
            Ok(plan) => {
                let items = plan
                    .entries
                    .into_iter()
                    .map(|entry| PlanItem {
                        text: Value::String(entry.content),
                        completed: Value::Bool(entry.status == PlanEntryStatus::Completed),
                    })
                    .collect();
                out.emit(EventBody::Plan { items });
            }
            Err(_) => Self::unknown(
                out,
                UnknownReason::MalformedMessage,
                message.clone(),
                ToolRef::default(),
            ),
        }
    }

    /// A10: `usage_update`'s cost, when in US dollars, is the run's cost so far.
    fn usage(&mut self, update: &Value, out: &mut Emitter<'_>) {
        let cost = update.get("cost");
        if cost.and_then(|c| c.get("currency")).and_then(Value::as_str) == Some("USD") {
            if let Some(amount) = cost
                .and_then(|c| c.get("amount"))
                .and_then(Value::as_number)
            {
                self.metrics.total_cost_usd = Some(amount.clone());
            }
        }
        out.consumed_by("A10");
    }
}

impl Decoder for AcpDecoder {
    fn new(config: &NormalizerConfig) -> Self {
        AcpDecoder {
            cwd: config.cwd.clone(),
            session_id: None,
            requests: HashMap::new(),
            calls: HashMap::new(),
            next_seq: 0,
            thought: String::new(),
            thought_line: None,
            text: String::new(),
            text_line: None,
            final_output: None,
            failed: false,
            metrics: Metrics::default(),
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        let value = harness_core::backend::parse_value(line)?;
        let from = value.get("from").and_then(From::parse);
        let Value::Object(mut wrapper) = value else {
            Self::unknown(out, UnknownReason::NotAnEvent, value, ToolRef::default());
            return Ok(());
        };
        match (from, wrapper.remove("message"), wrapper.get("text")) {
            (Some(From::Agent), None, Some(Value::String(text))) => {
                // A1: a line of the agent's output that was not JSON (S2).
                let message = truncate_chars(text, MAX_WARNING_TEXT).to_string();
                out.emit(EventBody::Warning {
                    message,
                    source: WarningSource::NonJson,
                });
            }
            (Some(from), Some(message), None) if message.is_object() => {
                if from == From::Client {
                    self.client(&message, out);
                } else {
                    // A5: anything but a chunk flushes the message being assembled.
                    let chunk = message
                        .pointer("/params/update/sessionUpdate")
                        .and_then(Value::as_str)
                        .is_some_and(|k| k == "agent_message_chunk" || k == "agent_thought_chunk");
                    if !chunk {
                        self.flush(out);
                    }
                    self.agent(message, out);
                }
            }
            (_, message, _) => {
                if let Some(message) = message {
                    wrapper.insert("message".into(), message);
                }
                self.flush(out);
                Self::unknown(
                    out,
                    UnknownReason::NotAnEvent,
                    Value::Object(wrapper),
                    ToolRef::default(),
                );
            }
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush(out);
        let mut calls: Vec<(String, Call)> = self.calls.drain().collect();
        calls.sort_by_key(|(_, call)| call.seq);
        for (id, call) in calls {
            let tool = ToolRef {
                tool: tools::kind_name(&call.fields),
                tool_use_id: Some(id),
            };
            Self::unknown(
                out,
                UnknownReason::UnresolvedToolUse,
                Value::Object(call.fields),
                tool,
            );
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.failed, self.final_output.clone(), self.metrics.clone())
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        let mut calls: Vec<(&String, &Call)> = self.calls.iter().collect();
        calls.sort_by_key(|(_, call)| call.seq);
        calls
            .into_iter()
            .map(|(id, call)| PendingToolUse {
                id: id.clone(),
                tool: tools::kind_name(&call.fields),
                thread: None,
            })
            .collect()
    }
}
