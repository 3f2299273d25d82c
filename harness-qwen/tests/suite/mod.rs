//! Tests grouped by topic, and the helpers they share.

mod golden;
mod kit;
mod live;
mod live_session;
mod rules;

use harness_agents_core::NormalizerConfig;
use harness_agents_qwen::QwenNormalizer;
use serde_json::{Value, json};

/// The `--cwd` the recordings assume (also the directory their init lines name).
pub const CWD: &str = "/home/qwen/project";

/// The config the recordings assume: `--cwd /home/qwen/project`.
pub fn config() -> NormalizerConfig {
    NormalizerConfig::with_cwd(CWD)
}

pub use fixtures::Run;

/// Feeds lines (values as compact JSON, strings as they are), then ends the input.
pub fn run(lines: &[Value]) -> Run {
    fixtures::run_values(&mut QwenNormalizer::new(config()), lines)
}

// ---- line builders (ids and figures nothing reads left out) ----

pub fn init(session: &str, cwd: &str) -> Value {
    json!({"type": "system", "subtype": "init", "uuid": session, "session_id": session,
           "cwd": cwd, "tools": [], "qwen_code_version": "0.24.4"})
}

/// An `assistant` line with these blocks.
pub fn assistant(content: Value) -> Value {
    json!({"type": "assistant", "session_id": "s", "parent_tool_use_id": null,
           "message": {"id": "m", "type": "message", "role": "assistant", "content": content,
                       "stop_reason": null}})
}

pub fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

pub fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

/// A `user` line with one tool result.
pub fn tool_result(id: &str, content: &str, is_error: bool) -> Value {
    json!({"type": "user", "session_id": "s", "parent_tool_use_id": null,
           "message": {"role": "user", "content": [
               {"type": "tool_result", "tool_use_id": id, "is_error": is_error, "content": content}]}})
}

pub fn result_ok(text: &str) -> Value {
    json!({"type": "result", "subtype": "success", "is_error": false, "duration_ms": 10,
           "duration_api_ms": 5, "num_turns": 1, "result": text,
           "usage": {"input_tokens": 240, "output_tokens": 60, "cache_read_input_tokens": 0,
                     "total_tokens": 300}, "permission_denials": []})
}
