//! Golden tests: every Qwen Code recording under `fixtures/qwen`, normalized with `--cwd
//! /home/qwen/project`, gives exactly its hand-reviewed expected events and outcome; so does
//! every recorded session under `fixtures/qwen-session`.

use fixtures::assert_golden;
use harness_agents_acp::AcpNormalizer;
use harness_agents_core::{Normalizer, NormalizerConfig};
use harness_agents_qwen::QwenHarness;

use super::config;

/// How many recordings `fixtures/qwen` holds.
pub const RECORDINGS: usize = 32;

#[test]
fn every_qwen_recording_gives_its_expected_events() {
    assert_golden("qwen", RECORDINGS, &QwenHarness, &config());
}

/// I7, QW13-QW16: every recorded session under `fixtures/qwen-session` (Qwen Code's ACP mode,
/// several turns each, recorded by `cargo xtask record --backend qwen-session` through
/// `QwenHarness::session`), read as an ACP session's transcript (the `acp` backend's
/// normalizer with the session's rules on), gives exactly its hand-reviewed expected events.
#[test]
fn every_qwen_session_recording_gives_its_expected_events() {
    let session = || -> Box<dyn Normalizer> {
        let mut config = NormalizerConfig::default();
        config.session = true;
        Box::new(AcpNormalizer::new(config))
    };
    if let Err(failures) = fixtures::check_folder("qwen-session", 7, session) {
        panic!("{failures}");
    }
}
