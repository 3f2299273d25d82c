//! Which backend `harness normalize` picks for a stream it was not told (`Backend::recognizes`:
//! the first line exactly one backend recognizes decides), on the recordings of the two
//! backends whose lines share one shape: Claude Code's and Qwen Code's `stream-json`.

#![allow(clippy::unwrap_used)] // A fixture that cannot be read fails the test loudly.

use std::path::Path;

use serde_json::Value;

/// The backends of the default registry that recognize each JSON line of `stream`, in order.
fn recognizers(stream: &Path) -> Vec<Vec<&'static str>> {
    let registry = harness_agents::registry();
    let text = std::fs::read(stream).unwrap();
    text.split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .map(|value| {
            registry
                .names()
                .filter(|name| registry.get(name).unwrap().recognizes(&value))
                .collect()
        })
        .collect()
}

/// The backend the first deciding line names, if any line decides.
fn decided(lines: &[Vec<&'static str>]) -> Option<&'static str> {
    lines.iter().find(|names| names.len() == 1).map(|n| n[0])
}

#[test]
fn every_qwen_recording_is_decided_by_its_init_line_as_qwen() {
    let mut checked = 0;
    for fixture in fixtures::streams("qwen").unwrap() {
        let lines = recognizers(&fixture.stream);
        assert_eq!(lines[0], ["qwen"], "{}", fixture.name);
        assert_eq!(decided(&lines), Some("qwen"), "{}", fixture.name);
        checked += 1;
    }
    assert_eq!(checked, 32);
}

#[test]
fn no_claude_recording_has_a_line_qwen_recognizes() {
    let mut checked = 0;
    for folder in fixtures::CLAUDE_FOLDERS
        .into_iter()
        .chain(["claude-session"])
    {
        for fixture in fixtures::streams(folder).unwrap() {
            let lines = recognizers(&fixture.stream);
            assert!(
                lines.iter().all(|names| !names.contains(&"qwen")),
                "{}",
                fixture.name
            );
            assert!(
                matches!(decided(&lines), Some("claude") | None),
                "{}: {:?}",
                fixture.name,
                decided(&lines)
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}
