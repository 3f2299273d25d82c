//! Tests grouped by topic, and the helpers they share.

mod alloc;
mod golden;
mod kit;
mod live;
mod live_session;
mod properties;
mod rules;

use harness_agents_core::NormalizerConfig;
use harness_agents_pi::PiNormalizer;
use serde_json::{Value, json};

/// The `--cwd` the recordings assume (also the directory their headers name).
pub const CWD: &str = "/home/pi/project";

/// The config the recordings assume: `--cwd /home/pi/project`.
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
    fixtures::run_values(&mut PiNormalizer::new(config), lines)
}

// ---- line builders (timestamps and the repeated snapshots left out: nothing reads them) ----

pub fn session(id: &str, cwd: &str) -> Value {
    json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-01-01T00:00:00.000Z",
           "cwd": cwd})
}

pub fn kind(kind: &str) -> Value {
    json!({"type": kind})
}

pub fn agent_end() -> Value {
    json!({"type": "agent_end", "messages": []})
}

/// An assistant `message_end` with these blocks and this stop reason.
pub fn assistant(content: Value, stop: &str) -> Value {
    json!({"type": "message_end", "message": {"role": "assistant", "content": content,
           "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
           "usage": {"input": 10, "output": 3, "cacheRead": 1, "cacheWrite": 2,
                     "totalTokens": 16, "cost": {"total": 0.5}},
           "stopReason": stop}})
}

/// A failed request's assistant `message_end`.
pub fn failed_request(message: &str) -> Value {
    json!({"type": "message_end", "message": {"role": "assistant", "content": [],
           "usage": {"input": 0, "output": 0}, "stopReason": "error", "errorMessage": message}})
}

pub fn text(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

pub fn start(id: &str, name: &str, args: Value) -> Value {
    json!({"type": "tool_execution_start", "toolCallId": id, "toolName": name, "args": args})
}

pub fn end(id: &str, name: &str, output: &str, is_error: bool) -> Value {
    json!({"type": "tool_execution_end", "toolCallId": id, "toolName": name,
           "result": {"content": [{"type": "text", "text": output}]}, "isError": is_error})
}
