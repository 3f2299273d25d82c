//! The transcript's lines (A1): one JSON-RPC message per line, wrapped with the side that sent
//! it, the message itself kept byte for byte; and the protocol's messages, as this crate
//! writes them (the client's requests and answers) and reads them (views of the agent's
//! updates and requests), with the schema's field names and shapes.
//!
//! ```text
//! {"from":"client","message":{"jsonrpc":"2.0","id":0,"method":"initialize",...}}
//! {"from":"agent","message":{"jsonrpc":"2.0","id":0,"result":{...}}}
//! {"from":"agent","text":"a line of the agent's standard output that is not JSON"}
//! ```

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
    if harness_agents_core::backend::text::is_blank(line) {
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

// ---- the protocol's messages, as this crate reads and writes them ----
//
// ACP's JSON is read and written with the small types below, not with the protocol's own crate
// (`agent-client-protocol-schema`): that crate turns on serde_json's `preserve_order` for every
// binary linking this one. Field names and shapes follow the ACP schema (v1); the crate
// `acp-schema-check/` (outside the workspace) parses every recorded message and every message
// the client writes with the official types.

/// The JSON-RPC version every message carries.
const JSONRPC: &str = "2.0";

/// A request the client sends.
#[derive(Debug, Serialize)]
pub(crate) struct Request<'a, P> {
    jsonrpc: &'static str,
    id: u64,
    method: &'a str,
    params: P,
}

impl<'a, P> Request<'a, P> {
    pub(crate) fn new(id: u64, method: &'a str, params: P) -> Self {
        Request {
            jsonrpc: JSONRPC,
            id,
            method,
            params,
        }
    }
}

/// A notification the client sends (`session/cancel`).
#[derive(Debug, Serialize)]
pub(crate) struct Notification<'a, P> {
    jsonrpc: &'static str,
    method: &'a str,
    params: P,
}

impl<'a, P> Notification<'a, P> {
    pub(crate) fn new(method: &'a str, params: P) -> Self {
        Notification {
            jsonrpc: JSONRPC,
            method,
            params,
        }
    }
}

/// The client's answer to one of the agent's requests: its result, or its error.
#[derive(Debug, Serialize)]
pub(crate) struct Answer<'a, R> {
    jsonrpc: &'static str,
    id: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<RpcError>,
}

impl<'a, R> Answer<'a, R> {
    pub(crate) fn new(id: &'a Value, answer: Result<R, RpcError>) -> Self {
        let (result, error) = match answer {
            Ok(result) => (Some(result), None),
            Err(error) => (None, Some(error)),
        };
        Answer {
            jsonrpc: JSONRPC,
            id,
            result,
            error,
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Serialize)]
pub(crate) struct RpcError {
    code: i32,
    message: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<String>,
}

impl RpcError {
    /// -32601: the client does not serve this method.
    pub(crate) fn method_not_found() -> Self {
        RpcError {
            code: -32601,
            message: "Method not found",
            data: None,
        }
    }

    /// -32602: the request's params are not what the method takes; `data` says why.
    pub(crate) fn invalid_params(data: String) -> Self {
        RpcError {
            code: -32602,
            message: "Invalid params",
            data: Some(data),
        }
    }
}

/// `initialize`'s params (A12): protocol version 1, no file system, no terminal.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct InitializeParams<'a> {
    pub(crate) protocol_version: u16,
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) client_info: Implementation<'a>,
}

/// What the client can do for the agent.
#[derive(Debug, Serialize)]
pub(crate) struct ClientCapabilities {
    pub(crate) fs: FileSystemCapability,
    pub(crate) terminal: bool,
    pub(crate) auth: AuthCapabilities,
}

/// The file system methods the client serves.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileSystemCapability {
    pub(crate) read_text_file: bool,
    pub(crate) write_text_file: bool,
}

/// The authentication methods the client supports.
#[derive(Debug, Serialize)]
pub(crate) struct AuthCapabilities {
    pub(crate) terminal: bool,
}

/// The client's name and version.
#[derive(Debug, Serialize)]
pub(crate) struct Implementation<'a> {
    pub(crate) name: &'a str,
    pub(crate) version: &'a str,
}

/// `session/new`'s params: the session's directory, no MCP servers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct NewSessionParams<'a> {
    pub(crate) cwd: &'a str,
    pub(crate) mcp_servers: [(); 0],
}

/// `session/load`'s and `session/resume`'s params: the stored session, its directory, no MCP
/// servers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct LoadSessionParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) cwd: &'a str,
    pub(crate) mcp_servers: [(); 0],
}

/// `session/prompt`'s params: the prompt as one text block.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PromptParams<'a> {
    pub(crate) session_id: &'a str,
    pub(crate) prompt: [TextBlock<'a>; 1],
}

/// A text content block, as the client writes it.
#[derive(Debug, Serialize)]
pub(crate) struct TextBlock<'a> {
    #[serde(rename = "type")]
    pub(crate) kind: &'static str,
    pub(crate) text: &'a str,
}

/// `session/cancel`'s params.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CancelParams<'a> {
    pub(crate) session_id: &'a str,
}

/// The answer to `session/request_permission`.
#[derive(Debug, Serialize)]
pub(crate) struct PermissionAnswer<'a> {
    pub(crate) outcome: PermissionOutcome<'a>,
}

/// The permission's outcome: one of the agent's options, or none.
#[derive(Debug, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub(crate) enum PermissionOutcome<'a> {
    /// None of the options offered fit (A13).
    Cancelled,
    /// The option chosen.
    Selected {
        #[serde(rename = "optionId")]
        option_id: &'a str,
    },
}

/// A JSON string whose text is not used: only its presence and its type are checked, as the
/// schema requires them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnyStr;

impl<'de> Deserialize<'de> for AnyStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;
        impl Visitor<'_> for StrVisitor {
            type Value = AnyStr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<AnyStr, E> {
                Ok(AnyStr)
            }
        }
        deserializer.deserialize_str(StrVisitor)
    }
}

/// A content block (`agent_message_chunk`'s `content`, a tool call's `content` item): its text
/// when it is a text block; the other kinds are checked for their required fields only.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        #[serde(rename = "data")]
        _data: AnyStr,
        #[serde(rename = "mimeType")]
        _mime_type: AnyStr,
    },
    Audio {
        #[serde(rename = "data")]
        _data: AnyStr,
        #[serde(rename = "mimeType")]
        _mime_type: AnyStr,
    },
    ResourceLink {
        #[serde(rename = "name")]
        _name: AnyStr,
        #[serde(rename = "uri")]
        _uri: AnyStr,
    },
    Resource {
        #[serde(rename = "resource")]
        _resource: EmbeddedResource,
    },
}

/// An embedded resource's contents: text or blob, with its URI.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
pub(crate) enum EmbeddedResource {
    Text {
        #[serde(rename = "text")]
        _text: AnyStr,
        #[serde(rename = "uri")]
        _uri: AnyStr,
    },
    Blob {
        #[serde(rename = "blob")]
        _blob: AnyStr,
        #[serde(rename = "uri")]
        _uri: AnyStr,
    },
}

/// `agent_message_chunk`, `agent_thought_chunk`: one content block.
#[derive(Debug, Deserialize)]
pub(crate) struct ContentChunk {
    pub(crate) content: ContentBlock,
}

/// One item of a tool call's `content`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToolCallContent {
    Content {
        content: ContentBlock,
    },
    Diff {
        path: String,
        /// Absent, `null` or not a string: no old text (the schema reads it leniently).
        #[serde(rename = "oldText", default)]
        old_text: Option<Value>,
        #[serde(rename = "newText")]
        _new_text: AnyStr,
    },
    Terminal {
        #[serde(rename = "terminalId")]
        _terminal_id: AnyStr,
    },
    Session {
        #[serde(rename = "sessionId")]
        _session_id: AnyStr,
    },
}

/// One item of a tool call's `locations`.
#[derive(Debug, Deserialize)]
pub(crate) struct ToolCallLocation {
    pub(crate) path: String,
}

/// A tool call's `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolKind {
    Read,
    Edit,
    Delete,
    Move,
    Search,
    Execute,
    /// `think`, `fetch`, `switch_mode`, `other` and any kind the schema does not name.
    Other,
}

impl ToolKind {
    /// The kind a JSON value names: any string is a kind (unknown ones are `other`, as the
    /// schema reads them); `None` for anything else.
    pub(crate) fn of(value: Option<&Value>) -> Option<ToolKind> {
        Some(match value?.as_str()? {
            "read" => ToolKind::Read,
            "edit" => ToolKind::Edit,
            "delete" => ToolKind::Delete,
            "move" => ToolKind::Move,
            "search" => ToolKind::Search,
            "execute" => ToolKind::Execute,
            _ => ToolKind::Other,
        })
    }
}

/// A tool call's `status`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolCallStatus {
    Pending,
    InProgress,
    Completed,
    Failed,
}

impl ToolCallStatus {
    /// The status a JSON value names; `None` for anything else.
    pub(crate) fn of(value: Option<&Value>) -> Option<ToolCallStatus> {
        Some(match value?.as_str()? {
            "pending" => ToolCallStatus::Pending,
            "in_progress" => ToolCallStatus::InProgress,
            "completed" => ToolCallStatus::Completed,
            "failed" => ToolCallStatus::Failed,
            _ => return None,
        })
    }
}

/// A `plan` update: its entries (a missing `entries` is malformed; entries that are not valid
/// are skipped, and a value that is not a list is no entries, as the schema reads them).
#[derive(Debug, Deserialize)]
pub(crate) struct Plan {
    #[serde(deserialize_with = "plan_entries")]
    pub(crate) entries: Vec<PlanEntry>,
}

fn plan_entries<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PlanEntry>, D::Error> {
    let value = Value::deserialize(deserializer)?;
    Ok(match value {
        Value::Array(items) => items
            .into_iter()
            .filter_map(|item| PlanEntry::deserialize(item).ok())
            .collect(),
        _ => Vec::new(),
    })
}

/// One entry of a plan.
#[derive(Debug, Deserialize)]
pub(crate) struct PlanEntry {
    pub(crate) content: String,
    #[serde(rename = "priority")]
    _priority: PlanEntryPriority,
    pub(crate) status: PlanEntryStatus,
}

/// A plan entry's priority.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum PlanEntryPriority {
    High,
    Medium,
    Low,
}

/// A plan entry's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PlanEntryStatus {
    Pending,
    InProgress,
    Completed,
}

/// `session/request_permission`'s params: the tool call it is about and the options offered.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionRequest {
    #[serde(rename = "sessionId")]
    _session_id: AnyStr,
    #[serde(deserialize_with = "tool_call_ref")]
    pub(crate) tool_call: ToolCallRef,
    pub(crate) options: Vec<PermissionOption>,
}

/// The tool call a permission request names: its id and kind.
#[derive(Debug)]
pub(crate) struct ToolCallRef {
    pub(crate) tool_call_id: String,
    pub(crate) kind: Option<ToolKind>,
}

/// A tool call update is an object with a string `toolCallId`; its other fields are read
/// leniently.
fn tool_call_ref<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ToolCallRef, D::Error> {
    let fields = Map::<String, Value>::deserialize(deserializer)?;
    let Some(id) = fields.get("toolCallId") else {
        return Err(de::Error::missing_field("toolCallId"));
    };
    let Some(id) = id.as_str() else {
        return Err(de::Error::invalid_type(unexpected(id), &"a string"));
    };
    Ok(ToolCallRef {
        tool_call_id: id.to_string(),
        kind: ToolKind::of(fields.get("kind")),
    })
}

fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(_) => de::Unexpected::Other("a number"),
        Value::String(s) => de::Unexpected::Str(s),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

/// One option of a permission request.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PermissionOption {
    pub(crate) option_id: String,
    #[serde(rename = "name")]
    _name: AnyStr,
    pub(crate) kind: PermissionOptionKind,
}

/// What choosing an option means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PermissionOptionKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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

    #[test]
    fn json_objects_print_their_keys_sorted_as_without_the_schema_crate() {
        // The protocol's crate turned on serde_json's `preserve_order` for every binary that
        // linked this one (slower parsing everywhere, another key order in printed JSON).
        let value: Value = serde_json::from_str(r#"{"b":1,"a":{"d":2,"c":3}}"#).unwrap();
        assert_eq!(value.to_string(), r#"{"a":{"c":3,"d":2},"b":1}"#);
    }

    #[test]
    fn a9_a13_permission_requests_are_read_as_the_schema_reads_them() {
        let read =
            |params: Value| PermissionRequest::deserialize(&params).map_err(|e| e.to_string());
        let option = json!({"optionId": "o", "name": "Once", "kind": "allow_once"});
        let request = read(json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "kind": "think"}, "options": [option]})).unwrap();
        assert_eq!(request.tool_call.tool_call_id, "t");
        assert_eq!(request.tool_call.kind, Some(ToolKind::Other));
        assert_eq!(request.options[0].option_id, "o");
        assert_eq!(request.options[0].kind, PermissionOptionKind::AllowOnce);
        // A kind that is not a string is no kind (the schema reads it leniently).
        let request = read(
            json!({"sessionId": "s", "toolCall": {"toolCallId": "t", "kind": 3}, "options": []}),
        )
        .unwrap();
        assert_eq!(request.tool_call.kind, None);
        for (params, error) in [
            (
                json!({"sessionId": "s", "toolCall": {"toolCallId": "t"}}),
                "missing field `options`",
            ),
            (
                json!({"sessionId": "s", "toolCall": {"toolCallId": 7}, "options": []}),
                "invalid type: a number, expected a string",
            ),
            (
                json!({"sessionId": "s", "toolCall": ["t"], "options": []}),
                "invalid type: sequence, expected a map",
            ),
            (
                json!({"sessionId": "s", "toolCall": {"toolCallId": "t"}, "options": [{"optionId": "o", "name": "N", "kind": "maybe"}]}),
                "unknown variant `maybe`, expected one of `allow_once`, `allow_always`, `reject_once`, `reject_always`",
            ),
            (
                json!({"toolCall": {"toolCallId": "t"}, "options": []}),
                "missing field `sessionId`",
            ),
        ] {
            assert_eq!(read(params).unwrap_err(), error);
        }
    }

    #[test]
    fn a4_a7_plans_and_tool_call_content_are_read_as_the_schema_reads_them() {
        let plan = |update: Value| {
            Plan::deserialize(&update).map(|p| {
                p.entries
                    .iter()
                    .map(|e| (e.content.clone(), e.status))
                    .collect::<Vec<_>>()
            })
        };
        let entry = |status: &str| json!({"content": "x", "priority": "high", "status": status});
        assert_eq!(
            plan(json!({"entries": [entry("completed"), entry("done"), {"content": "y", "status": "pending"}, entry("in_progress")]})).unwrap(),
            [("x".to_string(), PlanEntryStatus::Completed), ("x".to_string(), PlanEntryStatus::InProgress)]
        );
        assert!(plan(json!({"entries": "none"})).unwrap().is_empty());
        assert!(plan(json!({"sessionUpdate": "plan"})).is_err());

        let content = |items: Value| Vec::<ToolCallContent>::deserialize(&items).map(|v| v.len());
        assert_eq!(content(json!([
            {"type": "content", "content": {"type": "text", "text": "hi"}},
            {"type": "content", "content": {"type": "image", "data": "", "mimeType": "image/png"}},
            {"type": "content", "content": {"type": "resource", "resource": {"blob": "", "uri": "u"}}},
            {"type": "diff", "path": "/a", "oldText": 3, "newText": "b"},
            {"type": "terminal", "terminalId": "t"},
        ])).unwrap(), 5);
        for bad in [
            json!([{"type": "diff", "path": "/a"}]),
            json!([{"type": "content", "content": {"type": "image", "data": ""}}]),
            json!([{"type": "content", "content": {"type": "resource", "resource": {"uri": "u"}}}]),
            json!([{"type": "video"}]),
        ] {
            assert!(content(bad.clone()).is_err(), "{bad}");
        }
        assert_eq!(
            ToolCallStatus::of(Some(&json!("in_progress"))),
            Some(ToolCallStatus::InProgress)
        );
        assert_eq!(ToolCallStatus::of(Some(&json!("done"))), None);
        assert_eq!(
            ToolKind::of(Some(&json!("switch_mode"))),
            Some(ToolKind::Other)
        );
        assert_eq!(ToolKind::of(Some(&json!(null))), None);
    }
}
