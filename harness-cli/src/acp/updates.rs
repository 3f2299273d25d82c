//! Normalized events as ACP `session/update`s (AA8-AA12 of `docs/acp-agent.md`): a pure
//! mapping, one [`Updates`] per ACP session, which remembers the tool calls it has announced so
//! that a tool's final event updates the call its `started` event opened.

use std::collections::HashSet;

use harness_agents_core::{
    Event, EventBody, Expected, Kind, Outcome, PlanItem, Status, ToolStatus,
};
use serde_json::{Map, Value, json};

/// The `_meta` key every update carries the normalized event under (AA8).
pub const EVENT_KEY: &str = "harness/event";
/// The `_meta` key a prompt's answer and a `usage_update` carry the turn's outcome under.
pub const OUTCOME_KEY: &str = "harness/outcome";

/// The tool calls one ACP session has announced, and a counter for calls without an id.
#[derive(Debug, Default)]
pub struct Updates {
    announced: HashSet<String>,
    unnamed: u64,
}

/// The ACP tool kind of a normalized event's kind (AA9).
pub fn tool_kind(body: &EventBody) -> &'static str {
    match body {
        EventBody::Read { .. } => "read",
        EventBody::Search { .. } | EventBody::List { .. } => "search",
        EventBody::Command { .. } => "execute",
        EventBody::Write { change, .. } if change.as_deref() == Some("delete") => "delete",
        EventBody::Write { .. } => "edit",
        EventBody::Started {
            expect, command, ..
        } => match expect.first() {
            Some(first) => expected_kind(first),
            None if command.is_some() => "execute",
            None => other_or_fetch(body),
        },
        EventBody::Permission {
            expect, command, ..
        } => match expect.first() {
            Some(first) => expected_kind(first),
            None if command.is_some() => "execute",
            None => other_or_fetch(body),
        },
        _ => other_or_fetch(body),
    }
}

fn expected_kind(expected: &Expected) -> &'static str {
    match expected.kind {
        Kind::Read => "read",
        Kind::Search | Kind::List => "search",
        Kind::Command => "execute",
        Kind::Write => "edit",
        _ => "other",
    }
}

/// A tool no event kind names is `other`, but a web fetch (its tool's name says so) is `fetch`.
fn other_or_fetch(body: &EventBody) -> &'static str {
    match body.tool().and_then(|t| t.tool.as_deref()) {
        Some(name) if name.to_ascii_lowercase().contains("fetch") => "fetch",
        _ => "other",
    }
}

fn range_text(start: u64, end: Option<u64>) -> String {
    match end {
        Some(end) if end != start => format!(":{start}-{end}"),
        _ => format!(":{start}"),
    }
}

/// A title a person reads: what the tool does, to what.
pub fn title(body: &EventBody) -> String {
    match body {
        EventBody::Read { path, range, .. } => match range {
            Some(r) => format!("Read {path}{}", range_text(r.start, r.end)),
            None => format!("Read {path}"),
        },
        EventBody::Write { path, change, .. } => match change.as_deref() {
            Some("delete") => format!("Delete {path}"),
            Some("add") => format!("Create {path}"),
            _ => format!("Edit {path}"),
        },
        EventBody::Search { query, path, .. } => match (query, path) {
            (Some(q), Some(p)) => format!("Search {q} in {p}"),
            (Some(q), None) => format!("Search {q}"),
            (None, Some(p)) => format!("Search in {p}"),
            (None, None) => "Search".to_string(),
        },
        EventBody::List { path, .. } => match path {
            Some(p) => format!("List {p}"),
            None => "List".to_string(),
        },
        EventBody::Command { command, .. } => format!("Run {command}"),
        EventBody::Skill { name, .. } => format!("Skill {name}"),
        EventBody::Started {
            command, expect, ..
        }
        | EventBody::Permission {
            command, expect, ..
        } => match (command, expect.first()) {
            (Some(c), _) => format!("Run {c}"),
            (None, Some(first)) => expected_title(first),
            (None, None) => tool_name(body),
        },
        _ => tool_name(body),
    }
}

fn expected_title(e: &Expected) -> String {
    let path = e.path.clone().unwrap_or_default();
    match e.kind {
        Kind::Read => match e.range {
            Some(r) => format!("Read {path}{}", range_text(r.start, r.end)),
            None => format!("Read {path}"),
        },
        Kind::Write => format!("Edit {path}"),
        Kind::Search => match &e.query {
            Some(q) => format!("Search {q}"),
            None => "Search".to_string(),
        },
        Kind::List => format!("List {path}"),
        Kind::Skill => format!("Skill {}", e.name.clone().unwrap_or_default()),
        _ => path,
    }
}

fn tool_name(body: &EventBody) -> String {
    body.tool()
        .and_then(|t| t.tool.clone())
        .unwrap_or_else(|| "Tool".to_string())
}

fn location(path: &str, line: Option<u64>) -> Value {
    let mut location = json!({ "path": path });
    if let Some(line) = line.and_then(|l| u32::try_from(l).ok()) {
        location["line"] = json!(line);
    }
    location
}

/// The files a tool works on, with the first line when a range names it.
pub fn locations(body: &EventBody) -> Vec<Value> {
    match body {
        EventBody::Read { path, range, .. } => vec![location(path, range.map(|r| r.start))],
        EventBody::Write { path, .. } | EventBody::Skill { path, .. } => {
            vec![location(path, None)]
        }
        EventBody::Search { path, .. } | EventBody::List { path, .. } => {
            path.iter().map(|p| location(p, None)).collect()
        }
        EventBody::Started { expect, .. } | EventBody::Permission { expect, .. } => expect
            .iter()
            .filter_map(|e| {
                e.path
                    .as_deref()
                    .map(|p| location(p, e.range.map(|r| r.start)))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The tool's input as far as the event knows it.
fn raw_input(body: &EventBody) -> Option<Value> {
    match body {
        EventBody::Permission { input: Some(i), .. } => Some(i.clone()),
        EventBody::Started {
            command: Some(c), ..
        }
        | EventBody::Permission {
            command: Some(c), ..
        }
        | EventBody::Command { command: c, .. } => Some(json!({ "command": c })),
        EventBody::Read {
            command: Some(c), ..
        }
        | EventBody::Search {
            command: Some(c), ..
        }
        | EventBody::List {
            command: Some(c), ..
        } => Some(json!({ "command": c })),
        EventBody::Read { path, range, .. } => Some(match range {
            Some(r) => json!({ "path": path, "start": r.start, "end": r.end }),
            None => json!({ "path": path }),
        }),
        EventBody::Write { path, .. } => Some(json!({ "path": path })),
        EventBody::Search { query, path, .. } => Some(json!({ "query": query, "path": path })),
        EventBody::List { path, .. } => Some(json!({ "path": path })),
        EventBody::Skill { name, .. } => Some(json!({ "name": name })),
        EventBody::Unknown { raw, .. } => Some(raw.clone()),
        _ => None,
    }
}

fn text_content(text: &str) -> Value {
    json!({ "type": "content", "content": { "type": "text", "text": text } })
}

fn meta(event: &Event) -> Value {
    let event = serde_json::to_value(event).unwrap_or(Value::Null);
    json!({ EVENT_KEY: event })
}

fn plan_status(completed: &Value) -> &'static str {
    match completed {
        Value::Bool(true) => "completed",
        Value::String(s) if s == "completed" => "completed",
        Value::String(s) if s == "in_progress" => "in_progress",
        _ => "pending",
    }
}

fn plan_entry(item: &PlanItem) -> Value {
    let content = match &item.text {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    json!({ "content": content, "priority": "medium", "status": plan_status(&item.completed) })
}

impl Updates {
    /// The `session/update` payloads (`update` objects) one event gives, in order.
    pub fn of(&mut self, event: &Event) -> Vec<Value> {
        let body = &event.body;
        let mut update = match body {
            EventBody::Agent { text } => chunk("agent_message_chunk", text),
            EventBody::Reasoning { text } => chunk("agent_thought_chunk", text),
            EventBody::Plan { items } => json!({
                "sessionUpdate": "plan",
                "entries": items.iter().map(plan_entry).collect::<Vec<_>>(),
            }),
            EventBody::Started { .. } => {
                let mut call = self.call(body, "tool_call");
                call["status"] = json!("in_progress");
                call
            }
            // The caller's request goes out as `session/request_permission` instead.
            EventBody::Permission { .. } => return Vec::new(),
            EventBody::Unknown { tool, .. } if tool.tool_use_id.is_some() => {
                let mut call = self.final_call(body);
                call["status"] = json!("failed");
                call
            }
            EventBody::Read { .. }
            | EventBody::Write { .. }
            | EventBody::Search { .. }
            | EventBody::List { .. }
            | EventBody::Command { .. }
            | EventBody::Skill { .. } => self.final_call(body),
            // AA11: nothing in ACP fits; the event rides in `_meta` alone.
            // (`EventBody` may grow: a kind this build does not know goes the same way.)
            _ => json!({ "sessionUpdate": "session_info_update" }),
        };
        update["_meta"] = meta(event);
        vec![update]
    }

    /// The `toolCall` of a `session/request_permission` for a `permission` event (AA13); the
    /// call counts as announced, so its result updates it.
    pub fn permission_call(&mut self, event: &Event) -> Value {
        let mut call = self.call(&event.body, "tool_call_update");
        call.as_object_mut().map(|c| c.remove("sessionUpdate"));
        call["status"] = json!("pending");
        call["_meta"] = meta(event);
        call
    }

    /// Forgets the calls of a turn that ended.
    pub fn turn_ended(&mut self) {
        self.announced.clear();
    }

    fn id(&mut self, body: &EventBody) -> String {
        match body.tool().and_then(|t| t.tool_use_id.clone()) {
            Some(id) => id,
            None => {
                self.unnamed += 1;
                format!("harness-{}", self.unnamed)
            }
        }
    }

    /// A `tool_call` (first news of the call) or `tool_call_update` with every field known.
    fn call(&mut self, body: &EventBody, how: &str) -> Value {
        let id = self.id(body);
        let first = self.announced.insert(id.clone());
        let mut call = Map::new();
        let how = if first
            && how == "tool_call_update"
            && !matches!(body, EventBody::Permission { .. })
        {
            "tool_call"
        } else {
            how
        };
        call.insert("sessionUpdate".into(), json!(how));
        call.insert("toolCallId".into(), json!(id));
        call.insert("title".into(), json!(title(body)));
        call.insert("kind".into(), json!(tool_kind(body)));
        let locations = locations(body);
        if !locations.is_empty() {
            call.insert("locations".into(), json!(locations));
        }
        if let Some(input) = raw_input(body) {
            call.insert("rawInput".into(), input);
        }
        Value::Object(call)
    }

    /// The call a tool's final event ends: `tool_call_update` when it was announced, else a
    /// whole `tool_call`; `completed` or `failed` with the error as its content.
    fn final_call(&mut self, body: &EventBody) -> Value {
        let id = body.tool().and_then(|t| t.tool_use_id.clone());
        let announced = id.as_ref().is_some_and(|id| self.announced.contains(id));
        let mut call = self.call(
            body,
            if announced {
                "tool_call_update"
            } else {
                "tool_call"
            },
        );
        let status = tool_status(body);
        let success = status.is_some_and(|s| s.success);
        call["status"] = json!(if success { "completed" } else { "failed" });
        if let Some(error) = status.and_then(|s| s.error.as_deref()) {
            call["content"] = json!([text_content(error)]);
        }
        call
    }
}

fn tool_status(body: &EventBody) -> Option<&ToolStatus> {
    match body {
        EventBody::Read { status, .. }
        | EventBody::Write { status, .. }
        | EventBody::Search { status, .. }
        | EventBody::List { status, .. }
        | EventBody::Command { status, .. }
        | EventBody::Skill { status, .. } => Some(status),
        _ => None,
    }
}

fn chunk(kind: &str, text: &str) -> Value {
    json!({ "sessionUpdate": kind, "content": { "type": "text", "text": text } })
}

/// The `usage_update` a turn's outcome gives (AA10): `used` the tokens the turn's figures
/// name, `size` 0 (no backend reports its context window), `cost` in US dollars when known;
/// `None` when the outcome has no figure.
pub fn usage(outcome: &Outcome) -> Option<Value> {
    let m = &outcome.metrics;
    let tokens: u64 = [
        &m.input_tokens,
        &m.cache_read_input_tokens,
        &m.cache_creation_input_tokens,
        &m.output_tokens,
    ]
    .iter()
    .filter_map(|n| n.as_ref().and_then(serde_json::Number::as_u64))
    .sum();
    let cost = m
        .total_cost_usd
        .as_ref()
        .and_then(serde_json::Number::as_f64);
    if tokens == 0 && cost.is_none() {
        return None;
    }
    let mut update = json!({ "sessionUpdate": "usage_update", "used": tokens, "size": 0 });
    if let Some(cost) = cost {
        update["cost"] = json!({ "amount": cost, "currency": "USD" });
    }
    update["_meta"] = json!({ OUTCOME_KEY: outcome_value(outcome) });
    Some(update)
}

/// The outcome as the `outcome` line of `harness session` has it.
pub fn outcome_value(outcome: &Outcome) -> Value {
    serde_json::to_value(harness_agents_core::OutcomeLine::new(outcome)).unwrap_or(Value::Null)
}

/// The stop reason of a turn that ended by itself (AA7): `None` for a failed one, which is
/// answered with an error.
pub fn stop_reason(status: Status) -> Option<&'static str> {
    match status {
        Status::Success => Some("end_turn"),
        Status::Interrupted => Some("cancelled"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(line: Value) -> Event {
        serde_json::from_value(line).expect("an event line")
    }

    /// Every kind of event, the update it gives (without `_meta`), in one session's order.
    fn table() -> Vec<(Value, Value)> {
        vec![
            (
                json!({"kind": "reasoning", "text": "Thinking."}),
                json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Thinking."}}),
            ),
            (
                json!({"kind": "started", "tool": "Read", "tool_use_id": "t1", "expect": [{"kind": "read", "path": "/p/a.rs", "range": {"start": 4, "end": 9}}]}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "Read /p/a.rs:4-9", "kind": "read",
                    "status": "in_progress", "locations": [{"path": "/p/a.rs", "line": 4}]}),
            ),
            (
                json!({"kind": "read", "path": "/p/a.rs", "range": {"start": 4, "end": 9}, "success": true, "tool": "Read", "tool_use_id": "t1"}),
                json!({"sessionUpdate": "tool_call_update", "toolCallId": "t1", "title": "Read /p/a.rs:4-9", "kind": "read",
                    "status": "completed", "locations": [{"path": "/p/a.rs", "line": 4}], "rawInput": {"path": "/p/a.rs", "start": 4, "end": 9}}),
            ),
            (
                json!({"kind": "write", "path": "/p/old.rs", "change": "delete", "success": false, "error": "no such file", "tool": "apply_patch", "tool_use_id": "t2"}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t2", "title": "Delete /p/old.rs", "kind": "delete",
                    "status": "failed", "locations": [{"path": "/p/old.rs"}], "rawInput": {"path": "/p/old.rs"},
                    "content": [{"type": "content", "content": {"type": "text", "text": "no such file"}}]}),
            ),
            (
                json!({"kind": "search", "query": "foo", "path": "/p/src", "command": "rg foo src", "success": true, "tool": "Bash", "tool_use_id": "t3"}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t3", "title": "Search foo in /p/src", "kind": "search",
                    "status": "completed", "locations": [{"path": "/p/src"}], "rawInput": {"command": "rg foo src"}}),
            ),
            (
                json!({"kind": "list", "path": "/p", "success": true, "tool": "LS", "tool_use_id": "t4"}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t4", "title": "List /p", "kind": "search",
                    "status": "completed", "locations": [{"path": "/p"}], "rawInput": {"path": "/p"}}),
            ),
            (
                json!({"kind": "command", "command": "cargo test", "success": true, "tool": "Bash", "tool_use_id": "t5"}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t5", "title": "Run cargo test", "kind": "execute",
                    "status": "completed", "rawInput": {"command": "cargo test"}}),
            ),
            (
                json!({"kind": "skill", "name": "pdf", "path": "/p/.claude/skills/pdf/SKILL.md", "success": true, "tool": "Skill", "tool_use_id": "t6"}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t6", "title": "Skill pdf", "kind": "other",
                    "status": "completed", "locations": [{"path": "/p/.claude/skills/pdf/SKILL.md"}], "rawInput": {"name": "pdf"}}),
            ),
            (
                json!({"kind": "unknown", "reason": "unknown_tool", "raw": {"url": "https://example.com"}, "tool": "WebFetch", "tool_use_id": "t7"}),
                json!({"sessionUpdate": "tool_call", "toolCallId": "t7", "title": "WebFetch", "kind": "fetch",
                    "status": "failed", "rawInput": {"url": "https://example.com"}}),
            ),
            (
                json!({"kind": "plan", "items": [{"text": "Read", "completed": true}, {"text": "Fix", "completed": "in_progress"}, {"text": "Test", "completed": false}]}),
                json!({"sessionUpdate": "plan", "entries": [
                    {"content": "Read", "priority": "medium", "status": "completed"},
                    {"content": "Fix", "priority": "medium", "status": "in_progress"},
                    {"content": "Test", "priority": "medium", "status": "pending"}]}),
            ),
            (
                json!({"kind": "warning", "message": "slow", "source": "stderr"}),
                json!({"sessionUpdate": "session_info_update"}),
            ),
            (
                json!({"kind": "error", "message": "boom"}),
                json!({"sessionUpdate": "session_info_update"}),
            ),
            (
                json!({"kind": "agent", "text": "Done."}),
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "Done."}}),
            ),
        ]
    }

    #[test]
    fn aa8_to_aa11_every_event_gives_its_update_with_the_event_in_meta() {
        let mut updates = Updates::default();
        let mut lines = String::new();
        for (line, want) in table() {
            let event = event(line.clone());
            let got = updates.of(&event);
            assert_eq!(got.len(), 1, "{line}");
            let mut update = got[0].clone();
            assert_eq!(update["_meta"][EVENT_KEY], line, "{line}");
            let message = json!({"jsonrpc": "2.0", "method": "session/update",
                "params": {"sessionId": "s1", "update": update.clone()}});
            lines.push_str(&format!(
                "{}\n",
                json!({"from": "agent", "message": message})
            ));
            update.as_object_mut().map(|u| u.remove("_meta"));
            assert_eq!(update, want, "{line}");
        }
        let usage = usage(&serde_json::from_value(json!({"status": "success",
            "metrics": {"input_tokens": 10, "cache_read_input_tokens": 5, "output_tokens": 2, "total_cost_usd": 0.5},
            "counts": {}})).expect("an outcome"))
        .expect("figures");
        assert_eq!(
            (
                usage["used"].clone(),
                usage["size"].clone(),
                usage["cost"].clone()
            ),
            (
                json!(17),
                json!(0),
                json!({"amount": 0.5, "currency": "USD"})
            )
        );
        let message = json!({"jsonrpc": "2.0", "method": "session/update",
            "params": {"sessionId": "s1", "update": usage}});
        lines.push_str(&format!(
            "{}\n",
            json!({"from": "agent", "message": message})
        ));
        let path = fixtures::root().join("acp-agent").join("updates.jsonl");
        if let Err(problems) = fixtures::check_expected(&path, &lines) {
            panic!("{}:\n{}", path.display(), problems.join("\n"));
        }
    }

    #[test]
    fn aa13_a_permission_request_names_the_call_it_asks_about() {
        let mut updates = Updates::default();
        let permission = event(
            json!({"kind": "permission", "id": "r1", "options": ["allow", "deny"],
            "path": "/p/a.rs", "expect": [{"kind": "write", "path": "/p/a.rs"}],
            "input": {"file_path": "/p/a.rs", "content": "x"}, "tool": "Write", "tool_use_id": "t1"}),
        );
        let mut call = updates.permission_call(&permission);
        call.as_object_mut().map(|c| c.remove("_meta"));
        assert_eq!(
            call,
            json!({"toolCallId": "t1", "title": "Edit /p/a.rs", "kind": "edit", "status": "pending",
                "locations": [{"path": "/p/a.rs"}], "rawInput": {"file_path": "/p/a.rs", "content": "x"}})
        );
        // Its result updates the call the request named.
        let write = event(
            json!({"kind": "write", "path": "/p/a.rs", "success": true, "tool": "Write", "tool_use_id": "t1"}),
        );
        assert_eq!(updates.of(&write)[0]["sessionUpdate"], "tool_call_update");
        assert!(updates.of(&permission).is_empty());
    }

    #[test]
    fn aa7_stop_reasons() {
        assert_eq!(stop_reason(Status::Success), Some("end_turn"));
        assert_eq!(stop_reason(Status::Interrupted), Some("cancelled"));
        assert_eq!(stop_reason(Status::Error), None);
        assert_eq!(stop_reason(Status::Incomplete), None);
    }
}
