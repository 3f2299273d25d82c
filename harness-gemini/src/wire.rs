//! The parse phase: a borrowed view of one line that reads, in one pass, only the fields the
//! G rules use.
//!
//! The decoder reads each line through the core's entry point ([`read_line`]): the fast
//! reader [`Scan`], exact on the JSON it is sure of, and the checked path through
//! `serde_json` whenever it is unsure (escaped keys, lone surrogates, numbers out of range,
//! control characters, deep nesting), which decides. Both read the same view (the tests
//! compare them).
//!
//! A line parses into a `serde_json::Value` exactly when it parses into a [`LineView`] (S2): on
//! the checked path every member is read through `serde_json`'s own deserializer, the fields
//! kept as [`Loose`] (scalars) and every other member skipped with [`Checked`], which goes
//! through the same checks a `Value` does. A tool use's `parameters` keep, as a `Value`, only
//! the members the tool map reads ([`PARAMS`]); a non-object is `null`, which the tool map
//! treats as every non-object. A repeated key keeps its last value, as in a `Value`. Lines
//! whose events need the line itself as `raw` are parsed again into a `Value` when (rarely)
//! that happens. The view is declared once with `json_view!`, which makes both of its readers.
//!
//! [`Loose`]: harness_agents_core::backend::json::Loose
//! [`Checked`]: harness_agents_core::backend::json::Checked
//! [`read_line`]: harness_agents_core::backend::json::read_line

use harness_agents_core::backend::json::{JsonView, Scan};
use serde::de::MapAccess;
use serde_json::{Map, Value};

harness_agents_core::json_view! {
    /// The top-level fields the rules read; every one absent unless the line has it.
    #[derive(PartialEq)]
    pub(crate) struct LineView<'a> {
        /// `type`.
        kind: "type",
        /// `session_id` of `init`.
        session_id: "session_id",
        /// `role` of `message`.
        role: "role",
        /// `content` of `message`.
        content: "content",
        /// `tool_name` of `tool_use`.
        tool_name: "tool_name",
        /// `tool_id` of `tool_use` and `tool_result`.
        tool_id: "tool_id",
        /// `parameters` of `tool_use`, when an object: only its members named in [`PARAMS`]
        /// (all the tool map reads); every member is still checked.
        parameters: "parameters" => Option<Params>,
        /// `status` of `tool_result` and `result`.
        status: "status",
        /// `output` of `tool_result`.
        output: "output",
        /// `error.message` of `tool_result` and `result` (absent when `error` is no object).
        error_message: "error"."message",
        /// `severity` of `error`.
        severity: "severity",
        /// `message` of `error`.
        message: "message",
        /// `stats` of `result`, when an object: `input_tokens`, `output_tokens`, `cached`,
        /// `duration_ms`.
        stats: "stats"[STATS],
    }
}

/// The members of `parameters` the tool map (G6-G8) reads, whatever the tool; the others
/// (a file's `content`, a replacement's `old_string`, ...) are checked and dropped.
pub(crate) const PARAMS: [&str; 8] = [
    "file_path",
    "start_line",
    "end_line",
    "pattern",
    "dir_path",
    "command",
    "name",
    "todos",
];

/// `parameters` as the tool map sees it: the [`PARAMS`] members of the object (the last of a
/// repeated key, as in a `Value`), each whole.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Params(pub Map<String, Value>);

impl Params {
    /// The parameters of a `tool_use` as the tool map reads them: an object, or `null` when
    /// there was none (absent, or not an object), which the tool map treats as every
    /// non-object.
    pub(crate) fn value(params: Option<Params>) -> Value {
        params.map_or(Value::Null, |params| Value::Object(params.0))
    }
}

impl<'de> JsonView<'de> for Params {
    fn read_member<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        _: bool,
    ) -> Result<bool, A::Error> {
        let Some(name) = PARAMS.iter().find(|name| **name == key) else {
            return Ok(false);
        };
        self.0.insert(name.to_string(), map.next_value()?);
        Ok(true)
    }

    /// A kept member's text, which [`Scan`] found surely JSON, is parsed on its own.
    fn scan_member(&mut self, key: &str, scan: &mut Scan<'de>, _: bool) -> Option<bool> {
        let Some(name) = PARAMS.iter().find(|name| **name == key) else {
            return Some(false);
        };
        let value = serde_json::from_str(scan.raw()?).ok()?;
        self.0.insert(name.to_string(), value);
        Some(true)
    }
}

/// The names [`LineView::stats`] reads, in its order.
pub(crate) const STATS: [&str; 4] = ["input_tokens", "output_tokens", "cached", "duration_ms"];

/// A line's view, when it is a JSON object, through the entry point; `None` when it is
/// anything else (valid JSON or not).
#[cfg(test)]
fn view(line: &[u8]) -> Option<LineView<'_>> {
    harness_agents_core::backend::json::read_line(line)
        .ok()
        .flatten()
}

/// The checked path alone: the view through `serde_json`; `None` when the line is not a JSON
/// object (S2).
#[cfg(test)]
fn checked(text: &str) -> Option<LineView<'_>> {
    harness_agents_core::backend::json::view_of(text)
}

/// The fast path alone: the view of a line that is surely JSON ([`Scan`]), in one pass;
/// `None` when unsure ([`checked`] then decides; the tests compare them).
#[cfg(test)]
fn scan(text: &str) -> Option<LineView<'_>> {
    let mut view = LineView::default();
    harness_agents_core::backend::json::scan_into(text, &mut view, false)?;
    Some(view)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use harness_agents_core::backend::json::Loose;

    use super::*;

    #[test]
    fn the_view_reads_the_rules_fields_and_the_last_of_a_repeated_key() {
        let line = br#"{"type":"x","type":"result","status":"error","error":{"type":"t","message":"m\u00e9"},"stats":{"input_tokens":3,"models":{"a":[1,{"b":null}]},"cached":1.5},"parameters":{"p":[1],"file_path":"a","content":"\u00e9","file_path":"b\n"},"other":[{"deep":"\ud83d\ude00"}]}"#;
        let view = view(line).unwrap();
        assert_eq!(view.kind.as_str(), Some("result"));
        assert_eq!(view.status.as_str(), Some("error"));
        assert_eq!(view.error_message.as_str(), Some("mé"));
        let stats = view.stats.unwrap();
        assert!(matches!(&stats[0], Loose::Number(n) if n.as_u64() == Some(3)));
        assert!(matches!(&stats[2], Loose::Number(n) if n.as_f64() == Some(1.5)));
        assert_eq!(stats[1], Loose::Absent);
        assert_eq!(
            Params::value(view.parameters),
            serde_json::json!({"file_path": "b\n"})
        );
        for params in [r#""x""#, "[1,{}]", "3", "null", "true"] {
            let line = format!(r#"{{"type":"tool_use","parameters":{params}}}"#);
            let view = super::view(line.as_bytes()).unwrap();
            assert_eq!(view.parameters, None);
            assert_eq!(Params::value(view.parameters), Value::Null);
        }
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

    /// Every tool name the map knows, one it does not, and the keys it reads or ignores.
    const NAMES: [&str; 12] = [
        "read_file",
        "write_file",
        "replace",
        "grep_search",
        "glob",
        "list_directory",
        "run_shell_command",
        "activate_skill",
        "write_todos",
        "web_fetch",
        "save_memory",
        "",
    ];

    fn member() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (0u64..5_000_000_000).prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "[a-z/.\\\\ \"\n\u{e9}]{0,8}".prop_map(Value::String),
            Just(Value::from("completed")),
        ];
        leaf.prop_recursive(2, 12, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec(
                    (
                        prop_oneof![Just("description".to_string()), Just("status".to_string())],
                        inner
                    ),
                    0..3
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The parameters the view keeps map, for every tool, to exactly what the whole
        /// `parameters` value maps to (G6-G8): no key the tool map reads is dropped.
        #[test]
        fn the_kept_parameters_map_as_the_whole_value_does(
            members in proptest::collection::vec(
                (
                    proptest::sample::select(vec![
                        "file_path", "start_line", "end_line", "pattern", "dir_path", "command",
                        "name", "todos", "content", "old_string", "new_string", "url", "",
                    ]),
                    member(),
                ),
                0..6,
            ),
            whole in proptest::prelude::any::<bool>(),
            success in proptest::prelude::any::<bool>(),
        ) {
            // Keys may repeat in the line; the `Value` keeps the last, as must the view.
            let body: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("{}:{v}", Value::from(*k)))
                .collect();
            let params_text = if whole { format!("{{{}}}", body.join(",")) } else {
                members.first().map_or("7".to_string(), |(_, v)| v.to_string())
            };
            let line = format!(r#"{{"type":"tool_use","parameters":{params_text}}}"#);
            let full: Value = serde_json::from_str(&params_text).unwrap();
            let kept = Params::value(view(line.as_bytes()).unwrap().parameters);
            let status = harness_agents_core::ToolStatus {
                success,
                error: (!success).then(|| "e".to_string()),
            };
            let tool = harness_agents_core::ToolRef::default();
            let cx = crate::tools::Context { cwd: Some("/p"), workspace: None };
            for name in NAMES {
                proptest::prop_assert_eq!(
                    crate::tools::map(name, &kept, &status, &tool, cx),
                    crate::tools::map(name, &full, &status, &tool, cx),
                    "{} {}", name, line
                );
            }
        }
    }

    /// Every line of the Gemini recordings (expected files excluded).
    fn recorded() -> Vec<String> {
        let mut lines = Vec::new();
        for (_, bytes) in fixtures::recordings("gemini") {
            let text = String::from_utf8(bytes).unwrap();
            lines.extend(text.lines().map(str::to_string));
        }
        lines
    }

    /// S2: the fast reader, when sure, reads exactly the view the checked path reads.
    fn agree(text: &str) -> Result<(), proptest::test_runner::TestCaseError> {
        if let Some(fast) = scan(text) {
            proptest::prop_assert_eq!(Some(fast), checked(text), "{}", text);
        }
        Ok(())
    }

    #[test]
    fn the_fast_reader_reads_every_recorded_object_line_as_the_checked_path_does() {
        let lines = recorded();
        assert!(lines.len() > 200, "{}", lines.len());
        let mut fast = 0;
        for line in &lines {
            agree(line).unwrap();
            if checked(line).is_some() {
                assert!(scan(line).is_some(), "the fast reader is unsure of {line}");
                fast += 1;
            }
        }
        assert!(fast > 200, "{fast}");
        for line in [
            r#"{"type":"tool_use","parameters":{"file_path":"a\u00e9","content":"x","file_path":"b"}}"#,
            r#"{"type":"tool_use","parameters":[1,{"a":2}],"tool_id":"t"}"#,
            r#"{"type":"tool_use","parameters":"x"}"#,
            r#"{"type":"tool_use","parameters":{"todos":[{"description":"d","status":"completed"}]}}"#,
            r#"{"type":"result","stats":{"input_tokens":1e3,"cached":-0,"duration_ms":12.5}}"#,
            r#"{"type":"result","error":[1],"stats":"s"}"#,
            r#"{"type":"result","error":{"message":"a\nb"},"type":"x"}"#,
            r#"{"\u0074ype":"init"}"#,
            r#"{"type":"init","x":"\ud800"}"#,
            r#"{"type":"init","x":1e400}"#,
            r#"{"type":"init"} {}"#,
        ] {
            agree(line).unwrap();
        }
        assert_eq!(
            Params::value(
                scan(r#"{"type":"tool_use","parameters":{"file_path":"a","content":"x"}}"#)
                    .unwrap()
                    .parameters
            ),
            serde_json::json!({"file_path": "a"})
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

        /// S2: recorded lines with a character changed, inserted or the line cut: whenever the
        /// fast reader is sure, it agrees with the checked path.
        #[test]
        fn the_fast_reader_agrees_with_the_checked_path_on_changed_lines(
            pick in proptest::prelude::any::<proptest::sample::Index>(),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            what in proptest::sample::select(vec![
                "", "\\", "\"", "{", "}", "[", "]", ",", ":", " ", "\t", "\n", "1", "-", "e",
                ".", "0", "\\u", "\\ud800", "null", "\u{e9}", "\u{1}", "\u{7f}",
            ]),
            cut in proptest::prelude::any::<bool>(),
        ) {
            let lines = recorded();
            let line = pick.get(&lines);
            let mut at = at.index(line.len() + 1);
            while !line.is_char_boundary(at) {
                at -= 1;
            }
            let changed = if cut {
                format!("{}{what}", &line[..at])
            } else {
                format!("{}{what}{}", &line[..at], &line[at..])
            };
            agree(&changed)?;
            proptest::prop_assert_eq!(
                super::view(changed.as_bytes()).is_some(),
                serde_json::from_str::<Value>(&changed).is_ok_and(|v| v.is_object()),
                "{}", changed
            );
        }
    }
}
