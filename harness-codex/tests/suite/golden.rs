//! Golden tests: every Codex stream under `fixtures/codex` (0.171.0), `fixtures/codex-0.163.0`
//! (an older release, still supported) and `fixtures/codex-edges`,
//! normalized with `--cwd /home/dev2/project`, gives exactly its expected events and outcome
//! (SPEC §2, §3, §6, §7), compared with the conformance kit's rules; the sessions of
//! `fixtures/codex-app-server` the same way, read by the XA rules.

use fixtures::assert_golden;
use harness_agents_codex::CodexHarness;

use super::config;

#[test]
fn every_codex_recording_gives_its_expected_events() {
    assert_golden("codex", 51, &CodexHarness, &config());
}

#[test]
fn every_older_release_codex_recording_gives_its_expected_events() {
    assert_golden("codex-0.163.0", 50, &CodexHarness, &config());
}

#[test]
fn every_codex_edge_stream_gives_its_expected_events() {
    assert_golden("codex-edges", 2, &CodexHarness, &config());
}

/// XA0-XA13: every session recorded from the real `codex app-server` (0.171.0) through
/// `CodexHarness::session` gives exactly its expected events, read as a session's stream.
#[test]
fn every_codex_app_server_recording_gives_its_expected_events() {
    let mut config = config();
    config.session = true;
    assert_golden("codex-app-server", 8, &CodexHarness, &config);
}
