//! Borrowed, typed views of `codex exec --json` lines: the parse phase of the normalizer.
//!
//! One checked pass over a line reads the fields the X rules use and skips the rest with
//! [`Checked`] (a command's `aggregated_output`, usually most of the bytes, is never copied).
//! Every field is [`Loose`] and a repeated key keeps its last value, as in a
//! `serde_json::Value`, so a view fails exactly where `Value` parsing fails (S2). The item is
//! also kept as its JSON text, which a recorded item (X2) and the rare events that carry raw
//! JSON need.

use std::fmt;

use harness_core::backend::json::{
    Checked, FieldsSeed, JsonView, Key, Loose, ViewSeed, depth_exceeds,
};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

/// The deepest an item may nest: `serde_json` allows 127 levels in a line, and an item is the
/// second (line, item).
const MAX_ITEM_DEPTH: usize = 127 - 1;

harness_core::json_view! {
    /// The fields of an item that the X rules read.
    pub(crate) struct ItemView<'a> {
        /// `id`.
        id: "id",
        /// `type`.
        kind: "type",
        /// `text` of a message or reasoning item.
        text: "text",
        /// `command` of a `command_execution`.
        command: "command",
        /// `status`.
        status: "status",
        /// `exit_code` of a `command_execution`.
        exit_code: "exit_code",
        /// `server` of an `mcp_tool_call`.
        server: "server",
        /// `tool` of an `mcp_tool_call`.
        tool: "tool",
        /// `message` of an `error` item.
        message: "message",
    }
}

/// An item that is an object: its view, and its JSON text when it was kept.
#[derive(Debug)]
pub(crate) struct Item<'a> {
    /// The fields the rules read.
    pub view: ItemView<'a>,
    /// The item as written, when kept ([`ItemMode::Kept`]).
    pub raw: Option<&'a str>,
    /// The whole line.
    pub line: &'a str,
}

impl Item<'_> {
    /// The item as a `Value`, for the rules that read more than the view (X5, X6) and the
    /// events that carry it (J8); taken from the line when its text was not kept.
    pub fn value(&self) -> Value {
        match self.raw {
            Some(raw) => reparse(raw),
            None => match reparse(self.line) {
                Value::Object(mut line) => line.remove("item").unwrap_or(Value::Null),
                _ => Value::Null,
            },
        }
    }

    /// The item as written; read again from the line when it was not kept.
    pub fn text(&self) -> Box<str> {
        match self.raw {
            Some(raw) => raw.into(),
            None => self.value().to_string().into(),
        }
    }
}

/// How a line's item is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ItemMode {
    /// Its view only, in the same pass as the line: an `item.completed` line, whose item is
    /// needed as text only by rare item types.
    InPlace,
    /// Its text kept, then its view read from that text: an item that may be recorded (X2).
    Kept,
}

/// A line's `item`.
#[derive(Debug, Default)]
pub(crate) enum ItemField<'a> {
    /// No `item`.
    #[default]
    Absent,
    /// An object.
    Object(Box<Item<'a>>),
    /// Any other value.
    Other,
}

/// The token names of a `turn.completed` `usage` (O3).
pub(crate) const USAGE_NAMES: [&str; 4] = [
    "input_tokens",
    "cached_input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
];

/// The fields of a line the X rules read.
#[derive(Debug, Default)]
pub(crate) struct LineParts<'a> {
    /// `type`.
    pub kind: Loose<'a>,
    /// `thread_id` (X1).
    pub thread_id: Loose<'a>,
    /// `item` (X2).
    pub item: ItemField<'a>,
    /// `usage`, in the order of [`USAGE_NAMES`], when an object (O3).
    pub usage: Option<[Loose<'a>; 4]>,
    /// `error.message` of `turn.failed`, when `error` is an object (X7).
    pub error_message: Loose<'a>,
    /// `message` of a top-level `error` line (X7).
    pub message: Loose<'a>,
}

struct LineSeed<'l> {
    mode: ItemMode,
    line: &'l str,
}

impl<'de> DeserializeSeed<'de> for LineSeed<'de> {
    type Value = Option<LineParts<'de>>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct LineVisitor<'l>(LineSeed<'l>);
        impl<'de> Visitor<'de> for LineVisitor<'de> {
            type Value = Option<LineParts<'de>>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut parts = LineParts::default();
                while let Some(Key(key)) = map.next_key()? {
                    match key.as_ref() {
                        "type" => parts.kind = map.next_value()?,
                        "thread_id" => parts.thread_id = map.next_value()?,
                        "message" => parts.message = map.next_value()?,
                        "usage" => parts.usage = map.next_value_seed(FieldsSeed(&USAGE_NAMES))?,
                        "error" => {
                            let fields = map.next_value_seed(FieldsSeed(&["message"]))?;
                            parts.error_message = fields.map(|[m]| m).unwrap_or_default();
                        }
                        "item" if self.0.mode == ItemMode::InPlace => {
                            let view = map.next_value_seed(ViewSeed::<ItemView<'de>>::new())?;
                            parts.item = match view {
                                Some(view) => ItemField::Object(Box::new(Item {
                                    view,
                                    raw: None,
                                    line: self.0.line,
                                })),
                                None => ItemField::Other,
                            };
                        }
                        "item" => {
                            let raw = map.next_value::<&'de RawValue>()?.get();
                            // Taking the text skips the item unchecked; reading its view checks
                            // it, but counts nesting from the item, which `Value` counts from
                            // the line.
                            if depth_exceeds(raw, MAX_ITEM_DEPTH) {
                                return Err(de::Error::custom("recursion limit exceeded"));
                            }
                            let mut reader = serde_json::Deserializer::from_str(raw);
                            let view = ItemView::view(&mut reader).map_err(de::Error::custom)?;
                            parts.item = match view {
                                Some(view) => ItemField::Object(Box::new(Item {
                                    view,
                                    raw: Some(raw),
                                    line: self.0.line,
                                })),
                                None => ItemField::Other,
                            };
                        }
                        _ => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(Some(parts))
            }
        }
        deserializer.deserialize_map(LineVisitor(self))
    }
}

/// Reads the parts of a line that starts with `{`; `None` when it is not valid JSON (S2).
pub(crate) fn parse(text: &str) -> Option<LineParts<'_>> {
    // Codex writes `type` first: a completed item is read in place. Should the line be another
    // type after all (a repeated `type` key), the item is recovered from the line when needed.
    let mode = if text.starts_with(r#"{"type":"item.completed""#) {
        ItemMode::InPlace
    } else {
        ItemMode::Kept
    };
    let mut reader = serde_json::Deserializer::from_str(text);
    let seed = LineSeed { mode, line: text };
    let parts = seed.deserialize(&mut reader).ok()??;
    reader.end().ok()?;
    Some(parts)
}

/// Parses JSON text the normalizer already knows to be valid; `null` should that ever fail,
/// rather than a panic.
pub(crate) fn reparse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_value_does() {
        let text = r#"{"type":"x","type":"item.completed","item":5,"item":{"id":"a","id":"b","type":"reasoning"}}"#;
        let parts = parse(text).unwrap_or_default();
        assert_eq!(parts.kind.as_str(), Some("item.completed"));
        let ItemField::Object(item) = parts.item else {
            panic!("the last item is an object");
        };
        assert_eq!(item.view.id.as_str(), Some("b"));
    }

    #[test]
    fn a_view_fails_exactly_where_value_fails() {
        let deep = |levels: usize| {
            format!(
                r#"{{"type":"item.completed","item":{{"a":{}0{}}}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        for text in [
            deep(125),
            deep(126),
            r#"{"type":"item.completed","item":{"text":"\ud800"}}"#.to_string(),
            r#"{"type":"turn.completed","usage":{"input_tokens":1e400}}"#.to_string(),
            r#"{"type":"x","other":[1,2,"\ud83d\ude00"]}"#.to_string(),
        ] {
            let value = serde_json::from_str::<Value>(&text).is_ok();
            assert_eq!(
                parse(&text).is_some(),
                value,
                "{}",
                &text[..60.min(text.len())]
            );
        }
    }
}
