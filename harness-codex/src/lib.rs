//! The Codex backend of `harness`.
//!
//! Codex, run as `codex exec --json -` (the prompt on stdin), prints one JSON thread event per
//! line: `thread.started`, `turn.started`, `item.started` / `item.updated` / `item.completed`,
//! `turn.completed` / `turn.failed`, and `error`. [`CodexNormalizer`] turns those lines into
//! the normalized events of `harness-core`, following the S and X rules of `SPEC.md` and the
//! outcome rules O1 and O3:
//!
//! - items are recorded on `item.started` / `item.updated` and emit their events on
//!   `item.completed` (X2); items still open at the end of input become `unknown` events with
//!   reason `unresolved_tool_use` (X8);
//! - `command_execution` items are split into argv with the `shlex` crate and classified by
//!   `harness-codex-shell`, exactly as Codex itself summarizes them: a command that only reads,
//!   searches or lists becomes `read`/`search`/`list` events, anything else one `command`
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
//! use harness_codex::CodexNormalizer;
//! use harness_core::{EventBody, Normalizer, NormalizerConfig, Status};
//!
//! let config = NormalizerConfig { cwd: Some("/repo".into()), ..NormalizerConfig::default() };
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

mod items;
mod normalizer;

use harness_core::{Capabilities, Harness, Normalizer, NormalizerConfig, OrchestrationSource};

pub use normalizer::CodexNormalizer;

/// The Codex backend, registered as `"codex"`.
///
/// ```
/// use harness_core::{Harness, OrchestrationSource, Registry};
///
/// let mut registry = Registry::new();
/// registry.register(Box::new(harness_codex::CodexHarness));
/// let codex = registry.get("codex").unwrap();
/// assert!(codex.capabilities().exit_codes);
/// assert_eq!(codex.capabilities().orchestration_source, OrchestrationSource::Plan);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CodexHarness;

impl Harness for CodexHarness {
    fn name(&self) -> &'static str {
        "codex"
    }

    /// Codex reports exit codes and its plan is its orchestration source (X9).
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            exit_codes: true,
            orchestration_source: OrchestrationSource::Plan,
        }
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(CodexNormalizer::new(config))
    }
}
