//! The normalizer of an ACP transcript: the A rules of `docs/acp.md`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use harness_agents_core::backend::PermissionRequest as Ask;
use harness_agents_core::backend::json::{Loose, read_line};
use harness_agents_core::backend::text::{Joined, truncate_chars};
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, MAX_WARNING_TEXT, NotJson, Recorded, Summary, add_numbers,
};
use harness_agents_core::{
    Decision, EventBody, Metrics, NormalizerConfig, PendingToolUse, PlanItem, ToolRef,
    UnknownReason, WarningSource,
};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::session;
use crate::tools;
use crate::view::{self, LineView, MessageView, USAGE, Written};
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
    /// The merged fields, `toolCallId` included.
    pub(crate) fields: Map<String, Value>,
}

/// The decoder of an ACP transcript (A1-A11).
#[derive(Debug, Default)]
pub struct AcpDecoder {
    /// The working directory: the caller's, until `session/new` names one (A2).
    cwd: Option<String>,
    /// The client's requests still waiting for their answers: id -> method (A2, A3).
    requests: HashMap<String, String>,
    /// Tool calls not yet completed or failed (A6), in the order they were first seen (A11).
    calls: Recorded<Call>,
    /// The message being assembled (A5): its reasoning, its text, and the last line of each.
    thought: String,
    thought_line: Option<u64>,
    text: Joined,
    text_line: Option<u64>,
    metrics: Metrics,
    /// The stream is a session's whose permission requests wait for the caller (A17).
    session: bool,
    /// The stored session a `session/load` or `session/resume` of the client continues,
    /// by the request's id, until its answer (A21).
    reopening: Option<(String, String)>,
    /// A `session/load` is under way: the agent's updates replay the stored conversation
    /// (A21).
    loading: bool,
    /// The agent's prompt answers carry the session's usage so far, not the prompt's
    /// (A10a: the GitHub Copilot CLI).
    usage_totals: bool,
}

/// A10a: the `agentInfo.name` of the agents whose prompt answers carry the session's usage so
/// far (measured: the GitHub Copilot CLI 1.0.102).
const USAGE_TOTALS: [&str; 1] = ["Copilot"];

impl AcpDecoder {
    /// A5: a text chunk of the message (`agent_message_chunk`) or of the thought being
    /// assembled, deferred until the message is flushed. An empty one adds no text (Qwen Code
    /// sends one after every model call): it is the last line of a text being assembled, and
    /// with none being assembled it starts none (consumed).
    fn chunk(&mut self, kind: &str, text: &str, out: &mut Emitter<'_>) {
        let line = out.line();
        let (joined, joined_line) = if kind == "agent_message_chunk" {
            (self.text.is_empty(), &mut self.text_line)
        } else {
            (self.thought.is_empty(), &mut self.thought_line)
        };
        if text.is_empty() {
            if joined {
                out.consumed_by("A5");
            } else {
                *joined_line = line;
                out.defer();
            }
            return;
        }
        *joined_line = line;
        if kind == "agent_message_chunk" {
            self.text.push_str(text);
        } else {
            self.thought.push_str(text);
        }
        out.defer();
    }

    /// A5: the message being assembled, as `reasoning` then `agent`.
    fn flush(&mut self, out: &mut Emitter<'_>) {
        let thought = std::mem::take(&mut self.thought);
        let line = self.thought_line.take();
        if !thought.is_empty() {
            out.emit_at(EventBody::Reasoning { text: thought }, line);
        }
        let text = std::mem::take(&mut self.text);
        let line = self.text_line.take();
        if !text.is_empty() {
            // One chunk's text is shared by the event and the outcome (S7).
            let text = text.into_text();
            out.final_output(Some(Arc::clone(&text)));
            out.emit_at(EventBody::Agent { text }, line);
        }
    }

    /// A2: a message the client sent.
    fn client(&mut self, message: &Value, out: &mut Emitter<'_>) {
        let method = message.get("method").and_then(Value::as_str);
        if let (Some(id), Some(method)) = (message.get("id"), method) {
            self.requests.insert(id_key(id), method.to_string());
            if matches!(method, "session/new" | "session/load" | "session/resume") {
                if let Some(cwd) = message.pointer("/params/cwd").and_then(Value::as_str) {
                    self.cwd = Some(cwd.to_string());
                }
            }
            if matches!(method, "session/load" | "session/resume") {
                if let Some(stored) = message.pointer("/params/sessionId").and_then(Value::as_str) {
                    self.reopening = Some((id_key(id), stored.to_string()));
                }
                self.loading = method == "session/load";
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
            (None, Some(method)) if method == "session/update" && self.loading => {
                // A21: the stored conversation, replayed by `session/load`.
                out.consumed_by("A21");
            }
            (None, Some(method)) if method == "session/update" => self.update(message, out),
            (Some(_), Some(method)) if method == "session/request_permission" => {
                self.permission(message, out);
            }
            (_, Some(_)) => out.unknown(UnknownReason::UnknownType, message),
            (None, None) => out.unknown(UnknownReason::NotAnEvent, message),
        }
    }

    /// A3: the answer to one of the client's requests.
    fn answer(&mut self, id: &Value, message: Value, out: &mut Emitter<'_>) {
        let key = id_key(id);
        let Some(method) = self.requests.remove(&key) else {
            out.unknown(UnknownReason::UnpairedResult, message);
            return;
        };
        // A21: the stored session goes on under its own id once the agent has reopened it.
        let reopened = match self.reopening.take() {
            Some((request, stored)) if request == key => {
                self.loading = false;
                Some(stored)
            }
            other => {
                self.reopening = other;
                None
            }
        };
        if let Some(error) = message.get("error") {
            let text = error.get("message").and_then(Value::as_str).unwrap_or("");
            let code = error.get("code").map(Value::to_string).unwrap_or_default();
            out.terminal();
            out.error(format!("{method} failed: {text} (code {code})"));
            return;
        }
        let result = message.get("result").unwrap_or(&Value::Null);
        match method.as_str() {
            "session/new" => {
                if let Some(session) = result.get("sessionId").and_then(Value::as_str) {
                    out.session_id(session);
                }
                out.consumed_by("A3");
            }
            "session/prompt" => self.prompt_answer(result, out),
            "initialize" => {
                let name = result.pointer("/agentInfo/name").and_then(Value::as_str);
                self.usage_totals = name.is_some_and(|name| USAGE_TOTALS.contains(&name));
                out.consumed_by("A3");
            }
            _ => {
                if let Some(stored) = reopened {
                    out.session_id(&stored);
                }
                out.consumed_by("A3");
            }
        }
    }

    /// A10: the prompt's answer ends the run.
    fn prompt_answer(&mut self, result: &Value, out: &mut Emitter<'_>) {
        let usage = USAGE.map(|key| {
            result
                .get("usage")
                .and_then(|u| u.get(key))
                .and_then(Value::as_number)
                .cloned()
        });
        let stop = result.get("stopReason").and_then(Value::as_str);
        self.prompt_ended(usage, stop, out);
    }

    /// A10: the prompt's answer, from its usage counts (in [`USAGE`] order) and its stop
    /// reason.
    fn prompt_ended(
        &mut self,
        usage: [Option<Number>; 5],
        stop: Option<&str>,
        out: &mut Emitter<'_>,
    ) {
        out.terminal();
        let totals = self.usage_totals;
        let add = |total: &mut Option<Number>, value: Option<Number>| {
            if let Some(value) = value {
                *total = Some(match total.take() {
                    // A10a: the session's figures so far replace the earlier ones.
                    Some(_) if totals => value,
                    Some(total) => add_numbers(&total, &value),
                    None => value,
                });
            }
        };
        let [input, output, cache_read, cache_write, thought] = usage;
        let m = &mut self.metrics;
        add(&mut m.input_tokens, input);
        add(&mut m.output_tokens, output);
        add(&mut m.cache_read_input_tokens, cache_read);
        add(&mut m.cache_creation_input_tokens, cache_write);
        add(&mut m.reasoning_output_tokens, thought);
        m.num_turns = Some(match m.num_turns.take() {
            Some(turns) => add_numbers(&turns, &Number::from(1u64)),
            None => Number::from(1u64),
        });
        match stop {
            Some("end_turn") => {}
            Some(reason) => out.error(format!("the agent's turn ended: {reason}")),
            None => out.error("the prompt's answer has no stopReason".to_string()),
        }
    }

    /// A4: a `session/update` notification.
    fn update(&mut self, message: Value, out: &mut Emitter<'_>) {
        if let Some(session) = message.pointer("/params/sessionId").and_then(Value::as_str) {
            out.session_id(session);
        }
        let Some(update) = message.pointer("/params/update") else {
            out.unknown(UnknownReason::NotAnEvent, message);
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
                    }) => self.chunk(kind, &text, out),
                    Ok(_) => {
                        self.flush(out);
                        out.unknown(UnknownReason::UnknownBlock, message);
                    }
                    Err(_) => {
                        self.flush(out);
                        out.unknown(UnknownReason::MalformedMessage, message);
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
                    _ => out.unknown(UnknownReason::UnknownType, message),
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
            out.unknown_of(UnknownReason::MalformedToolUse, message.clone(), tool);
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
        let members = fields.as_object().into_iter().flatten();
        self.merge_members(id, members.map(|(k, v)| (k.clone(), v.clone())))
    }

    /// Merges `members` into call `id` (the later replacing the earlier; `sessionUpdate` is
    /// not kept), recording it when new; whether it was.
    fn merge_members(&mut self, id: &str, members: impl Iterator<Item = (String, Value)>) -> bool {
        let (call, new) = self.calls.get_or_push(id, || Call { fields: Map::new() });
        for (key, value) in members {
            if key != "sessionUpdate" {
                call.fields.insert(key, value);
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
                out.unknown_of(reason, Value::Object(call.fields), tool);
            }
        }
    }

    /// A9: a permission request names a tool call (often before any notification of it).
    fn permission(&mut self, message: Value, out: &mut Emitter<'_>) {
        let params = message.get("params").unwrap_or(&Value::Null);
        match PermissionRequest::deserialize(params) {
            Ok(request) => {
                let options = session::offered(&request.options);
                let id = request.tool_call.tool_call_id;
                if let Some(fields) = message.pointer("/params/toolCall") {
                    if self.merge(&id, fields) {
                        self.announce(&id, out);
                    }
                }
                let key = message.get("id").and_then(session::request_key);
                match key {
                    Some(key) if self.session && !options.is_empty() => {
                        self.ask(key, options, &id, out);
                    }
                    _ => out.defer(),
                }
            }
            Err(_) => out.unknown(UnknownReason::MalformedToolUse, message),
        }
    }

    /// A17: a permission request of a session is a `permission` event: the request's id, the
    /// decisions offered, the call's kind and id, its `rawInput`, and what the call would give
    /// on success (as a `started` event has it).
    fn ask(&mut self, key: String, options: Vec<Decision>, call: &str, out: &mut Emitter<'_>) {
        let (tool, input, would_be) = match self.calls.get(call) {
            Some(recorded) => {
                let mut fields = recorded.fields.clone();
                let input = fields.get("rawInput").cloned();
                fields.insert("status".into(), Value::String("completed".into()));
                let would_be = tools::events(&fields, self.cwd.as_deref()).unwrap_or_default();
                (tools::kind_name(&fields), input, would_be)
            }
            None => (None, None, Vec::new()),
        };
        let request = Ask {
            id: key,
            options,
            tool: ToolRef {
                tool,
                tool_use_id: Some(call.to_string()),
            },
            input,
            would_be,
        };
        out.permission(request, None);
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
            Err(_) => out.unknown(UnknownReason::MalformedMessage, message.clone()),
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

    /// The exact path: the line read into a `Value` (S2), every rule applied to it.
    fn exact(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        let value = harness_agents_core::backend::parse_value(line)?;
        let from = value.get("from").and_then(From::parse);
        let Value::Object(mut wrapper) = value else {
            out.unknown(UnknownReason::NotAnEvent, value);
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
                out.unknown(UnknownReason::NotAnEvent, Value::Object(wrapper));
            }
        }
        Ok(())
    }

    /// The fast path (see [`view`]): gives the line's events from its view when the view
    /// holds all they need; `false`, having done nothing, when the exact path must decide.
    fn fast(&mut self, view: &LineView<'_>, out: &mut Emitter<'_>) -> bool {
        let Some(message) = &view.message else {
            return false;
        };
        if view.has_text.0 {
            return false;
        }
        match view.from.as_str() {
            Some("client") => self.fast_client(message, out),
            Some("agent") => self.fast_agent(message, out),
            _ => false,
        }
    }

    /// A2 on the fast path.
    fn fast_client(&mut self, message: &MessageView<'_>, out: &mut Emitter<'_>) -> bool {
        if let (false, Some(method)) = (message.id == Loose::Absent, message.method.as_str()) {
            if matches!(method, "session/load" | "session/resume") {
                return false;
            }
            let Some(key) = loose_key(&message.id) else {
                return false;
            };
            self.requests.insert(key, method.to_string());
            if method == "session/new" {
                if let Some(cwd) = message.cwd() {
                    self.cwd = Some(cwd.to_string());
                }
            }
        }
        out.consumed_by("A2");
        true
    }

    /// A3 and A4 on the fast path: answers without an error to the client's requests, and the
    /// updates that need no `raw` message.
    fn fast_agent(&mut self, message: &MessageView<'_>, out: &mut Emitter<'_>) -> bool {
        let update = message.update();
        let kind = match update.map(|u| view::loose(u, "sessionUpdate")) {
            Some(Some(kind)) => kind,
            Some(None) => return false,
            None => Loose::Absent,
        };
        let kind = kind.as_str();
        let chunk = matches!(kind, Some("agent_message_chunk" | "agent_thought_chunk"));
        match (message.id == Loose::Absent, message.method.as_str()) {
            (false, None) => {
                if message.error != Loose::Absent {
                    return false;
                }
                let Some(key) = loose_key(&message.id) else {
                    return false;
                };
                let Some(method) = self.requests.get(&key).cloned() else {
                    return false;
                };
                // A10a: `initialize`'s answer names the agent, which the slow path reads.
                if self.reopening.is_some() || method == "initialize" {
                    return false;
                }
                self.requests.remove(&key);
                if !chunk {
                    self.flush(out);
                }
                match method.as_str() {
                    "session/new" => {
                        if let Some(session) = message.result_session() {
                            out.session_id(session);
                        }
                        out.consumed_by("A3");
                    }
                    "session/prompt" => {
                        let usage = match message.usage() {
                            Some(usage) => usage.clone().map(|count| match count {
                                Loose::Number(n) => Some(n),
                                _ => None,
                            }),
                            None => Default::default(),
                        };
                        self.prompt_ended(usage, message.stop_reason(), out);
                    }
                    _ => out.consumed_by("A3"),
                }
                true
            }
            (true, Some("session/update")) if self.loading => false,
            (true, Some("session/update")) => match update {
                Some(update) => self.fast_update(message, update, kind.unwrap_or(""), out),
                None => false,
            },
            _ => false,
        }
    }

    /// A4 on the fast path: chunks, tool calls with an id, usage and the updates A8 consumes.
    fn fast_update(
        &mut self,
        message: &MessageView<'_>,
        update: &[(Cow<'_, str>, Written<'_>)],
        kind: &str,
        out: &mut Emitter<'_>,
    ) -> bool {
        /// What the update does, decided before anything is done.
        enum Action<'a> {
            /// A chunk's text, borrowed from the line when it has no escapes (S7).
            Chunk(Cow<'a, str>),
            Consumed,
            Usage(Option<Number>),
            Tool(String, Vec<(String, Value)>),
        }
        let action = match kind {
            "agent_message_chunk" | "agent_thought_chunk" => {
                match view::fields(update, "content", &["type", "text"]) {
                    Some(Some([kind, Loose::Str(text)])) if kind.as_str() == Some("text") => {
                        Action::Chunk(text)
                    }
                    _ => return false,
                }
            }
            "user_message_chunk"
            | "available_commands_update"
            | "current_mode_update"
            | "config_option_update"
            | "session_info_update" => Action::Consumed,
            "usage_update" => match view::fields(update, "cost", &["currency", "amount"]) {
                Some(Some([currency, Loose::Number(amount)]))
                    if currency.as_str() == Some("USD") =>
                {
                    Action::Usage(Some(amount))
                }
                Some(_) => Action::Usage(None),
                None => return false,
            },
            "tool_call" | "tool_call_update" => {
                let Some(Loose::Str(id)) = view::loose(update, "toolCallId") else {
                    return false;
                };
                let mut members = Vec::with_capacity(update.len());
                for (key, written) in update {
                    match written.value() {
                        Some(value) => members.push((key.to_string(), value)),
                        None => return false,
                    }
                }
                Action::Tool(id.into_owned(), members)
            }
            _ => return false,
        };
        if let Some(session) = message.session() {
            out.session_id(session);
        }
        match action {
            Action::Chunk(text) => self.chunk(kind, &text, out),
            Action::Consumed => {
                self.flush(out);
                out.consumed_by("A8");
            }
            Action::Usage(cost) => {
                self.flush(out);
                if let Some(cost) = cost {
                    self.metrics.total_cost_usd = Some(cost);
                }
                out.consumed_by("A10");
            }
            Action::Tool(id, members) => {
                self.flush(out);
                let status = members
                    .iter()
                    .rev()
                    .find(|(key, _)| key == "status")
                    .map(|(_, value)| value);
                let status = ToolCallStatus::of(status);
                let new = self.merge_members(&id, members.into_iter());
                match status {
                    Some(ToolCallStatus::Completed | ToolCallStatus::Failed) => {
                        self.finish_call(&id, out)
                    }
                    _ => {
                        if new {
                            self.announce(&id, out);
                        }
                        out.defer();
                    }
                }
            }
        }
        true
    }
}

impl Decoder for AcpDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.cwd = config.cwd.clone();
        self.session = config.session;
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // The core's entry point reads the view (fast, then exact when unsure); a line the
        // view cannot decide, or that is no JSON object, takes the exact path, which decides.
        if let Ok(Some(view)) = read_line::<LineView<'_>>(line) {
            if self.fast(&view, out) {
                return Ok(());
            }
        }
        self.exact(line, out)
    }

    /// Every line read into a `Value` (the fast path's reference, S2).
    fn exact_line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        self.exact(line, out)
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush(out);
        while let Some((id, call)) = self.calls.pop_first() {
            let tool = ToolRef {
                tool: tools::kind_name(&call.fields),
                tool_use_id: Some(id),
            };
            out.unknown_of(
                UnknownReason::UnresolvedToolUse,
                Value::Object(call.fields),
                tool,
            );
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.metrics.clone())
    }

    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.calls
            .iter()
            .map(|(id, call)| PendingToolUse {
                id: id.to_string(),
                tool: tools::kind_name(&call.fields),
                thread: None,
            })
            .collect()
    }
}

/// A JSON-RPC id as a map key, as [`id_key`] gives it for the same value; `None` for a list or
/// an object (the exact path keys those).
fn loose_key(id: &Loose<'_>) -> Option<String> {
    let value = match id {
        Loose::Null => Value::Null,
        Loose::Bool(b) => Value::Bool(*b),
        Loose::Number(n) => Value::Number(n.clone()),
        Loose::Str(s) => Value::String(s.to_string()),
        Loose::Absent | Loose::Array | Loose::Object => return None,
    };
    Some(id_key(&value))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use harness_agents_core::{Event, Normalizer, Outcome};

    use super::*;

    fn run(mut normalizer: impl Normalizer, lines: &[&[u8]]) -> (Vec<Event>, Outcome) {
        let mut events = Vec::new();
        for line in lines {
            normalizer.push_line(line, &mut events);
        }
        let outcome = normalizer.finish(&mut events);
        (events, outcome)
    }

    /// Both paths give the same events and outcome for `lines`, with and without L1's
    /// `started` events and a configured directory.
    fn assert_same(lines: &[&[u8]]) {
        for (started, cwd) in [(false, None), (true, Some("/work"))] {
            let mut config = NormalizerConfig::default();
            config.started = started;
            config.cwd = cwd.map(str::to_string);
            let fast = run(AcpNormalizer::new(config.clone()), lines);
            let exact = run(
                Driver::<harness_agents_core::backend::ExactOnly<AcpDecoder>>::new(config),
                lines,
            );
            assert_eq!(
                fast,
                exact,
                "{:?}",
                lines
                    .iter()
                    .map(|l| String::from_utf8_lossy(l))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn s2_the_fast_path_gives_the_exact_paths_events_on_every_recording() {
        let recordings = fixtures::recordings("acp");
        for (_, text) in &recordings {
            let lines: Vec<&[u8]> = text
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .collect();
            assert_same(&lines);
        }
        assert_eq!(recordings.len(), 34);
    }

    /// S2: lines the fast reader is unsure of (a tab before them, an escaped key) are read
    /// by the entry point's checked path, and the decoder decides from that view exactly as
    /// the exact path does.
    #[test]
    fn s2_the_checked_view_gives_the_exact_paths_events() {
        for (_, text) in &fixtures::recordings("acp") {
            let tabbed: Vec<Vec<u8>> = text
                .split(|b| *b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| [b"\t", l].concat())
                .collect();
            let lines: Vec<&[u8]> = tabbed.iter().map(Vec::as_slice).collect();
            assert!(lines.iter().all(|l| read_line::<LineView<'_>>(l).is_ok()));
            assert_same(&lines);
        }
        let lines: [&[u8]; 6] = [
            br#"{"from":"client","message":{"id":1,"method":"session/new","params":{"\u0063wd":"/repo"}}}"#,
            br#"{"from":"agent","message":{"id":1,"result":{"sessionI\u0064":"s-1"}}}"#,
            br#"{"from":"client","message":{"id":2,"method":"session/prompt","params":{}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","\u0063ontent":{"type":"text","text":"a\u00e9"},"x":1e300}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"t","status":"completed","\u006bind":"read","n":123456789012345678901234}}}}"#,
            br#"{"from":"agent","message":{"id":2,"result":{"stopReason":"end_turn","usage":{"inputTokens":1,"outputT\u006fkens":2}}}}"#,
        ];
        assert_same(&lines);
    }

    #[test]
    fn s2_the_fast_path_gives_the_exact_paths_events_on_unusual_lines() {
        let prelude: [&[u8]; 3] = [
            br#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/repo","mcpServers":[]}}}"#,
            br#"{"from":"agent","message":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}}"#,
            br#"{"from":"client","message":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[]}}}"#,
        ];
        let unusual: &[&[u8]] = &[
            // Chunks: escapes, a lone surrogate (not JSON), duplicate keys, other blocks.
            br#"{"from":"agent","message":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"a\n\u00e9\ud83d\ude00"}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\ud800"}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"x","text":"y"},"content":{"type":"text","text":"z"}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"image","data":"","mimeType":"m"}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":7}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":""}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":""}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":[1]}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"w"}}},"params":{"update":{"sessionUpdate":"plan","entries":[]}}}}"#,
            br#" { "from" : "agent" , "message" : { "method" : "session/update" , "params" : { "update" : { "sessionUpdate" : "agent_message_chunk" , "content" : { "type" : "text" , "text" : "sp" } } } } } "#,
            // Wrappers: text beside the message, no message, another side, not an object.
            br#"{"from":"agent","text":null,"message":{"id":9,"result":{}}}"#,
            br#"{"from":"agent","text":"plain"}"#,
            br#"{"from":"server","message":{"id":9,"result":{}}}"#,
            br#"{"from":"agent","message":[1]}"#,
            br#"{"from":"agent","message":{"a":1},"from":"client"}"#,
            br#"[{"from":"agent"}]"#,
            br#"{"from":"agent","message":{"id":1,"result":{}}"#,
            br#"{"from":"agent","message":{"n":1e400}}"#,
            // Updates: no params, no update, unknown kinds, tool calls, usage.
            br#"{"from":"agent","message":{"method":"session/update"}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":"x"}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":7}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"new_kind"}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","currentModeId":"x"}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"usage_update","cost":{"currency":"USD","amount":0.25}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"usage_update","cost":{"currency":"EUR","amount":1}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"usage_update","cost":[]}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","title":"x"}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"t1","kind":"read","status":"pending","locations":[{"path":"a.rs"}]}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call","toolCallId":"t2","kind":"execute","rawInput":{"command":"ls"},"status":"completed","status":"in_progress"}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","rawOutput":{"n":[1.5,-2,1e-7,12345678901234567890]}}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"tool_call_update","toolCallId":"t3","kind":"edit","status":"failed","content":[{"type":"content","content":{"type":"text","text":"no"}}]}}}}"#,
            br#"{"from":"agent","message":{"method":"session/update","params":{"update":{"sessionUpdate":"plan","entries":[{"content":"p","priority":"high","status":"pending"}]}}}}"#,
            br#"{"from":"agent","message":{"jsonrpc":"2.0","id":5,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t9","kind":"edit"},"options":[]}}}"#,
            // Client messages and answers: ids of every type, errors, unpaired answers.
            br#"{"from":"client","message":{"id":"7","method":"x/y"}}"#,
            br#"{"from":"agent","message":{"id":7,"result":{}}}"#,
            br#"{"from":"agent","message":{"id":"7","result":null}}"#,
            br#"{"from":"client","message":{"id":1.0,"method":"x/y"}}"#,
            br#"{"from":"agent","message":{"id":1.0,"method":3,"result":{}}}"#,
            br#"{"from":"client","message":{"id":[1],"method":"x/y"}}"#,
            br#"{"from":"agent","message":{"id":[1],"result":{}}}"#,
            br#"{"from":"client","message":{"id":null,"method":"x/y"}}"#,
            br#"{"from":"agent","message":{"id":null,"error":{"code":-1,"message":"no"}}}"#,
            br#"{"from":"client","message":{"id":"\u0041","method":"session/new","params":{"cwd":"/other"}}}"#,
            br#"{"from":"agent","message":{"id":"A","result":{"sessionId":"s-2"}}}"#,
            br#"{"from":"client","message":{"id":3,"method":"session/new","params":[{"cwd":"/x"}]}}"#,
            br#"{"from":"client","message":{"method":"session/new","params":{"cwd":"/y"}}}"#,
            br#"{"from":"agent","message":{"jsonrpc":"2.0"}}"#,
        ];
        let ends: [&[u8]; 4] = [
            br#"{"from":"agent","message":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":2.5,"cachedReadTokens":"3","thoughtTokens":18446744073709551615}}}}"#,
            br#"{"from":"agent","message":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"max_tokens","usage":[]},"result":{"usage":{"inputTokens":1}}}}"#,
            br#"{"from":"agent","message":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"refusal"}}}"#,
            br#"{"from":"agent","message":{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}}"#,
        ];
        for line in unusual {
            let mut lines = prelude.to_vec();
            lines.push(line);
            assert_same(&lines);
        }
        for end in ends {
            let mut lines = prelude.to_vec();
            lines.extend_from_slice(unusual);
            lines.push(end);
            assert_same(&lines);
        }
    }
}
