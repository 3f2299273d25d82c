//! A live session (SPEC section 8) on the one process driver: the same pipes, process tree,
//! transcript and consumer queue as a run, plus the caller's commands, the prompt queue and
//! the permission requests of [`SessionState`], each turn's end and its timers.
//!
//! The driver takes the session's [`Step`]s through the backend's [`Conversation`]: a turn
//! starts with [`Conversation::start_turn`], an answer goes out through
//! [`Conversation::answer`], and so on. The agent's lines say the rest: a `permission` event
//! the normalizer makes is a request waiting for the caller (I4), [`Reply::turn_ended`] ends
//! the running turn (I3), [`Reply::withdrawn`] forgets a request the agent gave up.
//!
//! Decisions beyond the SPEC's words, each for a session that never hangs (I6):
//!
//! - A turn that runs past the request's `timeout`, or is silent past its `idle_timeout`, gets
//!   an `error` event saying so, and the session closes as `close` does (the turn interrupted,
//!   queued prompts dropped, the agent stopped within [`CLOSE_GRACE`]); that turn's status is
//!   `error`, not `interrupted`.
//! - `close` gives the agent [`CLOSE_GRACE`] from the moment it is sent, however the agent
//!   answers the interrupt; then every process of the session is killed.
//! - An agent that exits while the session was not closing gets an `error` event naming its
//!   exit; the running turn ends with status `error`, and so does the session.
//! - When the agent's processes are gone, what its output left pending and the events made at
//!   the end of input (S9) come first, then the `error` naming an unexpected exit, then the
//!   outcome of a turn it cut short; the session's own outcome ([`crate::session::SessionEnd`]) counts every
//!   event of the session. A session that never started a turn gets no end-of-input check:
//!   nothing was asked, so nothing is missing.
//! - The harness's own events (`warning`s about commands, the `error`s above) are not lines of
//!   the agent, so the transcript holds none of them: replaying it (I7) gives every event
//!   but these.

use std::time::Duration;

use super::{CLOSE_GRACE, Conversation, Ending, Feed, ProcessSpec, Reply, start};
use crate::error::RunError;
use crate::event::{Decision, Event, EventBody, Kind, WarningSource};
use crate::normalizer::Normalizer;
use crate::outcome::Status;
use crate::session::{
    Command, EndReason, Input, Session, SessionHandle, SessionItem, SessionState, Step,
};

/// What a session adds to a [`ProcessSpec`]: its per-turn limits (I6).
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct SessionSpec {
    /// How long one turn may take; the session closes when it runs longer.
    pub turn_timeout: Option<Duration>,
    /// How long a turn may go without a line from the agent; the session closes then.
    pub idle_timeout: Option<Duration>,
}

impl SessionSpec {
    /// A session whose turns are bounded by `turn_timeout` and `idle_timeout`.
    pub fn new(turn_timeout: Option<Duration>, idle_timeout: Option<Duration>) -> Self {
        SessionSpec {
            turn_timeout,
            idle_timeout,
        }
    }
}

/// Starts a session: spawns `spec` (its `stdin` is not written, its `timeout` is ignored:
/// `session`'s limits bound each turn instead) with `conversation` as the agent's transport,
/// and returns at once, before anything is asked of the agent (I1).
///
/// The transcript's header is `spec`'s as given: it says the stream is a session's when the
/// normalizer's settings do ([`super::session_spec`] turns that on). A backend whose session
/// reads some of its lines as a run does (ACP's under `bypassPermissions`, whose permission
/// requests are answered at once) leaves it off, so that a replay reads them the same way (I7).
///
/// Must be called from within a tokio runtime with I/O and time enabled, as [`super::spawn`].
///
/// # Errors
///
/// As [`super::spawn`].
pub fn spawn_session(
    mut spec: ProcessSpec,
    normalizer: Box<dyn Normalizer>,
    conversation: Box<dyn Conversation>,
    session: SessionSpec,
) -> Result<Session, RunError> {
    spec.timeout = None;
    let (named, session_id) = tokio::sync::watch::channel(None);
    let turns = Turns {
        named,
        state: SessionState::new(),
        turn_timeout: session.turn_timeout,
        idle_timeout: session.idle_timeout,
        turn_started: false,
        finish_grace: None,
        cut: false,
        reason: None,
        made_errors: 0,
    };
    let (items, sender) = start(spec, normalizer, Some(conversation), Some(turns))?;
    let sender = sender.ok_or_else(|| RunError::Io {
        binary: "session".into(),
        source: std::io::Error::other("the session's command channel is missing"),
    })?;
    Ok(Session::new(items, SessionHandle::new(sender, session_id)))
}

/// A session's bookkeeping inside the driver.
pub(super) struct Turns {
    /// The agent's own id for the session, once named (I8); dropped with the driver, which
    /// tells a caller still waiting for it that none will come.
    pub(super) named: tokio::sync::watch::Sender<Option<String>>,
    pub(super) state: SessionState,
    pub(super) turn_timeout: Option<Duration>,
    pub(super) idle_timeout: Option<Duration>,
    /// A turn started since the driver last looked: it arms the turn's timers.
    pub(super) turn_started: bool,
    /// The session is closing: the driver kills its processes after this long.
    pub(super) finish_grace: Option<Duration>,
    /// The running turn was cut short by the harness (a time limit, a stop): status `error`.
    pub(super) cut: bool,
    /// Why the session ends, once known.
    pub(super) reason: Option<EndReason>,
    /// `error` events the driver made during the running turn, which its outcome counts.
    pub(super) made_errors: u64,
}

impl Feed {
    /// A command of the caller, or the end of its input (I2).
    pub(super) fn command(&mut self, input: Input) {
        let Some(turns) = &mut self.session else {
            return;
        };
        let steps = match input {
            Input::Command(command) => {
                if command == Command::Close && !turns.state.is_finished() {
                    turns.reason.get_or_insert(EndReason::Caller);
                    turns.finish_grace = Some(CLOSE_GRACE);
                }
                turns.state.command(command)
            }
            Input::Invalid(error) => vec![Step::Warn(error.0)],
            Input::End => turns.state.input_closed(),
        };
        self.take_steps(steps);
    }

    /// The agent asks for permission (I4): the request waits for the caller, or is withdrawn
    /// at once when nobody can answer it.
    pub(super) fn permission_asked(&mut self, id: &str, options: &[Decision]) {
        if let Some(turns) = &mut self.session {
            let steps = turns.state.permission_asked(id, options);
            self.take_steps(steps);
        }
    }

    /// The agent named its own id for the session (I8): the first one stands.
    pub(super) fn named(&mut self, id: String) {
        if let Some(turns) = &self.session {
            turns.named.send_if_modified(|named| {
                let first = named.is_none() && !id.is_empty();
                if first {
                    *named = Some(id);
                }
                first
            });
        }
    }

    /// The agent gave up waiting for request `id`.
    pub(super) fn withdrawn(&mut self, id: &str) {
        if let Some(turns) = &mut self.session {
            turns.state.permission_withdrawn(id);
        }
    }

    /// The agent ended the running turn (I3): its outcome, then the next steps (the next
    /// queued prompt, or the end of the session).
    pub(super) fn turn_ended(&mut self) {
        let Some(turns) = &mut self.session else {
            return;
        };
        let (end, steps) = turns.state.turn_ended();
        if let Some(end) = end {
            self.close_turn(end);
        }
        self.take_steps(steps);
    }

    /// The outcome of the turn that just ended, after its events.
    pub(super) fn close_turn(&mut self, end: crate::session::TurnEnd) {
        let Some(turns) = &mut self.session else {
            return;
        };
        let mut outcome = self.normalizer.end_turn();
        outcome.turn = Some(end.turn);
        if turns.cut {
            outcome.status = Status::Error;
        } else if end.interrupted {
            outcome.status = Status::Interrupted;
        }
        let made = std::mem::take(&mut turns.made_errors);
        if made > 0 {
            *outcome.counts.entry(Kind::Error).or_insert(0) += made;
        }
        turns.cut = false;
        self.out.push_back(SessionItem::TurnEnd(outcome));
    }

    /// The session is cut short by the harness (a turn's time limit, its silence, the stop
    /// signal): an `error` event saying why, then the session closes as `close` does.
    pub(super) fn cut_session(&mut self, ending: Ending) {
        let Some(turns) = &mut self.session else {
            return;
        };
        if turns.reason.is_some() {
            // Already closing: its grace bounds what is left.
            return;
        }
        turns.reason = Some(match ending {
            Ending::Stopped => EndReason::Stopped,
            _ => EndReason::TimedOut,
        });
        turns.cut = turns.state.running_turn().is_some();
        turns.finish_grace = Some(CLOSE_GRACE);
        let steps = turns.state.command(Command::Close);
        let event = match ending {
            Ending::Stopped => Event::new(EventBody::Error {
                message: "the session was stopped; the agent is being stopped".to_string(),
            }),
            other => other.event(),
        };
        self.made(event);
        self.take_steps(steps);
    }

    /// The conversation's channel to the agent failed ([`super::Inbound::Failed`]): an `error`
    /// event saying why; in a session the running turn ends with status `error` and the
    /// session ends as when the agent dies (I6). Nothing can reach the agent any more, so its
    /// processes are killed at once rather than given time to end.
    pub(super) fn transport_failed(&mut self, message: String) {
        self.made(Event::new(EventBody::Error { message }));
        self.kill = true;
        let Some(turns) = &mut self.session else {
            return;
        };
        if turns.reason.is_some() {
            // Already closing: the kill ends it.
            return;
        }
        turns.reason = Some(EndReason::AgentExited);
        turns.cut = turns.state.running_turn().is_some();
        // The `error` event above belongs to the running turn's outcome.
        let steps = turns.state.command(Command::Close);
        self.take_steps(steps);
    }

    /// The agent's processes are gone (I6). Returns the turn still running, whose outcome
    /// follows the end-of-input events; an agent that ended while the session was not
    /// closing gets an `error` event naming its exit.
    pub(super) fn agent_gone(&mut self, exit_code: Option<i32>) -> Option<crate::session::TurnEnd> {
        let turns = self.session.as_mut()?;
        let closing = turns.state.is_finished() || turns.reason.is_some();
        let running = turns.state.agent_exited();
        if closing {
            return running;
        }
        turns.reason = Some(EndReason::AgentExited);
        turns.cut = running.is_some();
        let how = match exit_code {
            Some(code) => format!("the agent exited with status {code}"),
            None => "the agent was killed by a signal".to_string(),
        };
        let message = match &running {
            Some(end) => format!("{how} during turn {}; the session has ended", end.turn),
            None => format!("{how}; the session has ended"),
        };
        self.made(Event::new(EventBody::Error { message }));
        running
    }

    /// Takes the session's steps through the conversation, in order.
    fn take_steps(&mut self, steps: Vec<Step>) {
        for step in steps {
            let Some(conversation) = self.conversation.as_mut() else {
                return;
            };
            let reply = match step {
                Step::StartTurn { turn, text } => {
                    if let Some(turns) = &mut self.session {
                        turns.turn_started = true;
                    }
                    conversation.start_turn(turn, &text)
                }
                Step::Answer {
                    id,
                    decision,
                    message,
                } => conversation.answer(&id, decision, message.as_deref()),
                Step::Withdraw { id, why } => conversation.withdraw(&id, why),
                Step::Interrupt => conversation.interrupt(),
                Step::Warn(message) => {
                    self.events.push(Event::new(EventBody::Warning {
                        message,
                        source: WarningSource::Input,
                    }));
                    self.settle();
                    Reply::default()
                }
                Step::Finish => {
                    let (reply, grace) = conversation.close();
                    if let Some(turns) = &mut self.session {
                        turns.reason.get_or_insert(EndReason::Caller);
                        let grace = turns.finish_grace.map_or(grace, |g| g.min(grace));
                        turns.finish_grace = Some(grace);
                    }
                    reply
                }
            };
            self.apply(reply);
        }
    }
}
