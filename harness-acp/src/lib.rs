//! The Agent Client Protocol backend of `harness`: any ACP agent, driven as its client.
//!
//! ACP (JSON-RPC 2.0 over the agent's standard input and output, one message per line) is
//! spoken natively by Gemini CLI (`gemini --acp`), opencode (`opencode acp`) and many other
//! agents. [`AcpHarness`] starts the agent command the caller gives, and is its client:
//! `initialize` (no file system, no terminal), `session/new` in the run's directory,
//! `session/prompt` with the prompt, then the agent's `session/update` notifications until the
//! prompt's answer; it answers the agent's permission requests from the request's permission
//! mode and any other request with a JSON-RPC error, and sends `session/cancel` on a timeout or
//! a stop before the process group is stopped. The rules are in `docs/acp.md` (A1-A15; sessions A16-A23).
//!
//! A run's transcript holds every message of both directions, one per line, wrapped with the
//! side that sent it (A1); [`AcpNormalizer`] turns such a transcript into the normalized events
//! (`harness normalize --backend acp FILE`), the same events the live run gave:
//!
//! - message and thought chunks are joined into one `reasoning` then one `agent` event (A5);
//! - a tool call gives its events when it reaches `completed` or `failed`, by its `kind`:
//!   `read`, `edit` (a `write` per diff), `delete` and `move` (`write`), `search`, `execute`
//!   (the shared shell classifier), any other kind `unknown` (A6, A7);
//! - `plan` updates are `plan` events; the prompt's answer ends the run, its stop reason gives
//!   the status and its usage the metrics (A4, A10).
//!
//! ```
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//! use harness_agents_acp::AcpNormalizer;
//!
//! let mut normalizer = AcpNormalizer::new(NormalizerConfig::default());
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/repo","mcpServers":[]}}}"#,
//!     r#"{"from":"agent","message":{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s-1"}}}"#,
//!     r#"{"from":"client","message":{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s-1","prompt":[{"type":"text","text":"Run the tests"}]}}}"#,
//!     r#"{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"cargo test","kind":"execute","status":"in_progress","rawInput":{"command":"cargo test"}}}}}"#,
//!     r#"{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed"}}}}"#,
//!     r#"{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"All "}}}}}"#,
//!     r#"{"from":"agent","message":{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"pass."}}}}}"#,
//!     r#"{"from":"agent","message":{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}}"#,
//! ] {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//!
//! let EventBody::Command { command, .. } = &events[0].body else { panic!() };
//! assert_eq!(command, "cargo test");
//! let EventBody::Agent { text } = &events[1].body else { panic!() };
//! assert_eq!(&**text, "All pass."); // an `Arc<str>`, shared with the outcome
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
//! ```

/// This crate's README, whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod client;
mod decoder;
mod launch;
mod session;
mod tools;
mod view;
mod wire;

use harness_agents_core::backend::async_trait;
use harness_agents_core::session::Session;
use harness_agents_core::{
    Backend, Capabilities, KnownAgent, Normalizer, NormalizerConfig, OrchestrationSource, RunError,
    RunRequest, RunStream,
};
use serde_json::Value;

pub use client::{AcpClient, CANCEL_GRACE, Permission};
pub use decoder::{AcpDecoder, AcpNormalizer};
pub use launch::KNOWN_AGENTS;
pub use session::{AcpSession, AgentCommand, OPEN_LIMIT, open as open_session};

/// The ACP backend, registered as `"acp"`.
///
/// [`Backend::run`] starts the agent command of [`RunRequest::agent`] (then
/// `request.extra_args`; without it, [`RunRequest::binary`] alone) in the request's `cwd`
/// (made absolute; else the caller's current directory), with no prompt on its command line
/// or its standard input: the prompt goes in `session/prompt`. Permission requests are
/// answered from `permission_mode` ([`Permission::of`]); `model` is not used (the agent's own
/// flags choose it). [`RunRequest::transcript`] saves the messages of both directions.
///
/// ```
/// use harness_agents_core::{Backend, OrchestrationSource};
///
/// let acp = harness_agents_acp::AcpHarness;
/// assert_eq!(acp.name(), "acp");
/// assert!(!acp.capabilities().exit_codes);
/// assert_eq!(acp.capabilities().orchestration_source, OrchestrationSource::Plan);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AcpHarness;

#[async_trait]
impl Backend for AcpHarness {
    fn name(&self) -> &'static str {
        "acp"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(AcpNormalizer::new(config))
    }

    fn recognizes(&self, line: &Value) -> bool {
        recognizes(line)
    }

    /// ACP reports no exit codes in a common form (only the agents that state one in their own
    /// `rawOutput`, A7a); `plan` updates are the orchestration source (A4).
    fn capabilities(&self) -> Capabilities {
        Capabilities::new(false, OrchestrationSource::Plan)
    }

    /// Gemini CLI, opencode, Qwen Code and the Claude Code and Codex adapters, as ACP agents.
    fn known_agents(&self) -> &'static [KnownAgent] {
        KNOWN_AGENTS
    }

    /// The agent's command, [`AcpClient`] as its conversation (A12-A15), instead of a launch.
    /// A run that resumes is one turn of a resumed session (A21): only a session learns from
    /// `initialize` whether the agent can resume, and how.
    async fn run(&self, request: RunRequest) -> Result<RunStream, RunError> {
        if request.resume.is_some() {
            let prompt = request.prompt.clone();
            let session = open_session(self.name(), AgentCommand::Request, request).await?;
            return Ok(session.into_run(prompt));
        }
        launch::spawn(request)
    }

    /// It has sessions ([`Backend::session`] below).
    fn has_sessions(&self) -> bool {
        true
    }

    /// One agent process for the session ([`open_session`]): `initialize` and `session/new`
    /// (`session/resume` or `session/load` for `resume`) as it opens, a `session/prompt` per
    /// turn, permission requests answered by the caller (A16-A23 of `docs/acp.md`).
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        open_session(self.name(), AgentCommand::Request, request).await
    }
}

/// A transcript line (A1): `from` `client` or `agent` with a JSON-RPC 2.0 `message`.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let acp = harness_agents_acp::AcpHarness;
/// assert!(acp.recognizes(&json!({"from": "client", "message": {"jsonrpc": "2.0", "id": 0, "method": "initialize"}})));
/// assert!(!acp.recognizes(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize"})));
/// assert!(!acp.recognizes(&json!({"from": "agent", "text": "hello"})));
/// ```
fn recognizes(line: &Value) -> bool {
    line.get("from").and_then(wire::From::parse).is_some()
        && line.pointer("/message/jsonrpc").and_then(Value::as_str) == Some("2.0")
}
