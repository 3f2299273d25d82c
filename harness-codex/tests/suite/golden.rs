//! Golden tests: every Codex stream under `fixtures/codex` (0.171.0), `fixtures/codex-0.163.0`
//! (an older release, still supported) and `fixtures/codex-edges`,
//! normalized with `--cwd /home/dev2/project`, gives exactly its expected events and outcome
//! (SPEC §2, §3, §6, §7), compared with the conformance kit's rules.

use fixtures::check_folder;
use harness_agents_codex::CodexNormalizer;
use harness_core::Normalizer;

use super::config;

fn codex() -> Box<dyn Normalizer> {
    Box::new(CodexNormalizer::new(config()))
}

#[test]
fn every_codex_recording_gives_its_expected_events() {
    if let Err(failures) = check_folder("codex", 50, codex) {
        panic!("{failures}");
    }
}

#[test]
fn every_older_release_codex_recording_gives_its_expected_events() {
    if let Err(failures) = check_folder("codex-0.163.0", 50, codex) {
        panic!("{failures}");
    }
}

#[test]
fn every_codex_edge_stream_gives_its_expected_events() {
    if let Err(failures) = check_folder("codex-edges", 2, codex) {
        panic!("{failures}");
    }
}
