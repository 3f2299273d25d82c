//! The bookkeeping of a session, without I/O (I2-I4, I6): the prompt queue, the running turn,
//! the permission requests waiting for an answer, and what closing means. Every input (a
//! caller's command, the end of the caller's input, a permission request the agent made, the
//! end of a turn) returns the [`Step`]s the session must now take through the backend's
//! transport, in order. Being pure, it is tested on its own, and every backend's session shares
//! it.

use std::collections::VecDeque;

use super::command::Command;
use crate::Decision;

/// What the session must do next, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Start turn `turn` (1, 2, ...) with `text` through the agent's protocol.
    StartTurn {
        /// The turn's number (I3).
        turn: u32,
        /// The prompt.
        text: String,
    },
    /// Give the agent the caller's answer to its permission request `id`.
    Answer {
        /// The request's id, as its `permission` event gave it.
        id: String,
        /// The caller's decision, one the request offered.
        decision: Decision,
        /// A message for the agent with a denial.
        message: Option<String>,
    },
    /// Tell the agent its permission request `id` will get no answer from the caller.
    Withdraw {
        /// The request's id.
        id: String,
        /// Why no answer comes.
        why: Withdrawal,
    },
    /// Stop the running turn through the agent's protocol (I2).
    Interrupt,
    /// Tell the caller something about its input: a `warning` with source `input`.
    Warn(String),
    /// End the session: stop the agent (I2, I6).
    Finish,
}

/// Why a permission request is withdrawn ([`Step::Withdraw`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Withdrawal {
    /// Its turn is being interrupted (or the session closed): ACP answers `cancelled`, the
    /// others deny.
    Interrupted,
    /// The caller's input has ended, so nobody is left to answer: denied, so that the turn goes
    /// on and ends instead of waiting for ever.
    NoCaller,
}

/// How a turn ended, as far as the session's own bookkeeping knows (the outcome's other fields
/// come from the normalizer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnEnd {
    /// The turn's number.
    pub turn: u32,
    /// Whether the caller interrupted it (status `interrupted`, I3).
    pub interrupted: bool,
}

#[derive(Debug)]
struct Running {
    turn: u32,
    interrupted: bool,
}

#[derive(Debug)]
struct Pending {
    id: String,
    options: Vec<Decision>,
}

/// A session's state: see [the module documentation](crate::session).
///
/// ```
/// use harness_agents_core::session::{Command, SessionState, Step};
///
/// let mut session = SessionState::new();
/// assert_eq!(
///     session.command(Command::Prompt("one".into())),
///     [Step::StartTurn { turn: 1, text: "one".into() }]
/// );
/// // A prompt sent while a turn runs waits for it.
/// assert_eq!(session.command(Command::Prompt("two".into())), []);
/// let (end, steps) = session.turn_ended();
/// assert_eq!(end.map(|e| e.turn), Some(1));
/// assert_eq!(steps, [Step::StartTurn { turn: 2, text: "two".into() }]);
/// ```
#[derive(Debug)]
pub struct SessionState {
    queue: VecDeque<String>,
    running: Option<Running>,
    started: u32,
    pending: Vec<Pending>,
    input_open: bool,
    closing: bool,
    finished: bool,
}

impl Default for SessionState {
    fn default() -> Self {
        SessionState::new()
    }
}

impl SessionState {
    /// A session before its first prompt: nothing is asked of the agent yet (I1).
    pub fn new() -> SessionState {
        SessionState {
            queue: VecDeque::new(),
            running: None,
            started: 0,
            pending: Vec::new(),
            input_open: true,
            closing: false,
            finished: false,
        }
    }

    /// The running turn's number, if a turn runs.
    pub fn running_turn(&self) -> Option<u32> {
        self.running.as_ref().map(|r| r.turn)
    }

    /// How many turns have started.
    pub fn turns_started(&self) -> u32 {
        self.started
    }

    /// The ids of the permission requests waiting for the caller, oldest first.
    pub fn pending(&self) -> impl Iterator<Item = &str> {
        self.pending.iter().map(|p| p.id.as_str())
    }

    /// How many prompts wait for the running turn to end.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Whether the session has taken [`Step::Finish`]; it takes no other step after it.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// A command of the caller (I2).
    pub fn command(&mut self, command: Command) -> Vec<Step> {
        if self.finished || self.closing {
            return vec![Step::Warn(
                "the session is closing: the command is ignored".into(),
            )];
        }
        match command {
            Command::Prompt(text) => {
                if self.running.is_some() {
                    self.queue.push_back(text);
                    Vec::new()
                } else {
                    vec![self.start(text)]
                }
            }
            Command::Interrupt => match &self.running {
                None => vec![Step::Warn("interrupt: no turn is running".into())],
                Some(r) if r.interrupted => vec![Step::Warn(format!(
                    "interrupt: turn {} is already being interrupted",
                    r.turn
                ))],
                Some(_) => self.interrupt(),
            },
            Command::Permission {
                id,
                decision,
                message,
            } => self.answer(id, decision, message),
            Command::Close => {
                self.closing = true;
                self.queue.clear();
                match &self.running {
                    None => self.finish(),
                    Some(r) if r.interrupted => Vec::new(),
                    Some(_) => self.interrupt(),
                }
            }
        }
    }

    /// The caller's input has ended (I2): the queued prompts still run, then the session ends.
    /// Permission requests waiting now, or asked later, have nobody to answer them and are
    /// withdrawn ([`Withdrawal::NoCaller`]).
    pub fn input_closed(&mut self) -> Vec<Step> {
        if !self.input_open || self.finished {
            return Vec::new();
        }
        self.input_open = false;
        let mut steps = self.withdraw_all(Withdrawal::NoCaller);
        if self.running.is_none() && !self.closing {
            steps.extend(self.finish());
        }
        steps
    }

    /// The agent asks for permission (I4): request `id`, offering `options`. The caller is to
    /// answer it, unless nobody can ([`Step::Withdraw`] at once). A request while no turn runs,
    /// or with an id already waiting, is kept all the same: the agent waits for it, and only an
    /// answer can release it.
    pub fn permission_asked(&mut self, id: &str, options: &[Decision]) -> Vec<Step> {
        let why = if !self.input_open {
            Some(Withdrawal::NoCaller)
        } else if self.closing || self.running.as_ref().is_some_and(|r| r.interrupted) {
            Some(Withdrawal::Interrupted)
        } else {
            None
        };
        if let Some(why) = why {
            return vec![Step::Withdraw { id: id.into(), why }];
        }
        self.pending.retain(|p| p.id != id);
        self.pending.push(Pending {
            id: id.into(),
            options: options.to_vec(),
        });
        Vec::new()
    }

    /// The agent no longer waits for request `id` (Claude Code cancels a pending request when
    /// it is interrupted): an answer to it now would be a warning.
    pub fn permission_withdrawn(&mut self, id: &str) {
        self.pending.retain(|p| p.id != id);
    }

    /// The running turn ended (its terminal line, the prompt's answer). Returns how, and the
    /// next steps: the next queued prompt, or the end of the session once it is closing or its
    /// input has ended with nothing queued. Requests still waiting belong to the ended turn and
    /// are forgotten. Without a running turn, nothing happens.
    pub fn turn_ended(&mut self) -> (Option<TurnEnd>, Vec<Step>) {
        let Some(running) = self.running.take() else {
            return (None, Vec::new());
        };
        self.pending.clear();
        let end = TurnEnd {
            turn: running.turn,
            interrupted: running.interrupted,
        };
        let steps = if self.closing {
            self.finish()
        } else if let Some(next) = self.queue.pop_front() {
            vec![self.start(next)]
        } else if !self.input_open {
            self.finish()
        } else {
            Vec::new()
        };
        (Some(end), steps)
    }

    /// The agent exited or died (I6): the running turn, if any, ends, and so does the session.
    pub fn agent_exited(&mut self) -> Option<TurnEnd> {
        let end = self.running.take().map(|r| TurnEnd {
            turn: r.turn,
            interrupted: r.interrupted,
        });
        self.pending.clear();
        self.queue.clear();
        self.closing = true;
        self.finished = true;
        end
    }

    fn start(&mut self, text: String) -> Step {
        self.started += 1;
        self.running = Some(Running {
            turn: self.started,
            interrupted: false,
        });
        Step::StartTurn {
            turn: self.started,
            text,
        }
    }

    fn interrupt(&mut self) -> Vec<Step> {
        if let Some(running) = &mut self.running {
            running.interrupted = true;
        }
        let mut steps = self.withdraw_all(Withdrawal::Interrupted);
        steps.push(Step::Interrupt);
        steps
    }

    fn answer(&mut self, id: String, decision: Decision, message: Option<String>) -> Vec<Step> {
        let Some(at) = self.pending.iter().position(|p| p.id == id) else {
            return vec![Step::Warn(format!(
                "permission: no request `{id}` is waiting for an answer"
            ))];
        };
        if !self.pending[at].options.contains(&decision) {
            let offered: Vec<&str> = self.pending[at]
                .options
                .iter()
                .map(|d| d.as_str())
                .collect();
            return vec![Step::Warn(format!(
                "permission: request `{id}` does not offer `{decision}` (it offers {})",
                offered.join(", ")
            ))];
        }
        self.pending.remove(at);
        vec![Step::Answer {
            id,
            decision,
            message,
        }]
    }

    fn withdraw_all(&mut self, why: Withdrawal) -> Vec<Step> {
        self.pending
            .drain(..)
            .map(|p| Step::Withdraw { id: p.id, why })
            .collect()
    }

    fn finish(&mut self) -> Vec<Step> {
        if self.finished {
            return Vec::new();
        }
        self.finished = true;
        self.closing = true;
        vec![Step::Finish]
    }
}
