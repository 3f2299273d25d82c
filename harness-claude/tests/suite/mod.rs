//! Tests named after the SPEC rule they prove, grouped by topic, and the helpers they share.
//!
//! Every test compares whole serialized events (`serde_json::Value`s, every field) with what
//! the SPEC gives, and, where it matters, the outcome. [`run_with`] also checks, for every
//! stream, that the outcome's `counts` equal the events emitted (O1).

mod alloc;
mod bash;
mod kit;
mod lines;
mod live_session;
mod messages;
mod outcome;
mod session;
mod tools;

use std::collections::BTreeMap;

use harness_agents_claude::ClaudeNormalizer;
use harness_agents_core::{Event, LineSplitter, Normalizer, NormalizerConfig};
use serde_json::{Value, json};

/// What one stream came to: its events and its outcome, both as JSON.
#[derive(Debug)]
pub struct Run {
    pub events: Vec<Value>,
    pub outcome: Value,
}

/// Feeds stdout lines, then stderr lines (S10), then ends the input.
pub fn run_with(config: NormalizerConfig, stdout: &[&[u8]], stderr: &[&[u8]]) -> Run {
    let mut normalizer = ClaudeNormalizer::new(config);
    let (events, outcome) =
        harness_agents_core::testkit::normalize_lines(&mut normalizer, stdout, stderr);
    finish_run(events, &outcome)
}

fn finish_run(events: Vec<Event>, outcome: &harness_agents_core::Outcome) -> Run {
    let mut tally: BTreeMap<String, u64> = BTreeMap::new();
    for event in &events {
        // L1: `started` events are never counted.
        if event.kind() != harness_agents_core::Kind::Started {
            *tally.entry(event.kind().as_str().to_string()).or_insert(0) += 1;
        }
    }
    let events: Vec<Value> = events.iter().map(to_json).collect();
    let outcome = serde_json::to_value(outcome).unwrap_or(Value::Null);
    let counts: BTreeMap<String, u64> =
        serde_json::from_value(outcome["counts"].clone()).unwrap_or_default();
    assert_eq!(counts, tally, "O1: counts must equal the events emitted");
    Run { events, outcome }
}

/// An event as the CLI writes it; it must also read back as the same event (J1-J10).
pub fn to_json(event: &Event) -> Value {
    let value = serde_json::to_value(event).unwrap_or(Value::Null);
    let back: Option<Event> = serde_json::from_value(value.clone()).ok();
    assert_eq!(
        back.as_ref(),
        Some(event),
        "event does not round-trip: {value}"
    );
    value
}

/// Feeds stdout lines with the default config (no `--cwd`, no `--workspace`).
pub fn run(lines: &[String]) -> Run {
    let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    run_with(NormalizerConfig::default(), &bytes, &[])
}

/// Feeds raw byte lines with the default config.
pub fn run_bytes(lines: &[&[u8]]) -> Run {
    run_with(NormalizerConfig::default(), lines, &[])
}

/// Feeds a whole byte stream, split into lines as the CLI does (S1).
pub fn run_stream(bytes: &[u8]) -> Run {
    let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
    let mut events: Vec<Event> = Vec::new();
    let mut splitter = LineSplitter::new();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    splitter.push(bytes, |l| lines.push(l.to_vec()));
    splitter.finish(|l| lines.push(l.to_vec()));
    for line in &lines {
        normalizer.push_line(line, &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    finish_run(events, &outcome)
}

/// The events of `lines` followed by a successful `result` line (which emits nothing itself).
pub fn events(lines: &[String]) -> Vec<Value> {
    let mut all = lines.to_vec();
    all.push(result_ok());
    let run = run(&all);
    assert_eq!(run.outcome["status"], "success", "{:?}", run.events);
    run.events
}

/// The events of `lines` followed by a successful `result` line, with a config.
pub fn events_with(config: NormalizerConfig, lines: &[String]) -> Vec<Value> {
    let mut all = lines.to_vec();
    all.push(result_ok());
    let bytes: Vec<&[u8]> = all.iter().map(|l| l.as_bytes()).collect();
    let run = run_with(config, &bytes, &[]);
    assert_eq!(run.outcome["status"], "success", "{:?}", run.events);
    run.events
}

// ---- line builders ----

/// `system`/`init` with a working directory and a session id.
pub fn init(cwd: &str) -> String {
    json!({"type": "system", "subtype": "init", "cwd": cwd, "session_id": "sess"}).to_string()
}

/// A successful `result` line.
pub fn result_ok() -> String {
    json!({"type": "result", "subtype": "success", "is_error": false, "result": "done"}).to_string()
}

/// An `assistant` line of the main thread.
pub fn assistant(id: &str, content: Value) -> String {
    assistant_in(None, json!(id), content)
}

/// An `assistant` line with any thread and any `message.id` value (`Value::Null` for none).
pub fn assistant_in(parent: Option<&str>, id: Value, content: Value) -> String {
    json!({
        "type": "assistant",
        "message": {"id": id, "role": "assistant", "content": content},
        "parent_tool_use_id": parent,
    })
    .to_string()
}

/// A `user` line of the main thread.
pub fn user(content: Value) -> String {
    user_in(None, content)
}

/// A `user` line of a thread.
pub fn user_in(parent: Option<&str>, content: Value) -> String {
    json!({
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": parent,
    })
    .to_string()
}

/// A `user` line of the main thread carrying `tool_use_result`.
pub fn user_tur(content: Value, tool_use_result: Value) -> String {
    json!({
        "type": "user",
        "message": {"role": "user", "content": content},
        "parent_tool_use_id": null,
        "tool_use_result": tool_use_result,
    })
    .to_string()
}

pub fn text(t: &str) -> Value {
    json!({"type": "text", "text": t})
}

pub fn thinking(t: &str) -> Value {
    json!({"type": "thinking", "thinking": t, "signature": "sig"})
}

pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// A successful `tool_result` block whose content is `"ok"`.
pub fn tool_result(id: &str) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": "ok"})
}

/// A failed `tool_result` block with the given content.
pub fn tool_error(id: &str, content: Value) -> Value {
    json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": true})
}

/// The events of one tool use under `init /repo`: line 1 init, line 2 the use, line 3 its
/// successful result, line 4 `result`.
pub fn one_tool(block: Value) -> Vec<Value> {
    let id = block["id"].as_str().unwrap_or("t1").to_string();
    events(&[
        init("/repo"),
        assistant("m1", json!([block])),
        user(json!([tool_result(&id)])),
    ])
}

/// The `unknown` event `one_tool` gives for a use it cannot map.
pub fn unknown_use(reason: &str, block: Value) -> Value {
    let id = block["id"].clone();
    let mut event = json!({
        "kind": "unknown",
        "reason": reason,
        "raw": {"tool_use": block, "tool_result": tool_result(id.as_str().unwrap_or("t1"))},
        "tool_use_id": id,
        "line": 3,
    });
    if let Some(name) = block["name"].as_str() {
        event["tool"] = json!(name);
    }
    event
}
