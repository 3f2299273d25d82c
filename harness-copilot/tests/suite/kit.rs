//! The conformance kit (`harness_agents_core::testkit`) on the Copilot backend: hostile and
//! generated lines in its vocabulary (no panic, chunk invariance, line numbers, order,
//! accounting, settling, counts, L1).

use harness_agents_copilot::CopilotHarness;

use super::config;

const TYPES: &[&str] = &[
    "result",
    "user.message",
    "assistant.turn_start",
    "assistant.turn_end",
    "assistant.message",
    "assistant.message_delta",
    "assistant.reasoning",
    "tool.execution_start",
    "tool.execution_complete",
    "tool.shell_output",
    "model.call_failure",
    "session.error",
    "session.warning",
    "session.info",
];
const KEYS: &[&str] = &[
    "type",
    "data",
    "sessionId",
    "exitCode",
    "usage",
    "content",
    "reasoningText",
    "toolCallId",
    "toolName",
    "arguments",
    "success",
    "result",
    "error",
    "message",
    "shellExecution",
    "path",
    "command",
    "pattern",
];

harness_agents_core::conformance_kit!(CopilotHarness, config(), types: TYPES, keys: KEYS);

#[test]
fn every_recording_passes_the_kit() {
    for config in [config(), harness_agents_core::NormalizerConfig::default()] {
        let checked = fixtures::check_kit_on_recordings(&CopilotHarness, &config, &["copilot"]);
        assert_eq!(checked, super::golden::RECORDINGS);
    }
}
