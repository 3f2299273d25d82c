//! Golden tests: every Copilot recording under `fixtures/copilot`, normalized with `--cwd
//! /home/copilot/project`, gives exactly its expected events and outcome (S, CP and O rules),
//! compared with the conformance kit's rules.

use fixtures::assert_golden;
use harness_agents_copilot::CopilotHarness;

use super::config;

/// How many recordings `fixtures/copilot` holds.
pub const RECORDINGS: usize = 31;

#[test]
fn every_copilot_recording_gives_its_expected_events() {
    assert_golden("copilot", RECORDINGS, &CopilotHarness, &config());
}
