//! The Codex backend of `harness`.
//!
//! Codex, run as `codex exec --json -` (the prompt on stdin), prints one JSON thread event per
//! line: `thread.started`, `turn.started`, `item.started` / `item.updated` / `item.completed`,
//! `turn.completed` / `turn.failed`, and `error`. [`CodexNormalizer`] turns those lines into the
//! normalized events of `harness-agents-core`, following the S and X rules of `docs/contract.md`
//! and the outcome rules O1 and O3:
//!
//! - items are recorded on `item.started` / `item.updated` and emit their events on
//!   `item.completed` (X2); items still open at the end of input become `unknown` events with
//!   reason `unresolved_tool_use` (X8);
//! - `command_execution` items are split into argv with the `shlex` crate and classified by
//!   `harness-agents-codex-shell`, exactly as Codex itself summarizes them: a command that only
//!   reads, searches or lists becomes `read`/`search`/`list` events, anything else one `command`
//!   event with its `exit_code` (X4);
//! - `file_change` items give one `write` per change, with its `change` kind (X6);
//! - `todo_list` items give `plan` events, once per distinct plan (X5): Codex's plan is its
//!   orchestration source;
//! - `turn.failed` gives an `error`, a top-level `error` line a `warning` (X7); the last
//!   `turn.completed` usage becomes the outcome's metrics (O3).
//!
//! The normalizer is a pure state machine: lines in, events out, no I/O, no panics. Its memory
//! is bounded by the items still open.
//!
//! ```
//! use harness_agents_codex::CodexNormalizer;
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//!
//! let mut config = NormalizerConfig::default();
//! config.cwd = Some("/repo".into());
//! let mut normalizer = CodexNormalizer::new(config);
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"thread.started","thread_id":"th-1"}"#,
//!     r#"{"type":"turn.started"}"#,
//!     r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'cd src && cat lib.rs'","status":"in_progress"}}"#,
//!     r#"{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'cd src && cat lib.rs'","exit_code":0,"status":"completed"}}"#,
//!     r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done."}}"#,
//!     r#"{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":3,"reasoning_output_tokens":0}}"#,
//! ] {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//!
//! let EventBody::Read { path, command, .. } = &events[0].body else { panic!() };
//! assert_eq!(path, "/repo/src/lib.rs");
//! assert_eq!(command.as_deref(), Some("cd src && cat lib.rs"));
//! assert_eq!(events[0].line, Some(4));
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("th-1"));
//! assert_eq!(outcome.final_output.as_deref(), Some("Done."));
//! ```
//!
//! [`CodexHarness`] also runs Codex live, through the [`Backend`] trait: it spawns
//! `codex exec --json --skip-git-repo-check --cd=DIR -`, writes the prompt to its standard input
//! (never its command line) and streams the events as they happen, then the outcome with the
//! exit status. The code is the same as for any other backend; only the name changes:
//!
//! ```no_run
//! use futures::StreamExt;
//! use harness_agents_core::{Registry, RunItem, RunRequest};
//! use std::time::Duration;
//!
//! # async fn example() -> Result<(), harness_agents_core::RunError> {
//! // Callers pick the backend by name at run time.
//! let mut registry = Registry::new();
//! registry.register(Box::new(harness_agents_codex::CodexHarness));
//! let harness = registry.get("codex").expect("registered above");
//!
//! let mut request = RunRequest::new("Explain src/main.rs");
//! request.cwd = Some("/path/to/project".into());
//! // Claude Code's names work too: `plan` is `--sandbox=read-only`.
//! request.permission_mode = Some("read-only".into());
//! request.timeout = Some(Duration::from_secs(600));
//! let mut stream = harness.run(request).await?;
//! while let Some(item) = stream.next().await {
//!     match item {
//!         RunItem::Event(event) => println!("{}", serde_json::to_string(&event).unwrap()),
//!         RunItem::Outcome(outcome) => println!("{:?} exit {:?}", outcome.status, outcome.exit_code),
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! A session ([`Backend::session`]: several prompts, permission requests answered by the
//! caller, interrupts, resume) runs `codex app-server` instead, spoken to in JSON-RPC; its
//! stream is read by [`AppServerNormalizer`] (the XA rules of `docs/codex-app-server.md`),
//! which maps its items through the same tool map, so a session's events are those `codex
//! exec --json` gives for the same work.
//!
//! With the `sessions` feature (the facade's `sessions` turns it on), `RolloutDecoder` reads
//! Codex's stored rollouts (`~/.codex/sessions/`) with the live decoder's rules, and fills the
//! core's stored-session accounting.
//!
//! [`Backend`]: harness_agents_core::Backend
//! [`Backend::session`]: harness_agents_core::Backend::session
#![cfg_attr(docsrs, feature(doc_cfg))]

/// This crate's README, whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod app_server;
mod app_session;
mod decoder;
#[cfg(feature = "sessions")]
mod history;
mod launch;
#[cfg(feature = "sessions")]
mod rollout;
#[cfg(feature = "sessions")]
mod tally;
mod tools;
mod wire;

use harness_agents_core::backend::has_type;
use harness_agents_core::process::{SessionSpec, run_dir, session_spec, spawn_session};
use harness_agents_core::session::Session;
use harness_agents_core::{
    Backend, Capabilities, Launch, Normalizer, NormalizerConfig, OrchestrationSource, RunError,
    RunRequest, Versions,
};

pub use app_server::{AppServerDecoder, AppServerNormalizer};
pub use decoder::{CodexDecoder, CodexNormalizer};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use history::{RolloutHistory, rollout_folders};
pub use launch::{LAUNCH, SESSION_LAUNCH, VERSIONS};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use rollout::{BOOKKEEPING, RolloutDecoder, RolloutNormalizer};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use tally::RolloutTally;

/// The Codex backend, registered as `"codex"`.
///
/// [`Backend::run`] starts `codex exec --json --skip-git-repo-check --cd=DIR [--model=MODEL]
/// [--sandbox=MODE] [extra args] -` and writes the prompt to its standard input (the final `-`
/// makes Codex read it there). `DIR` is the request's `cwd` (made absolute), else the caller's
/// current directory; the agent is also started in it, and the normalizer resolves relative
/// paths against it (X9). The binary is the request's, else `$CODEX_BIN`, else `codex` on
/// `PATH`; see [`harness_agents_core::process`] for how the process is driven, timed out and stopped.
///
/// `permission_mode` chooses Codex's sandbox. Claude Code's mode names are translated, so the
/// same request can go to either backend; any other value is passed to `--sandbox` as given:
///
/// | `permission_mode` | Codex flags |
/// |---|---|
/// | `default` | none (Codex's own default) |
/// | `plan` | `--sandbox=read-only` |
/// | `acceptEdits` | `--sandbox=workspace-write` |
/// | `bypassPermissions` | `--sandbox=danger-full-access` |
/// | anything else, e.g. `read-only`, `workspace-write` | `--sandbox=VALUE` |
///
/// `codex exec` never stops to ask for approval, so the sandbox is the whole permission
/// model. To also drop the sandbox, pass `--dangerously-bypass-approvals-and-sandbox` in
/// `extra_args`.
///
/// ```
/// use harness_agents_core::{Backend, OrchestrationSource, Registry};
///
/// let mut registry = Registry::new();
/// registry.register(Box::new(harness_agents_codex::CodexHarness));
/// let codex = registry.get("codex").unwrap();
/// assert!(codex.capabilities().exit_codes);
/// assert_eq!(codex.capabilities().orchestration_source, OrchestrationSource::Plan);
/// ```
///
/// It recognizes a line (for `harness normalize`'s detection) by a top-level `type` that is
/// one of Codex's dotted event types: `thread.started`, `turn.started`, `turn.completed`,
/// `turn.failed`, `item.started`, `item.updated`, `item.completed` (X1-X7). Its `error`
/// lines are not a signature: other streams have `error` types too.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let codex = harness_agents_codex::CodexHarness;
/// assert!(codex.recognizes(&json!({"type": "thread.started", "thread_id": "t"})));
/// assert!(!codex.recognizes(&json!({"type": "assistant"})));
/// assert!(!codex.recognizes(&json!({"type": "error", "message": "x"})));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexHarness;

#[harness_agents_core::backend::async_trait]
impl Backend for CodexHarness {
    fn name(&self) -> &'static str {
        "codex"
    }

    /// The X rules' normalizer for `codex exec --json`; a session's stream
    /// (`NormalizerConfig::session`, which a session's transcript header carries) is
    /// `codex app-server`'s, read by [`AppServerNormalizer`] (XA rules).
    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        if config.session {
            Box::new(AppServerNormalizer::new(config))
        } else {
            Box::new(CodexNormalizer::new(config))
        }
    }

    /// Its dotted event types (X1-X7); its `error` lines are no signature.
    fn recognizes(&self, line: &serde_json::Value) -> bool {
        has_type(
            line,
            &[
                "thread.started",
                "turn.started",
                "turn.completed",
                "turn.failed",
                "item.started",
                "item.updated",
                "item.completed",
            ],
        )
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::new(true, OrchestrationSource::Plan)
    }

    /// X3: a completed message or reasoning item gives an `agent` or `reasoning` event, which
    /// names no tool use (J3), or nothing when its text is empty.
    fn eventless_tools(&self) -> &'static [&'static str] {
        &["agent_message", "reasoning"]
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

    /// It has sessions ([`Backend::session`] below).
    fn has_sessions(&self) -> bool {
        true
    }

    /// One `codex app-server` process for the whole session ([`SESSION_LAUNCH`]), spoken to
    /// in JSON-RPC: a thread started (or resumed, for `resume`) in the request's directory
    /// with its model, the permission mode as the thread's `approvalPolicy` and `sandbox`
    /// (XA15 of `docs/codex-app-server.md`: `plan` is `on-request` in `read-only`,
    /// `acceptEdits` `on-request` in `workspace-write`, `bypassPermissions` `never` in
    /// `danger-full-access`, Codex's own policy names set the policy and its sandbox names
    /// the sandbox), one `turn/start` per prompt, approval requests as `permission` events.
    async fn session(&self, mut request: RunRequest) -> Result<Session, RunError> {
        let limits = SessionSpec::new(request.timeout, request.idle_timeout);
        let (dir, _) = run_dir(&request)?;
        let (approval, sandbox) = match request.permission_mode.take() {
            Some(mode) => {
                let (approval, sandbox) = app_session::permission_settings(&mode);
                (approval.map(str::to_string), sandbox.map(str::to_string))
            }
            None => (None, None),
        };
        let settings = app_session::ThreadSettings {
            cwd: dir.display().to_string(),
            model: request.model.take(),
            approval,
            sandbox,
            resume: request.resume.take(),
        };
        let (spec, config) = session_spec(self, SESSION_LAUNCH, request)?;
        spawn_session(
            spec,
            self.normalizer(config),
            Box::new(app_session::AppServerSession::new(settings)),
            limits,
        )
    }
}
