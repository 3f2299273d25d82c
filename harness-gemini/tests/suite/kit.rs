//! The conformance kit (`harness_agents_core::testkit`) on the Gemini CLI backend: hostile and
//! generated lines in its vocabulary (no panic, chunk invariance, line numbers, order,
//! accounting, settling, counts, L1), and every recording.

use harness_agents_core::NormalizerConfig;
use harness_agents_gemini::GeminiHarness;

use super::config;

const TYPES: &[&str] = &[
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
];
const KEYS: &[&str] = &[
    "type",
    "session_id",
    "role",
    "content",
    "delta",
    "tool_name",
    "tool_id",
    "parameters",
    "status",
    "output",
    "error",
    "severity",
    "message",
    "stats",
    "file_path",
    "command",
];

harness_agents_core::conformance_kit!(GeminiHarness, config(), types: TYPES, keys: KEYS);

#[test]
fn every_recording_passes_the_kit() {
    for config in [config(), NormalizerConfig::default()] {
        let checked = fixtures::check_kit_on_recordings(&GeminiHarness, &config, &["gemini"]);
        assert_eq!(checked, 40);
    }
}
