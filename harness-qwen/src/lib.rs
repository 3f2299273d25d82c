//! The Qwen Code backend of `harness`.
//!
//! Qwen Code (`@qwen-code/qwen-code`), run as `qwen --output-format stream-json` with the
//! prompt on standard input, prints one JSON object per line in the shape of Claude Code's
//! `stream-json`: a `system` `init` line (the session id and the working directory), a
//! `stream_event` line with Qwen's goal state (and, with `--include-partial-messages`, the
//! streamed deltas), one `assistant` line per content block (thinking, text, tool calls),
//! one `user` line per tool result, `system` `retry` lines when Qwen retries a model call,
//! and a closing `result` line with the usage of every request of the run. [`QwenNormalizer`]
//! turns those lines into the normalized events of `harness-agents-core`, following the S
//! rules of `docs/contract.md` and the QW rules of `docs/qwen.md`:
//!
//! - each `assistant` line gives a `reasoning` event (its thinking) and an `agent` event (its
//!   text) at once, and records its tool uses (QW4-QW6);
//! - a `tool_result` gives its use's events (QW7, QW8): `read_file` a `read` with its line
//!   range, `write_file` and `edit` a `write`, `grep_search` and `glob` a `search`,
//!   `run_shell_command` whatever the shared shell classifier makes of the command (a
//!   `command` with the exit code of a failure, or `read`/`search`/`list` events), any other
//!   tool `unknown` (QW9);
//! - `result` ends the run; a failed one is an `error` (QW10).
//!
//! The normalizer is a pure state machine: lines in, events out, no I/O, no panics.
//!
//! ```
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//! use harness_agents_qwen::QwenNormalizer;
//!
//! let mut normalizer = QwenNormalizer::new(NormalizerConfig::default());
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"system","subtype":"init","uuid":"s-1","session_id":"s-1","cwd":"/repo"}"#,
//!     r#"{"type":"assistant","session_id":"s-1","message":{"id":"m1","content":[{"type":"tool_use","id":"c1","name":"read_file","input":{"file_path":"notes.txt","offset":1,"limit":2}}]}}"#,
//!     r#"{"type":"user","session_id":"s-1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","is_error":false,"content":"b\nc"}]}}"#,
//!     r#"{"type":"assistant","session_id":"s-1","message":{"id":"m2","content":[{"type":"text","text":"Lines 2 and 3."}]}}"#,
//!     r#"{"type":"result","subtype":"success","is_error":false,"result":"Lines 2 and 3.","usage":{"input_tokens":10,"output_tokens":3}}"#,
//! ] {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//!
//! let EventBody::Read { path, range, .. } = &events[0].body else { panic!() };
//! assert_eq!(path, "/repo/notes.txt");
//! assert_eq!(range.map(|r| (r.start, r.end)), Some((2, Some(3))));
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
//! assert_eq!(outcome.final_output.as_deref(), Some("Lines 2 and 3."));
//! ```
//!
//! [`QwenHarness`] also runs Qwen Code live, through the [`Backend`] trait, and holds
//! sessions (SPEC section 8) through Qwen's ACP mode, `qwen --acp` (QW13-QW16): follow-up
//! prompts, permission requests the caller answers, interrupts, resume.
//!
//! [`Backend`]: harness_agents_core::Backend

mod decoder;
#[cfg(feature = "sessions")]
mod history;
mod launch;
mod tools;

use harness_agents_acp::{AgentCommand, open_session};
use harness_agents_core::backend::async_trait;
use harness_agents_core::session::Session;
use harness_agents_core::{
    Backend, Capabilities, Launch, Normalizer, NormalizerConfig, OrchestrationSource, RunError,
    RunRequest, Versions,
};
use serde_json::Value;

pub use decoder::{QwenDecoder, QwenNormalizer};
#[cfg(feature = "sessions")]
pub use history::QwenHistory;
pub use launch::{LAUNCH, SESSION_LAUNCH, VERSIONS, approval_mode};

/// The Qwen Code backend, registered as `"qwen"`.
///
/// [`Backend::run`] starts `qwen --output-format stream-json [--model=MODEL] [--resume=UUID]
/// [--approval-mode=MODE] [extra args]` in the request's `cwd` and writes the prompt to its
/// standard input. The binary is the request's, else `$QWEN_BIN`, else `qwen` on `PATH`.
///
/// `permission_mode` becomes `--approval-mode` (QW12):
///
/// | `permission_mode` | Qwen flag |
/// |---|---|
/// | `default` | `--approval-mode=default` (tools that ask are declined) |
/// | `plan` | `--approval-mode=plan` |
/// | `acceptEdits` | `--approval-mode=auto-edit` |
/// | `bypassPermissions` | `--approval-mode=yolo` |
/// | anything else, e.g. `auto` | `--approval-mode=VALUE` |
///
/// [`Backend::session`] runs `qwen --acp` instead ([`SESSION_LAUNCH`], QW13), with the same
/// approval mode.
///
/// ```
/// use harness_agents_core::Backend;
///
/// let qwen = harness_agents_qwen::QwenHarness;
/// assert_eq!(qwen.name(), "qwen");
/// assert!(qwen.capabilities().exit_codes);
/// assert!(qwen.has_sessions());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct QwenHarness;

#[async_trait]
impl Backend for QwenHarness {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(QwenNormalizer::new(config))
    }

    fn recognizes(&self, line: &Value) -> bool {
        recognizes(line)
    }

    /// A failed shell command carries its exit code (QW9); Qwen keeps no plan here.
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

    /// It has sessions ([`Backend::session`] below).
    fn has_sessions(&self) -> bool {
        true
    }

    /// Qwen Code's session runs through its ACP mode ([`SESSION_LAUNCH`], QW13): the ACP
    /// session of `harness-agents-acp` (A16-A22 of `docs/acp.md`), its events those of the A
    /// rules (tool names are ACP's kinds); `resume` continues a stored session through
    /// `session/resume` (QW15).
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        let permission = match &request.permission_mode {
            Some(mode) => launch::permission_args(mode),
            None => Vec::new(),
        };
        let command = AgentCommand::Launch(&SESSION_LAUNCH, permission);
        open_session(self.name(), command, request).await
    }
}

/// The lines only Qwen Code prints: its `init` line, which names `qwen_code_version` (the
/// Claude backend declines that line, whose shape is otherwise its own).
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let qwen = harness_agents_qwen::QwenHarness;
/// assert!(qwen.recognizes(&json!({"type": "system", "subtype": "init", "qwen_code_version": "0.24.4"})));
/// assert!(!qwen.recognizes(&json!({"type": "system", "subtype": "init", "claude_code_version": "2"})));
/// ```
fn recognizes(line: &Value) -> bool {
    harness_agents_core::backend::stream_json::signed_by(line, "qwen_code_version")
}
