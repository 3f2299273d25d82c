//! The caller's commands (I2): one JSON object per line, read leniently. A line that is not a
//! command is an [`InputError`] whose text becomes a `warning` with source `input`; it never
//! ends a session.

use serde_json::{Map, Value};

use crate::Decision;

/// One command of the caller (I2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Start a turn with this text, or queue it behind the running one.
    Prompt(String),
    /// Stop the running turn; the session stays open.
    Interrupt,
    /// Answer the permission request `id`.
    Permission {
        /// The request's id, as its `permission` event gave it.
        id: String,
        /// What the caller decided.
        decision: Decision,
        /// A message for the agent with a denial; `None` when absent.
        message: Option<String>,
    },
    /// End the session now.
    Close,
}

/// Why a line is not a command (I2): the text of the `warning` it becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InputError {}

/// Reads one command line. Surrounding whitespace (a `\r` before the newline) is ignored;
/// members a command does not use are ignored too, so a caller may send newer fields.
///
/// ```
/// use harness_agents_core::session::{parse_command, Command, Decision};
///
/// assert_eq!(
///     parse_command(br#"{"type":"prompt","text":"Fix the test"}"#),
///     Ok(Command::Prompt("Fix the test".into()))
/// );
/// assert_eq!(
///     parse_command(br#"{"type":"permission","id":"r1","decision":"deny","message":"no"}"#),
///     Ok(Command::Permission { id: "r1".into(), decision: Decision::Deny, message: Some("no".into()) })
/// );
/// assert!(parse_command(b"hello").is_err());
/// ```
///
/// # Errors
///
/// An [`InputError`] naming what is wrong: not JSON, not an object, no `type`, an unknown
/// type, or a missing or mistyped field of a known one.
pub fn parse_command(line: &[u8]) -> Result<Command, InputError> {
    let text = std::str::from_utf8(line)
        .map_err(|_| InputError("a command line is not UTF-8".into()))?
        .trim();
    if text.is_empty() {
        return Err(InputError("an empty command line".into()));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| InputError(format!("a command line is not JSON ({e})")))?;
    let Value::Object(object) = value else {
        return Err(InputError("a command must be a JSON object".into()));
    };
    let kind = match object.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(_) => return Err(InputError("a command's `type` must be a string".into())),
        None => return Err(InputError("a command needs a `type`".into())),
    };
    match kind {
        "prompt" => match object.get("text") {
            Some(Value::String(text)) if !text.is_empty() => Ok(Command::Prompt(text.clone())),
            Some(Value::String(_)) => Err(InputError("a prompt's `text` is empty".into())),
            Some(_) => Err(InputError("a prompt's `text` must be a string".into())),
            None => Err(InputError("a prompt needs a `text`".into())),
        },
        "interrupt" => Ok(Command::Interrupt),
        "close" => Ok(Command::Close),
        "permission" => permission(&object),
        other => Err(InputError(format!(
            "unknown command type `{}` (prompt, interrupt, permission, close)",
            shorten(other)
        ))),
    }
}

fn permission(object: &Map<String, Value>) -> Result<Command, InputError> {
    let id = match object.get("id") {
        Some(Value::String(id)) if !id.is_empty() => id.clone(),
        // JSON-RPC agents number their requests: accept the number as the event printed it.
        Some(Value::Number(n)) => n.to_string(),
        Some(_) => {
            return Err(InputError(
                "a permission answer's `id` must be a non-empty string".into(),
            ));
        }
        None => return Err(InputError("a permission answer needs an `id`".into())),
    };
    let decision = match object.get("decision") {
        Some(Value::String(name)) => Decision::from_name(name).ok_or_else(|| {
            InputError(format!(
                "unknown decision `{}` (allow, allow_always, deny)",
                shorten(name)
            ))
        })?,
        Some(_) => {
            return Err(InputError(
                "a permission answer's `decision` must be a string".into(),
            ));
        }
        None => return Err(InputError("a permission answer needs a `decision`".into())),
    };
    let message = match object.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(_) => {
            return Err(InputError(
                "a permission answer's `message` must be a string".into(),
            ));
        }
    };
    Ok(Command::Permission {
        id,
        decision,
        message,
    })
}

/// A name quoted back in a warning, cut so that a huge line cannot make a huge warning.
fn shorten(name: &str) -> String {
    const MAX: usize = 80;
    match name.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}...", &name[..cut]),
        None => name.to_string(),
    }
}
