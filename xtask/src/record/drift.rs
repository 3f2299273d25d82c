//! Drift between two recordings of the same scenario: pure functions, no I/O.
//!
//! Two views are compared. The *shape* of the raw stream: its top-level `type`s, `system`
//! subtypes, content block types, tool names, Codex item types and the shape of each tool's `tool_use_result`
//! (keys and JSON types, two levels deep); anything new or vanished is drift. And the
//! *normalized events* (the `harness-claude` normalizer's events and outcome), compared field
//! by field with [`fixtures::compare`] after volatile values are neutralized:
//!
//! - ids: every string held by a key ending in `id` (`session_id`, `uuid`, `request_id`,
//!   `task_id`, `agentId`, tool use ids, ...) in the raw stream becomes `<idN>`, numbered by
//!   first appearance, wherever it occurs in the events (so a background task's id inside a
//!   command's output is neutral too, while "the same id in the same places" still counts);
//! - timestamps, durations and costs: keys named `*duration*`, `*_ms`, `*time`, `*timestamp*`
//!   or `*cost*` are dropped at any depth (outcome metrics; retry delays and task end times in
//!   the raw lines of `unknown` events).

use std::collections::{BTreeMap, BTreeSet};

use harness_agents_claude::ClaudeNormalizer;
use harness_agents_core::{LineSplitter, Normalizer, NormalizerConfig, OutcomeLine};
use serde_json::Value;

/// What kinds of things a raw stream holds.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Shape {
    /// `label -> values`: `top-level type`, `system subtype`, `content block type`, `tool`,
    /// `tool_use_result shape`, `codex item type`.
    pub sets: BTreeMap<&'static str, BTreeSet<String>>,
}

/// The shape of a raw Claude Code or Codex stream.
pub fn shape(stream: &str) -> Shape {
    let mut shape = Shape::default();
    let mut tools: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |label: &'static str, value: String| {
        shape.sets.entry(label).or_default().insert(value);
    };
    for line in stream.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            add("top-level type", "<not JSON>".into());
            continue;
        };
        let kind = value
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        add("top-level type", kind.to_string());
        if kind == "system" {
            let subtype = value
                .get("subtype")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            add("system subtype", subtype.to_string());
        }
        // Codex: `item.started` / `item.updated` / `item.completed` carry an item with a type.
        if let Some(item_type) = value.pointer("/item/type").and_then(Value::as_str) {
            add("codex item type", item_type.to_string());
        }
        let content = value
            .pointer("/message/content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for block in &content {
            let btype = block
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            add("content block type", format!("{kind}/{btype}"));
            if btype == "tool_use" {
                let name = block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("<none>");
                add("tool", name.to_string());
                if let Some(id) = block.get("id").and_then(Value::as_str) {
                    tools.insert(id.to_string(), name.to_string());
                }
            }
        }
        if let Some(result) = value.get("tool_use_result") {
            let tool = content
                .iter()
                .find_map(|b| b.get("tool_use_id").and_then(Value::as_str))
                .and_then(|id| tools.get(id))
                .map_or("<unknown tool>", String::as_str);
            add(
                "tool_use_result shape",
                format!("{tool}: {}", signature(result, 2)),
            );
        }
    }
    shape
}

/// The JSON type of a value, with the keys of objects down to `depth` levels.
fn signature(value: &Value, depth: usize) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(items) => match items.first() {
            Some(first) if depth > 0 => format!("[{}]", signature(first, depth - 1)),
            _ => "array".into(),
        },
        Value::Object(map) if depth > 0 => {
            // Sorted, so the signature does not depend on the key order (serde_json keeps it
            // when a dependency turns on `preserve_order`).
            let mut fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}: {}", signature(v, depth - 1)))
                .collect();
            fields.sort();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Object(_) => "object".into(),
    }
}

/// Lines saying what is new or vanished in `new` compared with `old`.
pub fn shape_drift(old: &Shape, new: &Shape) -> Vec<String> {
    let empty = BTreeSet::new();
    let labels: BTreeSet<&str> = old.sets.keys().chain(new.sets.keys()).copied().collect();
    let mut out = Vec::new();
    for label in labels {
        let (o, n) = (
            old.sets.get(label).unwrap_or(&empty),
            new.sets.get(label).unwrap_or(&empty),
        );
        out.extend(n.difference(o).map(|v| format!("new {label}: {v}")));
        out.extend(o.difference(n).map(|v| format!("vanished {label}: {v}")));
    }
    out
}

/// The normalized events and outcome of a raw Claude Code stream (and its stderr), one JSON
/// line each.
pub fn normalize(stream: &[u8], stderr: &[u8]) -> String {
    normalize_with(
        ClaudeNormalizer::new(NormalizerConfig::default()),
        stream,
        stderr,
    )
}

/// The same with any backend's normalizer.
pub fn normalize_with(mut normalizer: impl Normalizer, stream: &[u8], stderr: &[u8]) -> String {
    let mut events = Vec::new();
    for (bytes, is_stderr) in [(stream, false), (stderr, true)] {
        let mut splitter = LineSplitter::new();
        let mut push = |line: &[u8]| {
            if is_stderr {
                normalizer.push_stderr(line, &mut events);
            } else {
                normalizer.push_line(line, &mut events);
            }
        };
        splitter.push(bytes, &mut push);
        splitter.finish(&mut push);
    }
    let outcome = normalizer.finish(&mut events);
    let mut text = String::new();
    for event in &events {
        text.push_str(&serde_json::to_string(event).unwrap_or_default());
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(&OutcomeLine::new(&outcome)).unwrap_or_default());
    text.push('\n');
    text
}

/// Every id-like string of a raw stream, in order of first appearance.
pub fn ids(stream: &str) -> Vec<String> {
    fn walk(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map {
                    let lower = key.to_ascii_lowercase();
                    if lower.ends_with("id")
                        && let Some(s) = v.as_str()
                        && s.len() >= 6
                        && !out.iter().any(|o| o == s)
                    {
                        out.push(s.to_string());
                    }
                    walk(v, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for line in stream.lines() {
        if let Ok(value) = serde_json::from_str::<Value>(line) {
            walk(&value, &mut out);
        }
    }
    out
}

/// `events` (normalized lines) with the ids of their raw stream neutralized and the outcome's
/// durations and costs dropped.
pub fn neutral(events: &str, raw_ids: &[String]) -> String {
    let mut text = events.to_string();
    // Longest first, so an id that contains another is replaced whole.
    let mut order: Vec<(usize, &String)> = raw_ids.iter().enumerate().collect();
    order.sort_by_key(|(_, id)| std::cmp::Reverse(id.len()));
    for (n, id) in order {
        text = text.replace(id.as_str(), &format!("<id{}>", n + 1));
    }
    let mut out = String::new();
    for line in text.lines() {
        let mut value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => {
                out.push_str(line);
                out.push('\n');
                continue;
            }
        };
        drop_volatile(&mut value);
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// `text` with RFC 3339 timestamps (`2026-11-30T12:41:22.919781Z`) as `<time>` and the number
/// after `duration_ms: ` as `N`; `None` when it holds neither.
fn neutral_text(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let digits = |from: usize, n: usize| {
        bytes.len() >= from + n && bytes[from..from + n].iter().all(u8::is_ascii_digit)
    };
    let at = |i: usize, c: u8| bytes.get(i) == Some(&c);
    let mut out = String::with_capacity(text.len());
    let (mut i, mut start, mut changed) = (0, 0, false);
    while i < bytes.len() {
        // YYYY-MM-DDTHH:MM:SS[.fff]Z
        if digits(i, 4)
            && at(i + 4, b'-')
            && digits(i + 5, 2)
            && at(i + 7, b'-')
            && digits(i + 8, 2)
            && at(i + 10, b'T')
            && digits(i + 11, 2)
            && at(i + 13, b':')
            && digits(i + 14, 2)
            && at(i + 16, b':')
            && digits(i + 17, 2)
        {
            let mut end = i + 19;
            if at(end, b'.') {
                end += 1;
                while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                    end += 1;
                }
            }
            if at(end, b'Z') {
                end += 1;
            }
            out.push_str(&text[start..i]);
            out.push_str("<time>");
            (i, start, changed) = (end, end, true);
            continue;
        }
        if bytes[i..].starts_with(b"duration_ms: ") && digits(i + 13, 1) {
            let mut end = i + 13;
            while bytes.get(end).is_some_and(u8::is_ascii_digit) {
                end += 1;
            }
            out.push_str(&text[start..i + 13]);
            out.push('N');
            (i, start, changed) = (end, end, true);
            continue;
        }
        i += 1;
    }
    out.push_str(&text[start..]);
    changed.then_some(out)
}

/// Removes timestamps, durations, retry delays and costs, at any depth (the outcome's metrics,
/// and the raw lines that `unknown` events carry).
fn drop_volatile(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|k, _| {
                let k = k.to_ascii_lowercase();
                !(k.contains("duration")
                    || k.ends_with("_ms")
                    // Codex app-server's `startedAtMs`, `emittedAtMs`, and the pid of a
                    // command it runs (`processId`, too short to count as an id).
                    || k.ends_with("atms")
                    || k == "processid"
                    || k.contains("cost")
                    || k.ends_with("time")
                    || k.contains("timestamp"))
            });
            map.values_mut().for_each(drop_volatile);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_volatile),
        // A sub-agent's result text reports its own duration; log lines start with a time.
        Value::String(text) => {
            if let Some(neutral) = neutral_text(text) {
                *text = neutral;
            }
        }
        _ => {}
    }
}

/// Differences between two runs' normalized events, volatile values neutralized on each side
/// with the ids of its own raw stream.
pub fn event_drift(
    old_events: &str,
    old_raw: &str,
    new_events: &str,
    new_raw: &str,
) -> Vec<String> {
    let old = neutral(old_events, &ids(old_raw));
    let new = neutral(new_events, &ids(new_raw));
    match fixtures::compare(&old, &new) {
        Ok(()) => Vec::new(),
        Err(problems) => problems,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// Everything that drifted between two Claude Code recordings of one scenario.
    fn drift(old_raw: &str, old_stderr: &str, new_raw: &str, new_stderr: &str) -> Vec<String> {
        super::super::shared::recording_drift(
            true,
            (std::path::Path::new("/nonexistent"), "x"),
            (old_raw, old_stderr),
            (new_raw, new_stderr),
            |raw, stderr| normalize(raw.as_bytes(), stderr.as_bytes()),
            |old, new| shape_drift(&shape(old), &shape(new)),
        )
    }

    const OLD: &str = r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"sess-aaaa","tools":["Read"]}
{"type":"assistant","message":{"id":"msg_aaaaaa","content":[{"type":"tool_use","id":"toolu_000001","name":"Read","input":{"file_path":"/p/a.txt"}}]},"session_id":"sess-aaaa"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_000001","content":"1\thi"}]},"tool_use_result":{"type":"text","file":{"filePath":"/p/a.txt","numLines":1}},"session_id":"sess-aaaa"}
{"type":"assistant","message":{"id":"msg_bbbbbb","content":[{"type":"text","text":"done"}]},"session_id":"sess-aaaa"}
{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"sess-aaaa","duration_ms":10,"total_cost_usd":0.1}
"#;

    /// The same run with other ids, durations and costs: no drift.
    fn rerun() -> String {
        OLD.replace("sess-aaaa", "sess-zzzz")
            .replace("msg_aaaaaa", "msg_yyyyyy")
            .replace("toolu_000001", "toolu_999999")
            .replace(r#""duration_ms":10"#, r#""duration_ms":99"#)
            .replace("0.1}", "0.2}")
    }

    #[test]
    fn same_run_with_other_ids_and_timings_does_not_drift() {
        assert_eq!(drift(OLD, "", &rerun(), ""), Vec::<String>::new());
    }

    #[test]
    fn a_hand_edit_is_reported_clearly() {
        let edited = rerun()
            .replace(r#""text":"done""#, r#""text":"finished""#)
            .replace(r#""numLines":1"#, r#""numLines":1,"extra":true"#)
            .replace(r#""name":"Read""#, r#""name":"View""#);
        let report = drift(OLD, "", &edited, "");
        assert!(report.contains(&"new tool: View".to_string()), "{report:?}");
        assert!(
            report.contains(&"vanished tool: Read".to_string()),
            "{report:?}"
        );
        assert!(
            report
                .iter()
                .any(|l| l.starts_with("new tool_use_result shape: View: {file: {extra: bool")),
            "{report:?}"
        );
        assert!(
            report
                .iter()
                .any(|l| l.contains("field 'text' expected \"done\", got \"finished\"")),
            "{report:?}"
        );
    }

    #[test]
    fn new_and_vanished_types_and_subtypes() {
        let old = shape("{\"type\":\"system\",\"subtype\":\"init\"}\n{\"type\":\"result\"}\n");
        let new = shape(
            "{\"type\":\"system\",\"subtype\":\"status\"}\n{\"type\":\"result\"}\nnot json\n",
        );
        assert_eq!(
            shape_drift(&old, &new),
            [
                "new system subtype: status",
                "vanished system subtype: init",
                "new top-level type: <not JSON>",
            ]
        );
    }

    #[test]
    fn codex_item_types_are_compared() {
        let old = shape(
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"agent_message\",\"text\":\"hi\"}}\n",
        );
        let new = shape(
            "{\"type\":\"item.completed\",\"item\":{\"id\":\"item_0\",\"type\":\"command_execution\"}}\n",
        );
        assert_eq!(
            shape_drift(&old, &new),
            [
                "new codex item type: command_execution",
                "vanished codex item type: agent_message",
            ]
        );
    }

    #[test]
    fn times_in_text_are_neutral() {
        assert_eq!(
            neutral_text("2026-11-30T12:41:22.919781Z ERROR x; duration_ms: 79, é"),
            Some("<time> ERROR x; duration_ms: N, é".to_string())
        );
        assert_eq!(neutral_text("2026-11-30 12:41 no"), None);
    }

    #[test]
    fn ids_are_neutral_but_structure_counts() {
        let raw = r#"{"session_id":"s-123456","x":{"task_id":"t-abcdef","taskId":"1"}}"#;
        assert_eq!(ids(raw), ["s-123456", "t-abcdef"]);
        let events = "{\"kind\":\"agent\",\"text\":\"task t-abcdef duration_ms: 79\"}\n{\"kind\":\"outcome\",\"session_id\":\"s-123456\",\"metrics\":{\"duration_ms\":5,\"input_tokens\":3,\"total_cost_usd\":1}}\n";
        assert_eq!(
            neutral(events, &ids(raw)),
            "{\"kind\":\"agent\",\"text\":\"task <id2> duration_ms: N\"}\n{\"kind\":\"outcome\",\"metrics\":{\"input_tokens\":3},\"session_id\":\"<id1>\"}\n"
        );
    }
}
