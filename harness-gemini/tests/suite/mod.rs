//! Tests grouped by topic, and the helpers they share.

mod golden;
mod kit;
mod live;
mod properties;
mod rules;

use harness_agents_gemini::GeminiNormalizer;
use harness_core::{Event, Normalizer, NormalizerConfig, OutcomeLine};
use serde_json::{Value, json};

/// The `--cwd` the recordings assume.
pub const CWD: &str = "/home/gemini/project";

/// The config the recordings assume: `--cwd /home/gemini/project`.
pub fn config() -> NormalizerConfig {
    NormalizerConfig::with_cwd(CWD)
}

/// What one stream came to: its events and its outcome, both as JSON.
#[derive(Debug)]
pub struct Run {
    pub events: Vec<Value>,
    pub outcome: Value,
}

/// Feeds stdout lines (values as compact JSON), then ends the input.
pub fn run(lines: &[Value]) -> Run {
    run_with(config(), lines)
}

/// The same with a config of the caller's.
pub fn run_with(config: NormalizerConfig, lines: &[Value]) -> Run {
    let mut normalizer = GeminiNormalizer::new(config);
    let mut events: Vec<Event> = Vec::new();
    for line in lines {
        let bytes = match line {
            Value::String(raw) => raw.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        };
        normalizer.push_line(&bytes, &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    let events = events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let outcome = serde_json::to_value(OutcomeLine::new(&outcome)).unwrap();
    Run { events, outcome }
}

// ---- line builders (timestamps left out: nothing reads them) ----

pub fn init(session: &str) -> Value {
    json!({"type": "init", "session_id": session, "model": "auto"})
}

pub fn user(text: &str) -> Value {
    json!({"type": "message", "role": "user", "content": text})
}

pub fn chunk(text: &str) -> Value {
    json!({"type": "message", "role": "assistant", "content": text, "delta": true})
}

pub fn tool_use(name: &str, id: &str, parameters: Value) -> Value {
    json!({"type": "tool_use", "tool_name": name, "tool_id": id, "parameters": parameters})
}

pub fn ok(id: &str) -> Value {
    json!({"type": "tool_result", "tool_id": id, "status": "success", "output": ""})
}

pub fn failed(id: &str, kind: &str, message: &str) -> Value {
    json!({"type": "tool_result", "tool_id": id, "status": "error",
           "output": message, "error": {"type": kind, "message": message}})
}

pub fn result() -> Value {
    json!({"type": "result", "status": "success",
           "stats": {"total_tokens": 13, "input_tokens": 10, "output_tokens": 3, "cached": 4,
                     "input": 6, "duration_ms": 50, "tool_calls": 0, "models": {}}})
}
