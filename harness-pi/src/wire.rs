//! The parse phase: a borrowed view of one line with the fields the PI rules read, checked
//! exactly as parsing the whole line into a `serde_json::Value` would (S2).
//!
//! Every line goes through the core's entry point ([`read_line_into`]): the fast reader when
//! it is sure of the line, the checked path otherwise, which decides. The view is declared once
//! with `json_view!`, which makes both readers; a repeated key keeps its last value, as in a
//! `Value`, and a field of an unexpected type is kept for what it is.
//!
//! Pi's lines are large: each `message_update` repeats the whole message so far twice, and
//! `turn_end` and `agent_end` repeat every message again. The fields few lines need (the
//! `message`, a tool's `args` and `result`) are *costly*: a line is first read
//! without them, which skips every other member with the core's checks and keeps nothing, and
//! only the three types whose rules read them (`message_end`, `tool_execution_start`,
//! `tool_execution_end`) are read again with them ([`parse`]). Which members are read never
//! depends on where `type` stands in the line. The events that carry the original JSON
//! (`unknown`, J8) parse the line again.
//!
//! A message's `content` is read as [`Blocks`]: each block's type and texts as [`Text`]s,
//! borrowed from the line, so that an agent text is decoded once, straight into the `Arc<str>`
//! its event and the outcome share (S7).
//!
//! [`read_line_into`]: harness_agents_core::backend::json::read_line_into

use std::fmt;

use harness_agents_core::backend::NotJson;
use harness_agents_core::backend::json::{Checked, Member, Scan, Text, ViewSeed, read_line_into};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

harness_agents_core::json_view! {
    /// The top-level fields the rules read; every one absent unless the line has it.
    pub(crate) struct LineView<'a> {
        /// `type`.
        kind: "type",
        /// `id` of the `session` header (PI2), and of a `response` (PI16).
        id: "id",
        /// `cwd` of the `session` header (PI2, PI10).
        cwd: "cwd",
        /// `message` of `message_end`, when an object; read only for the types that need it.
        message: "message" if costly => Option<Message<'a>>,
        /// `toolCallId` of the `tool_execution_*` lines (PI6).
        tool_call_id: "toolCallId",
        /// `toolName` of the `tool_execution_*` lines (PI6).
        tool_name: "toolName",
        /// `args` of `tool_execution_start`, whole; read only for the types that need it.
        args: "args" if costly => Option<Value>,
        /// `isError` of `tool_execution_end` (PI7).
        is_error: "isError",
        /// `result` of `tool_execution_end`, whole (its `content` holds the failure text);
        /// read only for the types that need it.
        result: "result" if costly => Option<Value>,
        /// `attempt` of `auto_retry_start` (PI12).
        attempt: "attempt",
        /// `maxAttempts` of `auto_retry_start` (PI12).
        max_attempts: "maxAttempts",
        /// `delayMs` of `auto_retry_start` (PI12).
        delay_ms: "delayMs",
        /// `errorMessage` of `auto_retry_start` and `compaction_end` (PI12, PI13).
        error_message: "errorMessage",
        /// `success` of `auto_retry_end` (PI12) and of a `response` (PI16).
        success: "success",
        /// `command` of a `response` (PI16).
        command: "command",
        /// `error` of a failed `response` (PI16).
        error: "error",
        /// `finalError` of `auto_retry_end` (PI12).
        final_error: "finalError",
    }
}

harness_agents_core::json_view! {
    /// A message (`message_end`): the fields PI3-PI5 and PI11 read.
    pub(crate) struct Message<'a> {
        /// `role`: `user`, `assistant`, `toolResult`, or one of Pi's own.
        role: "role",
        /// `content`: the assistant's blocks.
        content: "content" => Blocks<'a>,
        /// `stopReason` of an assistant message (PI5).
        stop_reason: "stopReason",
        /// `errorMessage` of a failed assistant message (PI5).
        error_message: "errorMessage",
        /// `usage` of an assistant message, when an object (PI11).
        usage: "usage" => Option<Usage<'a>>,
    }
}

harness_agents_core::json_view! {
    /// An assistant message's `usage` (PI11).
    pub(crate) struct Usage<'a> {
        /// `input`.
        input: "input",
        /// `output`.
        output: "output",
        /// `cacheRead`.
        cache_read: "cacheRead",
        /// `cacheWrite`.
        cache_write: "cacheWrite",
        /// `cost.total` (absent when `cost` is not an object).
        cost: "cost"."total",
    }
}

harness_agents_core::json_view! {
    /// One block of an assistant message's `content` (PI5).
    pub(crate) struct Block<'a> {
        /// `type`: `text`, `thinking` or `toolCall`.
        kind: "type",
        /// `text` of a `text` block.
        text: "text" => Text<'a>,
        /// `thinking` of a `thinking` block.
        thinking: "thinking" => Text<'a>,
        /// `redacted` of a `thinking` block.
        redacted: "redacted",
    }
}

/// A message's `content`: its blocks when it is a list (`None` for an element that is not an
/// object), [`Blocks::Other`] for any other value.
#[derive(Debug, Default)]
pub(crate) enum Blocks<'a> {
    /// No `content`.
    #[default]
    Absent,
    /// A value that is not a list.
    Other,
    /// The elements of the list.
    List(Vec<Option<Block<'a>>>),
}

impl<'de> Member<'de> for Blocks<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        *self = deserializer.deserialize_any(BlocksVisitor)?;
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, costly: bool) -> Option<()> {
        if scan.peek()? != b'[' {
            scan.skip()?;
            *self = Blocks::Other;
            return Some(());
        }
        let mut blocks = Vec::new();
        scan.elements(|scan| {
            let mut block: Option<Block<'de>> = None;
            block.scan(scan, costly)?;
            blocks.push(block);
            Some(())
        })?;
        *self = Blocks::List(blocks);
        Some(())
    }
}

/// Reads [`Blocks`] on the checked path: every value is read through `serde_json`, exactly
/// as a `Value` would be (an element through its [`Block`] view, anything else skipped with
/// [`Checked`]).
struct BlocksVisitor;

impl<'de> Visitor<'de> for BlocksVisitor {
    type Value = Blocks<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Blocks<'de>, A::Error> {
        let mut blocks = Vec::new();
        while let Some(block) = seq.next_element_seed(ViewSeed::<Block<'de>>::new())? {
            blocks.push(block);
        }
        Ok(Blocks::List(blocks))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Blocks<'de>, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Blocks::Other)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Blocks<'de>, E> {
        Ok(Blocks::Other)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Blocks<'de>, E> {
        Ok(Blocks::Other)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Blocks<'de>, E> {
        Ok(Blocks::Other)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Blocks<'de>, E> {
        Ok(Blocks::Other)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Blocks<'de>, E> {
        Ok(Blocks::Other)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Blocks<'de>, E> {
        Ok(Blocks::Other)
    }
}

/// The types whose rules read the costly fields.
const COSTLY: [&str; 3] = ["message_end", "tool_execution_start", "tool_execution_end"];

/// Reads the view of `line` into `view`: `Ok(false)` leaves it `None` when the line is JSON
/// but not an object (S3), `Err` exactly when it is not JSON (S2). The costly fields are read
/// only for the types that need them (see the module docs).
pub(crate) fn parse<'a>(line: &'a [u8], view: &mut Option<LineView<'a>>) -> Result<(), NotJson> {
    read_line_into(line, view, false)?;
    let costly = view
        .as_ref()
        .and_then(|v| v.kind.as_str())
        .is_some_and(|kind| COSTLY.contains(&kind));
    if costly {
        read_line_into(line, view, true)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use harness_agents_core::backend::json::{Loose, scan_into, view_of};

    use super::*;

    fn view(line: &str) -> Option<LineView<'_>> {
        let mut view = None;
        parse(line.as_bytes(), &mut view).ok()?;
        view
    }

    #[test]
    fn costly_fields_are_read_only_for_the_types_that_need_them() {
        let end = r#"{"message":{"role":"assistant","content":[{"type":"text","text":"a"}]},"type":"message_end"}"#;
        let message = view(end).unwrap().message.unwrap();
        assert_eq!(message.role.as_str(), Some("assistant"));
        let Blocks::List(blocks) = message.content else {
            panic!()
        };
        let block = blocks[0].as_ref().unwrap();
        assert_eq!(block.kind.as_str(), Some("text"));
        assert_eq!(block.text.shared().as_deref(), Some("a"));
        let update = end.replace("message_end", "message_update");
        assert!(view(&update).unwrap().message.is_none());
        let start = r#"{"type":"tool_execution_start","toolCallId":"t","toolName":"read","args":{"path":"a"}}"#;
        let line = view(start).unwrap();
        assert_eq!(line.args, Some(serde_json::json!({"path": "a"})));
        assert_eq!(line.tool_name.as_str(), Some("read"));
        let update = start.replace("tool_execution_start", "tool_execution_update");
        assert_eq!(view(&update).unwrap().args, None);
    }

    #[test]
    fn a_line_is_an_object_view_exactly_when_it_is_a_json_object() {
        for line in [
            r#"{"type":"message_end","message":{"content":[1e400]}}"#,
            r#"{"type":"message_end","message":{"content":{"a":"\ud800"}}}"#,
            r#"{"type":"message_end","message":{"content":[{"text":"\ud800"}]}}"#,
            r#"{"type":"message_end","message":{"content":[{"text":"\u00e9\n"},3,"x",[]]}}"#,
            r#"{"type":"message_update","message":{"content":["\ud800"]}}"#,
            r#"{"type":"message_update","assistantMessageEvent":{"delta":"\ud83d\ude00"}}"#,
            r#"{"type":"tool_execution_end","result":{"content":[{"text":"x"}]},"isError":true}"#,
            r#"{"type":"agent_end"} x"#,
            r#"{"type":"agent_end",}"#,
            r#"[1,{"type":"agent_end"}]"#,
            "\u{feff}{}",
        ] {
            let value = serde_json::from_str::<Value>(line);
            let mut parsed = None;
            let result = parse(line.as_bytes(), &mut parsed);
            assert_eq!(result.is_ok(), value.is_ok(), "{line}");
            assert_eq!(
                result.is_ok() && parsed.is_some(),
                value.is_ok_and(|v| v.is_object()),
                "{line}"
            );
        }
    }

    /// S2: the fast reader, when sure, reads what the checked path reads, with and without
    /// the costly fields; `None` when the checked path finds no object.
    fn agree(line: &str) -> Option<bool> {
        let mut sure = None;
        for costly in [false, true] {
            let mut checked: Option<LineView<'_>> = None;
            let read = read_line_into(line.as_bytes(), &mut checked, costly);
            let checked = read.ok().and(checked)?;
            let mut fast = LineView::default();
            sure = Some(scan_into(line, &mut fast, costly).is_some());
            if sure == Some(true) {
                assert_eq!(format!("{fast:?}"), format!("{checked:?}"), "{line}");
            }
        }
        sure
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// S2: recorded lines with a character changed or inserted, or cut: whenever the fast
        /// reader is sure, it agrees with the checked path.
        #[test]
        fn the_fast_reader_agrees_with_the_checked_path_on_changed_lines(
            pick in proptest::prelude::any::<proptest::sample::Index>(),
            at in proptest::prelude::any::<proptest::sample::Index>(),
            what in proptest::sample::select(vec![
                "", "\\", "\"", "{", "}", "[", "]", ",", ":", " ", "1", "-", "e", "\\u",
                "\\ud800", "null", "\u{e9}", "\u{1}",
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
            agree(&changed);
        }
    }

    /// Every line of the Pi recordings.
    fn recorded() -> Vec<String> {
        let mut lines = Vec::new();
        for (_, bytes) in fixtures::recordings("pi") {
            let text = String::from_utf8(bytes).unwrap();
            lines.extend(text.lines().map(str::to_string));
        }
        lines
    }

    /// S2: on every recorded line, the fast reader, when sure, reads what the checked path
    /// reads, with and without the costly fields.
    #[test]
    fn the_fast_reader_reads_every_recorded_line_as_the_checked_path_does() {
        let mut lines = 0;
        for (_, bytes) in fixtures::recordings("pi") {
            let text = String::from_utf8(bytes).unwrap();
            for line in text.lines() {
                for costly in [false, true] {
                    let mut fast = LineView::default();
                    let sure = scan_into(line, &mut fast, costly);
                    let mut checked: Option<LineView<'_>> = None;
                    read_line_into(line.as_bytes(), &mut checked, costly).unwrap();
                    let checked = checked.unwrap();
                    assert!(sure.is_some(), "the fast reader is unsure of {line}");
                    assert_eq!(format!("{fast:?}"), format!("{checked:?}"), "{line}");
                }
                lines += 1;
            }
        }
        assert!(lines > 300, "{lines}");
        for line in [
            r#"{"type":"message_end","message":{"content":[{"type":"text","text":"a\u00e9","text":"b"},3,{"thinking":[1]}]}}"#,
            r#"{"type":"message_end","message":{"content":{"a":[{"b":"\n"}]},"usage":{"cost":[1]}}}"#,
            r#"{"type":"tool_execution_end","result":{"content":[{"type":"text","text":"x"}]},"result":7}"#,
        ] {
            agree(line);
        }
        let usage: Usage<'_> = view_of(r#"{"input":1,"cost":{"total":0.5},"cost":3}"#).unwrap();
        assert_eq!(usage.input, Loose::Number(1.into()));
        assert_eq!(usage.cost, Loose::Absent);
    }
}
