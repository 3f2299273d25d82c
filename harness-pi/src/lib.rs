//! The Pi backend of `harness`.
//!
//! Pi (`@mariozechner/pi-coding-agent`), run as `pi --mode json`, prints one JSON object per
//! line, each with a `type`: first a `session` header (the session id and the working
//! directory), then the agent's life as events: `agent_start`, per model call `turn_start` and
//! `turn_end`, each message as `message_start`, `message_update` (every streamed delta, with
//! the message so far) and `message_end` (the message whole), each tool as
//! `tool_execution_start`, `tool_execution_update` and `tool_execution_end`, then `agent_end`;
//! a failed model request Pi retries adds `auto_retry_start` and `auto_retry_end`. There is no
//! closing summary. [`PiNormalizer`] turns those lines into the normalized events of
//! `harness-agents-core`, following the S rules of `docs/contract.md` and the PI rules of
//! `docs/pi.md`:
//!
//! - each assistant `message_end` gives one `reasoning` event (its thinking) and one `agent`
//!   event (its text) (PI5); the deltas before it carry nothing it does not (PI3);
//! - `tool_execution_start` records a tool use, `tool_execution_end` gives its events (PI6,
//!   PI7): `read` a `read` with its line range, `write` and `edit` a `write`, `grep` and `find`
//!   a `search`, `ls` a `list`, `bash` whatever the shared shell classifier makes of the
//!   command (a `command` with the exit code of a failure, or `read`/`search`/`list` events),
//!   any other tool `unknown` (PI8, PI9);
//! - `agent_end` ends the run; every failed model request is an `error`, each retry a
//!   `warning`, and the run's status is `error` when its last request failed, so a run that
//!   exits 0 after an API failure still ends in `error` (PI11, PI12).
//!
//! The normalizer is a pure state machine: lines in, events out, no I/O, no panics. Its memory
//! is bounded by the tool uses still running and one line.
//!
//! [`PiHarness`] also runs Pi live, through the [`Backend`] trait: it starts `pi --mode json`,
//! writes the prompt to its standard input (never its command line) and streams the events
//! as they happen, then the outcome with the exit status.
//!
//! ```
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//! use harness_agents_pi::PiNormalizer;
//!
//! let mut normalizer = PiNormalizer::new(NormalizerConfig::default());
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/repo"}"#,
//!     r#"{"type":"agent_start"}"#,
//!     r#"{"type":"tool_execution_start","toolCallId":"t1","toolName":"read","args":{"path":"notes.txt","offset":2,"limit":2}}"#,
//!     r#"{"type":"tool_execution_end","toolCallId":"t1","toolName":"read","result":{"content":[{"type":"text","text":"b\nc"}]},"isError":false}"#,
//!     r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Lines 2 and 3."}],"stopReason":"stop","usage":{"input":10,"output":3}}}"#,
//!     r#"{"type":"agent_end","messages":[]}"#,
//! ] {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//!
//! let EventBody::Read { path, range, .. } = &events[0].body else { panic!() };
//! assert_eq!(path, "/repo/notes.txt");
//! assert_eq!(range.map(|r| (r.start, r.end)), Some((2, Some(3))));
//! let EventBody::Agent { text } = &events[1].body else { panic!() };
//! assert_eq!(&**text, "Lines 2 and 3."); // an `Arc<str>`, shared with the outcome
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
//! assert_eq!(outcome.final_output.as_deref(), Some("Lines 2 and 3."));
//! ```
//!
//! With the `sessions` feature (the facade's `sessions` turns it on), [`PiHistory`] reads the
//! session files Pi stored (`~/.pi/agent/sessions/`) with the same rules (`docs/sessions.md`,
//! PH rules).
//!
//! [`Backend`]: harness_agents_core::Backend
#![cfg_attr(docsrs, feature(doc_cfg))]

/// This crate's README, whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod decoder;
#[cfg(feature = "sessions")]
mod history;
mod launch;
mod session;
mod tools;
mod wire;

use std::path::Path;

use harness_agents_core::process::{SessionSpec, session_spec, spawn_session};
use harness_agents_core::session::Session;
use harness_agents_core::{
    Backend, Capabilities, Launch, Normalizer, NormalizerConfig, OrchestrationSource, RunError,
    RunRequest, Versions,
};
use serde_json::Value;

pub use decoder::{PiDecoder, PiNormalizer};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use history::PiHistory;
pub use launch::{LAUNCH, SESSION_LAUNCH, VERSIONS};

/// The Pi backend, registered as `"pi"`.
///
/// [`Backend::run`] starts `pi --mode json [--model MODEL] [--tools LIST] [extra args]` in the
/// request's `cwd` (made absolute; else the caller's current directory) and writes the prompt
/// to its standard input. The binary is the request's, else `$PI_BIN`, else `pi` on `PATH`.
/// The normalizer resolves relative paths against the directory Pi's header names, else that
/// one (PI10).
///
/// Pi never asks before using a tool; `permission_mode` chooses which tools it has:
///
/// | `permission_mode` | Pi flag |
/// |---|---|
/// | `default`, `plan` | `--tools read,grep,find,ls` |
/// | `acceptEdits` | `--tools read,edit,write,grep,find,ls` |
/// | `bypassPermissions` | `--tools read,bash,edit,write,grep,find,ls` |
/// | anything else, e.g. `read,bash` | `--tools VALUE` |
///
/// Without one, Pi has its default tools (`read`, `bash`, `edit`, `write`). `resume` adds
/// `--session ID`, which continues a stored session.
///
/// [`Backend::session`] starts `pi --mode rpc` with the same options and sends each prompt
/// as a `prompt` command, `abort` as the interrupt (PR1-PR7 of `docs/pi.md`). Pi asks no
/// permissions, so a session has no `permission` events.
///
/// ```
/// use harness_agents_core::{Backend, OrchestrationSource};
///
/// let pi = harness_agents_pi::PiHarness;
/// assert_eq!(pi.name(), "pi");
/// assert!(pi.capabilities().exit_codes);
/// assert_eq!(pi.capabilities().orchestration_source, OrchestrationSource::None);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct PiHarness;

#[harness_agents_core::backend::async_trait]
impl Backend for PiHarness {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(PiNormalizer::new(config))
    }

    fn recognizes(&self, line: &Value) -> bool {
        recognizes(line)
    }

    /// A failed `bash` call carries its exit code (PI9); Pi keeps no plan.
    fn capabilities(&self) -> Capabilities {
        Capabilities::new(true, OrchestrationSource::None)
    }

    fn versions(&self) -> Option<Versions> {
        Some(VERSIONS)
    }

    fn launch(&self) -> Option<Launch> {
        Some(LAUNCH)
    }

    fn permission_args(&self, mode: &str) -> Vec<String> {
        launch::permission_args(mode)
    }

    /// Pi's values go as the next word, not `--name=value` (see [`LAUNCH`]).
    fn args(&self, request: &RunRequest, _dir: &Path) -> Vec<String> {
        launch::args(&LAUNCH, request)
    }

    /// It has sessions ([`Backend::session`] below).
    fn has_sessions(&self) -> bool {
        true
    }

    /// PR1: `pi --mode rpc` with the run's options; `session.rs`'s `PiSession` is the
    /// transport.
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        let limits = SessionSpec::new(request.timeout, request.idle_timeout);
        let args = session_args(&request);
        let (mut spec, config) = session_spec(self, SESSION_LAUNCH, request)?;
        // Pi reads an option's value only as the next word (PI15), not `--name=value`.
        spec.args = args;
        spawn_session(
            spec,
            self.normalizer(config),
            Box::<session::PiSession>::default(),
            limits,
        )
    }
}

/// The arguments a session's `pi` starts with for `request` (PR1): `--mode rpc`, then the
/// run's options ([`PiHarness`]'s `Backend::args` with `rpc` for `json`), `--session ID` when it
/// resumes.
///
/// ```
/// let mut request = harness_agents_core::RunRequest::new("");
/// request.resume = Some("019b".into());
/// assert_eq!(harness_agents_pi::session_args(&request), ["--mode", "rpc", "--session", "019b"]);
/// ```
pub fn session_args(request: &RunRequest) -> Vec<String> {
    launch::args(&SESSION_LAUNCH, request)
}

/// The lines only Pi prints: its `session` header (with a number `version` and a string
/// `id`), and its own event types, which no other backend's stream uses at the top level.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let pi = harness_agents_pi::PiHarness;
/// assert!(pi.recognizes(&json!({"type": "session", "version": 3, "id": "s", "cwd": "/p"})));
/// assert!(pi.recognizes(&json!({"type": "agent_start"})));
/// assert!(pi.recognizes(&json!({"type": "tool_execution_end", "toolCallId": "t"})));
/// assert!(!pi.recognizes(&json!({"type": "session", "id": "s"})));
/// assert!(!pi.recognizes(&json!({"type": "result", "subtype": "success"})));
/// ```
fn recognizes(line: &Value) -> bool {
    match line.get("type").and_then(Value::as_str) {
        Some("session") => {
            line.get("version").is_some_and(Value::is_number)
                && line.get("id").is_some_and(Value::is_string)
        }
        Some(kind) => [
            "agent_start",
            "agent_end",
            "turn_start",
            "turn_end",
            "message_start",
            "message_update",
            "message_end",
            "tool_execution_start",
            "tool_execution_update",
            "tool_execution_end",
            "auto_retry_start",
            "auto_retry_end",
            "compaction_start",
            "compaction_end",
        ]
        .contains(&kind),
        None => false,
    }
}
