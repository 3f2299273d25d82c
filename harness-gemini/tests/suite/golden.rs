//! Golden tests: every Gemini CLI recording under `fixtures/gemini`, normalized with
//! `--cwd /home/gemini/project`, gives exactly its expected events and outcome (S, G and O
//! rules), compared with the conformance kit's rules.

use fixtures::assert_golden;
use harness_agents_gemini::GeminiHarness;

use super::config;

#[test]
fn every_gemini_recording_gives_its_expected_events() {
    assert_golden("gemini", 40, &GeminiHarness, &config());
}
