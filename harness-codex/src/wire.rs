//! Borrowed, typed views of `codex exec --json` lines: the parse phase of the normalizer.
//!
//! Each view is declared once with `json_view!`, which makes both of its readers. The
//! normalizer reads each line through the core's entry point (`json::read_line_into`): in
//! one pass by [`Scan`], the core's fast reader of text that is surely JSON: it keeps
//! the fields the X rules use, as [`Loose`] values (a repeated key keeps its last
//! value, as in a `serde_json::Value`), and the item's JSON text, which a recorded item (X2)
//! and the rare events that carry raw JSON need; every string it skips (a command's
//! `aggregated_output` is usually most of the bytes) is checked, escapes and surrogate pairs
//! included, but never decoded. A line the scan is unsure of (a control character, an escaped
//! key, a long number, deep nesting, or any error) is read again the checked way: serde
//! visitors that skip with [`Checked`], so that a line fails exactly where `Value` parsing
//! fails (S2). Both ways read the same parts, which the tests compare.
//!
//! [`Loose`]: harness_agents_core::backend::json::Loose
//! [`Checked`]: harness_agents_core::backend::json::Checked

#[cfg(test)]
use harness_agents_core::backend::NotJson;
use harness_agents_core::backend::json::{JsonView, Member, Scan, Text, depth_exceeds};
use harness_agents_core::backend::reparse;
use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

/// The deepest an item may nest: `serde_json` allows 127 levels in a line, and an item is the
/// second (line, item).
const MAX_ITEM_DEPTH: usize = 127 - 1;

harness_agents_core::json_view! {
    /// The fields of an item that the X rules read.
    pub(crate) struct ItemView<'a> {
        /// `id`.
        id: "id",
        /// `type`.
        kind: "type",
        /// `text` of a message or reasoning item: an agent message's is decoded straight into
        /// its event's shared text (S7).
        text: "text" => Text<'a>,
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

/// An item that is an object: its view and its JSON text.
#[derive(Debug)]
pub(crate) struct Item<'a> {
    /// The fields the rules read.
    pub view: ItemView<'a>,
    /// The item as written.
    pub raw: &'a str,
}

impl<'a> Item<'a> {
    /// An item of `codex exec --json`'s shape read from its text (the app-server decoder
    /// hands the X rules its items in that shape); `None` when the text is not a JSON object.
    pub fn parse(raw: &'a str) -> Option<Item<'a>> {
        let view = harness_agents_core::backend::json::view_of::<ItemView<'a>>(raw)?;
        Some(Item { view, raw })
    }
}

impl Item<'_> {
    /// The item as a `Value`, for the rules that read more than the view (X5, X6) and the
    /// events that carry it (J8).
    pub fn value(&self) -> Value {
        reparse(self.raw.as_bytes())
    }

    /// The item as written.
    pub fn text(&self) -> Box<str> {
        self.raw.into()
    }
}

/// A line's `item`.
#[derive(Debug, Default)]
// Read once per line and kept on the stack: boxing the item cost an allocation per line.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ItemField<'a> {
    /// No `item`.
    #[default]
    Absent,
    /// An object.
    Object(Item<'a>),
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

/// A line's `item` as a field of [`LineParts`]: its view and its text, read in one pass.
impl<'de> Member<'de> for ItemField<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        let raw = <&'de RawValue>::deserialize(deserializer)?.get();
        // Taking the text skips the item unchecked; reading its view checks it, but counts
        // nesting from the item, which `Value` counts from the line.
        if depth_exceeds(raw, MAX_ITEM_DEPTH) {
            return Err(de::Error::custom("recursion limit exceeded"));
        }
        let mut reader = serde_json::Deserializer::from_str(raw);
        let view = ItemView::view(&mut reader).map_err(de::Error::custom)?;
        *self = ItemField::of(view, raw);
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, costly: bool) -> Option<()> {
        if scan.peek()? != b'{' {
            scan.skip()?;
            *self = ItemField::Other;
            return Some(());
        }
        // Read in place: moving the view costs more than reading most of it.
        *self = ItemField::Object(Item {
            view: ItemView::default(),
            raw: "",
        });
        let ItemField::Object(item) = self else {
            return None;
        };
        let ((), raw) = scan.with_text(|scan| item.view.scan_members(scan, costly))?;
        item.raw = raw;
        Some(())
    }
}

impl<'a> ItemField<'a> {
    /// The field of an item read as `view` (`None` when not an object) from `raw`.
    fn of(view: Option<ItemView<'a>>, raw: &'a str) -> Self {
        match view {
            Some(view) => ItemField::Object(Item { view, raw }),
            None => ItemField::Other,
        }
    }
}

harness_agents_core::json_view! {
    /// The fields of a line the X rules read.
    pub(crate) struct LineParts<'a> {
        /// `type`.
        kind: "type",
        /// `thread_id` (X1).
        thread_id: "thread_id",
        /// `item` (X2).
        item: "item" => ItemField<'a>,
        /// `usage`, in the order of [`USAGE_NAMES`], when an object (O3).
        usage: "usage"[USAGE_NAMES],
        /// `error.message` of `turn.failed`, when `error` is an object (X7).
        error_message: "error"."message",
        /// `message` of a top-level `error` line (X7).
        message: "message",
    }
}

/// Reads into `parts` (all default) the parts of a line that starts with `{` through the
/// core's entry point, as the normalizer reads a line; `NotJson` when it is not a JSON object.
#[cfg(test)]
fn parse<'a>(text: &'a str, parts: &mut LineParts<'a>) -> Result<(), NotJson> {
    let mut view = None;
    harness_agents_core::backend::json::read_line_into(text.as_bytes(), &mut view, false)?;
    *parts = view.ok_or(NotJson)?;
    Ok(())
}

/// The fast path alone: reads into `parts` (all default) the parts of a line that is surely
/// JSON ([`Scan`]), in one pass that keeps the item's text; `None` when unsure, `parts` then
/// partly read. It reads exactly what [`parse_checked`] reads, which the tests compare.
#[cfg(test)]
fn scan<'a>(text: &'a str, parts: &mut LineParts<'a>) -> Option<()> {
    harness_agents_core::backend::json::scan_into(text, parts, false)
}

/// The checked path alone: reads the parts of a line through `serde_json`; `None` when it is
/// not valid JSON (S2).
#[cfg(test)]
fn parse_checked(text: &str) -> Option<LineParts<'_>> {
    harness_agents_core::backend::json::view_of(text)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The parts as `Debug` text (borrowed and owned strings print alike).
    fn shown(parts: Option<LineParts<'_>>) -> Option<String> {
        parts.map(|parts| format!("{parts:?}"))
    }

    /// The fast path alone.
    fn scanned(text: &str) -> Option<LineParts<'_>> {
        let mut parts = LineParts::default();
        scan(text, &mut parts).map(|()| parts)
    }

    /// Both paths, as the normalizer reads a line.
    fn parsed(text: &str) -> Option<LineParts<'_>> {
        let mut parts = LineParts::default();
        parse(text, &mut parts).ok().map(|()| parts)
    }

    /// S2: the fast path accepts only lines `Value` accepts and reads them exactly as the checked
    /// path does; `parse` accepts exactly what `Value` accepts.
    fn check_line(text: &str) {
        let value = serde_json::from_str::<Value>(text).is_ok();
        assert_eq!(parsed(text).is_some(), value, "{text}");
        if let Some(parts) = scanned(text) {
            assert!(value, "scanned a line that is not JSON: {text}");
            assert_eq!(shown(Some(parts)), shown(parse_checked(text)), "{text}");
        }
    }

    /// Every recorded Codex line takes the fast path, and it reads what the checked path reads.
    #[test]
    fn s2_every_recorded_line_is_scanned_as_the_checked_path_reads_it() {
        let mut lines = 0;
        for (path, bytes) in fixtures::recordings("codex") {
            let name = path.display();
            for text in std::str::from_utf8(&bytes).unwrap().lines() {
                if serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object()) {
                    let scanned = shown(scanned(text));
                    assert!(scanned.is_some(), "{name}: not scanned: {text}");
                    assert_eq!(scanned, shown(parse_checked(text)), "{name}: {text}");
                    lines += 1;
                }
            }
        }
        assert!(lines > 200, "{lines}");
    }

    #[test]
    fn s2_edge_lines_read_alike_on_both_paths() {
        for text in [
            r#"{"type":"item.completed","item":{"id":"a","type":"command_execution","command":"bash -lc 'echo \"hi\"'","aggregated_output":"x\ny\u00e9\ud83d\ude00\t","exit_code":0,"status":"completed"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","type":"reasoning","text":"\ud800"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","type":"reasoning","aggregated_output":"\udc00"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","type":"reasoning","aggregated_output":"\ud83d\u0041"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","type":"x","aggregated_output":"\ud83dx"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","type":"x","aggregated_output":"\\ud800"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","exit_code":-0,"type":"x"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","exit_code":1e400,"type":"x"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","exit_code":12345678901234567890123,"type":"x"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","exit_code":2.5e-3,"type":"x"}}"#,
            r#"{"type":"item.completed","item":{"id":"a","t\u0079pe":"x"}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":18446744073709551615,"output_tokens":-1}}"#,
            r#"{"type":"turn.completed","usage":{"input_tokens":1},"usage":[1]}"#,
            r#"{"type":"turn.failed","error":"x","error":{"message":"m\n"}}"#,
            "{\"type\":\"error\",\t\"message\":\"x\"}",
            r#" {"type" : "item.started" , "item" : {"id":"a","type":"todo_list"} } "#,
            r#"{"type":"item.started","item":{"id":"a","type":"todo_list"}} x"#,
            r#"{"type":"item.started","item":7,"item":{"id":"a"},"item":null}"#,
        ] {
            check_line(text);
        }
        let deep = |levels: usize| {
            format!(
                r#"{{"type":"item.started","item":{{"a":{}0{}}}}}"#,
                "[".repeat(levels),
                "]".repeat(levels)
            )
        };
        // Control characters past the first 64 bytes of a string.
        for control in ['\u{0}', '\u{1f}', '\t', '\u{7f}'] {
            let output = format!("{}{control}{}", "a\\n".repeat(40), "b".repeat(100));
            check_line(&format!(
                r#"{{"type":"item.completed","item":{{"id":"a","type":"x","aggregated_output":"{output}"}}}}"#
            ));
        }
        for levels in [90, 98, 99, 100, 124, 125, 126, 127] {
            check_line(&deep(levels));
        }
    }

    /// Lines made of JSON pieces, many of them almost JSON.
    fn pieces() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\"",
            "\\",
            "u",
            "d800",
            "dc00",
            "D83D",
            "DE00",
            "00e9",
            "n",
            "\"type\"",
            "\"item\"",
            "\"id\"",
            "\"text\"",
            "\"usage\"",
            "\"item.started\"",
            "\"item.completed\"",
            "\"x\"",
            "0",
            "1",
            "-",
            ".",
            "e",
            "e400",
            "99",
            "null",
            "true",
            "\t",
            "é",
            "\"\\n\"",
            "\"\\ud83d\\ude00\"",
            "\"\\ud800\"",
        ]);
        prop::collection::vec(piece, 0..40).prop_map(|pieces| {
            format!(
                r#"{{"type":"item.completed","item":{{"id":{}}}}}"#,
                pieces.concat()
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn s2_scan_and_checked_path_agree_with_value(text in pieces()) {
            check_line(&text);
        }

        #[test]
        fn s2_any_json_value_in_an_item_reads_alike(value in arb_json()) {
            let text = format!(r#"{{"type":"item.started","item":{{"id":"i","type":"x","text":{value},"rest":{value}}},"other":{value}}}"#);
            check_line(&text);
        }
    }

    /// JSON text of any value, with escapes and numbers of every kind.
    fn arb_json() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            any::<bool>().prop_map(|b| b.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| serde_json::to_string(&n).unwrap()),
            "-?[0-9]{1,25}(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?",
            any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
            "\"([a-z]|\\\\[nt\"\\\\/bfr]|\\\\u[dD][89aAbBcCdDeEfF][0-9a-fA-F]{2}|\\\\u00[0-9a-f]{2})*\"",
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec(("[a-z]{1,3}", inner), 0..4).prop_map(|v| {
                    let members: Vec<String> =
                        v.into_iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_as_value_does() {
        let text = r#"{"type":"x","type":"item.completed","item":5,"item":{"id":"a","id":"b","type":"reasoning"}}"#;
        let parts = parsed(text).unwrap_or_default();
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
                parsed(&text).is_some(),
                value,
                "{}",
                &text[..60.min(text.len())]
            );
        }
    }
}
