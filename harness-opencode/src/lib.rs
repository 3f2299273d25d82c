//! The opencode backend of `harness`.
//!
//! opencode (npm `opencode-ai`), run as `opencode run --format json`, prints one JSON object per
//! line: `{type, timestamp, sessionID, part}` with `type` one of `step_start`, `text`,
//! `reasoning` (with `--thinking`), `tool_use` (printed once the tool has finished),
//! `step_finish`, and `error` lines with an `error` object instead of a part. There is no
//! closing summary line. [`OpencodeNormalizer`] turns those lines into the normalized events of
//! `harness-agents-core`, following the S rules of the contract and the P rules of
//! `docs/opencode.md`:
//!
//! - text and reasoning parts are joined per message, reasoning first (P2, P3);
//! - each tool part gives its events on its own line (P5-P8): `read` (a directory read is a
//!   `list`), `write` (`write`, `edit`, `multiedit`, and one per file of `apply_patch`/`patch`,
//!   each with its `change`), `search` (`grep`, `glob`), `list`, `bash` through the shared
//!   classifier with its `exit_code`, `skill`, `todowrite` as `plan`; anything else (`task`,
//!   `webfetch`, opencode's `invalid`) is `unknown`;
//! - a `step_finish` whose reason is not `tool-calls` ends the turn and an `error` line fails
//!   it (P10, P13); the tokens and costs of every step are summed into the outcome (P11).
//!
//! ```
//! use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
//! use harness_agents_opencode::OpencodeNormalizer;
//!
//! let mut config = NormalizerConfig::default();
//! config.cwd = Some("/repo".into());
//! let mut normalizer = OpencodeNormalizer::new(config);
//! let mut events = Vec::new();
//! for line in [
//!     r#"{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start","messageID":"msg_1"}}"#,
//!     r#"{"type":"tool_use","sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"toolu_1","messageID":"msg_1","state":{"status":"completed","input":{"command":"cat src/lib.rs"},"output":"","metadata":{"exit":0}}}}"#,
//!     r#"{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"tool-calls","messageID":"msg_1","tokens":{"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.001}}"#,
//!     r#"{"type":"text","sessionID":"ses_1","part":{"type":"text","text":"Done.","messageID":"msg_2"}}"#,
//!     r#"{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","messageID":"msg_2","tokens":{"input":150,"output":5,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.002}}"#,
//! ] {
//!     normalizer.push_line(line.as_bytes(), &mut events);
//! }
//! let outcome = normalizer.finish(&mut events);
//!
//! let EventBody::Read { path, command, .. } = &events[0].body else { panic!() };
//! assert_eq!(path, "/repo/src/lib.rs");
//! assert_eq!(command.as_deref(), Some("cat src/lib.rs"));
//! assert_eq!(events[0].line, Some(2));
//! assert_eq!(outcome.status, Status::Success);
//! assert_eq!(outcome.session_id.as_deref(), Some("ses_1"));
//! assert_eq!(outcome.final_output.as_deref(), Some("Done."));
//! assert_eq!(outcome.metrics.input_tokens.map(|n| n.to_string()).as_deref(), Some("250"));
//! assert_eq!(outcome.metrics.num_turns.map(|n| n.to_string()).as_deref(), Some("2"));
//! ```
//!
//! [`OpencodeHarness`] also runs opencode live through the [`Backend`] trait: `opencode run
//! --format=json --thinking [--model=M] [--agent=A | --auto] [extra args] -- PROMPT`, the
//! prompt after a `--` so that it is never read as an option.
//!
//! With the `sessions` feature (the facade's `sessions` turns it on), [`OpencodeHistory`]
//! reads the sessions opencode stored in its database with the same rules (`docs/sessions.md`,
//! OS rules).
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
mod serve;
mod server;
mod tools;
mod wire;

use harness_agents_core::process::{ProcessSpec, SessionSpec, run_dir, spawn_session};
use harness_agents_core::session::Session;
use harness_agents_core::transcript::Header;
use harness_agents_core::{
    Backend, Capabilities, Launch, Normalizer, NormalizerConfig, OrchestrationSource, RunError,
    RunRequest, Versions,
};
use serde_json::{Value, json};

pub use decoder::{OpencodeDecoder, OpencodeNormalizer};
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use history::OpencodeHistory;
pub use launch::{LAUNCH, VERSIONS};

/// The opencode backend, registered as `"opencode"`.
///
/// [`Backend::run`] starts `opencode run --format=json --thinking [--model=MODEL] [permission
/// flags] [extra args] -- PROMPT` in the request's `cwd` (else the caller's directory), which
/// opencode takes as its project; the normalizer resolves relative paths against it. The binary
/// is the request's, else `$OPENCODE_BIN`, else `opencode` on `PATH`.
///
/// `permission_mode` maps to opencode's own agents and flags (P14):
///
/// | `permission_mode` | opencode flags |
/// |---|---|
/// | `default`, `acceptEdits` | none (the `build` agent, which edits without asking) |
/// | `plan` | `--agent=plan` (read-only) |
/// | `bypassPermissions` | `--auto` (approve whatever is not explicitly denied) |
/// | anything else, e.g. `build` | `--agent=VALUE` |
///
/// `opencode run` rejects, without asking, every permission its configuration sets to `ask`
/// (the tool's event then fails with opencode's rejection text, and the run stops).
///
/// ```
/// use harness_agents_core::{Backend, OrchestrationSource, Registry};
///
/// let mut registry = Registry::new();
/// registry.register(Box::new(harness_agents_opencode::OpencodeHarness));
/// let opencode = registry.get("opencode").unwrap();
/// assert!(opencode.capabilities().exit_codes);
/// assert_eq!(opencode.capabilities().orchestration_source, OrchestrationSource::Plan);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OpencodeHarness;

#[harness_agents_core::backend::async_trait]
impl Backend for OpencodeHarness {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(OpencodeNormalizer::new(config))
    }

    fn recognizes(&self, line: &serde_json::Value) -> bool {
        recognizes(line)
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::new(true, OrchestrationSource::Plan)
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

    /// A session through `opencode serve` (the PS rules of `docs/opencode.md`): one server per
    /// session, `opencode serve --port 0 --hostname 127.0.0.1 [extra args]` in the request's
    /// directory, with a random `OPENCODE_SERVER_PASSWORD` that only this session knows; a
    /// new session on it (or the stored one `resume` names), a prompt per turn, its `/event`
    /// stream as the session's lines, `POST /session/:id/abort` for an interrupt. The server
    /// and every process it started are killed when the session ends.
    async fn session(&self, request: RunRequest) -> Result<Session, RunError> {
        let limits = SessionSpec::new(request.timeout, request.idle_timeout);
        let (_, mut config) = run_dir(&request)?;
        config.session = true;
        let password = serve::password().map_err(|source| RunError::Io {
            binary: "opencode".into(),
            source,
        })?;
        let setup = session_setup(&request, serve::basic_auth(&password));
        let mut args: Vec<String> = ["serve", "--port", "0", "--hostname", "127.0.0.1"]
            .map(str::to_string)
            .to_vec();
        args.extend(request.extra_args.iter().cloned());
        let mut spec = ProcessSpec::for_request(
            request,
            LAUNCH.env_var,
            LAUNCH.program,
            args,
            LAUNCH.install,
        );
        spec.stdin = Vec::new();
        spec.env
            .insert("OPENCODE_SERVER_PASSWORD".to_string(), password);
        spec.header = Header::new(self.name(), &config);
        spawn_session(
            spec,
            self.normalizer(config),
            Box::new(serve::ServeSession::new(setup)),
            limits,
        )
    }
}

/// What the session asks of the server (PS10): `bypassPermissions` is a session ruleset that
/// allows everything; `plan` and any other mode but `default` and `acceptEdits` name the
/// agent of every prompt; the model `PROVIDER/MODEL` goes with every prompt.
fn session_setup(request: &RunRequest, auth: String) -> serve::Setup {
    let mut create = json!({});
    let mut prompt = serde_json::Map::new();
    match request.permission_mode.as_deref() {
        None | Some("default" | "acceptEdits") => {}
        Some("bypassPermissions") => {
            create["permission"] = json!([{"permission": "*", "pattern": "*", "action": "allow"}]);
        }
        Some(agent) => {
            prompt.insert("agent".into(), Value::from(agent));
        }
    }
    if let Some((provider, model)) = request.model.as_deref().and_then(|m| m.split_once('/')) {
        prompt.insert(
            "model".into(),
            json!({"providerID": provider, "modelID": model}),
        );
    }
    serve::Setup {
        auth,
        resume: request.resume.clone(),
        create,
        prompt,
        // A server that is not ready within a turn's time limit cannot run a turn either.
        ready: request
            .timeout
            .map_or(serve::READY, |t| t.min(serve::READY)),
    }
}

/// A line whose top-level `type` is one of opencode's (`step_start`, `step_finish`,
/// `tool_use`, `text`, `reasoning`, `error`) and that carries a string `sessionID` (P1):
/// Claude Code spells it `session_id`, Codex has none, so a bare `{"type":"error"}` or
/// `{"type":"text"}` is recognized by no backend.
///
/// ```
/// use harness_agents_core::Backend;
/// use serde_json::json;
///
/// let opencode = harness_agents_opencode::OpencodeHarness;
/// assert!(opencode.recognizes(&json!({"type": "step_start", "sessionID": "ses_1"})));
/// assert!(opencode.recognizes(&json!({"type": "error", "sessionID": "ses_1", "error": {}})));
/// assert!(!opencode.recognizes(&json!({"type": "error", "message": "x"})));
/// assert!(!opencode.recognizes(&json!({"type": "assistant", "sessionID": "ses_1"})));
/// ```
fn recognizes(line: &serde_json::Value) -> bool {
    let kind = line.get("type").and_then(serde_json::Value::as_str);
    matches!(
        kind,
        Some("step_start" | "step_finish" | "tool_use" | "text" | "reasoning" | "error")
    ) && line
        .get("sessionID")
        .is_some_and(serde_json::Value::is_string)
}
