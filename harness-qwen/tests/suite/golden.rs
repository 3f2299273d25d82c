//! Golden tests: every Qwen Code recording under `fixtures/qwen`, normalized with `--cwd
//! /home/qwen/project`, gives exactly its hand-reviewed expected events and outcome.

use fixtures::assert_golden;
use harness_agents_qwen::QwenHarness;

use super::config;

/// How many recordings `fixtures/qwen` holds.
pub const RECORDINGS: usize = 32;

#[test]
fn every_qwen_recording_gives_its_expected_events() {
    assert_golden("qwen", RECORDINGS, &QwenHarness, &config());
}
