//! The conformance kit (`harness_core::testkit`) on the opencode backend: every property (no
//! panic, chunk invariance, line numbers, order, accounting, settling, counts, L1 and
//! conservation) on hostile lines of opencode's vocabulary, and on every recording.

use harness_core::testkit;
use harness_opencode::OpencodeHarness;

use super::config;

const TYPES: &[&str] = &[
    "step_start",
    "step_finish",
    "text",
    "reasoning",
    "tool_use",
    "error",
    "mystery",
];
const KEYS: &[&str] = &[
    "type",
    "sessionID",
    "part",
    "messageID",
    "text",
    "synthetic",
    "tool",
    "callID",
    "state",
    "status",
    "completed",
    "running",
    "input",
    "output",
    "metadata",
    "exit",
    "filePath",
    "offset",
    "limit",
    "command",
    "workdir",
    "pattern",
    "path",
    "todos",
    "content",
    "patchText",
    "name",
    "reason",
    "tool-calls",
    "stop",
    "tokens",
    "cost",
    "error",
    "data",
    "message",
    "read",
    "bash",
    "todowrite",
];

harness_core::conformance_kit!(OpencodeHarness, config(), types: TYPES, keys: KEYS);

#[test]
fn the_kit_holds_on_every_recording() {
    let mut checked = 0;
    for fixture in fixtures::streams("opencode").unwrap() {
        let stdout = std::fs::read(&fixture.stream).unwrap();
        let stderr = fixture
            .stderr
            .as_ref()
            .map(std::fs::read)
            .transpose()
            .unwrap()
            .unwrap_or_default();
        if let Err(e) = testkit::check_recording(&OpencodeHarness, &config(), &stdout, &stderr) {
            panic!("{}: {e}", fixture.name);
        }
        checked += 1;
    }
    assert_eq!(checked, 40);
}
