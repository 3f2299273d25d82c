//! A live session (feature `process`): the object a caller holds. [`Session`] is the stream of
//! what happens ([`SessionItem`]s); the [`SessionHandle`] it dereferences to (cloneable, usable
//! from any task) sends the caller's commands. The process driver
//! ([`crate::process::spawn_session`]) owns the agent, the normalizer and the
//! [`super::SessionState`].

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::{mpsc, watch};

use super::command::{Command, InputError, parse_command};
use crate::Decision;
use crate::event::Event;
use crate::outcome::Outcome;

/// One item of a session's stream.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum SessionItem {
    /// A normalized event: the agent's, a `permission` request (I4) waiting for
    /// [`SessionHandle::answer`], or one the session made (a `warning` with source `input`
    /// about a command, an `error` saying why a turn or the session was cut short).
    Event(Event),
    /// A turn ended (I3): its outcome, with `turn` set and status `interrupted` when the caller
    /// stopped it.
    TurnEnd(Outcome),
    /// The session ended; the last item.
    Ended(SessionEnd),
}

/// How a session ended: the last item of its stream.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionEnd {
    /// Why it ended.
    pub reason: EndReason,
    /// The whole session's outcome (O1): the session id, the counts of every event of the
    /// session, and the agent's exit status (`exit_code`: `Some(None)` when a signal ended it).
    pub outcome: Outcome,
}

/// Why a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// The caller closed it ([`SessionHandle::close`]) or ended its input and the queued prompts
    /// ran (I2).
    Caller,
    /// The agent exited or died on its own (I6).
    AgentExited,
    /// A turn took longer than the request's `timeout`, or was silent longer than its
    /// `idle_timeout` (I6).
    TimedOut,
    /// The request's stop signal fired.
    Stopped,
}

/// What the caller sends the driver.
#[derive(Debug)]
pub(crate) enum Input {
    /// A command (I2).
    Command(Command),
    /// A command line that is not a command: a `warning` with source `input`.
    Invalid(InputError),
    /// The caller's input has ended: the queued prompts run, then the session ends.
    End,
}

/// The session has ended: a command sent to it does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the session has ended")]
pub struct SessionGone;

/// Sends the caller's commands to a live session (I2); cheap to clone, usable from any thread.
/// Commands take effect in the order sent; what they do shows in the session's stream.
#[derive(Debug, Clone)]
pub struct SessionHandle {
    tx: mpsc::UnboundedSender<Input>,
    named: watch::Receiver<Option<String>>,
}

impl SessionHandle {
    pub(crate) fn new(
        tx: mpsc::UnboundedSender<Input>,
        named: watch::Receiver<Option<String>>,
    ) -> Self {
        SessionHandle { tx, named }
    }

    /// The agent's own id for this session (I8), once it has named it: Claude Code's at once
    /// (the id it was given), the others' when their session has opened (Codex's thread, the
    /// `sessionId` of ACP's `session/new`, opencode's session, Pi's `get_state`), before any
    /// turn. `None` until then, and for good when the session ended first.
    pub fn session_id(&self) -> Option<String> {
        self.named.borrow().clone()
    }

    /// Waits until the agent names its own id for this session (I8) and returns it; `None`
    /// when the session ends without one (the agent died, refused to open the session, or
    /// never names one). Bound the wait with a timeout of your own: an agent that neither
    /// names an id nor ends keeps it waiting as long as the session lives.
    pub async fn named_session_id(&self) -> Option<String> {
        let mut named = self.named.clone();
        // An error: the driver has ended without an id named, and none will come.
        named.wait_for(Option::is_some).await.ok()?.clone()
    }

    fn send(&self, input: Input) -> Result<(), SessionGone> {
        self.tx.send(input).map_err(|_| SessionGone)
    }

    /// Starts a turn with `text`, or queues it behind the running turn (I2).
    ///
    /// # Errors
    ///
    /// [`SessionGone`] once the session has ended.
    pub fn prompt(&self, text: impl Into<String>) -> Result<(), SessionGone> {
        self.send(Input::Command(Command::Prompt(text.into())))
    }

    /// Stops the running turn through the agent's own protocol; its waiting permission
    /// requests are withdrawn, and the turn ends with status `interrupted` (I2, I3).
    ///
    /// # Errors
    ///
    /// [`SessionGone`] once the session has ended.
    pub fn interrupt(&self) -> Result<(), SessionGone> {
        self.send(Input::Command(Command::Interrupt))
    }

    /// Answers the permission request `id` (I4) with one of the `options` its event offered;
    /// `message` goes to the agent with a denial.
    ///
    /// # Errors
    ///
    /// [`SessionGone`] once the session has ended.
    pub fn answer(
        &self,
        id: impl Into<String>,
        decision: Decision,
        message: Option<String>,
    ) -> Result<(), SessionGone> {
        self.send(Input::Command(Command::Permission {
            id: id.into(),
            decision,
            message,
        }))
    }

    /// Ends the session now: the running turn is interrupted, queued prompts are dropped and
    /// the agent is stopped (I2).
    ///
    /// # Errors
    ///
    /// [`SessionGone`] once the session has ended.
    pub fn close(&self) -> Result<(), SessionGone> {
        self.send(Input::Command(Command::Close))
    }

    /// The caller sends nothing more: the queued prompts still run, then the session ends;
    /// permission requests are denied from then on, since nobody is left to answer (I2).
    ///
    /// # Errors
    ///
    /// [`SessionGone`] once the session has ended.
    pub fn end_input(&self) -> Result<(), SessionGone> {
        self.send(Input::End)
    }

    /// Sends one command line as `harness session` reads it (I2): a line that is not a
    /// command becomes a `warning` with source `input` in the stream, and the session goes on.
    ///
    /// # Errors
    ///
    /// [`SessionGone`] once the session has ended.
    pub fn send_line(&self, line: &[u8]) -> Result<(), SessionGone> {
        self.send(match parse_command(line) {
            Ok(command) => Input::Command(command),
            Err(error) => Input::Invalid(error),
        })
    }
}

/// A live session with an agent (SPEC section 8): a [`Stream`] of [`SessionItem`]s, ending
/// with [`SessionItem::Ended`], and through [`std::ops::Deref`] the [`SessionHandle`] that
/// sends commands. Reading the stream is cancel-safe (an item is never lost when a `select!`
/// drops the read). Dropping the session stops the agent and every process it started.
///
/// ```no_run
/// use futures::StreamExt;
/// use harness_agents_core::session::SessionItem;
/// use harness_agents_core::{Backend, Decision, EventBody, RunRequest};
///
/// # async fn example(backend: &dyn Backend) -> Result<(), Box<dyn std::error::Error>> {
/// let mut session = backend.session(RunRequest::default()).await?;
/// session.prompt("Add a test for parse_args")?;
/// while let Some(item) = session.next().await {
///     match item {
///         SessionItem::Event(event) => {
///             if let EventBody::Permission { id, .. } = &event.body {
///                 session.answer(id.clone(), Decision::Allow, None)?;
///             }
///         }
///         SessionItem::TurnEnd(outcome) if outcome.turn == Some(1) => {
///             session.prompt("Now run it")?;
///         }
///         // The last turn has ended: the session ends (not earlier, since a request made
///         // after the input has ended is denied: nobody is left to answer it).
///         SessionItem::TurnEnd(_) => session.end_input()?,
///         SessionItem::Ended(end) => println!("ended: {:?}", end.reason),
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct Session {
    items: mpsc::Receiver<SessionItem>,
    handle: SessionHandle,
}

impl Session {
    pub(crate) fn new(items: mpsc::Receiver<SessionItem>, handle: SessionHandle) -> Self {
        Session { items, handle }
    }

    /// This session as a run of one turn (I5's one-turn form, for an agent whose only way to
    /// resume is its session's): `prompt` is sent and the input ended at once, so nobody is
    /// left to answer a permission request and each is denied (I2); the events come as a
    /// run's, then the session's outcome (its counts, the agent's exit status) as the run's.
    pub fn into_run(self, prompt: impl Into<String>) -> crate::RunStream {
        use futures::StreamExt;
        // A session that has ended takes no command: its stream says why.
        let _ = self.prompt(prompt);
        let _ = self.end_input();
        self.filter_map(|item| {
            futures::future::ready(match item {
                SessionItem::Event(event) => Some(crate::RunItem::Event(event)),
                SessionItem::TurnEnd(_) => None,
                SessionItem::Ended(end) => Some(crate::RunItem::Outcome(end.outcome)),
            })
        })
        .boxed()
    }

    /// A handle that outlives a borrow of the session (to command it from another task).
    pub fn handle(&self) -> SessionHandle {
        self.handle.clone()
    }
}

impl std::ops::Deref for Session {
    type Target = SessionHandle;

    fn deref(&self) -> &SessionHandle {
        &self.handle
    }
}

impl Stream for Session {
    type Item = SessionItem;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<SessionItem>> {
        self.items.poll_recv(cx)
    }
}
