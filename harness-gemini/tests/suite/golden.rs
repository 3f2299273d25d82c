//! Golden tests: every Gemini CLI recording under `fixtures/gemini`, normalized with
//! `--cwd /home/gemini/project`, gives exactly its expected events and outcome (S, G and O
//! rules), compared with the conformance kit's rules.

use fixtures::check_folder;
use harness_agents_gemini::GeminiNormalizer;
use harness_core::Normalizer;

use super::config;

fn gemini() -> Box<dyn Normalizer> {
    Box::new(GeminiNormalizer::new(config()))
}

#[test]
fn every_gemini_recording_gives_its_expected_events() {
    if let Err(failures) = check_folder("gemini", 39, gemini) {
        panic!("{failures}");
    }
}
