//! Borrowed, typed views of Claude Code's lines: the parse phase of the normalizer.
//!
//! The hot lines (`assistant`, `user`, `system`, `stream_event`) are read through these views,
//! which borrow from the line and skip every field no rule reads. Every field is [`Loose`] or
//! raw JSON text, so a view fails only on JSON syntax or on a repeated known key; then the
//! normalizer takes the exact path (a `serde_json::Value`, where the last repeated key wins)
//! and reads the views again from that value's text. Parsing here never changes state: a
//! failed view leaves nothing half done.

use harness_core::json::Loose;
use serde::Deserialize;
use serde_json::value::RawValue;

/// How far to trust a view that fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The text is the raw line: a failed view may be a repeated key, so retry exactly.
    Fast,
    /// The text is a `Value` written back out: no repeated keys remain, so a failed view can
    /// only mean a type the view does not take.
    Exact,
}

/// A view failed where the exact path may succeed.
#[derive(Debug)]
pub(crate) struct NeedExact;

#[derive(Deserialize)]
struct LineView<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Loose<'a>,
    #[serde(default, borrow)]
    subtype: Loose<'a>,
    #[serde(default, borrow)]
    session_id: Loose<'a>,
    #[serde(default, borrow)]
    parent_tool_use_id: Loose<'a>,
    #[serde(default, borrow)]
    cwd: Loose<'a>,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
    #[serde(default, borrow)]
    tool_use_result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct MessageView<'a> {
    #[serde(default, borrow)]
    id: Loose<'a>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

/// A content block of an assistant or user message.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct BlockView<'a> {
    /// `type`.
    #[serde(rename = "type", default, borrow)]
    pub kind: Loose<'a>,
    /// `text` of a text block.
    #[serde(default, borrow)]
    pub text: Loose<'a>,
    /// `thinking` of a thinking block.
    #[serde(default, borrow)]
    pub thinking: Loose<'a>,
    /// `id` of a tool use.
    #[serde(default, borrow)]
    pub id: Loose<'a>,
    /// `name` of a tool use.
    #[serde(default, borrow)]
    pub name: Loose<'a>,
    /// `tool_use_id` of a tool result.
    #[serde(default, borrow)]
    pub tool_use_id: Loose<'a>,
    /// `is_error` of a tool result.
    #[serde(default, borrow)]
    pub is_error: Loose<'a>,
}

/// One block: its view (absent when it is not an object) and its JSON text.
#[derive(Debug)]
pub(crate) struct Block<'a> {
    /// The fields rules read; `None` when the block is not an object.
    pub view: Option<BlockView<'a>>,
    /// The block as written.
    pub raw: &'a str,
}

/// What a message's `content` is.
#[derive(Debug)]
pub(crate) enum Content<'a> {
    /// A list of blocks.
    List(Vec<Block<'a>>),
    /// A string.
    Text,
    /// Absent, `null`, or any other type.
    Other,
}

/// The parts of a line the normalizer reads.
#[derive(Debug)]
pub(crate) struct LineParts<'a> {
    /// `session_id`.
    pub session_id: Loose<'a>,
    /// `parent_tool_use_id`.
    pub parent: Loose<'a>,
    /// The rest, by `type`.
    pub body: Body<'a>,
}

/// A line by its `type`.
#[derive(Debug)]
pub(crate) enum Body<'a> {
    /// `assistant`: the message id (when a string) and content.
    Assistant {
        /// `message.id`.
        id: Loose<'a>,
        /// `message.content`.
        content: Content<'a>,
    },
    /// `user`: the message content and the line's `tool_use_result` (`None` when absent or
    /// `null`).
    User {
        /// `message.content`.
        content: Content<'a>,
        /// `tool_use_result`.
        tool_use_result: Option<&'a RawValue>,
    },
    /// `system`.
    System {
        /// `subtype`.
        subtype: Loose<'a>,
        /// `cwd`.
        cwd: Loose<'a>,
    },
    /// `stream_event`.
    StreamEvent,
    /// Any other line: read through a `Value`.
    Other,
}

fn is_object(raw: &RawValue) -> bool {
    raw.get().starts_with('{')
}

/// Reads a view of an object, or `None` when `raw` is not an object.
fn view<'a, T: Deserialize<'a>>(raw: &'a RawValue, mode: Mode) -> Result<Option<T>, NeedExact> {
    if !is_object(raw) {
        return Ok(None);
    }
    match serde_json::from_str(raw.get()) {
        Ok(v) => Ok(Some(v)),
        Err(_) if mode == Mode::Fast => Err(NeedExact),
        Err(_) => Ok(None),
    }
}

fn content<'a>(raw: Option<&'a RawValue>, mode: Mode) -> Result<Content<'a>, NeedExact> {
    let Some(raw) = raw else {
        return Ok(Content::Other);
    };
    match raw.get().as_bytes().first() {
        Some(b'"') => Ok(Content::Text),
        Some(b'[') => {
            let items: Vec<&RawValue> = match serde_json::from_str(raw.get()) {
                Ok(items) => items,
                Err(_) if mode == Mode::Fast => return Err(NeedExact),
                Err(_) => return Ok(Content::Other),
            };
            let blocks = items
                .into_iter()
                .map(|item| {
                    Ok(Block {
                        view: view(item, mode)?,
                        raw: item.get(),
                    })
                })
                .collect::<Result<_, NeedExact>>()?;
            Ok(Content::List(blocks))
        }
        _ => Ok(Content::Other),
    }
}

/// Parses the parts of a line that is a JSON object (`text` starts with `{`), or says the
/// exact path is needed.
pub(crate) fn parse(text: &str, mode: Mode) -> Result<LineParts<'_>, NeedExact> {
    let line: LineView<'_> = match serde_json::from_str(text) {
        Ok(line) => line,
        Err(_) if mode == Mode::Fast => return Err(NeedExact),
        Err(_) => {
            return Ok(LineParts {
                session_id: Loose::Absent,
                parent: Loose::Absent,
                body: Body::Other,
            });
        }
    };
    let message = |mode| -> Result<(Loose<'_>, Content<'_>), NeedExact> {
        match line.message.map(|m| view::<MessageView<'_>>(m, mode)) {
            Some(Ok(Some(m))) => Ok((m.id, content(m.content, mode)?)),
            Some(Err(e)) => Err(e),
            Some(Ok(None)) | None => Ok((Loose::Absent, Content::Other)),
        }
    };
    let body = match line.kind.as_str() {
        Some("assistant") => {
            let (id, content) = message(mode)?;
            Body::Assistant { id, content }
        }
        Some("user") => {
            let (_, content) = message(mode)?;
            Body::User {
                content,
                tool_use_result: line.tool_use_result,
            }
        }
        Some("system") => Body::System {
            subtype: line.subtype,
            cwd: line.cwd,
        },
        Some("stream_event") => Body::StreamEvent,
        _ => Body::Other,
    };
    Ok(LineParts {
        session_id: line.session_id,
        parent: line.parent_tool_use_id,
        body,
    })
}

/// The `tool_use_result` fields C10 and C12 read.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ToolUseResultView<'a> {
    /// `interrupted`.
    #[serde(default, borrow)]
    pub interrupted: Loose<'a>,
}

/// Whether a `tool_use_result` is an object with `interrupted: true` (C10).
pub(crate) fn interrupted(tool_use_result: Option<&RawValue>, mode: Mode) -> Result<bool, NeedExact> {
    match tool_use_result {
        Some(raw) => Ok(view::<ToolUseResultView<'_>>(raw, mode)?
            .is_some_and(|v| v.interrupted.is_true())),
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_known_key_needs_the_exact_path() {
        let text = r#"{"type":"assistant","type":"user","message":{}}"#;
        assert!(parse(text, Mode::Fast).is_err());
        let nested = r#"{"type":"assistant","message":{"id":"a","id":"b","content":[]}}"#;
        assert!(parse(nested, Mode::Fast).is_err());
        let block = r#"{"type":"user","message":{"content":[{"type":"x","type":"tool_result"}]}}"#;
        assert!(parse(block, Mode::Fast).is_err());
    }

    #[test]
    fn fields_of_any_type_do_not_fail_a_view() {
        let text = r#"{"type":"assistant","session_id":5,"message":{"id":[1],"content":[7,{"type":"text","text":{}}]}}"#;
        let parts = parse(text, Mode::Fast).unwrap();
        assert_eq!(parts.session_id, Loose::Number(5.into()));
        let Body::Assistant { id, content: Content::List(blocks) } = parts.body else {
            panic!("{:?}", parts.body)
        };
        assert_eq!(id, Loose::Array);
        assert!(blocks[0].view.is_none());
        assert_eq!(blocks[0].raw, "7");
        assert_eq!(blocks[1].view.as_ref().map(|v| &v.text), Some(&Loose::Object));
    }

    #[test]
    fn a_message_that_is_not_an_object_has_no_content() {
        let parts = parse(r#"{"type":"user","message":"hi"}"#, Mode::Fast).unwrap();
        assert!(matches!(parts.body, Body::User { content: Content::Other, .. }));
    }
}
