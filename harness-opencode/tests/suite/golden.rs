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

/// Every session recorded through `opencode serve` (`cargo xtask record --backend
/// opencode-sessions`, transcripts under `fixtures/opencode/sessions`), replayed from its
/// transcript alone with the settings of its header (I7), gives exactly its hand-reviewed
/// expected events and outcome (PS rules).
#[test]
fn every_opencode_session_recording_gives_its_expected_events() {
    use harness_agents_core::transcript::{Header, replay};
    use harness_agents_core::{Backend, OutcomeLine};

    let dir = fixtures::root().join("opencode/sessions");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("the sessions folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "jsonl")
                && !p.to_string_lossy().ends_with(".expected.jsonl")
        })
        .collect();
    names.sort();
    assert_eq!(names.len(), 8, "{names:?}");
    for path in names {
        let text = std::fs::read(&path).expect("the transcript");
        let first = text.split(|b| *b == b'\n').next().expect("a header");
        let header = Header::parse(first).expect("a header").expect("valid");
        assert!(header.session, "{}", path.display());
        let mut normalizer = OpencodeHarness.normalizer(header.config());
        let mut events = Vec::new();
        replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
        let outcome = normalizer.finish(&mut events);
        let mut got: Vec<serde_json::Value> = events
            .iter()
            .map(|e| serde_json::to_value(e).expect("serializes"))
            .collect();
        got.push(serde_json::to_value(OutcomeLine::new(&outcome)).expect("serializes"));
        let expected_path = path.with_extension("expected.jsonl");
        let expected: Vec<serde_json::Value> = std::fs::read_to_string(&expected_path)
            .expect("the expected events")
            .lines()
            .map(|l| serde_json::from_str(l).expect("JSON"))
            .collect();
        assert_eq!(got, expected, "{}", path.display());
    }
}
