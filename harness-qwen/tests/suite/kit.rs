//! The conformance kit (`harness_agents_core::testkit`) on the Qwen Code backend: hostile and
//! generated lines in its vocabulary, and every recording.

use harness_agents_core::NormalizerConfig;
use harness_agents_qwen::QwenHarness;

use super::config;

const TYPES: &[&str] = &["system", "stream_event", "assistant", "user", "result"];
const KEYS: &[&str] = &[
    "type",
    "subtype",
    "session_id",
    "cwd",
    "message",
    "content",
    "id",
    "name",
    "input",
    "tool_use_id",
    "is_error",
    "text",
    "thinking",
    "result",
    "error",
    "usage",
    "file_path",
    "command",
    "pattern",
];

harness_agents_core::conformance_kit!(QwenHarness, config(), types: TYPES, keys: KEYS);

#[test]
fn every_recording_passes_the_kit() {
    for config in [config(), NormalizerConfig::default()] {
        let checked = fixtures::check_kit_on_recordings(&QwenHarness, &config, &["qwen"]);
        assert_eq!(checked, super::golden::RECORDINGS);
    }
}
