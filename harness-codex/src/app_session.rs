//! Codex's session transport (XA14-XA22 of `docs/codex-app-server.md`): one `codex app-server`
//! process spoken to in JSON-RPC 2.0 over its standard input and output, the core's process
//! driver doing the rest. The lines it reads go to [`crate::AppServerNormalizer`] unchanged.

use std::collections::HashMap;
use std::time::Duration;

use harness_agents_core::Decision;
use harness_agents_core::process::{CLOSE_GRACE, Conversation, Reply};
use harness_agents_core::session::Withdrawal;
use serde_json::{Value, json};

use crate::app_server::{APPROVALS, request_key, request_method};

/// What a session asks of the thread, from the caller's request (XA14, XA15).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ThreadSettings {
    /// The thread's working directory, absolute.
    pub cwd: String,
    /// The model, when the caller chose one.
    pub model: Option<String>,
    /// `approvalPolicy`, when the permission mode sets one.
    pub approval: Option<String>,
    /// `sandbox`, when the permission mode sets one.
    pub sandbox: Option<String>,
    /// The thread to resume (I5), else a new one.
    pub resume: Option<String>,
}

/// XA15: the `approvalPolicy` and `sandbox` a `permission_mode` stands for.
pub(crate) fn permission_settings(mode: &str) -> (Option<&str>, Option<&str>) {
    match mode {
        "default" => (None, None),
        "plan" => (Some("on-request"), Some("read-only")),
        "acceptEdits" => (Some("on-request"), Some("workspace-write")),
        "bypassPermissions" => (Some("never"), Some("danger-full-access")),
        "untrusted" | "on-request" | "never" => (Some(mode), None),
        other => (None, Some(other)),
    }
}

/// One session's transport: the requests it sent, the thread and turn they made, and the
/// server's requests waiting for the caller.
#[derive(Debug)]
pub(crate) struct AppServerSession {
    settings: ThreadSettings,
    /// Requests sent so far (the `N` of their ids).
    sent: u64,
    /// The thread, once `thread/start` or `thread/resume` answered.
    thread: Option<String>,
    /// A prompt whose turn started before the thread was ready (XA16).
    waiting: Option<String>,
    /// The running turn's id, once known (XA19).
    turn: Option<String>,
    /// A turn is running on the server's side (its `turn/start` went out).
    running: bool,
    /// An interrupt asked for before the running turn's id was known (XA19).
    interrupt: bool,
    /// The approval requests waiting for the caller: their id as the server wrote it (XA17).
    asked: HashMap<String, Value>,
}

/// One JSON line for the server's standard input.
fn line(value: &Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

impl AppServerSession {
    /// A session asking for a thread with `settings`.
    pub(crate) fn new(settings: ThreadSettings) -> Self {
        AppServerSession {
            settings,
            sent: 0,
            thread: None,
            waiting: None,
            turn: None,
            running: false,
            interrupt: false,
            asked: HashMap::new(),
        }
    }

    /// A request of the session, its id `METHOD#N` (XA11).
    fn request(&mut self, method: &str, params: Value) -> Vec<u8> {
        self.sent += 1;
        line(&json!({"id": format!("{method}#{}", self.sent), "method": method, "params": params}))
    }

    /// XA14: `thread/start`, or `thread/resume` without the earlier turns, with the
    /// settings (the sandbox again on resume: the server does not keep it).
    fn thread_request(&mut self) -> Vec<u8> {
        let settings = &self.settings;
        let mut params = json!({"cwd": settings.cwd});
        let mut set = |name: &str, value: &Option<String>| {
            if let Some(value) = value {
                params[name] = json!(value);
            }
        };
        set("model", &settings.model);
        set("approvalPolicy", &settings.approval);
        set("sandbox", &settings.sandbox);
        match settings.resume.clone() {
            Some(id) => {
                params["threadId"] = json!(id);
                params["excludeTurns"] = json!(true);
                self.request("thread/resume", params)
            }
            None => self.request("thread/start", params),
        }
    }

    /// XA16: `turn/start` with the prompt as one text input.
    fn turn_request(&mut self, thread: &str, text: &str) -> Vec<u8> {
        self.running = true;
        let params = json!({"threadId": thread, "input": [{"type": "text", "text": text}]});
        self.request("turn/start", params)
    }

    /// XA19: `turn/interrupt` of the running turn.
    fn interrupt_request(&mut self, thread: &str, turn: &str) -> Vec<u8> {
        self.interrupt = false;
        self.request(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
    }

    /// XA17: the answer `decision` to the waiting request `key`.
    fn decide(&mut self, key: &str, decision: &str) -> Reply {
        let id = self
            .asked
            .remove(key)
            .unwrap_or_else(|| Value::String(key.to_string()));
        Reply::write(line(&json!({"id": id, "result": {"decision": decision}})))
    }

    /// The running turn's id is known: an interrupt waiting for it goes out.
    fn turn_known(&mut self, id: &str, reply: &mut Reply) {
        self.turn = Some(id.to_string());
        if self.interrupt {
            if let Some(thread) = self.thread.clone() {
                reply.write = self.interrupt_request(&thread, id);
            }
        }
    }

    /// What a server request asks of the session (XA17, XA20).
    fn server_request(&mut self, message: &Value, method: &str, reply: &mut Reply) {
        let Some(id) = message.get("id") else {
            return;
        };
        let Some(key) = request_key(id) else {
            // XA1: nobody could answer it; the normalizer reports it.
            return;
        };
        if APPROVALS.contains(&method) {
            self.asked.insert(key, id.clone());
            return;
        }
        reply.write = line(&json!({
            "id": id,
            "error": {
                "code": -32601,
                "message": format!("harness does not handle server requests of method `{method}`"),
            },
        }));
    }

    /// The answer to one of the session's requests (XA14, XA16, XA19).
    fn response(&mut self, message: &Value, reply: &mut Reply) {
        let method = message.get("id").and_then(request_method);
        let failed = message.get("error").is_some();
        let result = message.get("result");
        match method {
            Some("initialize") if !failed => reply.write = self.thread_request(),
            Some("thread/start" | "thread/resume") => {
                let thread = result
                    .and_then(|r| r.get("thread"))
                    .and_then(|t| t.get("id"))
                    .and_then(Value::as_str);
                match thread {
                    Some(thread) if !failed => {
                        self.thread = Some(thread.to_string());
                        // XA22: the thread's id is the session's, known before any turn.
                        reply.session_id = Some(thread.to_string());
                        if let Some(text) = self.waiting.take() {
                            reply.write = self.turn_request(thread, &text);
                        }
                    }
                    // XA21: without a thread the session cannot go on.
                    _ => reply.close = true,
                }
            }
            // XA21: the same for a refused handshake.
            Some("initialize") => reply.close = true,
            Some("turn/start") if failed => {
                // The turn never began: this answer is its end.
                self.running = false;
                self.turn = None;
                self.interrupt = false;
                reply.turn_ended = true;
            }
            Some("turn/start") => {
                let turn = result
                    .and_then(|r| r.get("turn"))
                    .and_then(|t| t.get("id"))
                    .and_then(Value::as_str);
                if let (Some(turn), None) = (turn, &self.turn) {
                    self.turn_known(turn, reply);
                }
            }
            _ => {}
        }
    }

    /// A notification (XA16, XA18, XA19).
    fn notification(&mut self, message: &Value, method: &str, reply: &mut Reply) {
        let params = message.get("params");
        match method {
            "turn/started" => {
                let turn = params
                    .and_then(|p| p.get("turn"))
                    .and_then(|t| t.get("id"))
                    .and_then(Value::as_str);
                if let (Some(turn), None) = (turn, &self.turn) {
                    self.turn_known(turn, reply);
                }
            }
            "turn/completed" => {
                self.running = false;
                self.turn = None;
                self.interrupt = false;
                reply.turn_ended = true;
            }
            "serverRequest/resolved" => {
                // XA18: the server gave up on a request (its turn was interrupted).
                let id = params
                    .and_then(|p| p.get("requestId"))
                    .and_then(request_key);
                if let Some(key) = id {
                    if self.asked.remove(&key).is_some() {
                        reply.withdrawn.push(key);
                    }
                }
            }
            _ => {}
        }
    }
}

impl Conversation for AppServerSession {
    /// XA14: the handshake; the thread is asked for once `initialize` is answered.
    fn open(&mut self) -> Reply {
        let mut write = self.request(
            "initialize",
            json!({"clientInfo": {"name": "harness", "version": env!("CARGO_PKG_VERSION")}}),
        );
        write.extend(line(&json!({"method": "initialized"})));
        Reply::write(write)
    }

    fn line(&mut self, text: &[u8]) -> Reply {
        let mut reply = Reply::default();
        reply.record.push(text.to_vec());
        let Ok(message) = serde_json::from_slice::<Value>(text) else {
            return reply;
        };
        let method = message.get("method").and_then(Value::as_str);
        match (method, message.get("id")) {
            (Some(method), Some(_)) => self.server_request(&message, method, &mut reply),
            (Some(method), None) => self.notification(&message, method, &mut reply),
            (None, Some(_)) => self.response(&message, &mut reply),
            (None, None) => {}
        }
        reply
    }

    /// A cut-short session is closed as `close` does it; the driver interrupts the turn first.
    fn stop(&mut self) -> (Reply, Duration) {
        self.close()
    }

    /// XA16: `turn/start`, at once when the thread is ready, else when it is.
    fn start_turn(&mut self, _turn: u32, text: &str) -> Reply {
        match self.thread.clone() {
            Some(thread) => Reply::write(self.turn_request(&thread, text)),
            None => {
                self.waiting = Some(text.to_string());
                Reply::default()
            }
        }
    }

    /// XA17: `accept`, `acceptForSession` or `decline`; Codex's answer has no message.
    fn answer(&mut self, id: &str, decision: Decision, _message: Option<&str>) -> Reply {
        let decision = match decision {
            Decision::Allow => "accept",
            Decision::AllowAlways => "acceptForSession",
            Decision::Deny => "decline",
        };
        self.decide(id, decision)
    }

    /// XA18: `decline` either way.
    fn withdraw(&mut self, id: &str, _why: Withdrawal) -> Reply {
        self.decide(id, "decline")
    }

    /// XA19: `turn/interrupt` naming the running turn, once its id is known; a turn whose
    /// prompt never went out (the thread not ready yet) ends at once.
    fn interrupt(&mut self) -> Reply {
        if self.waiting.take().is_some() {
            let mut reply = Reply::default();
            reply.turn_ended = true;
            return reply;
        }
        if !self.running {
            return Reply::default();
        }
        match (self.thread.clone(), self.turn.clone()) {
            (Some(thread), Some(turn)) => Reply::write(self.interrupt_request(&thread, &turn)),
            _ => {
                self.interrupt = true;
                Reply::default()
            }
        }
    }

    /// XA21: closing its input ends the server, even mid-turn.
    fn close(&mut self) -> (Reply, Duration) {
        (Reply::close(), CLOSE_GRACE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(reply: &Reply) -> Vec<Value> {
        reply
            .write
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("JSON lines"))
            .collect()
    }

    fn fresh() -> AppServerSession {
        AppServerSession::new(ThreadSettings {
            cwd: "/w".into(),
            ..ThreadSettings::default()
        })
    }

    /// A session whose thread `th` is ready.
    fn ready() -> AppServerSession {
        let mut session = fresh();
        session.open();
        session.line(br#"{"id":"initialize#1","result":{}}"#);
        session.line(br#"{"id":"thread/start#2","result":{"thread":{"id":"th"}}}"#);
        session
    }

    #[test]
    fn xa15_permission_modes_set_the_policy_and_the_sandbox() {
        let table = [
            ("default", (None, None)),
            ("plan", (Some("on-request"), Some("read-only"))),
            ("acceptEdits", (Some("on-request"), Some("workspace-write"))),
            (
                "bypassPermissions",
                (Some("never"), Some("danger-full-access")),
            ),
            ("untrusted", (Some("untrusted"), None)),
            ("on-request", (Some("on-request"), None)),
            ("never", (Some("never"), None)),
            ("read-only", (None, Some("read-only"))),
            ("bogus", (None, Some("bogus"))),
        ];
        for (mode, expected) in table {
            assert_eq!(permission_settings(mode), expected, "{mode}");
        }
    }

    #[test]
    fn xa14_xa16_the_prompt_waits_for_the_thread() {
        let mut session = fresh();
        assert_eq!(
            written(&session.open()),
            [
                json!({"id": "initialize#1", "method": "initialize", "params": {"clientInfo":
                    {"name": "harness", "version": env!("CARGO_PKG_VERSION")}}}),
                json!({"method": "initialized"}),
            ]
        );
        assert!(session.start_turn(1, "hi").write.is_empty());
        let reply = session.line(br#"{"id":"initialize#1","result":{}}"#);
        assert_eq!(
            written(&reply),
            [json!({"id": "thread/start#2", "method": "thread/start", "params": {"cwd": "/w"}})]
        );
        let reply = session.line(br#"{"id":"thread/start#2","result":{"thread":{"id":"th"}}}"#);
        assert_eq!(
            written(&reply),
            [json!({"id": "turn/start#3", "method": "turn/start",
                "params": {"threadId": "th", "input": [{"type": "text", "text": "hi"}]}})]
        );
        assert_eq!(reply.record.len(), 1);
    }

    #[test]
    fn xa19_an_interrupt_waits_for_the_turns_id_and_a_prompt_not_sent_ends_at_once() {
        let mut session = ready();
        session.start_turn(1, "hi");
        assert!(session.interrupt().write.is_empty());
        let reply = session.line(br#"{"id":"turn/start#3","result":{"turn":{"id":"t1"}}}"#);
        assert_eq!(
            written(&reply),
            [json!({"id": "turn/interrupt#4", "method": "turn/interrupt",
                "params": {"threadId": "th", "turnId": "t1"}})]
        );
        let reply = session.line(br#"{"method":"turn/completed","params":{"turn":{"id":"t1"}}}"#);
        assert!(reply.turn_ended);
        // A session whose thread never came: the turn's prompt never went out.
        let mut waiting = fresh();
        waiting.open();
        waiting.start_turn(1, "hi");
        let reply = waiting.interrupt();
        assert!(reply.turn_ended);
        assert!(reply.write.is_empty());
    }

    #[test]
    fn xa17_xa18_answers_keep_the_servers_id_and_a_resolved_request_is_withdrawn() {
        let mut session = ready();
        session.line(br#"{"id":7,"method":"item/commandExecution/requestApproval","params":{}}"#);
        session.line(br#"{"id":"s8","method":"item/fileChange/requestApproval","params":{}}"#);
        session.line(br#"{"id":9,"method":"item/fileChange/requestApproval","params":{}}"#);
        assert_eq!(
            written(&session.answer("7", Decision::AllowAlways, Some("unused"))),
            [json!({"id": 7, "result": {"decision": "acceptForSession"}})]
        );
        assert_eq!(
            written(&session.withdraw("s8", Withdrawal::Interrupted)),
            [json!({"id": "s8", "result": {"decision": "decline"}})]
        );
        let reply =
            session.line(br#"{"method":"serverRequest/resolved","params":{"requestId":9}}"#);
        assert_eq!(reply.withdrawn, ["9"]);
        // Resolved again, or one already answered: nothing more.
        let reply =
            session.line(br#"{"method":"serverRequest/resolved","params":{"requestId":7}}"#);
        assert!(reply.withdrawn.is_empty());
    }

    #[test]
    fn xa20_xa21_other_requests_get_an_error_and_a_refused_thread_closes_the_session() {
        let mut session = ready();
        let reply = session.line(br#"{"id":3,"method":"item/tool/call","params":{}}"#);
        assert_eq!(
            written(&reply),
            [json!({"id": 3, "error": {"code": -32601,
                "message": "harness does not handle server requests of method `item/tool/call`"}})]
        );
        let mut refused = fresh();
        refused.open();
        refused.line(br#"{"id":"initialize#1","result":{}}"#);
        let reply = refused
            .line(br#"{"id":"thread/start#2","error":{"code":-32600,"message":"bad sandbox"}}"#);
        assert!(reply.close);
        let reply = session.line(br#"{"id":"turn/start#3","error":{"code":-32600,"message":"x"}}"#);
        assert!(reply.turn_ended);
        let (reply, grace) = session.close();
        assert!(reply.close);
        assert_eq!(grace, CLOSE_GRACE);
    }
}
