//! An ACP session (A16-A23 of `docs/acp.md`): one agent process, one ACP session, a
//! `session/prompt` per turn, permission requests answered by the caller. The core's session
//! driver takes its steps through [`AcpSession`]; [`open`] starts one for any ACP agent
//! command, for the `acp` backend and for backends whose agent speaks ACP (Gemini CLI).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use harness_agents_core::process::{
    self, CLOSE_GRACE, Conversation, ProcessSpec, Reply, SessionSpec, spawn_session,
};
use harness_agents_core::session::{Session, Withdrawal};
use harness_agents_core::transcript::Header;
use harness_agents_core::{Backend, Decision, Launch, RunError, RunRequest};
use serde::Deserialize;
use serde_json::Value;

use crate::client::{answer_permission, initialize_params, send};
use crate::launch::command_line;
use crate::wire::{
    Answer, CancelParams, LoadSessionParams, NewSessionParams, Notification, PermissionAnswer,
    PermissionOption, PermissionOptionKind, PermissionOutcome, PermissionRequest, PromptParams,
    Request, RpcError, TextBlock,
};
use crate::{AcpHarness, Permission};

/// How long [`open`] waits for the agent's answer to `initialize` when the request resumes a
/// session (and has no `timeout` of its own), to know whether the agent can (I5).
pub const OPEN_LIMIT: Duration = Duration::from_secs(60);

/// The ids of the client's first requests; each prompt takes the next id.
const INITIALIZE: u64 = 0;
const OPEN_SESSION: u64 = 1;

/// The decision each kind of option stands for (A17): allow is the offered `allow_once`,
/// allow_always `allow_always`, deny `reject_once`.
const KINDS: [(Decision, PermissionOptionKind); 3] = [
    (Decision::Allow, PermissionOptionKind::AllowOnce),
    (Decision::AllowAlways, PermissionOptionKind::AllowAlways),
    (Decision::Deny, PermissionOptionKind::RejectOnce),
];

/// The decisions a permission request offers the caller (A17): those for which the agent
/// offered an option of the matching kind, in the order allow, allow_always, deny.
pub(crate) fn offered(options: &[PermissionOption]) -> Vec<Decision> {
    KINDS
        .iter()
        .filter(|(_, kind)| options.iter().any(|o| o.kind == *kind))
        .map(|(decision, _)| *decision)
        .collect()
}

/// The option standing for `decision` (A17), the first of its kind.
fn option_for(options: &[(PermissionOptionKind, String)], decision: Decision) -> Option<&str> {
    let (_, kind) = KINDS.iter().find(|(d, _)| *d == decision)?;
    options
        .iter()
        .find(|(k, _)| k == kind)
        .map(|(_, id)| id.as_str())
}

/// A request id as the `permission` event names it (A17): a string as it is, a number as
/// written; `None` for any other id (JSON-RPC allows none other but `null`).
pub(crate) fn request_key(id: &Value) -> Option<String> {
    match id {
        Value::String(id) => Some(id.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Whether the agent can continue a stored session, from `initialize`'s answer (A16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reopen {
    /// `session/resume` (`agentCapabilities.sessionCapabilities.resume`).
    Resume,
    /// `session/load` (`agentCapabilities.loadSession`).
    Load,
}

impl Reopen {
    fn of(result: &Value) -> Option<Reopen> {
        let capabilities = result.get("agentCapabilities");
        let resume = capabilities
            .and_then(|c| c.get("sessionCapabilities"))
            .and_then(|c| c.get("resume"))
            .is_some_and(Value::is_object);
        let load = capabilities
            .and_then(|c| c.get("loadSession"))
            .and_then(Value::as_bool)
            == Some(true);
        match (resume, load) {
            (true, _) => Some(Reopen::Resume),
            (false, true) => Some(Reopen::Load),
            (false, false) => None,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Reopen::Resume => "session/resume",
            Reopen::Load => "session/load",
        }
    }
}

/// What [`open`] learns from the agent's answer to `initialize`: `Err` with the reason when
/// it cannot resume the stored session asked for.
type Opened = Result<(), String>;

/// Where the session is in the protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `initialize` sent.
    Initializing,
    /// `session/new`, `session/load` or `session/resume` sent.
    Opening,
    /// The session is open: prompts go out.
    Open,
    /// The session could not open, or was closed: the agent's input is closed.
    Done,
}

/// A permission request waiting for the caller: its id as the agent wrote it, and the options
/// it offered (kind and id).
#[derive(Debug)]
struct Asked {
    id: Value,
    options: Vec<(PermissionOptionKind, String)>,
}

/// One ACP session's transport (A16-A23): the client's messages for each step of the core's
/// session driver, and what each of the agent's messages means for the session.
#[derive(Debug)]
pub struct AcpSession {
    cwd: PathBuf,
    resume: Option<String>,
    /// `bypassPermissions` (or `yolo`): requests are answered at once, allowed (A18).
    bypass: bool,
    phase: Phase,
    session_id: Option<String>,
    /// The next id of the client's requests.
    next_id: u64,
    /// The id of the prompt under way.
    prompt: Option<u64>,
    /// A prompt given before the session opened: sent when it has.
    queued: Option<String>,
    asked: HashMap<String, Asked>,
    opened: Option<futures::channel::oneshot::Sender<Opened>>,
}

impl AcpSession {
    /// A session in `cwd` (absolute), continuing the stored session `resume` when given, its
    /// permission requests answered by the caller, or at once when `permission_mode` is
    /// `bypassPermissions` or `yolo`.
    pub fn new(cwd: PathBuf, resume: Option<String>, permission_mode: Option<&str>) -> Self {
        AcpSession {
            cwd,
            resume,
            bypass: Permission::of(permission_mode) == Permission::AllowAll,
            phase: Phase::Initializing,
            session_id: None,
            next_id: OPEN_SESSION + 1,
            prompt: None,
            queued: None,
            asked: HashMap::new(),
            opened: None,
        }
    }

    /// Whether the mode answers every permission request (A18): the session is then read as
    /// a run is, and no request reaches the caller.
    pub fn answers_permissions(&self) -> bool {
        self.bypass
    }

    fn tell(&mut self, opened: Opened) {
        if let Some(tx) = self.opened.take() {
            let _ = tx.send(opened);
        }
    }

    fn done(&mut self, reply: &mut Reply) {
        self.phase = Phase::Done;
        reply.close = true;
        self.tell(Ok(()));
    }

    /// The turn's prompt (A16).
    fn prompt(&mut self, text: &str, reply: &mut Reply) {
        let Some(session) = &self.session_id else {
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        self.prompt = Some(id);
        let params = PromptParams {
            session_id: session,
            prompt: [TextBlock { kind: "text", text }],
        };
        send(reply, &Request::new(id, "session/prompt", params));
    }

    /// An answer to one of the client's requests.
    fn answered(&mut self, id: &Value, message: &Value, reply: &mut Reply) {
        let id = id.as_u64();
        if id.is_some() && id == self.prompt {
            // A16: the prompt's answer, whatever it says, ends the turn.
            self.prompt = None;
            reply.turn_ended = true;
            return;
        }
        let expected = match self.phase {
            Phase::Initializing => INITIALIZE,
            Phase::Opening => OPEN_SESSION,
            Phase::Open | Phase::Done => return,
        };
        if id != Some(expected) {
            return;
        }
        let Some(result) = message
            .get("result")
            .filter(|_| message.get("error").is_none())
        else {
            // A14: the session cannot open.
            self.done(reply);
            return;
        };
        let cwd = self.cwd.to_string_lossy().into_owned();
        match self.phase {
            Phase::Initializing => {
                self.phase = Phase::Opening;
                match (&self.resume, Reopen::of(result)) {
                    (None, _) => {
                        let params = NewSessionParams {
                            cwd: &cwd,
                            mcp_servers: [],
                        };
                        send(reply, &Request::new(OPEN_SESSION, "session/new", params));
                    }
                    (Some(stored), Some(how)) => {
                        let params = LoadSessionParams {
                            session_id: stored,
                            cwd: &cwd,
                            mcp_servers: [],
                        };
                        send(reply, &Request::new(OPEN_SESSION, how.method(), params));
                        self.session_id = Some(stored.clone());
                    }
                    (Some(_), None) => {
                        // I5: the agent cannot resume; nothing more is asked of it.
                        self.tell(Err(
                            "the agent advertises neither `session/load` nor `session/resume`"
                                .into(),
                        ));
                        self.done(reply);
                        return;
                    }
                }
                self.tell(Ok(()));
            }
            Phase::Opening => {
                if self.resume.is_none() {
                    match result.get("sessionId").and_then(Value::as_str) {
                        Some(session) => self.session_id = Some(session.to_string()),
                        None => {
                            self.done(reply);
                            return;
                        }
                    }
                }
                self.phase = Phase::Open;
                // A23: the session's id is known from here on, before any turn.
                reply.session_id = self.session_id.clone();
                if let Some(text) = self.queued.take() {
                    self.prompt(&text, reply);
                }
            }
            Phase::Open | Phase::Done => {}
        }
    }

    /// A request from the agent: a permission request waits for the caller (A17) or is
    /// answered by the mode (A18); any other gets -32601 (A14).
    fn asked(&mut self, id: &Value, method: &str, message: &Value, reply: &mut Reply) {
        if method != "session/request_permission" {
            send(
                reply,
                &Answer::<()>::new(id, Err(RpcError::method_not_found())),
            );
            return;
        }
        let params = message.get("params").unwrap_or(&Value::Null);
        let request = match PermissionRequest::deserialize(params) {
            Ok(request) => request,
            Err(e) => {
                let error = RpcError::invalid_params(e.to_string());
                send(reply, &Answer::<()>::new(id, Err(error)));
                return;
            }
        };
        if self.bypass {
            let answer = answer_permission(&request, Permission::AllowAll);
            send(reply, &Answer::new(id, Ok(answer)));
            return;
        }
        match request_key(id) {
            Some(key) if !offered(&request.options).is_empty() => {
                let options = request
                    .options
                    .into_iter()
                    .map(|o| (o.kind, o.option_id))
                    .collect();
                let asked = Asked {
                    id: id.clone(),
                    options,
                };
                self.asked.insert(key, asked);
            }
            // A17: nobody could answer it (no decision offered, or an id the caller cannot
            // name), so it is cancelled at once and the decoder shows no request.
            _ => {
                let answer = PermissionAnswer {
                    outcome: PermissionOutcome::Cancelled,
                };
                send(reply, &Answer::new(id, Ok(answer)));
            }
        }
    }

    /// The answer to the waiting request `key`: the option for `decision`, else `cancelled`.
    fn settle(&mut self, key: &str, decision: Option<Decision>) -> Reply {
        let mut reply = Reply::default();
        let Some(asked) = self.asked.remove(key) else {
            return reply;
        };
        let outcome = match decision.and_then(|d| option_for(&asked.options, d)) {
            Some(option_id) => PermissionOutcome::Selected { option_id },
            None => PermissionOutcome::Cancelled,
        };
        send(
            &mut reply,
            &Answer::new(&asked.id, Ok(PermissionAnswer { outcome })),
        );
        reply
    }
}

impl Conversation for AcpSession {
    /// A16: `initialize` as the session opens.
    fn open(&mut self) -> Reply {
        let mut reply = Reply::default();
        send(
            &mut reply,
            &Request::new(INITIALIZE, "initialize", initialize_params()),
        );
        reply
    }

    fn line(&mut self, line: &[u8]) -> Reply {
        let mut reply = Reply::default();
        let Some(recorded) = crate::wire::agent_line(line) else {
            return reply;
        };
        reply.record.push(recorded);
        let Ok(message) = serde_json::from_slice::<Value>(line) else {
            return reply;
        };
        let method = message.get("method").and_then(Value::as_str);
        match (message.get("id"), method) {
            (Some(id), Some(method)) if self.phase != Phase::Done => {
                let id = id.clone();
                self.asked(&id, method, &message, &mut reply);
            }
            (Some(id), None) => {
                let id = id.clone();
                self.answered(&id, &message, &mut reply);
            }
            _ => {}
        }
        reply
    }

    /// A cut-short session closes as `close` does; the driver interrupts the turn first.
    fn stop(&mut self) -> (Reply, Duration) {
        self.close()
    }

    /// A16: `session/prompt`, or held until the session has opened.
    fn start_turn(&mut self, _turn: u32, text: &str) -> Reply {
        let mut reply = Reply::default();
        match self.phase {
            Phase::Open => self.prompt(text, &mut reply),
            Phase::Initializing | Phase::Opening => self.queued = Some(text.to_string()),
            Phase::Done => {}
        }
        reply
    }

    /// A17: the option of the decision's kind.
    fn answer(&mut self, id: &str, decision: Decision, _message: Option<&str>) -> Reply {
        self.settle(id, Some(decision))
    }

    /// A19: `cancelled` for an interrupted turn (ACP requires it); a request nobody is left
    /// to answer is rejected once, as a denial.
    fn withdraw(&mut self, id: &str, why: Withdrawal) -> Reply {
        match why {
            Withdrawal::Interrupted => self.settle(id, None),
            Withdrawal::NoCaller => self.settle(id, Some(Decision::Deny)),
        }
    }

    /// A19: the `session/cancel` notification, while a prompt is under way.
    fn interrupt(&mut self) -> Reply {
        let mut reply = Reply::default();
        if let (Some(session), Some(_)) = (&self.session_id, self.prompt) {
            let params = CancelParams {
                session_id: session,
            };
            send(&mut reply, &Notification::new("session/cancel", params));
        }
        reply
    }

    /// A20: the agent's input closes; it has the core's grace to exit.
    fn close(&mut self) -> (Reply, Duration) {
        self.phase = Phase::Done;
        self.queued = None;
        (Reply::close(), CLOSE_GRACE)
    }
}

/// How the agent of a session is started.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum AgentCommand {
    /// The request's `agent` (else its `binary`), then its `extra_args`: the `acp` backend's
    /// (A12).
    Request,
    /// A backend's launch of its agent in ACP mode (Gemini CLI's `gemini --acp`, G13): the
    /// binary the request names, else the launch's variable, else its program; its leading
    /// arguments and model flag, these permission flags, the request's `extra_args`.
    Launch(&'static Launch, Vec<String>),
}

/// Opens a session (A16-A23) with an ACP agent, for the backend `backend` (the name its
/// errors give; the transcript's header names `acp`, whose normalizer reads it), started as
/// `command` says, without a shell, in the request's directory. The request's `prompt` is not
/// used (prompts come through the session); `resume` continues a stored session through
/// `session/resume` or `session/load`, and an agent that advertises neither gives
/// [`RunError::CannotResume`] before any prompt (I5); `timeout` and `idle_timeout` bound each
/// turn.
///
/// # Errors
///
/// [`RunError::NoAgentCommand`] when `command` is [`AgentCommand::Request`] and the request
/// names no agent; as [`process::spawn_session`]; and [`RunError::CannotResume`] as above
/// (also when the agent does not answer `initialize` within the request's `timeout`, else
/// [`OPEN_LIMIT`]).
pub async fn open(
    backend: &str,
    command: AgentCommand,
    request: RunRequest,
) -> Result<Session, RunError> {
    let (dir, mut config) = process::run_dir(&request)?;
    let mut conversation = AcpSession::new(
        dir.clone(),
        request.resume.clone(),
        request.permission_mode.as_deref(),
    );
    // A18: under bypassPermissions the permission requests are read as a run reads them.
    config.session = !conversation.answers_permissions();
    let (tx, rx) = futures::channel::oneshot::channel();
    conversation.opened = Some(tx);
    let limits = SessionSpec::new(request.timeout, request.idle_timeout);
    let wait = request
        .resume
        .is_some()
        .then(|| request.timeout.unwrap_or(OPEN_LIMIT));
    let mut spec = match command {
        AgentCommand::Request => {
            let Some((program, args)) = command_line(&request) else {
                return Err(RunError::NoAgentCommand {
                    backend: backend.to_string(),
                });
            };
            let mut spec = ProcessSpec::for_request(request, "", "", Vec::new(), "");
            spec.program = program;
            spec.args = args;
            spec.install_hint = None;
            spec
        }
        AgentCommand::Launch(launch, permission) => {
            let args = launch.args(&request, &dir, permission);
            ProcessSpec::for_request(
                request,
                launch.env_var,
                launch.program,
                args,
                launch.install,
            )
        }
    };
    spec.cwd = Some(dir);
    spec.stdin = Vec::new();
    spec.header = Header::new(AcpHarness.name(), &config);
    let session = spawn_session(
        spec,
        AcpHarness.normalizer(config),
        Box::new(conversation),
        limits,
    )?;
    let Some(limit) = wait else {
        return Ok(session);
    };
    let cannot = |why: String| RunError::CannotResume {
        backend: backend.to_string(),
        why: Some(why),
    };
    match tokio::time::timeout(limit, rx).await {
        // An agent that died first shows why in the session's stream.
        Ok(Ok(Ok(()))) | Ok(Err(_)) => Ok(session),
        Ok(Ok(Err(why))) => Err(cannot(why)),
        Err(_) => Err(cannot(format!(
            "the agent did not answer `initialize` within {} seconds",
            limit.as_secs_f64()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a17_the_decisions_offered_are_those_with_an_option_of_their_kind() {
        let options: Vec<PermissionOption> = serde_json::from_value(json!([
            {"optionId": "never", "name": "Never", "kind": "reject_always"},
            {"optionId": "once", "name": "Once", "kind": "allow_once"},
            {"optionId": "no", "name": "No", "kind": "reject_once"},
        ]))
        .unwrap_or_default();
        assert_eq!(offered(&options), [Decision::Allow, Decision::Deny]);
        let kinds: Vec<(PermissionOptionKind, String)> =
            options.into_iter().map(|o| (o.kind, o.option_id)).collect();
        assert_eq!(option_for(&kinds, Decision::Allow), Some("once"));
        assert_eq!(option_for(&kinds, Decision::Deny), Some("no"));
        assert_eq!(option_for(&kinds, Decision::AllowAlways), None);
        assert_eq!(request_key(&json!(0)).as_deref(), Some("0"));
        assert_eq!(request_key(&json!("r")).as_deref(), Some("r"));
        assert_eq!(request_key(&json!(null)), None);
    }

    #[test]
    fn a21_resume_is_preferred_to_load_and_neither_means_none() {
        let of = |caps: serde_json::Value| Reopen::of(&json!({"agentCapabilities": caps}));
        assert_eq!(
            of(json!({"loadSession": true, "sessionCapabilities": {"resume": {}}})),
            Some(Reopen::Resume)
        );
        assert_eq!(of(json!({"loadSession": true})), Some(Reopen::Load));
        assert_eq!(
            of(json!({"loadSession": false, "sessionCapabilities": {"resume": null}})),
            None
        );
        assert_eq!(of(json!({})), None);
    }
}
