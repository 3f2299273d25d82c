//! The parse phase: one line to a borrowed view of the fields the P rules read, checked
//! exactly as parsing the whole line into a `Value` would (S2).
//!
//! A line is read in one pass, through the core's entry point (`json::read_line_into`): by
//! the fast reader (`Scan`) when it is sure of the line, which checks every string it skips
//! without decoding it, and otherwise the checked way, which decides. The fields the rules
//! read are kept as [`Loose`] (strings borrowed from the line when they hold no escape) or,
//! for nested objects, as views of their own; on the checked path every other member, such as
//! a tool's `output` and metadata (file contents, diffs, most of a `tool_use` line's bytes),
//! is skipped with [`Checked`], which makes every check a `Value` makes (string escapes,
//! surrogate pairs, number ranges, nesting depth) without keeping anything. A line is
//! therefore JSON here exactly when it is JSON for `serde_json::Value`. A repeated key keeps its last value, as in a `Value`, and a field of
//! an unexpected type is kept for what it is (a view of an object that is not one is `None`).
//!
//! The few values the rules read whole are kept as `Value`s: an `error` line's `error` (P13)
//! and a `todowrite`'s `todos` (P6d). A tool's `output` is kept only when asked for
//! ([`parse`] with `output` set), for the few rules that read it (P6a, P6c). The events that
//! carry the original JSON (`unknown`, J8) parse the whole line again.
//!
//! Each view is declared once with `json_view!`, which makes its reader; the views are read
//! in place, nested ones included.
//!
//! [`Loose`]: harness_agents_core::backend::json::Loose
//! [`Checked`]: harness_agents_core::backend::json::Checked

use harness_agents_core::backend::NotJson;
use harness_agents_core::backend::json::read_line_into;
use serde_json::Value;

harness_agents_core::json_view! {
    /// The fields of a line the rules read.
    pub(crate) struct Line<'a> {
        /// `type`.
        kind: "type",
        /// `sessionID` (P1).
        session_id: "sessionID",
        /// `error`, whole (P13).
        error: "error" => Option<Value>,
        /// `part`, when it is an object.
        part: "part" => Option<Part<'a>>,
    }
}

harness_agents_core::json_view! {
    /// The fields of a line's `part` the rules read.
    pub(crate) struct Part<'a> {
        /// `text` of a text or reasoning part (P2).
        text: "text",
        /// `messageID` (P3, P12).
        message_id: "messageID",
        /// `synthetic` of a text part (P2).
        synthetic: "synthetic",
        /// `tool` of a tool part (P5).
        tool: "tool",
        /// `callID` of a tool part (P5, P7).
        call_id: "callID",
        /// `reason` of a `step_finish` (P10).
        reason: "reason",
        /// `tokens` of a `step_finish`, when an object (P11).
        tokens: "tokens" => Option<Tokens<'a>>,
        /// `cost` of a `step_finish` (P11).
        cost: "cost",
        /// `state` of a tool part, when an object (P5-P8).
        state: "state" => Option<State<'a>>,
    }
}

/// The names of a `step_finish`'s `tokens.cache` (P11), in the order of [`Tokens::cache`].
const CACHE: [&str; 2] = ["read", "write"];

harness_agents_core::json_view! {
    /// A `step_finish`'s `tokens` (P11).
    pub(crate) struct Tokens<'a> {
        /// `input`.
        input: "input",
        /// `output`.
        output: "output",
        /// `reasoning`.
        reasoning: "reasoning",
        /// `cache.read` and `cache.write`, when `cache` is an object.
        cache: "cache"[CACHE],
    }
}

harness_agents_core::json_view! {
    /// A tool part's `state` (P5-P8).
    pub(crate) struct State<'a> {
        /// `status`.
        status: "status",
        /// `input`, when an object.
        input: "input" => Option<Input<'a>>,
        /// `error` (P5).
        error: "error",
        /// `output`, read only when [`parse`] is asked for it (P6a, P6c); otherwise absent.
        output: "output" if costly,
        /// `metadata`, when an object.
        metadata: "metadata" => Option<Metadata<'a>>,
    }
}

harness_agents_core::json_view! {
    /// A tool's `state.metadata`.
    pub(crate) struct Metadata<'a> {
        /// `exit` of a shell command (P6c).
        exit: "exit",
        /// `exists` of a `write` (P6b).
        exists: "exists",
        /// `dir` of a `skill` (P8).
        dir: "dir",
        /// `display.type` of a `read` (P6a); absent when `display` is not an object.
        display_type: "display"."type",
    }
}

harness_agents_core::json_view! {
    /// A tool's `state.input`: the fields the tool map reads (P6).
    pub(crate) struct Input<'a> {
        /// `filePath` (`read`, `write`, `edit`, `multiedit`).
        file_path: "filePath",
        /// `offset` (`read`).
        offset: "offset",
        /// `limit` (`read`).
        limit: "limit",
        /// `content` (`write`).
        content: "content",
        /// `patchText` (`apply_patch`, `patch`).
        patch_text: "patchText",
        /// `pattern` (`grep`, `glob`).
        pattern: "pattern",
        /// `path` (`grep`, `glob`, `list`).
        path: "path",
        /// `include` (`grep`).
        include: "include",
        /// `command` (`bash`).
        command: "command",
        /// `workdir` (`bash`).
        workdir: "workdir",
        /// `name` (`skill`).
        name: "name",
        /// `todos` (`todowrite`), whole.
        todos: "todos" => Option<Value>,
    }
}

/// Reads the view of `line`: `Ok(None)` when it is JSON but not an object, `Err` exactly when
/// it is not JSON (S2). `output` keeps a tool's `state.output`.
pub(crate) fn parse(line: &[u8], output: bool) -> Result<Option<Line<'_>>, NotJson> {
    let mut view = None;
    parse_into(line, output, &mut view)?;
    Ok(view)
}

/// [`parse`] into `view`, in place, through the core's entry point: the fast reader when it
/// is sure, the checked path otherwise, which decides.
pub(crate) fn parse_into<'a>(
    line: &'a [u8],
    output: bool,
    view: &mut Option<Line<'a>>,
) -> Result<(), NotJson> {
    read_line_into(line, view, output)
}

#[cfg(test)]
mod tests {
    use harness_agents_core::backend::json::Loose;

    use super::*;

    fn full(line: &str) -> Result<Value, NotJson> {
        harness_agents_core::backend::parse_value(line.as_bytes())
    }

    #[test]
    fn a_line_is_json_exactly_when_value_says_so() {
        let cases = [
            r#"{"type":"tool_use","part":{"state":{"output":"ok","metadata":{"preview":[1,2]}}}}"#,
            r#"{"type":"tool_use","part":{"state":{"output":"\ud800"}}}"#,
            r#"{"type":"tool_use","part":{"state":{"output":"\ud83d\ude00"}}}"#,
            r#"{"type":"tool_use","part":{"state":{"input":{"filePath":"\udc00"}}}}"#,
            r#"{"type":"tool_use","part":{"state":{"input":{"todos":[1e400]}}}}"#,
            r#"{"type":"step_finish","part":{"tokens":{"cache":{"read":-1e400}}}}"#,
            r#"{"type":"step_finish","part":{"tokens":{"cache":{"read":1e30}},"cost":1e-400}}"#,
            r#"{"type":"tool_use","part":{"state":{"metadata":{"display":{"type":"\ud800x"}}}}}"#,
            r#"{"type":"error","error":{"data":{"message":"\ud800"}}}"#,
            r#"{"type":"x","timestamp":1e400}"#,
            r#"{"type":"x","timestamp":1e30}"#,
            r#"{"type":"x","part":{"id":[[[[]]]]}} trailing"#,
            r#"{"type":"x","part":{"id":"a"},}"#,
            "{\"type\":\"text\",\"part\":{\"text\":\"a\u{1}\"}}",
            "[1,2,{\"a\":\"b\"}]",
            "7",
            r#""just a string""#,
        ];
        for case in cases {
            let value = full(case).is_ok();
            assert_eq!(parse(case.as_bytes(), false).is_ok(), value, "{case}");
            assert_eq!(parse(case.as_bytes(), true).is_ok(), value, "{case}");
        }
        // Bytes that are not UTF-8, in a string the view reads, one it skips, and outside any.
        for case in [
            &b"{\"type\":\"text\",\"part\":{\"text\":\"a\xff\"}}"[..],
            b"{\"type\":\"tool_use\",\"part\":{\"state\":{\"output\":\"\xc3\x28\"}}}",
            b"{\"type\":\"x\"}\xff",
            b"{\"type\":\"x\",\"id\":\"\xc3\xa9\"}",
        ] {
            let value = harness_agents_core::backend::parse_value(case).is_ok();
            assert_eq!(parse(case, false).is_ok(), value, "{case:?}");
            assert_eq!(parse(case, true).is_ok(), value, "{case:?}");
        }
        assert!(parse("{\"type\":\"x\",\"id\":\"é\"}".as_bytes(), false).is_ok());
        // The nesting limit counts from the line, through every view.
        for (depth, json) in [(127, true), (128, false)] {
            for at in [
                "\"part\":{\"id\":",
                "\"part\":{\"state\":{\"input\":{\"todos\":",
                "\"part\":{\"state\":{\"metadata\":{\"display\":{\"type\":",
                "\"part\":{\"tokens\":{\"cache\":{\"read\":",
                "\"error\":",
            ] {
                let opened = at.matches('{').count();
                let inner = depth - 1 - opened;
                let line = format!(
                    "{{\"type\":\"x\",{at}{}{}{}}}",
                    "[".repeat(inner),
                    "]".repeat(inner),
                    "}".repeat(opened)
                );
                assert_eq!(full(&line).is_ok(), json, "{line}");
                assert_eq!(parse(line.as_bytes(), false).is_ok(), json, "{line}");
            }
        }
    }

    /// S2 on every recorded line and on broken copies of it: each with one byte removed or
    /// replaced by a byte that often breaks JSON, and each cut short.
    #[test]
    fn recorded_lines_and_their_broken_copies_are_json_exactly_when_value_says_so() {
        let mut lines = Vec::new();
        for (_, bytes) in fixtures::recordings("opencode") {
            lines.extend(bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec));
        }
        assert!(lines.len() > 200, "{}", lines.len());
        let check = |line: &[u8]| {
            let value = harness_agents_core::backend::parse_value(line).is_ok();
            assert_eq!(
                parse(line, false).is_ok(),
                value,
                "{:?}",
                String::from_utf8_lossy(line)
            );
            value
        };
        let (mut json, mut broken) = (0, 0);
        for line in &lines {
            check(line);
            for at in (0..line.len()).step_by(7) {
                let mut cut = line.clone();
                cut.truncate(at);
                let mut removed = line.clone();
                removed.remove(at);
                let mut replaced = line.clone();
                replaced[at] = [b'"', b'\\', b'}', b'1', 0xff][at % 5];
                for case in [cut, removed, replaced] {
                    if check(&case) {
                        json += 1;
                    } else {
                        broken += 1;
                    }
                }
            }
        }
        // Both outcomes are exercised.
        assert!(json > 1_000 && broken > 1_000, "{json} {broken}");
    }

    /// S2: where the fast reader is sure of a recorded line, it reads the view the checked
    /// path reads, with the output and without; and it is sure of nearly every one.
    #[test]
    fn the_fast_reader_reads_recorded_lines_as_the_checked_path_does() {
        use harness_agents_core::backend::json::{Member, scan_into};

        let (mut objects, mut sure) = (0, 0);
        for (_, bytes) in fixtures::recordings("opencode") {
            for line in std::str::from_utf8(&bytes).unwrap().lines() {
                if !full(line).is_ok_and(|value| value.is_object()) {
                    continue;
                }
                objects += 1;
                for output in [false, true] {
                    let mut checked: Option<Line<'_>> = None;
                    let mut reader = serde_json::Deserializer::from_str(line);
                    checked.read(&mut reader, output).unwrap();
                    let mut fast = Line::default();
                    if scan_into(line, &mut fast, output).is_some() {
                        let fast = format!("{:?}", Some(fast));
                        assert_eq!(fast, format!("{checked:?}"), "{line}");
                        sure += usize::from(output);
                    }
                }
            }
        }
        assert!(objects > 200, "{objects}");
        assert!(sure * 100 >= objects * 99, "{sure} of {objects}");
    }

    #[test]
    fn the_view_keeps_the_read_fields_and_a_repeated_key_keeps_its_last_value() {
        let line = r#"{"type":"a","type":"tool_use","sessionID":"s","timestamp":5,"part":{"tool":"read","id":"prt","callID":"c\n","state":{"status":"completed","output":"big","input":{"filePath":"/x","offset":3,"todos":[{"a":1}]},"metadata":{"exit":0,"exit":null,"preview":"x","display":{"type":"file","text":"t"}}}}}"#;
        let view = parse(line.as_bytes(), false).unwrap().unwrap();
        assert_eq!(view.kind.as_str(), Some("tool_use"));
        assert_eq!(view.session_id.as_str(), Some("s"));
        let part = view.part.unwrap();
        assert_eq!(part.tool.as_str(), Some("read"));
        assert_eq!(part.call_id.as_str(), Some("c\n"));
        let state = part.state.unwrap();
        assert_eq!(state.status.as_str(), Some("completed"));
        assert_eq!(state.output, Loose::Absent);
        let input = state.input.unwrap();
        assert_eq!(input.file_path.as_str(), Some("/x"));
        assert_eq!(input.offset, Loose::Number(3.into()));
        assert_eq!(input.limit, Loose::Absent);
        assert_eq!(input.todos, Some(serde_json::json!([{"a": 1}])));
        let metadata = state.metadata.unwrap();
        assert_eq!(metadata.exit, Loose::Null);
        assert_eq!(metadata.display_type.as_str(), Some("file"));

        let with_output = parse(line.as_bytes(), true).unwrap().unwrap();
        assert_eq!(
            with_output.part.unwrap().state.unwrap().output.as_str(),
            Some("big")
        );

        let other = r#"{"type":"x","part":{"state":{"input":"no"}},"part":[1]}"#;
        assert!(
            parse(other.as_bytes(), false)
                .unwrap()
                .unwrap()
                .part
                .is_none()
        );
        let state = r#"{"part":{"state":{"input":[],"metadata":{"display":3}}}}"#;
        let state = parse(state.as_bytes(), false)
            .unwrap()
            .unwrap()
            .part
            .unwrap()
            .state
            .unwrap();
        assert!(state.input.is_none());
        assert_eq!(state.metadata.unwrap().display_type, Loose::Absent);
        assert!(parse(b"[1,{\"x\":2}]", false).unwrap().is_none());
    }
}
