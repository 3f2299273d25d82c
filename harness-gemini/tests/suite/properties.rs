//! S2 on the fast path: a line gives a `non_json` warning exactly when `serde_json` cannot
//! parse it into a `Value`, whatever it holds (the decoder reads a borrowed view, not a
//! `Value`, so this is what keeps it exact). Lines come from the kit's hostile generators and
//! from the recordings, cut and with bytes changed.

use harness_agents_core::testkit::{self, proptest::prelude::*};
use harness_agents_core::{EventBody, Normalizer, WarningSource};
use harness_agents_gemini::GeminiNormalizer;

use super::config;

const TYPES: &[&str] = &[
    "init",
    "message",
    "tool_use",
    "tool_result",
    "error",
    "result",
];
const KEYS: &[&str] = &[
    "type",
    "session_id",
    "role",
    "content",
    "tool_name",
    "tool_id",
    "parameters",
    "status",
    "output",
    "error",
    "severity",
    "message",
    "stats",
    "input_tokens",
    "cached",
];

/// Whether the line alone gives a `non_json` warning.
fn warned(line: &[u8]) -> bool {
    let mut normalizer = GeminiNormalizer::new(config());
    let mut events = Vec::new();
    normalizer.push_line(line, &mut events);
    events.iter().any(|e| {
        matches!(
            e.body,
            EventBody::Warning {
                source: WarningSource::NonJson,
                ..
            }
        )
    })
}

fn blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Every line of every recording.
fn recorded_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for fixture in fixtures::streams("gemini").unwrap() {
        lines.extend(testkit::split_lines(
            &std::fs::read(&fixture.stream).unwrap(),
        ));
    }
    lines
}

fn check(line: &[u8]) -> Result<(), TestCaseError> {
    if blank(line) {
        return Ok(());
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let is_json = serde_json::from_slice::<serde_json::Value>(line).is_ok();
    prop_assert_eq!(
        warned(line),
        !is_json,
        "S2: {}",
        String::from_utf8_lossy(line)
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn s2_hostile_lines_warn_exactly_when_they_are_not_json(
        lines in testkit::hostile_lines(TYPES, KEYS, 8),
    ) {
        for line in &lines {
            check(line)?;
        }
    }

    #[test]
    fn s2_recorded_lines_cut_or_changed_warn_exactly_when_they_are_not_json(
        pick in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(&b"\"\\{}[],:0eE-+.u \x00\xff"[..]),
        cut in any::<bool>(),
    ) {
        let lines = recorded_lines();
        let mut line = pick.get(&lines).clone();
        let i = at.index(line.len().max(1));
        if cut {
            line.truncate(i);
        } else if let Some(b) = line.get_mut(i) {
            *b = byte;
        }
        check(&line)?;
    }
}

#[test]
fn s2_every_recorded_line_is_json_and_hand_picked_edges_agree() {
    for line in recorded_lines() {
        check(&line).unwrap();
    }
    let edges: [&[u8]; 8] = [
        br#"{"type":"tool_use","tool_id":"t","parameters":{"n":1e400}}"#,
        br#"{"type":"result","stats":{"models":{"m":"\ud800"}}}"#,
        br#"{"type":"message","role":"assistant","content":"a","content":"\udc00\ud800"}"#,
        br#"{"type":"init","session_id":"s"} trailing"#,
        br#"{"type":"tool_result","error":{"message":"m"},"error":[1e999]}"#,
        br#"  {"type":"init"}  "#,
        b"{\"type\":\"message\",\"content\":\"\xff\"}",
        br#"{"type":"error","message":"\u0000"}"#,
    ];
    for line in edges {
        check(line).unwrap();
    }
}
