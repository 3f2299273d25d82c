//! Tests grouped by topic, and the helpers they share.

mod alloc;
mod golden;
mod kit;
mod live;
mod live_session;
mod messages;
mod rules;

use harness_agents_acp::AcpNormalizer;
use harness_agents_core::NormalizerConfig;
use serde_json::{Value, json};

/// The `--cwd` the hand-written transcripts assume.
pub const CWD: &str = "/home/acp/project";

/// The config the hand-written transcripts assume.
pub fn config() -> NormalizerConfig {
    let mut config = NormalizerConfig::default();
    config.cwd = Some(CWD.into());
    config
}

pub use fixtures::Run;

/// Feeds lines (values as compact JSON, strings as they are), then ends the input.
pub fn run(lines: &[Value]) -> Run {
    run_with(config(), lines)
}

/// The same with a config of the caller's.
pub fn run_with(config: NormalizerConfig, lines: &[Value]) -> Run {
    fixtures::run_values(&mut AcpNormalizer::new(config), lines)
}

// ---- transcript line builders ----

pub fn client(message: Value) -> Value {
    json!({"from": "client", "message": message})
}

pub fn agent(message: Value) -> Value {
    json!({"from": "agent", "message": message})
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    client(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

pub fn answer(id: u64, result: Value) -> Value {
    agent(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

pub fn update(update: Value) -> Value {
    agent(json!({"jsonrpc": "2.0", "method": "session/update",
                 "params": {"sessionId": "s1", "update": update}}))
}

/// The start of a session: `session/new` in `/home/acp/project`, its answer, the prompt.
pub fn start() -> Vec<Value> {
    vec![
        request(1, "session/new", json!({"cwd": CWD, "mcpServers": []})),
        answer(1, json!({"sessionId": "s1"})),
        request(
            2,
            "session/prompt",
            json!({"sessionId": "s1", "prompt": [{"type": "text", "text": "hi"}]}),
        ),
    ]
}

pub fn end_turn() -> Value {
    answer(2, json!({"stopReason": "end_turn"}))
}
