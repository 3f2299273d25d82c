//! The conformance kit (`harness_agents_core::testkit`) on the Pi backend: hostile and
//! generated lines in its vocabulary (no panic, chunk invariance, line numbers, order,
//! accounting, settling, counts, L1), and every recording.

use harness_agents_core::NormalizerConfig;
use harness_agents_pi::PiHarness;

use super::config;

const TYPES: &[&str] = &[
    "session",
    "agent_start",
    "turn_start",
    "turn_end",
    "message_start",
    "message_update",
    "message_end",
    "tool_execution_start",
    "tool_execution_update",
    "tool_execution_end",
    "agent_end",
    "auto_retry_start",
    "auto_retry_end",
    "compaction_end",
];
const KEYS: &[&str] = &[
    "type",
    "id",
    "cwd",
    "message",
    "role",
    "content",
    "stopReason",
    "errorMessage",
    "toolCallId",
    "toolName",
    "args",
    "result",
    "isError",
    "success",
    "finalError",
    "path",
    "command",
];

harness_agents_core::conformance_kit!(PiHarness, config(), types: TYPES, keys: KEYS);

#[test]
fn every_recording_passes_the_kit() {
    for config in [config(), NormalizerConfig::default()] {
        let checked = fixtures::check_kit_on_recordings(&PiHarness, &config, &["pi"]);
        assert_eq!(checked, super::golden::RECORDINGS);
    }
}
