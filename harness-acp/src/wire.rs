//! The transcript's lines (A1): one JSON-RPC message per line, wrapped with the side that sent
//! it, the message itself kept byte for byte.
//!
//! ```text
//! {"from":"client","message":{"jsonrpc":"2.0","id":0,"method":"initialize",...}}
//! {"from":"agent","message":{"jsonrpc":"2.0","id":0,"result":{...}}}
//! {"from":"agent","text":"a line of the agent's standard output that is not JSON"}
//! ```

use serde::de::IgnoredAny;
use serde_json::Value;

/// The side that wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum From {
    /// The harness (the ACP client): its requests, its answers to the agent's requests.
    Client,
    /// The agent.
    Agent,
}

impl From {
    fn as_str(self) -> &'static str {
        match self {
            From::Client => "client",
            From::Agent => "agent",
        }
    }

    pub(crate) fn parse(value: &Value) -> Option<From> {
        match value.as_str()? {
            "client" => Some(From::Client),
            "agent" => Some(From::Agent),
            _ => None,
        }
    }
}

/// The transcript line of `message` (compact JSON text, without `\n`) sent by `from`: the
/// message's bytes are kept exactly.
pub(crate) fn wrap(from: From, message: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(message.len() + 32);
    line.extend_from_slice(br#"{"from":""#);
    line.extend_from_slice(from.as_str().as_bytes());
    line.extend_from_slice(br#"","message":"#);
    line.extend_from_slice(message);
    line.push(b'}');
    line
}

/// The transcript line of one line of the agent's standard output: the message itself when the
/// line is JSON, else its text (A1); `None` for a blank line (S1).
pub(crate) fn agent_line(line: &[u8]) -> Option<Vec<u8>> {
    if harness_core::backend::text::is_blank(line) {
        return None;
    }
    if serde_json::from_slice::<IgnoredAny>(line).is_ok() {
        return Some(wrap(From::Agent, line));
    }
    let text = String::from_utf8_lossy(line);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    let mut wrapped = br#"{"from":"agent","text":"#.to_vec();
    // Serializing a string cannot fail.
    wrapped.extend(serde_json::to_vec(text).unwrap_or_default());
    wrapped.push(b'}');
    Some(wrapped)
}

/// A JSON-RPC id as a map key: its JSON text (`1` and `"1"` are different ids).
pub(crate) fn id_key(id: &Value) -> String {
    id.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a1_agent_lines_are_kept_byte_for_byte_or_as_text() {
        assert_eq!(
            agent_line(br#"{"jsonrpc":"2.0", "id":0,"result":{}}"#).unwrap(),
            br#"{"from":"agent","message":{"jsonrpc":"2.0", "id":0,"result":{}}}"#
        );
        assert_eq!(
            agent_line(b"Loaded cached credentials.\r").unwrap(),
            br#"{"from":"agent","text":"Loaded cached credentials."}"#
        );
        assert_eq!(
            agent_line(b"{\"a\":").unwrap(),
            br#"{"from":"agent","text":"{\"a\":"}"#
        );
        assert_eq!(agent_line(b"  \t"), None);
        let line = wrap(From::Client, br#"{"id":1}"#);
        let value: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(From::parse(&value["from"]), Some(From::Client));
        assert_eq!(value["message"]["id"], 1);
    }
}
