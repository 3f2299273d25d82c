//! The Claude Code backend of `harness`.
//!
//! Claude Code, run as `claude --print --output-format stream-json --verbose`, prints one JSON
//! object per line. [`ClaudeNormalizer`] turns those lines into the normalized events of
//! `harness-agents-core`, following the S and C rules of `docs/contract.md`: messages are assembled
//! per thread and flushed as soon as they are complete, tool uses are recorded and emitted when
//! their results arrive, Bash commands are reclassified through `harness-agents-codex-shell`, and
//! every line that cannot be mapped becomes an `unknown` or `warning` event, so nothing is lost.
//!
//! The normalizer is a pure state machine: lines in, events out, no I/O, no panics.
//!
//! ```
//! use harness_agents_claude::ClaudeNormalizer;
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//!
//! let mut normalizer = ClaudeNormalizer::new(NormalizerConfig::default());
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"system","subtype":"init","cwd":"/repo","session_id":"s1"}"#,
//!     r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"src/lib.rs","offset":10,"limit":5}}]}}"#,
//!     r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"..."}]}}"#,
//!     r#"{"type":"result","subtype":"success","is_error":false,"result":"done"}"#,
//! ] {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//!
//! let EventBody::Read { path, range, .. } = &events[0].body else { panic!() };
//! assert_eq!(path, "/repo/src/lib.rs");
//! assert_eq!(range.map(|r| (r.start, r.end)), Some((10, Some(14))));
//! assert_eq!(events[0].line, Some(3));
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("s1"));
//! ```
//!
//! [`ClaudeHarness`] also runs Claude Code live, through the [`Backend`] trait: it spawns
//! `claude`, writes the prompt to its standard input (never its command line) and streams
//! the events as they happen, then the outcome with the exit status:
//!
//! ```no_run
//! use futures::StreamExt;
//! use harness_agents_claude::ClaudeHarness;
//! use harness_agents_core::{Registry, RunItem, RunRequest};
//! use std::time::Duration;
//!
//! # async fn example() -> Result<(), harness_agents_core::RunError> {
//! // Callers pick the backend by name at run time.
//! let mut registry = Registry::new();
//! registry.register(Box::new(ClaudeHarness));
//! let harness = registry.get("claude").expect("registered above");
//!
//! let mut request = RunRequest::new("Explain src/main.rs");
//! request.cwd = Some("/path/to/project".into());
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
//! With the `sessions` feature (the facade's `sessions` turns it on), `TranscriptDecoder` reads
//! Claude Code's stored transcripts (`~/.claude/projects/`) with the live decoder's rules, and
//! fills the core's stored-session accounting.
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
#[cfg(feature = "sessions")]
mod tally;
mod tools;
#[cfg(feature = "sessions")]
mod transcript;

use harness_agents_core::backend::has_type;
use harness_agents_core::backend::stream_json::signed_by_other;
use harness_agents_core::process::{SessionSpec, session_spec, spawn_session};
use harness_agents_core::session::Session;
use harness_agents_core::{
    Backend, Launch, Normalizer, NormalizerConfig, RunError, RunRequest, Versions,
};

pub use decoder::{ClaudeDecoder, ClaudeNormalizer};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use history::{TranscriptHistory, projects_of};
pub use launch::{LAUNCH, SESSION_LAUNCH, VERSIONS};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use tally::TranscriptTally;
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use transcript::{BOOKKEEPING, TranscriptDecoder, TranscriptNormalizer};

/// The Claude Code backend, registered as `"claude"`.
///
/// [`Backend::run`] starts `claude --print --output-format stream-json --verbose [--model M]
/// [--permission-mode P] [extra args]` (the binary is the request's, else `$CLAUDE_BIN`, else
/// `claude` on `PATH`) and writes the prompt to its standard input; see [`harness_agents_core::process`]
/// for how the process is driven, timed out and stopped.
///
/// It recognizes a line (for `harness normalize`'s detection) by a top-level `type` only
/// Claude Code prints: `system`, `assistant`, `user`, `result`, `stream_event` or
/// `rate_limit_event` (C1-C8), except a `system` line that names the version of another
/// agent (a `*_code_version` other than `claude_code_version`): agents that print the same
/// shape sign their `init` line that way, and their streams are theirs.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let claude = harness_agents_claude::ClaudeHarness;
/// assert!(claude.recognizes(&json!({"type": "system", "subtype": "init"})));
/// assert!(claude.recognizes(&json!({"type": "system", "claude_code_version": "2.1"})));
/// assert!(!claude.recognizes(&json!({"type": "system", "qwen_code_version": "0.24.4"})));
/// assert!(!claude.recognizes(&json!({"type": "thread.started"})));
/// assert!(!claude.recognizes(&json!({"type": "error", "message": "x"})));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ClaudeHarness;

#[harness_agents_core::backend::async_trait]
impl Backend for ClaudeHarness {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(ClaudeNormalizer::new(config))
    }

    /// The top-level types only Claude Code prints (C1-C8), but for another agent's signed
    /// `init` line.
    fn recognizes(&self, line: &serde_json::Value) -> bool {
        !signed_by_other(line, "claude_code_version")
            && has_type(
                line,
                &[
                    "system",
                    "assistant",
                    "user",
                    "result",
                    "stream_event",
                    "rate_limit_event",
                ],
            )
    }

    /// C14: `StructuredOutput` gives no event at all; its output reaches the outcome.
    fn eventless_tools(&self) -> &'static [&'static str] {
        &["StructuredOutput"]
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

    /// One `claude` process for the whole session ([`SESSION_LAUNCH`]): prompts and answers
    /// go to its standard input as stream-json messages, its permission requests come back
    /// as `permission` events (CS1, CS5-CS11 of `docs/claude-session.md`); `resume` continues
    /// a stored session with `--resume=ID`.
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        let limits = SessionSpec::new(request.timeout, request.idle_timeout);
        let id = request
            .session_id
            .clone()
            .or_else(|| request.resume.clone());
        let (spec, config) = session_spec(self, SESSION_LAUNCH, request)?;
        spawn_session(
            spec,
            self.normalizer(config),
            Box::new(session::ClaudeSession::new(id)),
            limits,
        )
    }
}
