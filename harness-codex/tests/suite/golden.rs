//! Golden tests: every Codex stream under `fixtures/codex` and `fixtures/codex-edges`,
//! normalized with `--cwd /home/dev2/project`, gives exactly its expected events and outcome
//! (SPEC §2, §3, §6, §7), compared with the conformance kit's rules.

use std::path::Path;

use fixtures::{Fixture, compare, streams};
use harness_codex::CodexNormalizer;
use harness_core::{Event, LineSplitter, Normalizer, OutcomeLine};

use super::config;

/// Feeds a file to the normalizer in small chunks, as a pipe would deliver it.
fn feed(path: &Path, stderr: bool, normalizer: &mut CodexNormalizer, out: &mut Vec<Event>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut splitter = LineSplitter::new();
    let mut push = |line: &[u8]| {
        if stderr {
            normalizer.push_stderr(line, out);
        } else {
            normalizer.push_line(line, out);
        }
    };
    for chunk in bytes.chunks(97) {
        splitter.push(chunk, &mut push);
    }
    splitter.finish(&mut push);
}

fn normalize(fixture: &Fixture) -> String {
    let mut normalizer = CodexNormalizer::new(config());
    let mut events = Vec::new();
    feed(&fixture.stream, false, &mut normalizer, &mut events);
    if let Some(stderr) = &fixture.stderr {
        feed(stderr, true, &mut normalizer, &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    let mut text = String::new();
    for event in &events {
        text.push_str(&serde_json::to_string(event).unwrap());
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(&OutcomeLine::new(&outcome)).unwrap());
    text.push('\n');
    text
}

fn check_folder(folder: &str, count: usize) {
    let fixtures = streams(folder).unwrap();
    assert_eq!(fixtures.len(), count, "streams in fixtures/{folder}");
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let expected = std::fs::read_to_string(&fixture.expected).unwrap();
        if let Err(problems) = compare(&expected, &normalize(fixture)) {
            failures.push(format!("{}: {}", fixture.name, problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{}/{count} streams in fixtures/{folder} disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_codex_recording_gives_its_expected_events() {
    check_folder("codex", 50);
}

#[test]
fn every_codex_edge_stream_gives_its_expected_events() {
    check_folder("codex-edges", 2);
}
