//! The client side of a live run (A12-A15): the harness speaks ACP to the agent through the
//! core's [`Conversation`] hook, and records every message of both directions for the
//! normalizer (A1).

use std::path::PathBuf;
use std::time::Duration;

use harness_agents_core::process::{Conversation, Reply};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{
    Answer, AuthCapabilities, CancelParams, ClientCapabilities, FileSystemCapability, From,
    Implementation, InitializeParams, NewSessionParams, Notification, PermissionAnswer,
    PermissionOptionKind, PermissionOutcome, PermissionRequest, PromptParams, Request, RpcError,
    TextBlock, ToolKind, agent_line, wrap,
};

/// How long an agent may take to answer `session/cancel` and end, once the run is cut short,
/// before its process group is killed (A15).
pub const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// The ids of the client's three requests (A12).
const INITIALIZE: u64 = 0;
const NEW_SESSION: u64 = 1;
const PROMPT: u64 = 2;

/// What the client answers `session/request_permission` with (A13), from the request's
/// permission mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permission {
    /// Allow every tool call (`bypassPermissions`, `yolo`).
    AllowAll,
    /// Allow file edits (tool kinds `edit`, `delete`, `move`), reject the rest (`acceptEdits`,
    /// `auto_edit`, `autoEdit`).
    AllowEdits,
    /// Reject every tool call (no mode, `default`, `plan`, any other).
    RejectAll,
}

impl Permission {
    /// The answer policy of a permission mode (A13).
    ///
    /// ```
    /// use harness_agents_acp::Permission;
    ///
    /// assert_eq!(Permission::of(Some("bypassPermissions")), Permission::AllowAll);
    /// assert_eq!(Permission::of(Some("acceptEdits")), Permission::AllowEdits);
    /// assert_eq!(Permission::of(Some("default")), Permission::RejectAll);
    /// assert_eq!(Permission::of(None), Permission::RejectAll);
    /// ```
    pub fn of(mode: Option<&str>) -> Permission {
        match mode {
            Some("bypassPermissions" | "yolo") => Permission::AllowAll,
            Some("acceptEdits" | "auto_edit" | "autoEdit") => Permission::AllowEdits,
            _ => Permission::RejectAll,
        }
    }

    fn allows(self, kind: Option<ToolKind>) -> bool {
        match self {
            Permission::AllowAll => true,
            Permission::AllowEdits => matches!(
                kind,
                Some(ToolKind::Edit | ToolKind::Delete | ToolKind::Move)
            ),
            Permission::RejectAll => false,
        }
    }
}

/// The answer to one `session/request_permission` (A13): the first option of the wanted kind
/// (allow once, else allow always; reject once, else reject always), or `cancelled` when the
/// agent offered none of them.
pub(crate) fn answer_permission(
    request: &PermissionRequest,
    policy: Permission,
) -> PermissionAnswer<'_> {
    let wanted: [PermissionOptionKind; 2] = if policy.allows(request.tool_call.kind) {
        [
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ]
    } else {
        [
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]
    };
    let chosen = wanted
        .iter()
        .find_map(|kind| request.options.iter().find(|o| o.kind == *kind));
    let outcome = match chosen {
        Some(option) => PermissionOutcome::Selected {
            option_id: &option.option_id,
        },
        None => PermissionOutcome::Cancelled,
    };
    PermissionAnswer { outcome }
}

/// Sends one message: written to the agent's input, recorded for the normalizer (A1).
pub(crate) fn send(reply: &mut Reply, message: &impl Serialize) {
    // The messages are plain structs of strings, numbers and JSON values: serializing them
    // cannot fail.
    let bytes = serde_json::to_vec(message).unwrap_or_default();
    reply.record.push(wrap(From::Client, &bytes));
    reply.write.extend_from_slice(&bytes);
    reply.write.push(b'\n');
}

/// `initialize`'s params (A12): protocol version 1, no file system, no terminal.
pub(crate) fn initialize_params() -> InitializeParams<'static> {
    InitializeParams {
        protocol_version: 1,
        client_capabilities: ClientCapabilities {
            fs: FileSystemCapability {
                read_text_file: false,
                write_text_file: false,
            },
            terminal: false,
            auth: AuthCapabilities { terminal: false },
        },
        client_info: Implementation {
            name: "harness",
            version: env!("CARGO_PKG_VERSION"),
        },
    }
}

/// Where the client is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `initialize` sent.
    Initializing,
    /// `session/new` sent.
    Creating,
    /// `session/prompt` sent.
    Prompting,
    /// The prompt answered, or the run given up: the agent's input is closed.
    Done,
}

/// The ACP client of one live run: it starts the session, sends the prompt, answers the
/// agent's requests, and cancels on a timeout or a stop (A12-A15).
#[derive(Debug)]
pub struct AcpClient {
    cwd: PathBuf,
    prompt: String,
    policy: Permission,
    step: Step,
    session_id: Option<String>,
}

impl AcpClient {
    /// A client that runs `prompt` in a new session in `cwd` (absolute), answering permission
    /// requests by `policy`.
    pub fn new(cwd: PathBuf, prompt: String, policy: Permission) -> Self {
        AcpClient {
            cwd,
            prompt,
            policy,
            step: Step::Initializing,
            session_id: None,
        }
    }

    fn request(reply: &mut Reply, id: u64, method: &str, params: impl Serialize) {
        send(reply, &Request::new(id, method, params));
    }

    fn done(&mut self, reply: &mut Reply) {
        self.step = Step::Done;
        reply.close = true;
    }

    /// An answer to one of the client's requests.
    fn answered(&mut self, id: &Value, message: &Value, reply: &mut Reply) {
        let expected = match self.step {
            Step::Initializing => INITIALIZE,
            Step::Creating => NEW_SESSION,
            Step::Prompting => PROMPT,
            Step::Done => return,
        };
        if id.as_u64() != Some(expected) {
            return;
        }
        let Some(result) = message
            .get("result")
            .filter(|_| message.get("error").is_none())
        else {
            // A14: a failed request ends the run.
            self.done(reply);
            return;
        };
        match self.step {
            Step::Initializing => {
                let cwd = self.cwd.to_string_lossy();
                let params = NewSessionParams {
                    cwd: &cwd,
                    mcp_servers: [],
                };
                Self::request(reply, NEW_SESSION, "session/new", params);
                self.step = Step::Creating;
            }
            Step::Creating => {
                let Some(session) = result.get("sessionId").and_then(Value::as_str) else {
                    self.done(reply);
                    return;
                };
                self.session_id = Some(session.to_string());
                let params = PromptParams {
                    session_id: session,
                    prompt: [TextBlock {
                        kind: "text",
                        text: &self.prompt,
                    }],
                };
                Self::request(reply, PROMPT, "session/prompt", params);
                self.step = Step::Prompting;
            }
            Step::Prompting | Step::Done => self.done(reply),
        }
    }

    /// A request from the agent: permissions by the policy, anything else a -32601 error.
    fn asked(&mut self, id: &Value, method: &str, message: &Value, reply: &mut Reply) {
        let params = message.get("params").unwrap_or(&Value::Null);
        match method {
            "session/request_permission" => match PermissionRequest::deserialize(params) {
                Ok(request) => {
                    let answer = answer_permission(&request, self.policy);
                    send(reply, &Answer::new(id, Ok(answer)));
                }
                Err(e) => {
                    let error = RpcError::invalid_params(e.to_string());
                    send(reply, &Answer::<()>::new(id, Err(error)));
                }
            },
            _ => send(
                reply,
                &Answer::<()>::new(id, Err(RpcError::method_not_found())),
            ),
        }
    }
}

impl Conversation for AcpClient {
    fn open(&mut self) -> Reply {
        let mut reply = Reply::default();
        Self::request(&mut reply, INITIALIZE, "initialize", initialize_params());
        reply
    }

    fn line(&mut self, line: &[u8]) -> Reply {
        let mut reply = Reply::default();
        let Some(recorded) = agent_line(line) else {
            return reply;
        };
        reply.record.push(recorded);
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return reply;
        };
        let method = message.get("method").and_then(Value::as_str);
        match (message.get("id"), method) {
            (Some(id), Some(method)) => {
                let id = id.clone();
                if self.step != Step::Done {
                    self.asked(&id, method, &message, &mut reply);
                }
            }
            (Some(id), None) => {
                let id = id.clone();
                self.answered(&id, &message, &mut reply);
            }
            _ => {}
        }
        reply
    }

    fn stop(&mut self) -> (Reply, Duration) {
        let mut reply = Reply::default();
        match (&self.session_id, self.step) {
            (Some(session), Step::Prompting) => {
                let params = CancelParams {
                    session_id: session,
                };
                send(&mut reply, &Notification::new("session/cancel", params));
            }
            _ => self.done(&mut reply),
        }
        (reply, CANCEL_GRACE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(reply: &Reply) -> Vec<String> {
        reply
            .record
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    #[test]
    fn a12_the_client_initializes_creates_a_session_in_the_cwd_and_prompts() {
        let mut client = AcpClient::new("/p".into(), "hi".into(), Permission::RejectAll);
        let open = client.open();
        assert_eq!(
            text(&open),
            [
                r#"{"from":"client","message":{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"terminal":false}},"clientInfo":{"name":"harness","version":"0.1.0"}}}}"#
            ]
        );
        assert_eq!(
            open.write,
            [&open.record[0][27..open.record[0].len() - 1], b"\n"].concat()
        );
        let created = client.line(br#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#);
        assert_eq!(
            text(&created)[1],
            r#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/p","mcpServers":[]}}}"#
        );
        let prompted = client.line(br#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
        assert_eq!(
            text(&prompted)[1],
            r#"{"from":"client","message":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"hi"}]}}}"#
        );
        assert!(!prompted.close);
        let ended = client.line(br#"{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}"#);
        assert_eq!(ended.record.len(), 1);
        assert!(ended.close);
    }

    #[test]
    fn a14_a_failed_request_closes_the_agents_input() {
        let mut client = AcpClient::new("/p".into(), "hi".into(), Permission::RejectAll);
        client.open();
        let failed =
            client.line(br#"{"jsonrpc":"2.0","id":0,"error":{"code":-32603,"message":"no"}}"#);
        assert!(failed.close);
        assert!(failed.write.is_empty());
    }

    #[test]
    fn a13_permission_requests_are_answered_by_the_mode_and_other_requests_with_32601() {
        let ask = |kind: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{{"toolCallId":"t1","kind":"{kind}"}},"options":[{{"optionId":"proceed_always","name":"Always","kind":"allow_always"}},{{"optionId":"proceed_once","name":"Once","kind":"allow_once"}},{{"optionId":"cancel","name":"No","kind":"reject_once"}}]}}}}"#
            )
        };
        for (policy, kind, chosen) in [
            (Permission::AllowAll, "execute", "proceed_once"),
            (Permission::AllowEdits, "edit", "proceed_once"),
            (Permission::AllowEdits, "execute", "cancel"),
            (Permission::RejectAll, "edit", "cancel"),
        ] {
            let mut client = AcpClient::new("/p".into(), "hi".into(), policy);
            let reply = client.line(ask(kind).as_bytes());
            assert_eq!(
                text(&reply)[1],
                format!(
                    r#"{{"from":"client","message":{{"jsonrpc":"2.0","id":7,"result":{{"outcome":{{"outcome":"selected","optionId":"{chosen}"}}}}}}}}"#
                ),
                "{policy:?} {kind}"
            );
        }
        let mut client = AcpClient::new("/p".into(), "hi".into(), Permission::RejectAll);
        let only_allow = r#"{"jsonrpc":"2.0","id":"x","method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t1"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}"#;
        assert_eq!(
            text(&client.line(only_allow.as_bytes()))[1],
            r#"{"from":"client","message":{"jsonrpc":"2.0","id":"x","result":{"outcome":{"outcome":"cancelled"}}}}"#
        );
        let unknown =
            client.line(br#"{"jsonrpc":"2.0","id":3,"method":"fs/read_text_file","params":{}}"#);
        assert_eq!(
            text(&unknown)[1],
            r#"{"from":"client","message":{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}}"#
        );
    }

    #[test]
    fn a15_a_stop_while_prompting_sends_session_cancel_and_before_it_closes_the_input() {
        let mut client = AcpClient::new("/p".into(), "hi".into(), Permission::RejectAll);
        client.open();
        let (early, grace) = client.stop();
        assert!(early.close);
        assert_eq!(grace, CANCEL_GRACE);
        let mut client = AcpClient::new("/p".into(), "hi".into(), Permission::RejectAll);
        client.open();
        client.line(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#);
        client.line(br#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#);
        let (cancel, _) = client.stop();
        assert!(!cancel.close);
        assert_eq!(
            text(&cancel),
            [
                r#"{"from":"client","message":{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1"}}}"#
            ]
        );
    }
}
