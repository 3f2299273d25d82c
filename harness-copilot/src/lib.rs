//! The GitHub Copilot CLI backend of `harness`.
//!
//! The Copilot CLI (`@github/copilot`), run as `copilot -p PROMPT --output-format json`,
//! prints one JSON object per line, each `{type, data, id, timestamp, parentId}` with
//! `ephemeral: true` on the transient ones: its start (`session.skills_loaded`,
//! `session.mcp_servers_loaded`, `session.tools_updated`), the echoed prompt
//! (`user.message`), per model call `assistant.turn_start`, the streamed deltas, one whole
//! `assistant.message` (its text, its reasoning and its tool requests), each tool as
//! `tool.execution_start` and `tool.execution_complete` (with shell output and partial
//! results between), `assistant.turn_end`; then `assistant.idle` and a last line of another
//! shape, `{type: "result", sessionId, exitCode, usage}`. [`CopilotNormalizer`] turns those
//! lines into the normalized events of `harness-agents-core`, following the S rules of
//! `docs/contract.md` and the CP rules of `docs/copilot.md`:
//!
//! - each `assistant.message` gives one `reasoning` event (its `reasoningText`) and one
//!   `agent` event (its `content`) (CP5); the deltas and the repeated `assistant.reasoning`
//!   carry nothing it does not (CP5, CP6);
//! - `tool.execution_start` records a tool use, `tool.execution_complete` gives its events,
//!   in whatever order parallel uses complete (CP7, CP8): `view` a `read` with its line range
//!   (a `list` for a directory), `create` and `edit` a `write`, `grep` and `glob` a `search`,
//!   `bash` whatever the shared shell classifier makes of the command, with its exit code;
//!   a command that exits non-zero is a failure though Copilot calls it a success (CP9); any
//!   other tool is `unknown`;
//! - `result` ends the run: the session id (printed nowhere else), the status from its
//!   `exitCode`, the durations (CP12); stdout carries no token counts. A failed model request
//!   is a `warning`, the error Copilot gives up with an `error` (CP11).
//!
//! The normalizer is a pure state machine: lines in, events out, no I/O, no panics. Its memory
//! is bounded by the tool uses still running and one line.
//!
//! [`CopilotHarness`] also runs Copilot live, through the [`Backend`] trait: it starts
//! `copilot --output-format json ... --prompt=PROMPT` and streams the events as they happen,
//! then the outcome with the exit status. Its sessions (`Backend::session`, CP15-CP18) go
//! through Copilot's ACP mode, `copilot --acp`, driven by the ACP session of
//! `harness-agents-acp`: follow-up prompts on one process, permission requests answered by the
//! caller, `session/cancel` to interrupt, `session/load` to resume.
//!
//! ```
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//! use harness_agents_copilot::CopilotNormalizer;
//!
//! let mut config = NormalizerConfig::default();
//! config.cwd = Some("/repo".into());
//! let mut normalizer = CopilotNormalizer::new(config);
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"user.message","data":{"content":"read notes"}}"#,
//!     r#"{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"view","arguments":{"path":"notes.txt","view_range":[2,3]}}}"#,
//!     r#"{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"b\nc"}}}"#,
//!     r#"{"type":"assistant.message","data":{"content":"Lines 2 and 3.","toolRequests":[]}}"#,
//!     r#"{"type":"result","sessionId":"s-1","exitCode":0,"usage":{"sessionDurationMs":900}}"#,
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
//! [`Backend`]: harness_agents_core::Backend

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

pub use decoder::{CopilotDecoder, CopilotNormalizer};
#[cfg(feature = "sessions")]
pub use history::CopilotHistory;
pub use launch::{LAUNCH, SESSION_LAUNCH, VERSIONS};

/// The GitHub Copilot CLI backend, registered as `"copilot"`.
///
/// [`Backend::run`] starts `copilot --output-format json --no-auto-update [--model=MODEL]
/// [--resume=ID] [permission flags] [extra args] --prompt=PROMPT` in the request's `cwd`
/// (made absolute; else the caller's current directory). The binary is the request's, else
/// `$COPILOT_BIN`, else `copilot` on `PATH`. Copilot's stdout never names its directory: the
/// normalizer resolves relative paths against the run's (CP10).
///
/// `permission_mode` becomes Copilot's tool rules (CP14):
///
/// | `permission_mode` | Copilot flags |
/// |---|---|
/// | `default` | none: Copilot's own rules, a headless run denies what would ask |
/// | `plan` | `--deny-tool=write --deny-tool=shell` |
/// | `acceptEdits` | `--allow-tool=write` |
/// | `bypassPermissions` | `--allow-all-tools` |
/// | anything else, e.g. `shell(git:*)` | `--allow-tool=VALUE` |
///
/// ```
/// use harness_agents_core::{Backend, OrchestrationSource};
///
/// let copilot = harness_agents_copilot::CopilotHarness;
/// assert_eq!(copilot.name(), "copilot");
/// assert!(copilot.capabilities().exit_codes);
/// assert_eq!(copilot.capabilities().orchestration_source, OrchestrationSource::None);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct CopilotHarness;

#[async_trait]
impl Backend for CopilotHarness {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(CopilotNormalizer::new(config))
    }

    fn recognizes(&self, line: &Value) -> bool {
        recognizes(line)
    }

    /// A shell command carries its exit code (CP9); Copilot's plan is not on its stdout.
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

    /// Copilot's session runs through its ACP mode ([`SESSION_LAUNCH`], CP15): the ACP
    /// session of `harness-agents-acp` (A16-A22 of `docs/acp.md`), its events those of the A
    /// rules (tool names are ACP's kinds); the permission mode becomes the same tool rules as
    /// a run's (CP14, CP17); `resume` continues a stored session through `session/load`.
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        let permission = match &request.permission_mode {
            Some(mode) => launch::permission_args(mode),
            None => Vec::new(),
        };
        let command = AgentCommand::Launch(&SESSION_LAUNCH, permission);
        open_session(self.name(), command, request).await
    }
}

/// The lines only Copilot prints: a dotted `type` of its own families with a `data` object,
/// and its closing `result` with a string `sessionId` and a number `exitCode`.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let copilot = harness_agents_copilot::CopilotHarness;
/// assert!(copilot.recognizes(&json!({"type": "assistant.turn_start", "data": {"turnId": "0"}})));
/// assert!(copilot.recognizes(&json!({"type": "result", "sessionId": "s", "exitCode": 0})));
/// assert!(!copilot.recognizes(&json!({"type": "assistant.turn_start"})));
/// assert!(!copilot.recognizes(&json!({"type": "result", "subtype": "success", "session_id": "s"})));
/// ```
fn recognizes(line: &Value) -> bool {
    match line.get("type").and_then(Value::as_str) {
        Some("result") => {
            line.get("sessionId").is_some_and(Value::is_string)
                && line.get("exitCode").is_some_and(Value::is_number)
        }
        Some(kind) => {
            line.get("data").is_some_and(Value::is_object)
                && ["session.", "assistant.", "user.", "tool.", "model."]
                    .iter()
                    .any(|family| kind.starts_with(family))
        }
        None => false,
    }
}
