//! Golden tests: every recording under `fixtures/opencode` (recorded from `opencode-ai` by
//! `cargo xtask record --backend opencode`), normalized with `--cwd /home/oc/project`, gives
//! exactly its hand-reviewed expected events and outcome (P rules, S rules, O1).

use fixtures::check_folder;
use harness_agents_opencode::OpencodeNormalizer;
use harness_core::Normalizer;

use super::config;

fn opencode() -> Box<dyn Normalizer> {
    Box::new(OpencodeNormalizer::new(config()))
}

#[test]
fn every_opencode_recording_gives_its_expected_events() {
    if let Err(failures) = check_folder("opencode", 45, opencode) {
        panic!("{failures}");
    }
}
