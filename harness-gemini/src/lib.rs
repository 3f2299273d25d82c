//! The Gemini CLI backend of `harness`.
//!
//! Gemini CLI (`@google/gemini-cli`), run headless with `--output-format stream-json`, prints
//! one JSON object per line, each with a `type` and an ISO `timestamp`: `init` (the session id
//! and the model), `message` (the echoed prompt, then the assistant's text in chunks),
//! `tool_use` and `tool_result` (a tool call and its outcome, paired by `tool_id`), `error`
//! (a warning or an error of the run) and, last, `result` (the status and the token figures).
//! [`GeminiNormalizer`] turns those lines into the normalized events of `harness-agents-core`,
//! following the S rules of `docs/contract.md` and the G rules of `docs/gemini.md`:
//!
//! - the assistant's chunks of one turn are joined into one `agent` event, flushed by the next
//!   JSON line that is not a chunk (G3);
//! - a `tool_use` is recorded and gives its events when its `tool_result` arrives (G4, G5):
//!   `read_file` a `read` with its line range, `write_file` and `replace` a `write`,
//!   `grep_search` and `glob` a `search`, `list_directory` a `list`, `run_shell_command`
//!   whatever the shared shell classifier makes of the command (a `command`, or
//!   `read`/`search`/`list` events), `activate_skill` a `skill`, `write_todos` a `plan`, any
//!   other tool `unknown` (G6, G7); uses still pending at the end become `unresolved_tool_use`
//!   (G11);
//! - `error` lines give `warning` or `error` events by their severity (G9); `result` ends the
//!   run, feeds the outcome's status and metrics and, when it failed, gives an `error` (G10).
//!
//! The normalizer is a pure state machine: lines in, events out, no I/O, no panics. Its memory
//! is bounded by the text of the current turn and the tool uses still pending.
//!
//! [`GeminiHarness`] also runs Gemini CLI live, through the [`Backend`] trait: it starts
//! `gemini --output-format=stream-json --skip-trust`, writes the prompt to its standard input
//! (never its command line) and streams the events as they happen, then the outcome with the
//! exit status.
//!
//! ```
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//! use harness_agents_gemini::GeminiNormalizer;
//!
//! let mut config = NormalizerConfig::default();
//! config.cwd = Some("/repo".into());
//! let mut normalizer = GeminiNormalizer::new(config);
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"init","timestamp":"2026-01-01T00:00:00.000Z","session_id":"s-1","model":"auto"}"#,
//!     r#"{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","role":"user","content":"Read notes"}"#,
//!     r#"{"type":"tool_use","timestamp":"2026-01-01T00:00:00.000Z","tool_name":"read_file","tool_id":"t1","parameters":{"file_path":"notes.txt","start_line":2,"end_line":3}}"#,
//!     r#"{"type":"tool_result","timestamp":"2026-01-01T00:00:00.000Z","tool_id":"t1","status":"success","output":""}"#,
//!     r#"{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","role":"assistant","content":"Lines 2 ","delta":true}"#,
//!     r#"{"type":"message","timestamp":"2026-01-01T00:00:00.000Z","role":"assistant","content":"and 3.","delta":true}"#,
//!     r#"{"type":"result","timestamp":"2026-01-01T00:00:00.000Z","status":"success","stats":{"input_tokens":10,"output_tokens":3}}"#,
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
//! assert_eq!(events[1].line, Some(6));
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
//! assert_eq!(outcome.final_output.as_deref(), Some("Lines 2 and 3."));
//! ```
//!
//! With the `sessions` feature (the facade's `sessions` turns it on), [`ChatHistory`] reads
//! the chats Gemini CLI stored (`~/.gemini/tmp/`) with the same rules (`docs/sessions.md`, GS
//! rules).
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
mod tools;
mod wire;

use harness_agents_acp::{AgentCommand, open_session};
use harness_agents_core::backend::async_trait;
use harness_agents_core::session::Session;
use harness_agents_core::{
    Backend, Capabilities, Launch, Normalizer, NormalizerConfig, OrchestrationSource, RunError,
    RunRequest, Versions,
};
use serde_json::Value;

pub use decoder::{GeminiDecoder, GeminiNormalizer};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use history::ChatHistory;
pub use launch::{LAUNCH, SESSION_LAUNCH, VERSIONS};

/// The Gemini CLI backend, registered as `"gemini"`.
///
/// [`Backend::run`] starts `gemini --output-format=stream-json --skip-trust [--model=MODEL]
/// [--approval-mode=MODE] [extra args]` in the request's `cwd` (made absolute; else the
/// caller's current directory) and writes the prompt to its standard input. The binary is the
/// request's, else `$GEMINI_BIN`, else `gemini` on `PATH`. The normalizer resolves relative
/// paths against that directory (G8).
///
/// `permission_mode` chooses Gemini CLI's approval mode; Claude Code's names are translated:
///
/// | `permission_mode` | Gemini CLI flag |
/// |---|---|
/// | `default`, `plan` | `--approval-mode=default`, `--approval-mode=plan` |
/// | `acceptEdits` | `--approval-mode=auto_edit` |
/// | `bypassPermissions` | `--approval-mode=yolo` |
/// | anything else, e.g. `yolo`, `auto_edit` | `--approval-mode=VALUE` |
///
/// Headless, Gemini CLI never asks: a tool that would need approval is not offered to the
/// model at all, so without `yolo` (or `auto_edit` for edits) the shell and the editing tools
/// are missing.
///
/// ```
/// use harness_agents_core::{Backend, OrchestrationSource};
///
/// let gemini = harness_agents_gemini::GeminiHarness;
/// assert_eq!(gemini.name(), "gemini");
/// assert!(!gemini.capabilities().exit_codes);
/// assert_eq!(gemini.capabilities().orchestration_source, OrchestrationSource::Plan);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct GeminiHarness;

#[async_trait]
impl Backend for GeminiHarness {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(GeminiNormalizer::new(config))
    }

    fn recognizes(&self, line: &Value) -> bool {
        recognizes(line)
    }

    /// Gemini CLI reports no exit codes (a failing command is a `success`; its exit status
    /// reaches only the model); its orchestration source is the `write_todos` plan (G7).
    fn capabilities(&self) -> Capabilities {
        Capabilities::new(false, OrchestrationSource::Plan)
    }

    /// G7: `write_todos` gives a `plan`, which names no tool use (J3).
    fn eventless_tools(&self) -> &'static [&'static str] {
        tools::EVENTLESS
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

    /// Gemini CLI's session runs through its ACP mode ([`SESSION_LAUNCH`], G13): the ACP
    /// session of `harness-agents-acp` (A16-A23 of `docs/acp.md`), its events those of the A
    /// rules (tool names are ACP's kinds); `resume` continues a stored session through
    /// `session/load`.
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        let permission = match &request.permission_mode {
            Some(mode) => launch::permission_args(mode),
            None => Vec::new(),
        };
        let command = AgentCommand::Launch(&SESSION_LAUNCH, permission);
        open_session(self.name(), command, request).await
    }
}

/// A line only Gemini CLI prints: `init` with a string `session_id`; `message` with a
/// string `role` and `content`; `tool_use` with a string `tool_name`; `tool_result` with
/// a string `tool_id`; `result` with an object `stats`. The type alone is not enough
/// (Claude Code prints `result` lines too, opencode `tool_use` lines with a `part`), and
/// its `error` lines are no signature.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let gemini = harness_agents_gemini::GeminiHarness;
/// assert!(gemini.recognizes(&json!({"type": "init", "session_id": "s", "model": "auto"})));
/// assert!(gemini.recognizes(&json!({"type": "tool_use", "tool_name": "glob", "tool_id": "t"})));
/// assert!(!gemini.recognizes(&json!({"type": "tool_use", "part": {"tool": "glob"}})));
/// assert!(!gemini.recognizes(&json!({"type": "result", "subtype": "success"})));
/// assert!(!gemini.recognizes(&json!({"type": "error", "message": "x"})));
/// ```
fn recognizes(line: &Value) -> bool {
    let is_str = |key: &str| line.get(key).is_some_and(Value::is_string);
    match line.get("type").and_then(Value::as_str) {
        Some("init") => is_str("session_id"),
        Some("message") => is_str("role") && is_str("content"),
        Some("tool_use") => is_str("tool_name"),
        Some("tool_result") => is_str("tool_id"),
        Some("result") => line.get("stats").is_some_and(Value::is_object),
        _ => false,
    }
}
