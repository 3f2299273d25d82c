//! The parse phase: a borrowed view of one line that reads, in one checked pass, only the
//! fields the G rules use.
//!
//! A line parses into a `serde_json::Value` exactly when it parses into a [`LineView`] (S2):
//! every member is read through `serde_json`'s own deserializer, the fields kept as
//! [`Loose`] (scalars) or, for a tool use's `parameters`, as a `Value`, and every other member
//! skipped with [`Checked`], which goes through the same checks a `Value` does. A repeated key
//! keeps its last value, as in a `Value`. Lines whose events need the line itself as `raw` are
//! parsed again into a `Value` when (rarely) that happens.

use std::fmt;

use harness_core::backend::json::{Checked, FieldsSeed, Key, Loose};
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::Value;

/// The top-level fields the rules read; every one absent unless the line has it.
#[derive(Debug, Default)]
pub(crate) struct LineView<'a> {
    /// `type`.
    pub kind: Loose<'a>,
    /// `session_id` of `init`.
    pub session_id: Loose<'a>,
    /// `role` of `message`.
    pub role: Loose<'a>,
    /// `content` of `message`.
    pub content: Loose<'a>,
    /// `tool_name` of `tool_use`.
    pub tool_name: Loose<'a>,
    /// `tool_id` of `tool_use` and `tool_result`.
    pub tool_id: Loose<'a>,
    /// `parameters` of `tool_use`, whole.
    pub parameters: Option<Value>,
    /// `status` of `tool_result` and `result`.
    pub status: Loose<'a>,
    /// `output` of `tool_result`.
    pub output: Loose<'a>,
    /// `error.message` of `tool_result` and `result` (absent when `error` is no object).
    pub error_message: Loose<'a>,
    /// `severity` of `error`.
    pub severity: Loose<'a>,
    /// `message` of `error`.
    pub message: Loose<'a>,
    /// `stats` of `result`, when an object: `input_tokens`, `output_tokens`, `cached`,
    /// `duration_ms`.
    pub stats: Option<[Loose<'a>; 4]>,
}

/// The names [`LineView::stats`] reads, in its order.
pub(crate) const STATS: [&str; 4] = ["input_tokens", "output_tokens", "cached", "duration_ms"];

impl<'de: 'a, 'a> Deserialize<'de> for LineView<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LineVisitor;

        impl<'de> Visitor<'de> for LineVisitor {
            type Value = LineView<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut view = LineView::default();
                while let Some(Key(key)) = map.next_key()? {
                    match &*key {
                        "type" => view.kind = map.next_value()?,
                        "session_id" => view.session_id = map.next_value()?,
                        "role" => view.role = map.next_value()?,
                        "content" => view.content = map.next_value()?,
                        "tool_name" => view.tool_name = map.next_value()?,
                        "tool_id" => view.tool_id = map.next_value()?,
                        "parameters" => view.parameters = Some(map.next_value()?),
                        "status" => view.status = map.next_value()?,
                        "output" => view.output = map.next_value()?,
                        "severity" => view.severity = map.next_value()?,
                        "message" => view.message = map.next_value()?,
                        "error" => {
                            view.error_message =
                                match map.next_value_seed(FieldsSeed(&["message"]))? {
                                    Some([message]) => message,
                                    None => Loose::Absent,
                                }
                        }
                        "stats" => view.stats = map.next_value_seed(FieldsSeed(&STATS))?,
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(view)
            }
        }

        deserializer.deserialize_map(LineVisitor)
    }
}

/// A line's view, when it is a JSON object; `None` when it is anything else (valid JSON or
/// not: the caller then takes the `Value` path, which tells the two apart).
pub(crate) fn view(line: &[u8]) -> Option<LineView<'_>> {
    let first = line
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))?;
    if *first != b'{' {
        return None;
    }
    serde_json::from_slice(line).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_view_reads_the_rules_fields_and_the_last_of_a_repeated_key() {
        let line = br#"{"type":"x","type":"result","status":"error","error":{"type":"t","message":"m\u00e9"},"stats":{"input_tokens":3,"models":{"a":[1,{"b":null}]},"cached":1.5},"parameters":{"p":[1]},"other":[{"deep":"\ud83d\ude00"}]}"#;
        let view = view(line).unwrap();
        assert_eq!(view.kind.as_str(), Some("result"));
        assert_eq!(view.status.as_str(), Some("error"));
        assert_eq!(view.error_message.as_str(), Some("mé"));
        let stats = view.stats.unwrap();
        assert!(matches!(&stats[0], Loose::Number(n) if n.as_u64() == Some(3)));
        assert!(matches!(&stats[2], Loose::Number(n) if n.as_f64() == Some(1.5)));
        assert_eq!(stats[1], Loose::Absent);
        assert_eq!(view.parameters, Some(serde_json::json!({"p": [1]})));
    }

    #[test]
    fn the_view_accepts_exactly_the_lines_a_value_accepts() {
        let lines: [&[u8]; 9] = [
            br#"{"type":"init","x":[1e400]}"#,
            br#"{"type":"init","x":"\ud800"}"#,
            br#"{"type":"init","parameters":{"a":1e400}}"#,
            br#"{"type":"init","stats":{"models":"\udc00"}}"#,
            br#"{"type":"init"} x"#,
            br#"{"type":"init",}"#,
            br#"{"type":"init","a":"b"}"#,
            b"\xef\xbb\xbf{}",
            br#"{"type":"tool_use","tool_id":"t","parameters":{"a":[[[[1]]]]}}"#,
        ];
        for line in lines {
            let value = serde_json::from_slice::<Value>(line).is_ok();
            assert_eq!(
                view(line).is_some(),
                value,
                "{}",
                String::from_utf8_lossy(line)
            );
        }
        let deep = format!("{{\"x\":{}{}}}", "[".repeat(127), "]".repeat(127));
        assert!(serde_json::from_str::<Value>(&deep).is_err());
        assert!(view(deep.as_bytes()).is_none());
        let ok = format!("{{\"x\":{}{}}}", "[".repeat(126), "]".repeat(126));
        assert!(serde_json::from_str::<Value>(&ok).is_ok());
        assert!(view(ok.as_bytes()).is_some());
    }
}
