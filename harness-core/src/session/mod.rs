//! Sessions (SPEC section 8, I1-I8): one conversation with one agent over several turns, with
//! follow-up prompts, permission requests answered by the caller, interrupts and close.
//!
//! This module holds what every backend's session shares and that needs no I/O:
//!
//! - [`parse_command`] reads the caller's commands (I2): `prompt`, `interrupt`,
//!   `permission`, `close`; any other line is an [`InputError`], which a session reports as a
//!   `warning` with source `input` and then goes on.
//! - [`SessionState`] keeps the prompt queue (one turn at a time, in the order sent), the
//!   running turn and whether it was interrupted, the permission requests waiting for their
//!   answer and the decisions each offers, and what closing and the end of the caller's input
//!   mean. Each input returns the [`Step`]s to take through the backend's transport.
//!
//! Decisions it makes, beyond the SPEC's words:
//!
//! - An answer to a request that is not waiting (unknown, already answered, withdrawn by the
//!   agent) or with a decision the request does not offer is a warning, and the request keeps
//!   waiting.
//! - When the caller's input ends, the queued prompts still run (I2), but nobody is left to
//!   answer a permission request: each one waiting, and each one asked later, is withdrawn
//!   ([`Withdrawal::NoCaller`]: denied), so the turn goes on and ends instead of hanging (I6).
//! - Interrupting withdraws the waiting requests first ([`Withdrawal::Interrupted`]: ACP
//!   requires them answered `cancelled`), then stops the turn; a request the agent makes while
//!   its turn is being interrupted is withdrawn at once.
//! - A command after `close` is a warning.
//!
//! With the `process` feature, [`Session`] is the live session a caller holds: a stream of
//! [`SessionItem`]s (events, permission requests, turn ends, the end) and a [`SessionHandle`]
//! for the commands, which also tells the agent's own id for the session as soon as the agent
//! names it, before any turn ([`SessionHandle::session_id`], I8); [`crate::Backend::session`] opens one, and the process driver
//! ([`crate::process::spawn_session`]) runs it, taking the steps above through the backend's
//! transport ([`crate::process::Conversation`]).
//!
//! *Architecture invariant:* this module knows no backend; only `live.rs` (the caller's side of
//! a live session: channels, no process) needs the `process` feature.

mod command;
#[cfg(feature = "process")]
mod live;
mod state;

pub use crate::Decision;
pub use command::{Command, InputError, parse_command};
#[cfg(feature = "process")]
pub(crate) use live::Input;
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use live::{EndReason, Session, SessionEnd, SessionGone, SessionHandle, SessionItem};
pub use state::{SessionState, Step, TurnEnd, Withdrawal};

#[cfg(test)]
mod tests;
