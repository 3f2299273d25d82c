//! S2 through the Pi decoder: a line gives a `non_json` warning exactly when `serde_json`
//! cannot parse it into a `Value`. The decoder reads borrowed views in two passes (PI3's
//! costly fields), never a `Value` of the line, so this is what keeps it exact. Lines come from
//! the kit's hostile generators and from the recordings, cut or with a byte changed.

use harness_agents_core::testkit::{self, proptest::prelude::*};
use harness_agents_core::{EventBody, Normalizer, WarningSource};
use harness_agents_pi::PiNormalizer;

use super::config;

const TYPES: &[&str] = &[
    "session",
    "message_end",
    "message_update",
    "tool_execution_start",
    "tool_execution_end",
    "auto_retry_start",
    "agent_end",
];
const KEYS: &[&str] = &[
    "type",
    "id",
    "cwd",
    "message",
    "role",
    "content",
    "text",
    "thinking",
    "usage",
    "toolCallId",
    "toolName",
    "args",
    "result",
    "isError",
];

/// Whether `line` alone gives a `non_json` warning.
fn warned(line: &[u8]) -> bool {
    let mut normalizer = PiNormalizer::new(config());
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

/// Every line of every Pi recording.
fn recorded_lines() -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    for fixture in fixtures::streams("pi").unwrap() {
        let bytes = std::fs::read(&fixture.stream).unwrap();
        lines.extend(testkit::split_lines(&bytes));
    }
    lines
}

/// S2 for one line (a blank one is skipped, S1).
fn check(line: &[u8]) -> Result<(), TestCaseError> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line
        .iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        return Ok(());
    }
    let json = serde_json::from_slice::<serde_json::Value>(line).is_ok();
    prop_assert_eq!(warned(line), !json, "S2: {}", String::from_utf8_lossy(line));
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
fn s2_hand_picked_edges_in_the_costly_fields_agree() {
    let edges: [&[u8]; 7] = [
        br#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"\ud800"}]}}"#,
        br#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"a"}],"content":[1e400]}}"#,
        br#"{"type":"message_update","message":{"content":[{"text":"\udc00"}]}}"#,
        br#"{"type":"tool_execution_start","toolCallId":"t","args":{"path":"\ud83d\ude00","n":1e999}}"#,
        br#"{"type":"tool_execution_end","toolCallId":"t","result":{"content":[{"type":"text","text":"x"}]}} x"#,
        b"{\"type\":\"message_end\",\"message\":{\"content\":[{\"text\":\"\xff\"}]}}",
        br#"{"message":{"content":[]},"type":"message_end","type":"agent_end"}"#,
    ];
    for line in edges {
        check(line).unwrap();
    }
}
