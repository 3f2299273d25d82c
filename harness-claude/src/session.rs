//! Claude Code's session transport (CS5-CS11 of `docs/claude-session.md`): one long-lived
//! `claude --print --input-format stream-json --output-format stream-json --verbose
//! --permission-prompt-tool stdio` process, user messages and control messages on its
//! standard input, the core's process driver doing the rest.

use std::collections::HashMap;
use std::time::Duration;

use harness_agents_core::Decision;
use harness_agents_core::process::{CLOSE_GRACE, Conversation, Reply};
use harness_agents_core::session::Withdrawal;
use serde_json::{Value, json};

/// The message a withdrawn request is denied with when its turn is being interrupted.
const INTERRUPTED: &str = "The turn was interrupted before this tool use was answered.";
/// The message a withdrawn request is denied with when nobody is left to answer it.
const NO_CALLER: &str = "Nobody is left to answer this permission request (the session's input \
                         has ended), so it is denied.";
/// The message of a denial the caller sent without one (Claude Code needs a message).
const DENIED: &str = "The user denied this tool use.";

/// One session's transport: what goes to Claude Code's standard input for each step, and
/// what each of its lines means for the session.
#[derive(Debug, Default)]
pub(crate) struct ClaudeSession {
    /// The permission requests waiting for an answer: their tool and input, which an answer
    /// needs (CS6).
    asked: HashMap<String, Asked>,
    /// How many control requests this side has sent (their ids).
    sent: u64,
    /// The session's id (CS11): the one Claude Code is given (`--session-id`), else the one
    /// it resumes, both known before it starts; else the first `init` line's.
    id: Option<String>,
}

impl ClaudeSession {
    /// A session whose id is `id` when the request gave one (CS11).
    pub(crate) fn new(id: Option<String>) -> Self {
        ClaudeSession {
            id,
            ..ClaudeSession::default()
        }
    }
}

#[derive(Debug)]
struct Asked {
    tool: Option<String>,
    input: Value,
}

/// What one stdout line is, as far as the session cares (CS5).
enum Line {
    /// A `result` line: the turn has ended.
    Result,
    /// A `system` `init` line with its `session_id` (CS11).
    Init(String),
    /// `control_request` `can_use_tool`.
    CanUseTool {
        id: String,
        tool: Option<String>,
        input: Value,
    },
    /// Any other `control_request`: answered with an error.
    OtherRequest { id: String, subtype: String },
    /// `control_cancel_request`: the agent withdrew a request.
    Cancel(String),
    /// Anything else.
    Other,
}

impl Line {
    /// Reads a line's type. Claude Code writes `type` first on every line but its `result`
    /// (which starts with `duration_api_ms`), so a line that starts with another type is
    /// skipped unparsed; every other line (a `result`, a control line, or one written any other
    /// way) is parsed, so that no writer's formatting can hide a turn's end.
    fn of(line: &[u8]) -> Line {
        const TYPE: &[u8] = b"{\"type\":\"";
        if let Some(rest) = line.strip_prefix(TYPE) {
            if !(rest.starts_with(b"result\"")
                || rest.starts_with(b"control_")
                || rest.starts_with(b"system\""))
            {
                return Line::Other;
            }
        }
        let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(line) else {
            return Line::Other;
        };
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
        match object.get("type").and_then(Value::as_str) {
            Some("result") => Line::Result,
            Some("system") if text(object.get("subtype")).as_deref() == Some("init") => {
                match text(object.get("session_id")) {
                    Some(id) if !id.is_empty() => Line::Init(id),
                    _ => Line::Other,
                }
            }
            Some("control_cancel_request") => match text(object.get("request_id")) {
                Some(id) => Line::Cancel(id),
                None => Line::Other,
            },
            Some("control_request") => {
                let Some(id) = text(object.get("request_id")) else {
                    // CS2: nobody could answer it; the normalizer reports it.
                    return Line::Other;
                };
                let request = object.get("request");
                let field = |name: &str| request.and_then(|r| r.get(name));
                let subtype = text(field("subtype")).unwrap_or_default();
                if subtype == "can_use_tool" {
                    Line::CanUseTool {
                        id,
                        tool: text(field("tool_name")),
                        input: field("input").cloned().unwrap_or(Value::Null),
                    }
                } else {
                    Line::OtherRequest { id, subtype }
                }
            }
            _ => Line::Other,
        }
    }
}

/// One JSON line for Claude Code's standard input.
fn line(value: &Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

/// A successful `control_response` to the agent's request `id`.
fn success(id: &str, response: Value) -> Vec<u8> {
    line(&json!({
        "type": "control_response",
        "response": {"subtype": "success", "request_id": id, "response": response},
    }))
}

impl ClaudeSession {
    /// The denial of request `id` with `message` (CS7).
    fn deny(&mut self, id: &str, message: &str) -> Reply {
        self.asked.remove(id);
        Reply::write(success(id, json!({"behavior": "deny", "message": message})))
    }
}

impl Conversation for ClaudeSession {
    /// Nothing is written before the first prompt (I1); the session's id is known already
    /// (CS11).
    fn open(&mut self) -> Reply {
        let mut reply = Reply::default();
        reply.session_id = self.id.clone();
        reply
    }

    fn line(&mut self, text: &[u8]) -> Reply {
        let mut reply = Reply::default();
        reply.record.push(text.to_vec());
        match Line::of(text) {
            Line::Result => reply.turn_ended = true,
            // CS11: a session given no id learns it from the first turn's `init`.
            Line::Init(id) if self.id.is_none() => {
                self.id = Some(id.clone());
                reply.session_id = Some(id);
            }
            Line::Init(_) => {}
            Line::CanUseTool { id, tool, input } => {
                self.asked.insert(id, Asked { tool, input });
            }
            Line::OtherRequest { id, subtype } => {
                // CS8: the harness registers no hooks and no in-process MCP servers.
                reply.write = line(&json!({
                    "type": "control_response",
                    "response": {
                        "subtype": "error",
                        "request_id": id,
                        "error": format!("harness answers no control request of subtype `{subtype}`"),
                    },
                }));
            }
            Line::Cancel(id) => {
                self.asked.remove(&id);
                reply.withdrawn.push(id);
            }
            Line::Other => {}
        }
        reply
    }

    /// A cut-short session is closed as `close` does it; the driver interrupts the turn first.
    fn stop(&mut self) -> (Reply, Duration) {
        self.close()
    }

    /// CS5: a user message holding the prompt.
    fn start_turn(&mut self, _turn: u32, text: &str) -> Reply {
        Reply::write(line(&json!({
            "type": "user",
            "message": {"role": "user", "content": text},
        })))
    }

    /// CS6, CS7: allow with the input as asked (allow_always adds a session rule for the
    /// tool), deny with the caller's message.
    fn answer(&mut self, id: &str, decision: Decision, message: Option<&str>) -> Reply {
        if decision == Decision::Deny {
            return self.deny(id, message.unwrap_or(DENIED));
        }
        let asked = self.asked.remove(id);
        let (tool, input) = match asked {
            Some(asked) => (asked.tool, asked.input),
            None => (None, Value::Null),
        };
        let mut response = json!({"behavior": "allow", "updatedInput": input});
        if let (Decision::AllowAlways, Some(tool)) = (decision, tool) {
            response["updatedPermissions"] = json!([{
                "type": "addRules",
                "rules": [{"toolName": tool}],
                "behavior": "allow",
                "destination": "session",
            }]);
        }
        Reply::write(success(id, response))
    }

    /// CS9: a request nobody answers is denied, saying why.
    fn withdraw(&mut self, id: &str, why: Withdrawal) -> Reply {
        let message = match why {
            Withdrawal::Interrupted => INTERRUPTED,
            Withdrawal::NoCaller => NO_CALLER,
        };
        self.deny(id, message)
    }

    /// CS10: the `interrupt` control request.
    fn interrupt(&mut self) -> Reply {
        self.sent += 1;
        Reply::write(line(&json!({
            "type": "control_request",
            "request_id": format!("harness-interrupt-{}", self.sent),
            "request": {"subtype": "interrupt"},
        })))
    }

    /// Closing its input ends Claude Code once its turn is over.
    fn close(&mut self) -> (Reply, Duration) {
        (Reply::close(), CLOSE_GRACE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(reply: &Reply) -> Value {
        serde_json::from_slice(&reply.write).expect("one JSON line")
    }

    #[test]
    fn cs5_a_prompt_is_a_user_message_and_a_result_ends_the_turn() {
        let mut session = ClaudeSession::default();
        let reply = session.start_turn(1, "-rf /");
        assert_eq!(
            written(&reply),
            json!({"type": "user", "message": {"role": "user", "content": "-rf /"}})
        );
        assert!(reply.write.ends_with(b"\n"));
        let result = br#"{"type":"result","subtype":"success","is_error":false}"#;
        let reply = session.line(result);
        assert!(reply.turn_ended);
        assert_eq!(reply.record, vec![result.to_vec()]);
        // Claude Code 2.1.332 writes its `result` lines with `type` in the middle.
        let measured = br#"{"duration_api_ms":25,"stop_reason":"end_turn","is_error":false,"subtype":"success","result":"One.","type":"result","duration_ms":130}"#;
        assert!(session.line(measured).turn_ended);
        // A line written another way is read all the same.
        assert!(
            session
                .line(br#"{ "subtype":"success", "type" : "result"}"#)
                .turn_ended
        );
        // An assistant message that talks about results does not end the turn.
        let reply =
            session.line(br#"{"type":"assistant","message":{"content":"\"type\":\"result\""}}"#);
        assert!(!reply.turn_ended);
    }

    #[test]
    fn cs6_allow_sends_the_input_as_asked_and_allow_always_a_session_rule() {
        let mut session = ClaudeSession::default();
        session.line(br#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"}}}"#);
        session.line(br#"{"type":"control_request","request_id":"r2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"pwd"}}}"#);
        assert_eq!(
            written(&session.answer("r1", Decision::Allow, None)),
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": "r1",
                "response": {"behavior": "allow", "updatedInput": {"command": "ls"}}}})
        );
        assert_eq!(
            written(&session.answer("r2", Decision::AllowAlways, None)),
            json!({"type": "control_response", "response": {"subtype": "success", "request_id": "r2",
                "response": {"behavior": "allow", "updatedInput": {"command": "pwd"},
                    "updatedPermissions": [{"type": "addRules", "rules": [{"toolName": "Bash"}],
                        "behavior": "allow", "destination": "session"}]}}})
        );
    }

    #[test]
    fn cs7_deny_sends_the_callers_message_or_a_default() {
        let mut session = ClaudeSession::default();
        session.line(br#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{}}}"#);
        let deny = |reply: &Reply| written(reply)["response"]["response"].clone();
        assert_eq!(
            deny(&session.answer("r1", Decision::Deny, Some("not that file"))),
            json!({"behavior": "deny", "message": "not that file"})
        );
        assert_eq!(
            deny(&session.answer("r9", Decision::Deny, None)),
            json!({"behavior": "deny", "message": DENIED})
        );
    }

    #[test]
    fn cs8_other_control_requests_get_an_error_answer() {
        let mut session = ClaudeSession::default();
        let reply = session.line(br#"{"type":"control_request","request_id":"h1","request":{"subtype":"hook_callback","callback_id":"x"}}"#);
        assert_eq!(
            written(&reply),
            json!({"type": "control_response", "response": {"subtype": "error", "request_id": "h1",
                "error": "harness answers no control request of subtype `hook_callback`"}})
        );
        assert!(!reply.turn_ended);
    }

    #[test]
    fn cs9_a_cancelled_request_is_withdrawn_and_withdrawals_deny_saying_why() {
        let mut session = ClaudeSession::default();
        let reply = session.line(br#"{"type":"control_cancel_request","request_id":"r1"}"#);
        assert_eq!(reply.withdrawn, ["r1"]);
        let reply = session.withdraw("r2", Withdrawal::NoCaller);
        assert_eq!(
            written(&reply)["response"]["response"]["message"],
            NO_CALLER
        );
        let reply = session.withdraw("r3", Withdrawal::Interrupted);
        assert_eq!(written(&reply)["response"]["response"]["behavior"], "deny");
    }

    #[test]
    fn cs10_interrupt_is_a_control_request_with_an_id_of_its_own_and_close_ends_input() {
        let mut session = ClaudeSession::default();
        let first = written(&session.interrupt());
        let second = written(&session.interrupt());
        assert_eq!(first["request"], json!({"subtype": "interrupt"}));
        assert_eq!(first["type"], "control_request");
        assert_ne!(first["request_id"], second["request_id"]);
        let (reply, grace) = session.close();
        assert!(reply.close);
        assert_eq!(grace, CLOSE_GRACE);
    }
}
