//! Pi's session transport (PR rules of `docs/pi.md`): one long-lived `pi --mode rpc` process,
//! a `prompt` command per turn and `abort` as the interrupt on its standard input, the core's
//! process driver doing the rest.

use std::time::Duration;

use harness_agents_core::process::{CLOSE_GRACE, Conversation, Reply};
use serde::Deserialize;
use serde_json::json;

/// The id prefix of the `get_state` command that asks whether a failed request is retried
/// (PR3); the decoder reads its answer the same way (PI16).
pub(crate) const PROBE: &str = "harness-probe-";

/// One session's transport: what goes to Pi's standard input for each step, and which of its
/// lines end a turn.
#[derive(Debug, Default)]
pub(crate) struct PiSession {
    /// How many commands this side has sent (their ids).
    sent: u64,
    /// A turn runs: lines that end one end it.
    running: bool,
    /// The last assistant message failed with `stopReason: "error"` (PR3).
    last_failed: bool,
    /// A failed `agent_end` arrived and its probe is not answered yet (PR3).
    awaiting: bool,
    /// Pi's state has named the session (PR7).
    named: bool,
}

/// The fields of a stdout line the transport reads (PR2, PR3, PR6).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    id: Option<&'a str>,
    #[serde(borrow, default)]
    command: Option<&'a str>,
    #[serde(default)]
    success: Option<bool>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
}

/// A `message_end` line's message, read only on those lines (an extension's dialog has a
/// string `message`).
#[derive(Deserialize)]
struct MessageEnd<'a> {
    #[serde(borrow)]
    message: Message<'a>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    role: Option<&'a str>,
    #[serde(rename = "stopReason", borrow, default)]
    stop_reason: Option<&'a str>,
}

/// A `get_state` answer's data, read only on those lines (PR7).
#[derive(Deserialize)]
struct State<'a> {
    #[serde(borrow)]
    data: StateData<'a>,
}

#[derive(Deserialize)]
struct StateData<'a> {
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<&'a str>,
}

/// The dialogs an extension opens that wait for an answer (PR6); the other
/// `extension_ui_request` methods are notices.
const DIALOGS: [&str; 4] = ["select", "confirm", "input", "editor"];

/// One JSON line for Pi's standard input.
fn line(value: &serde_json::Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

impl PiSession {
    /// The next id of a command this side sends, with `prefix`.
    fn next_id(&mut self, prefix: &str) -> String {
        self.sent += 1;
        format!("{prefix}{}", self.sent)
    }

    /// The turn ends here (PR3), once.
    fn end(&mut self, reply: &mut Reply) {
        self.awaiting = false;
        if self.running {
            self.running = false;
            reply.turn_ended = true;
        }
    }
}

impl Conversation for PiSession {
    /// PR7: a `get_state` as the session opens, whose answer names the session (`pi --mode
    /// rpc` prints no header); it asks nothing of the model (I1).
    fn open(&mut self) -> Reply {
        let id = self.next_id("harness-state-");
        Reply::write(line(&json!({"id": id, "type": "get_state"})))
    }

    fn line(&mut self, text: &[u8]) -> Reply {
        let mut reply = Reply::default();
        reply.record.push(text.to_vec());
        // A line that is not an object of this shape is the normalizer's to report (PI1).
        let Ok(line) = serde_json::from_slice::<Line<'_>>(text) else {
            return reply;
        };
        match line.kind {
            Some("message_end") => {
                if let Ok(MessageEnd { message }) = serde_json::from_slice(text)
                    && message.role == Some("assistant")
                {
                    self.last_failed = message.stop_reason == Some("error");
                }
            }
            Some("agent_end") if self.last_failed => {
                // PR3: Pi may retry this request; it says so before it answers the probe.
                self.awaiting = true;
                let id = self.next_id(PROBE);
                reply.write = self::line(&json!({"id": id, "type": "get_state"}));
            }
            Some("agent_end") => self.end(&mut reply),
            Some("auto_retry_start") => self.awaiting = false,
            Some("auto_retry_end") if line.success == Some(false) => self.end(&mut reply),
            Some("response") if line.command == Some("get_state") && !self.named => {
                // PR7: the first state names the session.
                if let Ok(State { data }) = serde_json::from_slice(text)
                    && let Some(id) = data.session_id.filter(|id| !id.is_empty())
                {
                    self.named = true;
                    reply.session_id = Some(id.to_string());
                }
                if self.awaiting && line.id.is_some_and(is_probe) {
                    self.end(&mut reply);
                }
            }
            Some("response") => match line.command {
                Some("get_state") if self.awaiting && line.id.is_some_and(is_probe) => {
                    self.end(&mut reply);
                }
                // PR2: a prompt Pi refused starts no agent.
                Some("prompt") if line.success == Some(false) => self.end(&mut reply),
                _ => {}
            },
            Some("extension_ui_request") if line.method.is_some_and(|m| DIALOGS.contains(&m)) => {
                if let Some(id) = line.id {
                    reply.write = self::line(
                        &json!({"type": "extension_ui_response", "id": id, "cancelled": true}),
                    );
                }
            }
            _ => {}
        }
        reply
    }

    /// A cut-short session is closed as `close` does it; the driver interrupts the turn first.
    fn stop(&mut self) -> (Reply, Duration) {
        self.close()
    }

    /// PR2: a `prompt` command.
    fn start_turn(&mut self, _turn: u32, text: &str) -> Reply {
        self.running = true;
        self.last_failed = false;
        self.awaiting = false;
        let id = self.next_id("harness-prompt-");
        Reply::write(line(&json!({"id": id, "type": "prompt", "message": text})))
    }

    /// PR4: the `abort` command.
    fn interrupt(&mut self) -> Reply {
        let id = self.next_id("harness-abort-");
        Reply::write(line(&json!({"id": id, "type": "abort"})))
    }

    /// PR5: closing its input ends Pi.
    fn close(&mut self) -> (Reply, Duration) {
        (Reply::close(), CLOSE_GRACE)
    }
}

/// Whether `id` is one of this side's probes (PR3).
pub(crate) fn is_probe(id: &str) -> bool {
    id.strip_prefix(PROBE)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn written(reply: &Reply) -> Value {
        serde_json::from_slice(&reply.write).expect("one JSON line")
    }

    const FAILED: &[u8] = br#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500 boom"}}"#;
    const GOOD: &[u8] = br#"{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"stop"}}"#;
    const AGENT_END: &[u8] = br#"{"type":"agent_end","messages":[]}"#;

    #[test]
    fn pr2_a_prompt_is_a_prompt_command_and_agent_end_ends_the_turn() {
        let mut session = PiSession::default();
        let reply = session.start_turn(1, "-rf /");
        let lines: Vec<Value> = reply
            .write
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_slice(l).expect("JSON"))
            .collect();
        assert_eq!(
            lines,
            [json!({"id": "harness-prompt-1", "type": "prompt", "message": "-rf /"})]
        );
        assert!(reply.write.ends_with(b"\n"));
        assert!(!session.line(GOOD).turn_ended);
        let reply = session.line(AGENT_END);
        assert!(reply.turn_ended);
        assert_eq!(reply.record, vec![AGENT_END.to_vec()]);
        // A refused prompt ends its turn: no agent runs.
        session.start_turn(2, "x");
        let refused = br#"{"id":"harness-prompt-2","type":"response","command":"prompt","success":false,"error":"No model"}"#;
        assert!(session.line(refused).turn_ended);
    }

    #[test]
    fn pr3_a_failed_request_is_probed_and_a_retry_keeps_the_turn_running() {
        let mut session = PiSession::default();
        session.open();
        session.start_turn(1, "x");
        session.line(FAILED);
        let reply = session.line(AGENT_END);
        assert!(!reply.turn_ended);
        assert_eq!(
            written(&reply),
            json!({"id": "harness-probe-3", "type": "get_state"})
        );
        session.line(br#"{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"500 boom"}"#);
        let answer = br#"{"id":"harness-probe-3","type":"response","command":"get_state","success":true,"data":{}}"#;
        assert!(!session.line(answer).turn_ended);
        session.line(GOOD);
        assert!(session.line(AGENT_END).turn_ended);
        // A failure Pi does not retry ends the turn at the probe's answer.
        session.start_turn(2, "y");
        session.line(FAILED);
        session.line(AGENT_END);
        let answer = br#"{"id":"harness-probe-5","type":"response","command":"get_state","success":true,"data":{}}"#;
        assert!(session.line(answer).turn_ended);
        // Retries given up end the turn at once; the probe's late answer ends nothing.
        session.start_turn(3, "z");
        session.line(FAILED);
        session.line(AGENT_END);
        assert!(
            session
                .line(br#"{"type":"auto_retry_end","success":false,"attempt":3}"#)
                .turn_ended
        );
        let answer = br#"{"id":"harness-probe-7","type":"response","command":"get_state","success":true,"data":{}}"#;
        assert!(!session.line(answer).turn_ended);
    }

    #[test]
    fn pr7_the_state_asked_at_open_names_the_session_once() {
        let mut session = PiSession::default();
        assert_eq!(
            written(&session.open()),
            json!({"id": "harness-state-1", "type": "get_state"})
        );
        let state = br#"{"id":"harness-state-1","type":"response","command":"get_state","success":true,"data":{"sessionId":"019b","isStreaming":false}}"#;
        let reply = session.line(state);
        assert_eq!(reply.session_id.as_deref(), Some("019b"));
        assert!(!reply.turn_ended);
        let again = br#"{"id":"harness-probe-2","type":"response","command":"get_state","success":true,"data":{"sessionId":"other"}}"#;
        assert_eq!(session.line(again).session_id, None);
    }

    #[test]
    fn pr4_pr5_abort_has_an_id_of_its_own_and_close_ends_input() {
        let mut session = PiSession::default();
        let first = written(&session.interrupt());
        let second = written(&session.interrupt());
        assert_eq!(first, json!({"id": "harness-abort-1", "type": "abort"}));
        assert_ne!(first["id"], second["id"]);
        let (reply, grace) = session.close();
        assert!(reply.close);
        assert_eq!(grace, CLOSE_GRACE);
    }

    #[test]
    fn pr6_an_extension_dialog_is_cancelled_and_a_notice_is_not_answered() {
        let mut session = PiSession::default();
        let reply = session.line(br#"{"type":"extension_ui_request","id":"u1","method":"confirm","title":"Sure?","message":"Delete it?"}"#);
        assert_eq!(
            written(&reply),
            json!({"type": "extension_ui_response", "id": "u1", "cancelled": true})
        );
        let reply = session
            .line(br#"{"type":"extension_ui_request","id":"u2","method":"notify","message":"hi"}"#);
        assert!(reply.write.is_empty());
        assert!(!is_probe("harness-probe-") && !is_probe("harness-probe-1x"));
    }
}
