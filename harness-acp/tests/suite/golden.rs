//! Golden tests: every ACP transcript under `fixtures/acp` (Gemini CLI `--acp`, opencode
//! `acp`, the GitHub Copilot CLI `--acp` and Qwen Code `--acp`, recorded by `cargo xtask record
//! --backend acp`), normalized with default settings (a transcript names its directory, A2),
//! gives exactly its hand-reviewed expected events and outcome; and every one passes the
//! conformance kit.

use fixtures::check_folder;
use harness_agents_acp::{AcpHarness, AcpNormalizer};
use harness_agents_core::{Normalizer, NormalizerConfig};

use super::config;

fn acp() -> Box<dyn Normalizer> {
    Box::new(AcpNormalizer::new(NormalizerConfig::default()))
}

#[test]
fn every_acp_recording_gives_its_expected_events() {
    if let Err(failures) = check_folder("acp", 34, acp) {
        panic!("{failures}");
    }
}

#[test]
fn every_acp_recording_passes_the_kit() {
    let fixtures = fixtures::streams("acp").unwrap();
    assert_eq!(fixtures.len(), 34);
    for fixture in fixtures {
        let stdout = std::fs::read(&fixture.stream).unwrap();
        let stderr = fixture
            .stderr
            .as_ref()
            .map(|p| std::fs::read(p).unwrap())
            .unwrap_or_default();
        for config in [config(), NormalizerConfig::default()] {
            harness_agents_core::testkit::check_recording(&AcpHarness, &config, &stdout, &stderr)
                .unwrap_or_else(|e| panic!("{}: {e}", fixture.name));
        }
    }
}

/// I7, A16-A22: every recorded session under `fixtures/acp-session` (Gemini CLI and opencode,
/// several turns each, recorded by `cargo xtask record --backend acp-session` through
/// `Backend::session`), read as a session's transcript, gives exactly its hand-reviewed
/// expected events.
#[test]
fn every_acp_session_recording_gives_its_expected_events() {
    let session = || -> Box<dyn Normalizer> {
        let mut config = NormalizerConfig::default();
        config.session = true;
        Box::new(AcpNormalizer::new(config))
    };
    if let Err(failures) = check_folder("acp-session", 15, session) {
        panic!("{failures}");
    }
}
