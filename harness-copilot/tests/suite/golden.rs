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

/// How many session recordings `fixtures/copilot-session` holds.
pub const SESSION_RECORDINGS: usize = 11;

/// I7, CP15-CP18: every recorded session under `fixtures/copilot-session` (`copilot --acp`
/// driven through `CopilotHarness::session`, recorded by `cargo xtask record --backend
/// copilot-session`), read as a session's ACP transcript, gives exactly its hand-reviewed
/// expected events. None of them was recorded under `bypassPermissions` with a permission
/// request (`--allow-all-tools` asks nothing), so each reads the same as a session's.
#[test]
fn every_copilot_session_recording_gives_its_expected_events() {
    let session = || -> Box<dyn harness_agents_core::Normalizer> {
        let mut config = harness_agents_core::NormalizerConfig::default();
        config.session = true;
        Box::new(harness_agents_acp::AcpNormalizer::new(config))
    };
    if let Err(failures) = fixtures::check_folder("copilot-session", SESSION_RECORDINGS, session) {
        panic!("{failures}");
    }
}
