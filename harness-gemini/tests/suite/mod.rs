//! Tests grouped by topic, and the helpers they share.

mod alloc;
mod golden;
mod kit;
mod live;
mod live_session;
mod properties;
mod rules;

use harness_agents_core::NormalizerConfig;
use harness_agents_gemini::GeminiNormalizer;
use serde_json::{Value, json};

/// The `--cwd` the recordings assume.
pub const CWD: &str = "/home/gemini/project";

/// The config the recordings assume: `--cwd /home/gemini/project`.
pub fn config() -> NormalizerConfig {
    NormalizerConfig::with_cwd(CWD)
}

pub use fixtures::Run;

/// Feeds lines (values as compact JSON, strings as they are), then ends the input.
pub fn run(lines: &[Value]) -> Run {
    run_with(config(), lines)
}

/// The same with a config of the caller's.
pub fn run_with(config: NormalizerConfig, lines: &[Value]) -> Run {
    fixtures::run_values(&mut GeminiNormalizer::new(config), lines)
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
