//! The parse phase: one line to a pruned `serde_json::Value` holding only the fields the P
//! rules read, checked exactly as parsing the whole line into a `Value` would (S2).
//!
//! Most of a `tool_use` line's bytes are the tool's output and metadata (file contents, diffs),
//! which no rule reads. Building a `Value` for them is most of the cost of a line, so the fields
//! outside [`LINE`] are skipped with [`Checked`], which makes every check a `Value` makes
//! (string escapes, surrogate pairs, number ranges, nesting depth) without keeping anything.
//! A line is therefore JSON here exactly when it is JSON for `serde_json::Value`; only its
//! shape is smaller. A repeated key keeps its last value, as in a `Value`. The rare events that
//! carry the original JSON (`unknown`, J8) parse the whole line again.

use std::fmt;

use harness_core::backend::NotJson;
use harness_core::backend::json::Checked;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Which fields of an object to keep.
#[derive(Debug)]
pub(crate) enum Keep {
    /// The whole value.
    All,
    /// Only these keys of an object (each with what to keep of it); a value that is not an
    /// object is kept whole.
    Fields(&'static [(&'static str, Keep)]),
}

/// What the rules read of a line (P1-P13).
pub(crate) const LINE: Keep = Keep::Fields(&[
    ("type", Keep::All),
    ("sessionID", Keep::All),
    ("error", Keep::All),
    (
        "part",
        Keep::Fields(&[
            ("type", Keep::All),
            ("text", Keep::All),
            ("messageID", Keep::All),
            ("synthetic", Keep::All),
            ("tool", Keep::All),
            ("callID", Keep::All),
            ("reason", Keep::All),
            ("tokens", Keep::All),
            ("cost", Keep::All),
            (
                "state",
                Keep::Fields(&[
                    ("status", Keep::All),
                    ("input", Keep::All),
                    ("error", Keep::All),
                    (
                        "metadata",
                        Keep::Fields(&[
                            ("exit", Keep::All),
                            ("exists", Keep::All),
                            ("dir", Keep::All),
                            ("display", Keep::Fields(&[("type", Keep::All)])),
                        ]),
                    ),
                ]),
            ),
        ]),
    ),
]);

/// Only a tool part's `state.output`: read for the few rules that need it (P6a, P6c), instead
/// of building the whole line again.
pub(crate) const OUTPUT: Keep = Keep::Fields(&[(
    "part",
    Keep::Fields(&[("state", Keep::Fields(&[("output", Keep::All)]))]),
)]);

/// Parses `line` keeping what `keep` says; `Err` exactly when it is not JSON (S2).
pub(crate) fn parse(line: &[u8], keep: &'static Keep) -> Result<Value, NotJson> {
    let mut de = serde_json::Deserializer::from_slice(line);
    let value = Pruned(keep).deserialize(&mut de).map_err(|_| NotJson)?;
    de.end().map_err(|_| NotJson)?;
    Ok(value)
}

/// A seed that deserializes one value, pruned by its [`Keep`].
#[derive(Clone, Copy)]
struct Pruned(&'static Keep);

impl<'de> DeserializeSeed<'de> for Pruned {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        match self.0 {
            Keep::All => serde::Deserialize::deserialize(deserializer),
            Keep::Fields(fields) => deserializer.deserialize_any(PrunedVisitor(fields)),
        }
    }
}

struct PrunedVisitor(&'static [(&'static str, Keep)]);

impl<'de> Visitor<'de> for PrunedVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        // As `Value` does: a finite float (serde_json never yields another).
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // Not the object the selection expects: kept whole, as `Value` would keep it.
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut kept = Map::new();
        while let Some(field) = map.next_key_seed(Field(self.0))? {
            match field {
                Some((name, keep)) => {
                    let value = map.next_value_seed(Pruned(keep))?;
                    kept.insert((*name).to_string(), value);
                }
                None => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(Value::Object(kept))
    }
}

/// A key, looked up among the selected fields without being copied (serde_json hands a key
/// without escapes over borrowed from the line).
#[derive(Clone, Copy)]
struct Field(&'static [(&'static str, Keep)]);

type Selected = Option<&'static (&'static str, Keep)>;

impl<'de> DeserializeSeed<'de> for Field {
    type Value = Selected;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Selected, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Field {
    type Value = Selected;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E>(self, key: &str) -> Result<Selected, E> {
        Ok(self.0.iter().find(|(name, _)| *name == key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(line: &str) -> Result<Value, NotJson> {
        harness_core::backend::parse_value(line.as_bytes())
    }

    #[test]
    fn a_line_is_json_exactly_when_value_says_so() {
        let cases = [
            r#"{"type":"tool_use","part":{"state":{"output":"ok","metadata":{"preview":[1,2]}}}}"#,
            r#"{"type":"tool_use","part":{"state":{"output":"\ud800"}}}"#,
            r#"{"type":"tool_use","part":{"state":{"output":"\ud83d\ude00"}}}"#,
            r#"{"type":"x","timestamp":1e400}"#,
            r#"{"type":"x","timestamp":1e30}"#,
            r#"{"type":"x","part":{"id":[[[[]]]]}} trailing"#,
            r#"{"type":"x","part":{"id":"a"},}"#,
            "[1,2,{\"a\":\"b\"}]",
            "7",
            r#""just a string""#,
        ];
        for case in cases {
            assert_eq!(
                parse(case.as_bytes(), &LINE).is_ok(),
                full(case).is_ok(),
                "{case}"
            );
        }
        let deep = format!(
            "{{\"type\":\"x\",\"part\":{{\"id\":{}{}}}}}",
            "[".repeat(130),
            "]".repeat(130)
        );
        assert!(full(&deep).is_err());
        assert!(parse(deep.as_bytes(), &LINE).is_err());
    }

    #[test]
    fn only_the_selected_fields_are_kept_and_a_repeated_key_keeps_its_last_value() {
        let line = r#"{"type":"a","type":"tool_use","timestamp":5,"part":{"tool":"read","id":"prt","state":{"status":"completed","output":"big","metadata":{"exit":0,"preview":"x","display":{"type":"file","text":"t"}}}}}"#;
        assert_eq!(
            parse(line.as_bytes(), &LINE).ok(),
            Some(
                serde_json::json!({"type": "tool_use", "part": {"tool": "read", "state": {
                "status": "completed", "metadata": {"exit": 0, "display": {"type": "file"}}}}})
            )
        );
        assert_eq!(
            parse(b"[1,{\"x\":2}]", &LINE).ok(),
            full("[1,{\"x\":2}]").ok()
        );
    }
}
