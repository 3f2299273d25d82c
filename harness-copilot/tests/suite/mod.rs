//! Tests grouped by topic, and the helpers they share.

mod golden;
mod kit;
mod live;
mod live_session;
mod rules;

use harness_agents_copilot::CopilotNormalizer;
use harness_agents_core::NormalizerConfig;
use serde_json::{Value, json};

/// The `--cwd` the tests assume.
pub const CWD: &str = "/home/copilot/project";

/// The config the tests assume: `--cwd /home/copilot/project`.
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
    fixtures::run_values(&mut CopilotNormalizer::new(config), lines)
}

// ---- line builders (`id`, `timestamp` and `parentId` left out: nothing reads them) ----

/// A line of this type with this `data`.
pub fn line(kind: &str, data: Value) -> Value {
    json!({"type": kind, "data": data})
}

/// An ephemeral line of this type with this `data`.
pub fn ephemeral(kind: &str, data: Value) -> Value {
    json!({"type": kind, "data": data, "ephemeral": true})
}

/// The closing `result` line.
pub fn result(session: &str, exit: i64) -> Value {
    json!({"type": "result", "timestamp": "2026-12-06T12:00:00.000Z", "sessionId": session,
           "exitCode": exit, "usage": {"premiumRequests": 0, "totalApiDurationMs": 61,
           "sessionDurationMs": 673, "codeChanges": {"linesAdded": 0, "linesRemoved": 0,
           "filesModified": []}}})
}

/// An `assistant.message` with this text, these tool requests and this reasoning.
pub fn message(content: &str, reasoning: Option<&str>) -> Value {
    let mut data = json!({"messageId": "m", "model": "gpt-4.1", "content": content,
                          "toolRequests": [], "turnId": "0"});
    if let Some(text) = reasoning {
        data["reasoningText"] = json!(text);
    }
    line("assistant.message", data)
}

pub fn start(id: &str, name: &str, args: Value) -> Value {
    line(
        "tool.execution_start",
        json!({"toolCallId": id, "toolName": name, "arguments": args, "turnId": "0"}),
    )
}

pub fn done(id: &str, content: &str) -> Value {
    line(
        "tool.execution_complete",
        json!({"toolCallId": id, "success": true,
               "result": {"content": content, "detailedContent": content}}),
    )
}

pub fn failed(id: &str, message: &str) -> Value {
    line(
        "tool.execution_complete",
        json!({"toolCallId": id, "success": false,
               "error": {"message": message, "code": "failure"}}),
    )
}

pub fn shell_done(id: &str, content: &str, exit: i64) -> Value {
    line(
        "tool.execution_complete",
        json!({"toolCallId": id, "success": true, "shellExecution": {"exitCode": exit},
               "result": {"content": content, "detailedContent": content}}),
    )
}
