//! Golden tests: every recording under `fixtures/opencode` (recorded from `opencode-ai` by
//! `cargo xtask record --backend opencode`), normalized with `--cwd /home/oc/project`, gives
//! exactly its hand-reviewed expected events and outcome (P rules, S rules, O1).

use fixtures::assert_golden;
use harness_agents_opencode::OpencodeHarness;

use super::config;

#[test]
fn every_opencode_recording_gives_its_expected_events() {
    assert_golden("opencode", 46, &OpencodeHarness, &config());
}
