//! A backend, as a backend crate implements it and as callers drive it: the [`Backend`] trait,
//! what a backend reports ([`Capabilities`], [`OrchestrationSource`]), and the [`Registry`]
//! that picks one by name at run time.

#[cfg(feature = "process")]
use std::path::Path;

use async_trait::async_trait;

use crate::error::RunError;
use crate::normalizer::{Normalizer, NormalizerConfig};
#[cfg(feature = "process")]
use crate::process::{Launch, launch_run};
use crate::run::{RunRequest, RunStream};
use crate::versions::{KnownAgent, Versions};

/// What a backend can report, so a caller knows which fields to expect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Capabilities {
    /// Whether `command` events carry `exit_code` (Claude Code: no, C16; Codex: yes, X9).
    pub exit_codes: bool,
    /// Where the agent's plan comes from, if it has one (C17, X9).
    pub orchestration_source: OrchestrationSource,
}

/// The source of an agent's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OrchestrationSource {
    /// The backend has no plan: it never emits `plan` events.
    None,
    /// The backend reports its plan: `plan` events.
    Plan,
}

impl OrchestrationSource {
    /// The name `harness backends` prints: `"none"` or `"plan"`.
    pub fn as_str(self) -> &'static str {
        match self {
            OrchestrationSource::None => "none",
            OrchestrationSource::Plan => "plan",
        }
    }
}

impl Capabilities {
    /// What a backend reports: whether its `command` events carry `exit_code`, and where its
    /// plan comes from.
    pub const fn new(exit_codes: bool, orchestration_source: OrchestrationSource) -> Self {
        Capabilities {
            exit_codes,
            orchestration_source,
        }
    }
}

/// One coding-agent backend: what a backend crate implements and what callers drive, through
/// the [`Registry`] as `&dyn Backend`.
///
/// Two methods are required, [`Backend::name`] and [`Backend::normalizer`] (the core's
/// [`crate::backend::Driver`] around the backend's [`crate::backend::Decoder`]); every other
/// method has a default that fits a backend that lacks what it asks about (no exit codes, no
/// plan, no line recognized, no live run). A backend that runs its agent live says how it
/// starts in `Backend::launch` (and `Backend::permission_args`, both with the `process`
/// feature); the default [`Backend::run`] does the rest. A protocol backend that is its
/// agent's client (`acp`) overrides `run` instead.
///
/// The trait has no associated type or generic method, so a registry holds every backend as a
/// `Box<dyn Backend>`: a backend names its decoder inside `normalizer`, where a type parameter
/// would make the trait unusable as an object.
///
/// ```
/// use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson};
/// use harness_agents_core::{Backend, Normalizer, NormalizerConfig, Registry};
///
/// #[derive(Default)]
/// struct EchoDecoder;
///
/// impl Decoder for EchoDecoder {
///     fn line(&mut self, _: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
///         out.terminal();
///         Ok(())
///     }
/// }
///
/// /// The echo backend, registered as `"echo"`.
/// struct Echo;
///
/// impl Backend for Echo {
///     fn name(&self) -> &'static str {
///         "echo"
///     }
///
///     fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
///         Box::new(Driver::<EchoDecoder>::new(config))
///     }
/// }
///
/// let mut registry = Registry::new();
/// registry.register(Box::new(Echo));
/// let echo = registry.get("echo").unwrap();
/// assert_eq!(echo.name(), "echo");
/// assert!(!echo.recognizes(&serde_json::json!({"type": "x"})));
/// assert!(echo.eventless_tools().is_empty());
/// ```
#[async_trait]
pub trait Backend: Send + Sync {
    /// The name callers choose the backend by (`"claude"`).
    fn name(&self) -> &'static str;

    /// A fresh normalizer for one stream of this backend's output: a
    /// [`crate::backend::Driver`] of its decoder.
    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer>;

    /// Whether `line`, one parsed line of a recorded stream, is one only this backend prints:
    /// its signature, by which `harness normalize` picks the backend of a stream it was not
    /// told (the first line that exactly one backend recognizes decides). A line another
    /// backend could print too (a bare `{"type":"error"}`) is recognized by none. The default
    /// recognizes nothing; [`crate::backend::has_type`] answers for a backend whose line types
    /// are its own.
    fn recognizes(&self, line: &serde_json::Value) -> bool {
        let _ = line;
        false
    }

    /// What this backend reports.
    fn capabilities(&self) -> Capabilities {
        Capabilities::new(false, OrchestrationSource::None)
    }

    /// Tools whose result gives no event naming its id, by a rule of the backend's (Claude
    /// Code's `StructuredOutput`, C14: its output reaches the outcome; Codex's message items,
    /// X3). Every other recorded tool use leaves through an event that names its id; the
    /// conformance kit checks both.
    fn eventless_tools(&self) -> &'static [&'static str] {
        &[]
    }

    /// The agent versions its recordings cover, and how its agent is asked its version
    /// (`harness --version`, `harness backends`, `cargo xtask record`); `None` (the default)
    /// when it has no recordings of a release.
    fn versions(&self) -> Option<Versions> {
        None
    }

    /// The agents known to speak this backend's protocol, with their commands, for a protocol
    /// backend without an agent of its own (`acp`: Gemini CLI's `gemini --acp`, ...); what
    /// `harness backends` looks for. The default knows none.
    fn known_agents(&self) -> &'static [KnownAgent] {
        &[]
    }

    /// How its agent is started live; `None` (the default) when it cannot run live.
    #[cfg(feature = "process")]
    #[cfg_attr(docsrs, doc(cfg(feature = "process")))]
    fn launch(&self) -> Option<Launch> {
        None
    }

    /// The flags `mode`, the request's `permission_mode`, stands for (`--sandbox=read-only`).
    /// The default gives none: a backend whose agent has no permission setting ignores it.
    #[cfg(feature = "process")]
    #[cfg_attr(docsrs, doc(cfg(feature = "process")))]
    fn permission_args(&self, mode: &str) -> Vec<String> {
        let _ = mode;
        Vec::new()
    }

    /// The agent's arguments for a request, never the prompt (see [`Launch::prompt`]). `dir` is
    /// the absolute directory the agent runs in. The default is [`Launch::args`] of
    /// [`Backend::launch`] with [`Backend::permission_args`], or only `request.extra_args`
    /// without a launch.
    #[cfg(feature = "process")]
    #[cfg_attr(docsrs, doc(cfg(feature = "process")))]
    fn args(&self, request: &RunRequest, dir: &Path) -> Vec<String> {
        let Some(launch) = self.launch() else {
            return request.extra_args.clone();
        };
        let permission = match &request.permission_mode {
            Some(mode) => self.permission_args(mode),
            None => Vec::new(),
        };
        launch.args(request, dir, permission)
    }

    /// Whether the agent takes a new session's id from the caller
    /// ([`RunRequest::session_id`]), so the id is known before the agent runs. The default
    /// answers from [`Backend::launch`]: whether it has a `session_id_flag`.
    #[cfg(feature = "process")]
    #[cfg_attr(docsrs, doc(cfg(feature = "process")))]
    fn takes_session_id(&self) -> bool {
        self.launch().is_some_and(|l| l.session_id_flag.is_some())
    }

    /// Runs the agent live and streams its events as they happen, then the outcome.
    ///
    /// The default starts the agent `Backend::launch` describes (with the `process` feature;
    /// without it, or without a launch, it says the backend cannot run live).
    async fn run(&self, request: RunRequest) -> Result<RunStream, RunError> {
        launch_run(self, request)
    }

    /// Whether [`Backend::session`] opens sessions, known without starting anything: a
    /// caller that serves only sessions (`harness acp`) refuses the others up front. The
    /// default is false, as the default `session` has none; a backend that implements
    /// `session` answers true.
    #[cfg(feature = "process")]
    #[cfg_attr(docsrs, doc(cfg(feature = "process")))]
    fn has_sessions(&self) -> bool {
        false
    }

    /// Opens a live session with the agent (SPEC section 8): one process for every turn,
    /// nothing asked of it before the first prompt (I1). The request's `prompt` is not sent
    /// (prompts come through the session), `timeout` and `idle_timeout` bound each turn, and
    /// `resume` continues a stored session (I5).
    ///
    /// The default says the backend has no sessions ([`RunError::NoSessions`]).
    #[cfg(feature = "process")]
    #[cfg_attr(docsrs, doc(cfg(feature = "process")))]
    async fn session(&self, request: RunRequest) -> Result<crate::session::Session, RunError> {
        let _ = request;
        Err(RunError::NoSessions {
            backend: self.name().to_string(),
        })
    }
}

/// [`Backend::run`] by default without the process driver: no backend can run live.
#[cfg(not(feature = "process"))]
fn launch_run<B: Backend + ?Sized>(
    backend: &B,
    request: RunRequest,
) -> Result<RunStream, RunError> {
    let _ = request;
    Err(RunError::Unsupported {
        backend: backend.name().to_string(),
    })
}

/// Maps backend names to backends, so callers choose one at run time.
///
/// ```
/// use harness_agents_core::{Backend, Normalizer, NormalizerConfig, Registry};
/// # struct Echo;
/// # impl Backend for Echo {
/// #     fn name(&self) -> &'static str { "echo" }
/// #     fn normalizer(&self, _: NormalizerConfig) -> Box<dyn Normalizer> { unimplemented!() }
/// # }
/// let mut registry = Registry::new();
/// registry.register(Box::new(Echo));
/// assert!(registry.get("echo").is_some());
/// assert_eq!(registry.names().collect::<Vec<_>>(), ["echo"]);
/// ```
#[derive(Default)]
pub struct Registry {
    backends: Vec<Box<dyn Backend>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a backend; one registered later under the same name replaces it.
    pub fn register(&mut self, backend: Box<dyn Backend>) {
        self.backends.retain(|b| b.name() != backend.name());
        self.backends.push(backend);
    }

    /// The backend with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Backend> {
        self.backends
            .iter()
            .find(|b| b.name() == name)
            .map(|b| b.as_ref())
    }

    /// The registered names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.backends.iter().map(|b| b.name())
    }
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}
