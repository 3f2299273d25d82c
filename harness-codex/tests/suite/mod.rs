//! Tests grouped by topic, and the helpers they share.
//!
//! Every unit test compares whole serialized events (`serde_json::Value`s, every field) with
//! what the SPEC gives. [`run_with`] also checks, for every stream, that the outcome's `counts`
//! equal the events emitted (O1) and that every event reads back as itself (J1-J10).

mod alloc;
mod golden;
mod kit;
mod live;
mod live_session;
mod properties;
mod rules;

use std::collections::BTreeMap;

use harness_agents_codex::CodexNormalizer;
use harness_agents_core::{Event, LineSplitter, NormalizerConfig, Outcome, OutcomeLine};
use serde_json::{Value, json};

/// What one stream came to: its events and its outcome, both as JSON.
#[derive(Debug)]
pub struct Run {
    pub events: Vec<Value>,
    pub outcome: Value,
}

/// The `--cwd` the shared recordings assume.
pub const CWD: &str = "/home/dev2/project";

/// The config the recordings assume: `--cwd /home/dev2/project`.
pub fn config() -> NormalizerConfig {
    NormalizerConfig::with_cwd(CWD)
}

/// Feeds stdout lines, then stderr lines (S10), then ends the input.
pub fn run_with(config: NormalizerConfig, stdout: &[&[u8]], stderr: &[&[u8]]) -> Run {
    let mut normalizer = CodexNormalizer::new(config);
    let (events, outcome) =
        harness_agents_core::testkit::normalize_lines(&mut normalizer, stdout, stderr);
    finish_run(&events, &outcome)
}

/// Feeds stdout lines with `--cwd /home/dev2/project`.
pub fn run(lines: &[String]) -> Run {
    let bytes: Vec<&[u8]> = lines.iter().map(|l| l.as_bytes()).collect();
    run_with(config(), &bytes, &[])
}

/// Feeds a whole byte stream, split into lines as the CLI does (S1).
pub fn run_stream(bytes: &[u8]) -> Run {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut splitter = LineSplitter::new();
    splitter.push(bytes, |l| lines.push(l.to_vec()));
    splitter.finish(|l| lines.push(l.to_vec()));
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    run_with(config(), &lines, &[])
}

fn finish_run(events: &[Event], outcome: &Outcome) -> Run {
    let mut tally: BTreeMap<String, u64> = BTreeMap::new();
    for event in events {
        // L1: `started` events are never counted.
        if event.kind() != harness_agents_core::Kind::Started {
            *tally.entry(event.kind().as_str().to_string()).or_insert(0) += 1;
        }
    }
    let events: Vec<Value> = events.iter().map(to_json).collect();
    let outcome = serde_json::to_value(OutcomeLine::new(outcome)).unwrap();
    let counts: BTreeMap<String, u64> = serde_json::from_value(outcome["counts"].clone()).unwrap();
    assert_eq!(counts, tally, "O1: counts must equal the events emitted");
    Run { events, outcome }
}

/// An event as the CLI writes it; it must also read back as the same event (J1-J10).
pub fn to_json(event: &Event) -> Value {
    let value = serde_json::to_value(event).unwrap();
    let back: Event = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(&back, event, "event does not round-trip: {value}");
    value
}

/// The events of `lines` followed by a `turn.completed` line (which emits nothing itself).
pub fn events(lines: &[String]) -> Vec<Value> {
    let mut all = lines.to_vec();
    all.push(turn_completed(json!({})));
    let run = run(&all);
    assert_eq!(run.outcome["status"], "success", "{:?}", run.events);
    run.events
}

// ---- line builders ----

pub fn thread_started(id: Value) -> String {
    json!({"type": "thread.started", "thread_id": id}).to_string()
}

pub fn turn_completed(usage: Value) -> String {
    json!({"type": "turn.completed", "usage": usage}).to_string()
}

pub fn turn_failed(message: Value) -> String {
    json!({"type": "turn.failed", "error": {"message": message}}).to_string()
}

pub fn started(item: Value) -> String {
    json!({"type": "item.started", "item": item}).to_string()
}

pub fn updated(item: Value) -> String {
    json!({"type": "item.updated", "item": item}).to_string()
}

pub fn completed(item: Value) -> String {
    json!({"type": "item.completed", "item": item}).to_string()
}

/// A `command_execution` item.
pub fn command(id: &str, command: &str, status: &str, exit_code: Value) -> Value {
    json!({
        "id": id, "type": "command_execution", "command": command,
        "aggregated_output": "", "exit_code": exit_code, "status": status,
    })
}

/// A `todo_list` item.
pub fn todo(id: &str, items: Value) -> Value {
    json!({"id": id, "type": "todo_list", "items": items})
}

/// An `agent_message` item.
pub fn message(id: &str, text: &str) -> Value {
    json!({"id": id, "type": "agent_message", "text": text})
}
