//! Every coding-agent backend of `harness` behind one dependency.
//!
//! Coding-agent CLIs (Claude Code, Codex, Gemini CLI, Pi, GitHub Copilot CLI) print very different streams; each backend turns its
//! agent's stream into the same [`Event`]s (the agent said this, read that file, ran this
//! command) and, at the end, an [`Outcome`]. An orchestrator picks the backend by name at run
//! time and consumes the same events from every one.
//!
//! The crate is published as `harness-agents` (`harness` is taken on crates.io), so a program
//! depends on it with `harness-agents = "0.1"` and names it `harness_agents`.
//!
//! A recorded or piped stream, event by event:
//!
//! ```
//! let stream: &[u8] = br#"{"type":"system","subtype":"init","cwd":"/repo","session_id":"s1"}
//! {"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Done."}]}}
//! {"type":"result","subtype":"success","is_error":false,"result":"Done."}
//! "#;
//! let registry = harness_agents::registry();
//! let claude = registry.get("claude").ok_or("not built with the claude feature")?;
//! let mut events = harness_agents::normalize(stream, claude);
//! for event in events.by_ref() {
//!     println!("{}", serde_json::to_string(&event)?); // {"kind":"agent","text":"Done.","line":2}
//! }
//! let outcome = events.outcome().ok_or("read to the end")?;
//! assert_eq!(outcome.status, harness_agents::Status::Success);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A live run (needs a tokio runtime; dropping the stream kills the agent):
//!
//! ```no_run
//! use futures::StreamExt;
//! use harness_agents::{RunItem, RunRequest};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = harness_agents::registry();
//! let backend = registry.get("codex").ok_or("unknown backend")?;
//! let mut request = RunRequest::new("Explain src/main.rs"); // on the agent's stdin
//! request.cwd = Some("/path/to/project".into());
//! request.normalizer.started = true; // see tools while they run (L1)
//! let mut stream = backend.run(request).await?;
//! while let Some(item) = stream.next().await {
//!     match item {
//!         RunItem::Event(event) => println!("{:?}", event.kind()),
//!         RunItem::Outcome(outcome) => println!("{:?}", outcome.status),
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Cargo features: one per backend (`claude`, `codex`, `opencode`, `gemini`, `pi`, `qwen`,
//! `copilot`, `acp`; all on by default), `sessions` (on by default: the sessions Claude Code,
//! Codex, opencode, Gemini CLI, Pi, Qwen Code and Copilot stored, [`sessions`]) and
//! `schema` (the JSON Schema of the output lines). Writing a backend is the business of
//! `harness_agents_core::backend` (the `harness-agents-core` crate).
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::io::Read;

/// The README's example, compiled as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

/// The workspace README's library examples, compiled as doc tests of the facade they use.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct WorkspaceReadme;

pub use harness_agents_core::{
    Backend, Capabilities, Decision, Disposition, Event, EventBody, Expected, Kind, Launch,
    LineRange, LineSplitter, Metrics, Normalized, Normalizer, NormalizerConfig,
    OrchestrationSource, Outcome, OutcomeLine, PendingToolUse, PlanItem, PromptInput, Registry,
    RunError, RunItem, RunRequest, RunStream, Status, StopSignal, Stream, ToolRef, ToolStatus,
    UnknownReason, WarningSource,
};

pub use harness_agents_core::detect;
/// Live sessions with an agent (SPEC section 8): [`Backend::session`] opens one. Not to be
/// confused with [`sessions`] (feature `sessions`), the sessions agents stored on disk.
pub use harness_agents_core::session;
pub use harness_agents_core::{Coverage, KnownAgent, Versions, parse_version};

/// The JSON Schema of the output lines (`schema::lines()`, what `harness schema` prints).
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub use harness_agents_core::schema;
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub use harness_agents_core::stored;

#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub mod prices;
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub mod sessions;

/// Every backend, one line each: the cargo feature that enables it, and its type, which the
/// facade re-exports and [`registry`] registers in this order. A new backend is one line here
/// (and its feature in `Cargo.toml`).
macro_rules! backends {
    ($($feature:literal => $krate:ident::$backend:ident,)*) => {
        $(
            #[cfg(feature = $feature)]
            #[cfg_attr(docsrs, doc(cfg(feature = $feature)))]
            pub use $krate::$backend;
        )*

        /// A registry of every backend this build enables, in a fixed order (`claude`,
        /// `codex`, `opencode`, `gemini`, `pi`, `qwen`, `copilot`, `acp`).
        ///
        /// ```
        /// let names: Vec<&str> = harness_agents::registry().names().collect();
        /// assert_eq!(names, ["claude", "codex", "opencode", "gemini", "pi", "qwen", "copilot", "acp"]);
        /// ```
        pub fn registry() -> Registry {
            // Not mutated in a build without any backend feature.
            #[allow(unused_mut)]
            let mut registry = Registry::new();
            $(
                #[cfg(feature = $feature)]
                registry.register(Box::new($backend));
            )*
            registry
        }
    };
}

backends! {
    "claude" => harness_agents_claude::ClaudeHarness,
    "codex" => harness_agents_codex::CodexHarness,
    "opencode" => harness_agents_opencode::OpencodeHarness,
    "gemini" => harness_agents_gemini::GeminiHarness,
    "pi" => harness_agents_pi::PiHarness,
    "qwen" => harness_agents_qwen::QwenHarness,
    "copilot" => harness_agents_copilot::CopilotHarness,
    "acp" => harness_agents_acp::AcpHarness,
}

/// The events of a stream of `backend`'s output, read from `reader` as they are needed, then
/// the outcome ([`Normalized::outcome`]); default settings.
pub fn normalize<R: Read>(reader: R, backend: &dyn Backend) -> Normalized<R> {
    normalize_with(reader, backend, NormalizerConfig::default())
}

/// [`normalize`] with settings: the working directory for relative paths, the workspace of
/// skills, `started` events.
pub fn normalize_with<R: Read>(
    reader: R,
    backend: &dyn Backend,
    config: NormalizerConfig,
) -> Normalized<R> {
    Normalized::new(reader, backend.normalizer(config))
}
