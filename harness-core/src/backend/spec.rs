//! A backend described as data: its [`Spec`], for which the core implements every [`Harness`]
//! method, and [`declare_backend!`](crate::declare_backend), which declares the backend's unit
//! struct with it.

use async_trait::async_trait;
use serde_json::Value;

use super::driver::{Decoder, Driver};
use crate::error::RunError;
use crate::harness::{
    Capabilities, Harness, Launch, Normalizer, NormalizerConfig, OrchestrationSource, RunRequest,
    RunStream,
};

/// The facts of a backend, as data: its name and decoder, what it reports, the tools whose
/// result gives no event, how it recognizes its lines, how its agent starts live and which
/// flags a permission mode stands for. Made with [`Spec::new`] and its `const` setters; every
/// fact but the name and the decoder has the default of the [`Harness`] method it answers.
///
/// ```
/// use harness_agents_core::backend::{Decoder, Emitter, NotJson, Spec};
/// use harness_agents_core::{Capabilities, Harness, Launch, NormalizerConfig, OrchestrationSource};
///
/// # #[derive(Default)]
/// # struct ToyDecoder;
/// # impl Decoder for ToyDecoder {
/// #     fn line(&mut self, _: &[u8], _: &mut Emitter<'_>) -> Result<(), NotJson> { Ok(()) }
/// # }
/// fn recognizes(line: &serde_json::Value) -> bool {
///     line.get("toy").is_some()
/// }
///
/// const SPEC: Spec = Spec::new::<ToyDecoder>("toy")
///     .capabilities(Capabilities::new(true, OrchestrationSource::Plan))
///     .recognizes(recognizes)
///     .launch(Launch::new("toy", "TOY_BIN", "cargo install toy"));
/// assert_eq!(SPEC.name, "toy");
/// assert!(SPEC.eventless_tools.is_empty());
/// assert!((SPEC.recognizes)(&serde_json::json!({"toy": 1})));
/// assert!(SPEC.recognizes_types.is_empty());
/// assert!((SPEC.permission_args)("plan").is_empty());
/// ```
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Spec {
    /// The name callers choose the backend by ([`Harness::name`]).
    pub name: &'static str,
    /// A fresh normalizer: the core's [`Driver`] around the backend's [`Decoder`]
    /// ([`Harness::normalizer`]).
    pub normalizer: fn(NormalizerConfig) -> Box<dyn Normalizer>,
    /// What the backend reports ([`Harness::capabilities`]).
    pub capabilities: Capabilities,
    /// Tools whose result gives no event naming its id, by a rule of the backend's
    /// ([`Harness::eventless_tools`]).
    pub eventless_tools: &'static [&'static str],
    /// The top-level `type`s only this backend prints: a line with one of them is recognized
    /// ([`Harness::recognizes`]).
    pub recognizes_types: &'static [&'static str],
    /// Whether a parsed line is one only this backend prints, by more than its type
    /// ([`Harness::recognizes`]).
    pub recognizes: fn(&Value) -> bool,
    /// How its agent is started live ([`Harness::launch`]).
    pub launch: Option<Launch>,
    /// The flags a request's permission mode stands for ([`Harness::permission_args`]).
    pub permission_args: fn(&str) -> Vec<String>,
    /// A live run that is not a [`Launch`] (a protocol client's, [`Harness::run`]); `None`
    /// starts the launch.
    pub spawn: Option<fn(RunRequest) -> Result<RunStream, RunError>>,
}

/// [`Spec::normalizer`] for the decoder `D`.
fn driver<D: Decoder>(config: NormalizerConfig) -> Box<dyn Normalizer> {
    Box::new(Driver::<D>::new(config))
}

/// [`Spec::recognizes`] by default: nothing.
fn recognizes_nothing(_: &Value) -> bool {
    false
}

/// [`Spec::permission_args`] by default: no flags.
fn no_flags(_: &str) -> Vec<String> {
    Vec::new()
}

impl Spec {
    /// The backend called `name` that decodes with `D`, every other fact at its default: no
    /// exit codes, no plan, no eventless tools, no line recognized, no live run.
    pub const fn new<D: Decoder>(name: &'static str) -> Self {
        Spec {
            name,
            normalizer: driver::<D>,
            capabilities: Capabilities::new(false, OrchestrationSource::None),
            eventless_tools: &[],
            recognizes_types: &[],
            recognizes: recognizes_nothing,
            launch: None,
            permission_args: no_flags,
            spawn: None,
        }
    }

    /// What the backend reports.
    pub const fn capabilities(mut self, capabilities: Capabilities) -> Self {
        self.capabilities = capabilities;
        self
    }

    /// The tools whose result gives no event.
    pub const fn eventless_tools(mut self, tools: &'static [&'static str]) -> Self {
        self.eventless_tools = tools;
        self
    }

    /// The top-level `type`s only this backend prints.
    pub const fn recognizes_types(mut self, types: &'static [&'static str]) -> Self {
        self.recognizes_types = types;
        self
    }

    /// How the backend recognizes its lines, by more than their type.
    pub const fn recognizes(mut self, recognizes: fn(&Value) -> bool) -> Self {
        self.recognizes = recognizes;
        self
    }

    /// How its agent is started live.
    pub const fn launch(mut self, launch: Launch) -> Self {
        self.launch = Some(launch);
        self
    }

    /// The flags a permission mode stands for.
    pub const fn permission_args(mut self, permission_args: fn(&str) -> Vec<String>) -> Self {
        self.permission_args = permission_args;
        self
    }

    /// A live run of its own instead of a launch.
    pub const fn spawn(mut self, spawn: fn(RunRequest) -> Result<RunStream, RunError>) -> Self {
        self.spawn = Some(spawn);
        self
    }
}

/// A backend as data: the core implements [`Harness`] for every `Backend` from its [`Spec`].
/// A backend crate declares its unit struct and this impl with
/// [`declare_backend!`](crate::declare_backend).
pub trait Backend: Send + Sync + 'static {
    /// The backend's facts.
    const SPEC: Spec;
}

#[async_trait]
impl<B: Backend> Harness for B {
    fn name(&self) -> &'static str {
        B::SPEC.name
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        (B::SPEC.normalizer)(config)
    }

    fn recognizes(&self, line: &Value) -> bool {
        let kind = line.get("type").and_then(Value::as_str);
        kind.is_some_and(|kind| B::SPEC.recognizes_types.contains(&kind))
            || (B::SPEC.recognizes)(line)
    }

    fn capabilities(&self) -> Capabilities {
        B::SPEC.capabilities
    }

    fn eventless_tools(&self) -> &'static [&'static str] {
        B::SPEC.eventless_tools
    }

    fn launch(&self) -> Option<Launch> {
        B::SPEC.launch
    }

    fn permission_args(&self, mode: &str) -> Vec<String> {
        (B::SPEC.permission_args)(mode)
    }

    async fn run(&self, request: RunRequest) -> Result<RunStream, RunError> {
        match B::SPEC.spawn {
            Some(spawn) => spawn(request),
            None => crate::harness::launch_run(self, B::SPEC.launch, request),
        }
    }
}

/// Declares a backend: a unit struct (with its attributes and docs, deriving `Debug`, `Clone`,
/// `Copy` and `Default`) that implements [`Backend`] with the [`Spec`] given, and so
/// [`Harness`].
///
/// ```
/// use harness_agents_core::backend::{Decoder, Emitter, NotJson, Spec};
/// use harness_agents_core::{Harness, NormalizerConfig, Registry};
///
/// # #[derive(Default)]
/// # struct EchoDecoder;
/// # impl Decoder for EchoDecoder {
/// #     fn line(&mut self, _: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
/// #         out.terminal();
/// #         Ok(())
/// #     }
/// # }
/// harness_agents_core::declare_backend! {
///     /// The echo backend, registered as `"echo"`.
///     pub struct EchoHarness = Spec::new::<EchoDecoder>("echo");
/// }
///
/// let mut registry = Registry::new();
/// registry.register(Box::new(EchoHarness));
/// let echo = registry.get("echo").unwrap();
/// assert!(echo.launch().is_none());
/// assert!(!echo.recognizes(&serde_json::json!({"type": "x"})));
/// # harness_agents_core::declare_backend! {
/// #     struct Typed = Spec::new::<EchoDecoder>("typed").recognizes_types(&["x"]);
/// # }
/// # assert!(Typed.recognizes(&serde_json::json!({"type": "x"})));
/// # assert!(!Typed.recognizes(&serde_json::json!({"type": "y"})));
/// ```
#[macro_export]
macro_rules! declare_backend {
    ($(#[$meta:meta])* $vis:vis struct $name:ident = $spec:expr;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, Default)]
        $vis struct $name;

        impl $crate::backend::Backend for $name {
            const SPEC: $crate::backend::Spec = $spec;
        }
    };
}
