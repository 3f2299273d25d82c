//! The decoder of `codex app-server`'s standard output in a session (XA1-XA13 of
//! `docs/codex-app-server.md`): JSON-RPC 2.0 messages, one a line, without the `"jsonrpc"`
//! member. Its items go through the X rules' tool map ([`crate::tools::completed`]) once
//! translated to the shape `codex exec --json` gives them (XA4), so both of Codex's wires
//! give the same events for the same work.

use std::sync::Arc;

use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, PermissionRequest, Recorded, Summary, parse_value,
};
use harness_agents_core::{
    Decision, EventBody, Metrics, NormalizerConfig, PendingToolUse, PlanItem, ToolRef,
    UnknownReason, WarningSource,
};
use serde_json::{Map, Number, Value, json};

use crate::tools::completed;
use crate::wire::Item;

/// The normalizer of a Codex session's stream (`codex app-server`): [`AppServerDecoder`] with
/// the core's bookkeeping.
pub type AppServerNormalizer = Driver<AppServerDecoder>;

/// The decoding of `codex app-server` lines (XA rules).
///
/// Its state is the tool items started but not completed (by latest start), the last plan
/// of the running turn, the thread's token totals and the running turn's last answer.
#[derive(Debug, Default)]
pub struct AppServerDecoder {
    /// Resolves relative paths (X9).
    cwd: Option<String>,
    /// Tool items started and not completed, by the order of their latest start (XA3).
    open: Recorded<OpenItem>,
    /// The last plan emitted in the running turn (XA5).
    plan: Option<Vec<PlanItem>>,
    /// `turn/completed` lines read (O3's `num_turns`).
    terminals: u64,
    /// The thread's token totals, as last reported (XA8).
    usage: Option<Metrics>,
    /// The last non-empty agent message of the running turn (O1).
    answer: Option<Arc<str>>,
}

/// A tool item started but not completed.
#[derive(Debug)]
struct OpenItem {
    /// The tool name its events carry (`command_execution`, `file_change`, ...; the item type
    /// when the X rules do not map it).
    tool: String,
    /// The item as last recorded.
    item: Value,
}

/// The id a harness request carries (`METHOD#N`, XA11): its method.
pub(crate) fn request_method(id: &Value) -> Option<&str> {
    id.as_str()?.split_once('#').map(|(method, _)| method)
}

/// The text of a server request's id (XA9): a string as it is, an integer in decimal; `None`
/// for any other id, which no answer could name.
pub(crate) fn request_key(id: &Value) -> Option<String> {
    match id {
        Value::String(text) => Some(text.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        _ => None,
    }
}

/// The approval requests that become `permission` events (XA9).
pub(crate) const APPROVALS: [&str; 2] = [
    "item/commandExecution/requestApproval",
    "item/fileChange/requestApproval",
];

/// Item types that are no tool use: never pending (XA3).
const MESSAGES: [&str; 4] = ["userMessage", "agentMessage", "reasoning", "plan"];

/// Notifications that give no event (XA12): progress of what items and turns report whole,
/// and state of the server or of a client's interface.
const QUIET: &[&str] = &[
    "turn/started",
    "turn/diff/updated",
    "serverRequest/resolved",
    "thread/status/changed",
    "thread/readState/changed",
    "thread/archived",
    "thread/deleted",
    "thread/unarchived",
    "thread/closed",
    "thread/reverted",
    "skills/changed",
    "thread/name/updated",
    "thread/section/changed",
    "thread/attachment/updated",
    "thread/goal/updated",
    "thread/prediction/updated",
    "thread/goal/cleared",
    "thread/queue/changed",
    "project/changed",
    "thread/project/updated",
    "thread/environment/connected",
    "thread/environment/disconnected",
    "thread/settings/updated",
    "hook/started",
    "hook/completed",
    "item/autoApprovalReview/started",
    "item/autoApprovalReview/completed",
    "autoApprovalReview/strictReviewRequired",
    "item/agentMessage/delta",
    "item/plan/delta",
    "command/exec/outputDelta",
    "process/outputDelta",
    "thread/search/partial",
    "process/exited",
    "item/commandExecution/outputDelta",
    "item/commandExecution/terminalInteraction",
    "item/fileChange/outputDelta",
    "item/fileChange/patchUpdated",
    "item/mcpToolCall/progress",
    "mcpServer/oauthLogin/completed",
    "mcpServer/startupStatus/updated",
    "mcpServer/event/stream/notification",
    "account/updated",
    "account/gatewayOAuth/changed",
    "account/rateLimits/updated",
    "app/list/updated",
    "remoteControl/status/changed",
    "externalAgentConfig/import/progress",
    "externalAgentConfig/import/completed",
    "fs/changed",
    "item/reasoning/summaryTextDelta",
    "item/reasoning/summaryPartAdded",
    "item/reasoning/textDelta",
    "thread/compacted",
    "model/rerouted",
    "model/verification",
    "modelProvider/authRecoveryStarted",
    "modelProvider/authRecoveryCompleted",
    "turn/moderationMetadata",
    "model/safetyBuffering/updated",
    "deprecationNotice",
    "fuzzyFileSearch/sessionUpdated",
    "fuzzyFileSearch/sessionCompleted",
    "thread/realtime/started",
    "thread/realtime/itemAdded",
    "thread/realtime/item/started",
    "thread/realtime/item/transcript/delta",
    "thread/realtime/item/completed",
    "thread/realtime/transcript/delta",
    "thread/realtime/transcript/done",
    "thread/realtime/outputAudio/delta",
    "thread/realtime/sdp",
    "thread/realtime/error",
    "thread/realtime/closed",
    "windows/worldWritableWarning",
    "windowsSandbox/setupCompleted",
    "account/login/completed",
];

/// A string member of an object.
fn text<'v>(object: &'v Value, name: &str) -> Option<&'v str> {
    object.get(name).and_then(Value::as_str)
}

/// XA4: an app-server item (an object whose `type` is a string) in the shape `codex exec
/// --json` gives the same item, with the X rules' type name; `None` for an item the X rules
/// have no mapping for.
fn exec_item(item: &Value, kind: &str) -> Option<Value> {
    let id = item.get("id").cloned().unwrap_or(Value::Null);
    let field = |name: &str| item.get(name).cloned().unwrap_or(Value::Null);
    Some(match kind {
        "agentMessage" => json!({"id": id, "type": "agent_message", "text": field("text")}),
        "reasoning" => json!({"id": id, "type": "reasoning", "text": reasoning_text(item)}),
        "commandExecution" => json!({
            "id": id, "type": "command_execution", "command": field("command"),
            "status": field("status"), "exit_code": field("exitCode"),
        }),
        "fileChange" => {
            let changes = match item.get("changes") {
                Some(Value::Array(changes)) => Value::Array(changes.iter().map(change).collect()),
                other => other.cloned().unwrap_or(Value::Null),
            };
            json!({"id": id, "type": "file_change", "status": field("status"), "changes": changes})
        }
        "mcpToolCall" => json!({
            "id": id, "type": "mcp_tool_call", "server": field("server"),
            "tool": field("tool"), "status": field("status"),
        }),
        "webSearch" => json!({"id": id, "type": "web_search"}),
        _ => return None,
    })
}

/// XA4: a reasoning item's text: its `summary` strings joined by blank lines, else its
/// `content` strings the same way (empty when neither has any).
fn reasoning_text(item: &Value) -> String {
    let joined = |name: &str| -> String {
        let parts: Vec<&str> = match item.get(name) {
            Some(Value::Array(parts)) => parts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        parts.join("\n\n")
    };
    let summary = joined("summary");
    if summary.is_empty() {
        joined("content")
    } else {
        summary
    }
}

/// XA4: one entry of a `fileChange`'s `changes`, its `kind` object (`{"type":"add"}`) as the
/// kind's `type`; any other entry as it is.
fn change(entry: &Value) -> Value {
    let mut entry = entry.clone();
    if let Some(object) = entry.as_object_mut() {
        if let Some(kind) = object.get("kind").and_then(|k| k.get("type")).cloned() {
            object.insert("kind".to_string(), kind);
        }
    }
    entry
}

/// The events of a completed app-server item (XA4): its translation through the X rules'
/// tool map, every `unknown` event carrying the item as the app-server wrote it.
fn item_events(item: &Value, kind: &str, cwd: Option<&str>) -> Vec<EventBody> {
    let unknown = |tool: ToolRef| EventBody::Unknown {
        reason: UnknownReason::UnknownItem,
        raw: item.clone(),
        tool,
    };
    let Some(exec) = exec_item(item, kind) else {
        return vec![unknown(ToolRef::default())];
    };
    let exec_kind = text(&exec, "type").unwrap_or_default().to_string();
    let raw = exec.to_string();
    let Some(exec) = Item::parse(&raw) else {
        return vec![unknown(ToolRef::default())];
    };
    let mut events = completed(&exec, &exec_kind, cwd);
    for event in &mut events {
        if let EventBody::Unknown { raw, .. } = event {
            *raw = item.clone();
        }
    }
    events
}

/// The tool name an item's events carry (the item type when the X rules do not map it).
fn tool_name(would_be: &[EventBody], item: &Value, kind: &str) -> String {
    would_be
        .iter()
        .find_map(|b| b.tool()?.tool.clone())
        .or_else(|| exec_item(item, kind).and_then(|e| text(&e, "type").map(str::to_string)))
        .unwrap_or_else(|| kind.to_string())
}

/// XA8: a token breakdown's figures as the outcome's metrics.
fn metrics_of(total: &Value) -> Metrics {
    let number = |name: &str| -> Option<Number> {
        match total.get(name) {
            Some(Value::Number(n)) => Some(n.clone()),
            _ => None,
        }
    };
    let mut metrics = Metrics::default();
    metrics.input_tokens = number("inputTokens");
    metrics.output_tokens = number("outputTokens");
    metrics.cache_read_input_tokens = number("cachedInputTokens");
    metrics.reasoning_output_tokens = number("reasoningOutputTokens");
    metrics
}

impl AppServerDecoder {
    /// XA9-XA10: a request of the server.
    fn server_request(&mut self, method: &str, message: &Value, out: &mut Emitter<'_>) {
        let key = message.get("id").and_then(request_key);
        let Some(key) = key else {
            // Nobody could answer it.
            out.unknown(UnknownReason::MalformedMessage, message.clone());
            return;
        };
        if !APPROVALS.contains(&method) {
            // XA10: the session answers it with an error.
            out.consumed_by("XA10");
            return;
        }
        out.consumed_by("XA9");
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let item_id = text(&params, "itemId").map(str::to_string);
        let ok = |tool: &str| ToolRef {
            tool: Some(tool.to_string()),
            tool_use_id: item_id.clone(),
        };
        let (tool, would_be) = if method == APPROVALS[0] {
            let command = json!({
                "id": item_id, "type": "commandExecution",
                "command": params.get("command").cloned().unwrap_or(Value::Null),
                "status": "completed",
            });
            let would_be = match text(&command, "command") {
                Some(_) => item_events(&command, "commandExecution", self.cwd.as_deref()),
                None => Vec::new(),
            };
            (ok("command_execution"), would_be)
        } else {
            // The request names no paths: they are the started item's.
            let started = item_id.as_deref().and_then(|id| self.open.get(id));
            let would_be = match started {
                Some(open) => {
                    let mut item = open.item.clone();
                    item["status"] = json!("completed");
                    item_events(&item, "fileChange", self.cwd.as_deref())
                }
                None => Vec::new(),
            };
            (ok("file_change"), would_be)
        };
        let would_be = would_be
            .into_iter()
            .filter(|b| !matches!(b, EventBody::Unknown { .. }))
            .collect();
        let request = PermissionRequest {
            id: key,
            options: Decision::ALL.to_vec(),
            tool,
            input: Some(params),
            would_be,
        };
        out.permission(request, None);
    }

    /// XA2-XA8, XA12: a notification.
    fn notification(&mut self, method: &str, message: &Value, out: &mut Emitter<'_>) {
        let params = message.get("params").unwrap_or(&Value::Null);
        match method {
            "thread/started" => {
                out.consumed_by("XA2");
                let id = params.get("thread").and_then(|t| text(t, "id"));
                if let Some(id) = id.filter(|id| !id.is_empty()) {
                    out.session_id(id);
                }
            }
            "item/started" => self.item(params, true, out),
            "item/completed" => self.item(params, false, out),
            "turn/plan/updated" => self.plan(params, out),
            "turn/completed" => self.turn_completed(params, out),
            "error" => {
                let message = params
                    .get("error")
                    .and_then(|e| text(e, "message"))
                    .unwrap_or_default();
                self.warn(message, out);
            }
            "warning" => self.warn(text(params, "message").unwrap_or_default(), out),
            "configWarning" => self.warn(text(params, "summary").unwrap_or_default(), out),
            "thread/tokenUsage/updated" => {
                out.consumed_by("XA8");
                let total = params.get("tokenUsage").and_then(|u| u.get("total"));
                if let Some(total) = total.filter(|t| t.is_object()) {
                    self.usage = Some(metrics_of(total));
                }
            }
            _ if QUIET.contains(&method) => out.consumed_by("XA12"),
            _ => out.unknown(UnknownReason::UnknownType, message.clone()),
        }
    }

    /// XA7: a `warning` event with source `stream`.
    fn warn(&mut self, message: &str, out: &mut Emitter<'_>) {
        out.emit(EventBody::Warning {
            message: message.to_string(),
            source: WarningSource::Stream,
        });
    }

    /// XA3-XA4: `item/started` records a tool item, `item/completed` emits its events.
    fn item(&mut self, params: &Value, started: bool, out: &mut Emitter<'_>) {
        let item = params.get("item");
        let Some((item, kind)) = item.and_then(|i| Some((i, text(i, "type")?))) else {
            let raw = item.cloned().unwrap_or(Value::Null);
            out.unknown(UnknownReason::UnknownItem, raw);
            return;
        };
        out.consumed_by("XA3");
        let id = text(item, "id");
        if started {
            if MESSAGES.contains(&kind) {
                return;
            }
            let Some(id) = id else {
                return;
            };
            out.defer();
            let was_open = self.open.get(id).is_some();
            let would_be = {
                let mut done = item.clone();
                if let Some(object) = done.as_object_mut() {
                    object.insert("status".to_string(), json!("completed"));
                }
                item_events(&done, kind, self.cwd.as_deref())
            };
            let tool = tool_name(&would_be, item, kind);
            self.open.push(
                id,
                OpenItem {
                    tool: tool.clone(),
                    item: item.clone(),
                },
            );
            if !was_open && out.wants_started() {
                let tool = ToolRef {
                    tool: Some(tool),
                    tool_use_id: Some(id.to_string()),
                };
                out.started_from(tool, &would_be, None);
            }
            return;
        }
        if let Some(id) = id {
            self.open.remove(id);
        }
        if kind == "userMessage" {
            // The caller's own prompt.
            return;
        }
        for body in item_events(item, kind, self.cwd.as_deref()) {
            if let EventBody::Agent { text } = &body {
                self.answer = Some(Arc::clone(text));
            }
            out.emit(body);
        }
    }

    /// XA5: a `plan` event from the turn's steps, unless they are the last plan's.
    fn plan(&mut self, params: &Value, out: &mut Emitter<'_>) {
        out.consumed_by("XA5");
        let items: Vec<PlanItem> = match params.get("plan") {
            Some(Value::Array(steps)) => steps
                .iter()
                .filter(|s| s.is_object())
                .map(|s| PlanItem {
                    text: s.get("step").cloned().unwrap_or(Value::Null),
                    completed: match s.get("status") {
                        Some(Value::String(status)) => Value::Bool(status == "completed"),
                        _ => Value::Null,
                    },
                })
                .collect(),
            _ => Vec::new(),
        };
        if self.plan.as_ref() == Some(&items) {
            return;
        }
        self.plan = Some(items.clone());
        out.emit(EventBody::Plan { items });
    }

    /// XA6: the turn's end: its items never completed, its failure, its answer.
    fn turn_completed(&mut self, params: &Value, out: &mut Emitter<'_>) {
        out.consumed_by("XA6");
        out.terminal();
        self.terminals += 1;
        self.plan = None;
        self.unresolved(out);
        let turn = params.get("turn").unwrap_or(&Value::Null);
        if text(turn, "status") == Some("failed") {
            let message = turn
                .get("error")
                .and_then(|e| text(e, "message"))
                .filter(|m| !m.is_empty())
                .unwrap_or("turn failed");
            out.error(message.to_string());
        }
        out.final_output(self.answer.take());
    }

    /// XA6, XA13: every tool item still open, by latest start, as `unresolved_tool_use`.
    fn unresolved(&mut self, out: &mut Emitter<'_>) {
        while let Some((id, open)) = self.open.pop_first() {
            let tool = ToolRef {
                tool: Some(open.tool),
                tool_use_id: Some(id),
            };
            out.emit(EventBody::Unknown {
                reason: UnknownReason::UnresolvedToolUse,
                raw: open.item,
                tool,
            });
        }
    }

    /// XA2, XA11: the answer to a request of the session.
    fn response(&mut self, message: &Value, out: &mut Emitter<'_>) {
        let method = message.get("id").and_then(request_method);
        let Some(error) = message.get("error") else {
            out.consumed_by("XA11");
            let thread = message.get("result").and_then(|r| r.get("thread"));
            let id = thread.and_then(|t| text(t, "id"));
            if let Some(id) = id.filter(|id| !id.is_empty()) {
                out.consumed_by("XA2");
                out.session_id(id);
            }
            return;
        };
        let said = text(error, "message").unwrap_or_default();
        let message = match method {
            Some(method) => format!("{method}: {said}"),
            None => said.to_string(),
        };
        match method {
            Some("turn/interrupt") => self.warn(&message, out),
            Some("turn/start") => {
                // The turn never began: this answer is its end.
                out.terminal();
                self.terminals += 1;
                out.error(message);
            }
            _ => out.error(message),
        }
    }
}

impl Decoder for AppServerDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.cwd = config.cwd.clone();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        let message = parse_value(line)?;
        let object: Option<&Map<String, Value>> = message.as_object();
        let Some(object) = object else {
            out.unknown(UnknownReason::NotAnEvent, message);
            return Ok(());
        };
        let method = object.get("method");
        let answered = object.contains_key("result") || object.contains_key("error");
        match (method, object.contains_key("id")) {
            (Some(Value::String(method)), true) => {
                let method = method.clone();
                self.server_request(&method, &message, out);
            }
            (Some(Value::String(method)), false) => {
                let method = method.clone();
                self.notification(&method, &message, out);
            }
            (None, true) if answered => self.response(&message, out),
            _ => out.unknown(UnknownReason::NotAnEvent, message),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.unresolved(out);
    }

    fn summary(&self) -> Summary {
        let mut metrics = self.usage.clone().unwrap_or_default();
        metrics.num_turns = (self.terminals > 0).then(|| Number::from(self.terminals));
        Summary::new(metrics)
    }

    /// The tool items still open, by latest start; `tool` is the name their events carry.
    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.open
            .iter()
            .map(|(id, open)| PendingToolUse {
                id: id.to_string(),
                tool: Some(open.tool.clone()),
                thread: None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use harness_agents_core::{Normalizer, Outcome};

    use super::*;

    /// The events of `lines` (each a JSON value) read as a session's stream, and the outcome.
    fn run(lines: &[Value], started: bool) -> (Vec<Value>, Outcome) {
        let mut config = NormalizerConfig::with_cwd("/w");
        config.session = true;
        config.started = started;
        let mut normalizer = AppServerNormalizer::new(config);
        let mut events = Vec::new();
        for line in lines {
            normalizer.push_line(line.to_string().as_bytes(), &mut events);
        }
        let outcome = normalizer.finish(&mut events);
        let events = events
            .iter()
            .map(|e| serde_json::to_value(e).expect("serializes"))
            .collect();
        (events, outcome)
    }

    fn completed(item: Value) -> Value {
        json!({"method": "item/completed", "params": {"item": item}})
    }

    fn turn_completed(status: &str) -> Value {
        json!({"method": "turn/completed", "params": {"turn": {"id": "t", "status": status}}})
    }

    #[test]
    fn xa4_items_map_through_the_x_rules_and_unknowns_carry_the_item_as_written() {
        let reasoning =
            json!({"type": "reasoning", "id": "r", "summary": ["a", "b"], "content": ["c"]});
        let thinking = json!({"type": "reasoning", "id": "r2", "summary": [], "content": ["c"]});
        let mcp = json!({"type": "mcpToolCall", "id": "m", "server": "s", "tool": "t", "status": "completed", "arguments": {}});
        let search = json!({"type": "webSearch", "id": "w", "query": "q"});
        let compaction = json!({"type": "contextCompaction", "id": "c"});
        let plan = json!({"type": "plan", "id": "p", "text": "1. x"});
        let user = json!({"type": "userMessage", "id": "u", "content": []});
        let bad = json!({"type": "commandExecution", "id": "x", "command": 7, "status": "completed", "commandActions": []});
        let list = json!({"type": "commandExecution", "id": "l", "command": "/bin/bash -lc 'ls src'", "status": "completed", "exitCode": 0, "commandActions": []});
        let lines: Vec<Value> = [
            &reasoning,
            &thinking,
            &mcp,
            &search,
            &compaction,
            &plan,
            &user,
            &bad,
            &list,
        ]
        .into_iter()
        .map(|item| completed(item.clone()))
        .chain([turn_completed("completed")])
        .collect();
        let (events, _) = run(&lines, false);
        let unknown = |reason: &str, raw: &Value, tool: Option<&str>, line: u64| {
            let mut value = json!({"kind": "unknown", "reason": reason, "raw": raw, "line": line});
            if let Some(tool) = tool {
                value["tool"] = json!(tool);
                value["tool_use_id"] = raw["id"].clone();
            }
            value
        };
        assert_eq!(
            events,
            [
                json!({"kind": "reasoning", "text": "a\n\nb", "line": 1}),
                json!({"kind": "reasoning", "text": "c", "line": 2}),
                unknown("unknown_tool", &mcp, Some("s/t"), 3),
                unknown("unknown_tool", &search, Some("web_search"), 4),
                unknown("unknown_item", &compaction, None, 5),
                unknown("unknown_item", &plan, None, 6),
                unknown("malformed_tool_use", &bad, Some("command_execution"), 8),
                json!({"kind": "list", "path": "/w/src", "command": "ls src", "success": true,
                    "tool": "command_execution", "tool_use_id": "l", "line": 9}),
            ]
        );
    }

    #[test]
    fn xa3_xa6_xa13_started_tool_items_are_announced_and_resolved_at_the_turns_end() {
        let command = json!({"type": "commandExecution", "id": "c1", "command": "/bin/bash -lc 'cat a.rs'", "status": "inProgress", "commandActions": []});
        let message = json!({"type": "agentMessage", "id": "m1", "text": ""});
        let lines = [
            json!({"method": "item/started", "params": {"item": message}}),
            json!({"method": "item/started", "params": {"item": command}}),
            turn_completed("interrupted"),
            json!({"method": "item/started", "params": {"item": command}}),
        ];
        let (events, outcome) = run(&lines, true);
        let unresolved = |line: Option<u64>| {
            let mut value = json!({"kind": "unknown", "reason": "unresolved_tool_use",
                "raw": command, "tool": "command_execution", "tool_use_id": "c1"});
            if let Some(line) = line {
                value["line"] = json!(line);
            }
            value
        };
        let started = |line: u64| {
            json!({"kind": "started", "command": "cat a.rs",
                "expect": [{"kind": "read", "path": "/w/a.rs"}],
                "tool": "command_execution", "tool_use_id": "c1", "line": line})
        };
        assert_eq!(
            events,
            [
                started(2),
                unresolved(Some(3)),
                started(4),
                unresolved(None)
            ]
        );
        assert_eq!(
            outcome.counts.get(&harness_agents_core::Kind::Unknown),
            Some(&2)
        );
    }

    #[test]
    fn xa5_a_plan_update_is_a_plan_event_once_per_distinct_plan() {
        let plan = json!({"method": "turn/plan/updated", "params": {"plan": [
            {"step": "a", "status": "completed"}, {"step": "b", "status": "inProgress"}, 7]}});
        let (events, _) = run(
            &[
                plan.clone(),
                plan.clone(),
                turn_completed("completed"),
                plan,
            ],
            false,
        );
        let event = |line: u64| {
            json!({"kind": "plan", "items": [{"text": "a", "completed": true},
                {"text": "b", "completed": false}], "line": line})
        };
        assert_eq!(events, [event(1), event(4)]);
    }

    #[test]
    fn xa6_xa7_xa8_failures_warnings_and_the_threads_token_totals() {
        let usage = |input: u64| {
            json!({"method": "thread/tokenUsage/updated", "params": {"turnId": "t", "tokenUsage": {
                "total": {"totalTokens": input + 2, "inputTokens": input, "cachedInputTokens": 1,
                    "outputTokens": 2, "reasoningOutputTokens": 0},
                "last": {"totalTokens": 1, "inputTokens": 1, "cachedInputTokens": 0,
                    "outputTokens": 0, "reasoningOutputTokens": 0}}}})
        };
        let lines = [
            json!({"method": "error", "params": {"error": {"message": "retrying"}, "willRetry": true}}),
            json!({"method": "warning", "params": {"message": "careful"}}),
            json!({"method": "configWarning", "params": {"summary": "no bubblewrap", "details": null}}),
            usage(10),
            usage(30),
            json!({"method": "turn/completed", "params": {"turn": {"id": "t", "status": "failed", "error": {"message": ""}}}}),
        ];
        let (events, outcome) = run(&lines, false);
        let warning = |message: &str, line: u64| json!({"kind": "warning", "message": message, "source": "stream", "line": line});
        assert_eq!(
            events,
            [
                warning("retrying", 1),
                warning("careful", 2),
                warning("no bubblewrap", 3),
                json!({"kind": "error", "message": "turn failed", "line": 6}),
            ]
        );
        assert_eq!(outcome.status, harness_agents_core::Status::Error);
        assert_eq!(outcome.metrics.input_tokens, Some(30.into()));
        assert_eq!(outcome.metrics.cache_read_input_tokens, Some(1.into()));
        assert_eq!(outcome.metrics.num_turns, Some(1.into()));
    }

    #[test]
    fn xa1_xa10_xa11_xa12_every_other_message_is_accounted_for() {
        let lines = [
            json!({"id": "thread/start#2", "result": {"thread": {"id": "th-1"}}}),
            json!({"method": "thread/started", "params": {"thread": {"id": "th-2"}}}),
            json!({"method": "item/agentMessage/delta", "params": {"delta": "x"}}),
            json!({"method": "no/such/notification", "params": {}}),
            json!({"id": 3, "method": "item/tool/requestUserInput", "params": {}}),
            json!({"id": null, "method": "item/commandExecution/requestApproval", "params": {}}),
            json!({"id": "turn/interrupt#5", "error": {"code": -32600, "message": "no active turn to interrupt"}}),
            json!({"id": "turn/start#6", "error": {"code": -32600, "message": "thread not found: x"}}),
            json!({"method": 3}),
            json!([1]),
            json!({"method": "item/completed", "params": {"item": {"id": "i"}}}),
        ];
        let (events, outcome) = run(&lines, false);
        assert_eq!(
            events,
            [
                json!({"kind": "unknown", "reason": "unknown_type", "raw": lines[3], "line": 4}),
                json!({"kind": "unknown", "reason": "malformed_message", "raw": lines[5], "line": 6}),
                json!({"kind": "warning", "message": "turn/interrupt: no active turn to interrupt",
                    "source": "stream", "line": 7}),
                json!({"kind": "error", "message": "turn/start: thread not found: x", "line": 8}),
                json!({"kind": "unknown", "reason": "not_an_event", "raw": lines[8], "line": 9}),
                json!({"kind": "unknown", "reason": "not_an_event", "raw": lines[9], "line": 10}),
                json!({"kind": "unknown", "reason": "unknown_item", "raw": {"id": "i"}, "line": 11}),
            ]
        );
        // XA2: the first thread named is the session's.
        assert_eq!(outcome.session_id.as_deref(), Some("th-1"));
    }

    #[test]
    fn xa9_request_ids_are_their_text_and_harness_ids_name_their_method() {
        assert_eq!(request_key(&json!(0)), Some("0".to_string()));
        assert_eq!(request_key(&json!("a")), Some("a".to_string()));
        assert_eq!(request_key(&json!(1.5)), None);
        assert_eq!(request_key(&json!(null)), None);
        assert_eq!(request_method(&json!("turn/start#3")), Some("turn/start"));
        assert_eq!(request_method(&json!(3)), None);
    }
}
