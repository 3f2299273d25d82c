//! Golden tests: every Pi recording under `fixtures/pi`, normalized with `--cwd
//! /home/pi/project`, gives exactly its expected events and outcome (S, PI and O rules),
//! compared with the conformance kit's rules.

use fixtures::assert_golden;
use harness_agents_pi::PiHarness;

use super::config;

/// How many recordings `fixtures/pi` holds.
pub const RECORDINGS: usize = 32;

#[test]
fn every_pi_recording_gives_its_expected_events() {
    assert_golden("pi", RECORDINGS, &PiHarness, &config());
}

/// PR1-PR6, PI16: every session recorded from the real `pi --mode rpc` (0.73.1) through
/// `PiHarness::session` gives exactly its expected events, read as a session's stream.
#[test]
fn every_pi_session_recording_gives_its_expected_events() {
    let mut config = config();
    config.session = true;
    assert_golden("pi-session", 6, &PiHarness, &config);
}
