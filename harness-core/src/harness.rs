//! The `Harness` trait every backend implements, its normalizer, and the registry.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use futures::future::{BoxFuture, FutureExt, Shared};
use futures::stream::BoxStream;

use crate::error::RunError;
use crate::event::Event;
use crate::outcome::Outcome;

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

/// Settings a normalizer takes before the first line.
///
/// ```
/// let mut config = harness_agents_core::NormalizerConfig::default();
/// config.cwd = Some("/repo".into());
/// config.started = true;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NormalizerConfig {
    /// The working directory to resolve relative paths against when the stream names none
    /// (C14a, X9): the CLI's `--cwd`.
    pub cwd: Option<String>,
    /// Where skills live (C14a): the CLI's `--workspace`.
    pub workspace: Option<String>,
    /// Emit a `started` event as soon as a tool use is recorded (L1): the CLI's `--started`.
    /// Off by default, so a recorded stream gives exactly the events of the other rules.
    pub started: bool,
}

impl NormalizerConfig {
    /// Settings that resolve relative paths against `cwd` (C14a, X9), nothing else set.
    ///
    /// ```
    /// let config = harness_agents_core::NormalizerConfig::with_cwd("/repo");
    /// assert_eq!(config.cwd.as_deref(), Some("/repo"));
    /// assert!(config.workspace.is_none() && !config.started);
    /// ```
    pub fn with_cwd(cwd: impl Into<String>) -> Self {
        NormalizerConfig {
            cwd: Some(cwd.into()),
            ..NormalizerConfig::default()
        }
    }
}

/// A tool use still waiting for its result (O4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingToolUse {
    /// The tool use's id.
    pub id: String,
    /// The tool's name, when the use named one.
    pub tool: Option<String>,
    /// The sub-agent thread it belongs to (`None` for the main thread).
    pub thread: Option<String>,
}

impl PendingToolUse {
    /// The use `id` of `tool`, in the main thread.
    ///
    /// ```
    /// let tool_use = harness_agents_core::PendingToolUse::new("t1", Some("read"));
    /// assert_eq!((tool_use.id.as_str(), tool_use.tool.as_deref()), ("t1", Some("read")));
    /// assert_eq!(tool_use.thread, None);
    /// ```
    pub fn new(id: &str, tool: Option<&str>) -> Self {
        PendingToolUse {
            id: id.to_string(),
            tool: tool.map(str::to_string),
            thread: None,
        }
    }
}

/// What became of one stdout line: every non-blank line is accounted for (SPEC: "every input
/// line is accounted for"). Tests use it to prove that no line is silently lost.
///
/// When a line did several things, the first that applies in this order is reported:
/// `Emitted`, `Deferred`, `Outcome`, `Consumed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Disposition {
    /// Only JSON whitespace: skipped (S1).
    #[default]
    Blank,
    /// The line itself produced at least one event (events it merely flushed, such as an
    /// earlier message completed by it, do not count).
    Emitted,
    /// It fed pending state that produces events later: message text being assembled, a
    /// recorded tool use or item.
    Deferred,
    /// A terminal line: it fed the outcome.
    Outcome,
    /// Consumed with no event by the rule named (a SPEC rule id such as `"C8"`).
    Consumed(&'static str),
}

/// A pure, incremental decoder of one backend's output: lines in, events out.
///
/// It never does I/O and never fails: every input line becomes events the SPEC names (S8).
/// Events are appended to `out`, so a caller can reuse one buffer for a whole stream.
pub trait Normalizer: Send {
    /// Feeds one line of standard output, without its `\n` (a trailing `\r` is dropped here, S1).
    /// Line numbers count every call, blank lines included (J2).
    fn push_line(&mut self, line: &[u8], out: &mut Vec<Event>);

    /// Feeds one line of standard error, without its `\n` (S4).
    fn push_stderr(&mut self, line: &[u8], out: &mut Vec<Event>);

    /// Ends the input, handing each end-of-input event (S9) to `emit` as soon as it is made,
    /// and returns the outcome. A stream that ends with a million pending tool uses then never
    /// holds all their `unresolved_tool_use` events at once. Lines pushed after this are
    /// ignored; a second call emits nothing and returns the outcome again.
    fn finish_each(&mut self, emit: &mut dyn FnMut(Event)) -> Outcome;

    /// Ends the input like [`Normalizer::finish_each`], appending the end-of-input events to
    /// `out`.
    fn finish(&mut self, out: &mut Vec<Event>) -> Outcome {
        self.finish_each(&mut |event| out.push(event))
    }

    /// What became of the last stdout line pushed ([`Disposition::Blank`] before any).
    fn last_disposition(&self) -> Disposition;

    /// The session id seen so far (S5, O4).
    fn session_id(&self) -> Option<&str>;

    /// The working directory in effect (O4).
    fn cwd(&self) -> Option<&str>;

    /// The tool uses still waiting for their results, in the order they were recorded (O4).
    fn pending_tool_uses(&self) -> Vec<PendingToolUse>;
}

/// How a backend's agent is started live, as data: the core's [`Harness::run`] does the rest
/// (choosing the binary, spawning it in its own process group, the prompt, the pipes, the
/// timeout, the outcome), and [`Harness::args`] builds the command line from it.
///
/// Made with [`Launch::new`] and its `const` setters:
///
/// ```
/// use harness_agents_core::{Launch, PromptInput, RunRequest};
///
/// const LAUNCH: Launch = Launch::new("agent", "AGENT_BIN", "npm install -g agent")
///     .leading(&["exec", "--json"])
///     .dir_flag("--cd")
///     .model_flag("--model")
///     .trailing(&["-"]);
///
/// let mut request = RunRequest::new("hi");
/// request.model = Some("-m".into());
/// request.extra_args = vec!["--fast".into()];
/// let args = LAUNCH.args(&request, "/p".as_ref(), vec!["--sandbox=read-only".into()]);
/// assert_eq!(args, ["exec", "--json", "--cd=/p", "--model=-m", "--sandbox=read-only", "--fast", "-"]);
/// assert_eq!(LAUNCH.prompt, PromptInput::Stdin);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Launch {
    /// The environment variable that names the binary (`"CLAUDE_BIN"`); `RunRequest::binary`
    /// wins over it.
    pub env_var: &'static str,
    /// The binary's name, looked up on `PATH` when neither names one (`"claude"`).
    pub program: &'static str,
    /// How to install it, said when it is not found (`"npm install -g ..."`).
    pub install: &'static str,
    /// Where the prompt goes ([`PromptInput::Stdin`] unless set).
    pub prompt: PromptInput,
    /// The backend's own first arguments (`["exec", "--json"]`).
    pub leading: &'static [&'static str],
    /// The flag naming the agent's directory, given as `FLAG=DIR` after `leading` (Codex's
    /// `--cd`); `None` for agents that work where they are started.
    pub dir_flag: Option<&'static str>,
    /// The flag the request's `model` goes to, as `FLAG=MODEL`; `None` ignores the model.
    pub model_flag: Option<&'static str>,
    /// The last arguments, after `extra_args` (Codex's `-`: the prompt is on standard input).
    pub trailing: &'static [&'static str],
}

impl Launch {
    /// `program` (or the binary `$ENV_VAR` names), installed by `install`, the prompt on
    /// standard input, no arguments of its own yet.
    pub const fn new(program: &'static str, env_var: &'static str, install: &'static str) -> Self {
        Launch {
            env_var,
            program,
            install,
            prompt: PromptInput::Stdin,
            leading: &[],
            dir_flag: None,
            model_flag: None,
            trailing: &[],
        }
    }

    /// Where the prompt goes.
    pub const fn prompt(mut self, prompt: PromptInput) -> Self {
        self.prompt = prompt;
        self
    }

    /// The backend's own first arguments.
    pub const fn leading(mut self, args: &'static [&'static str]) -> Self {
        self.leading = args;
        self
    }

    /// The flag naming the agent's directory.
    pub const fn dir_flag(mut self, flag: &'static str) -> Self {
        self.dir_flag = Some(flag);
        self
    }

    /// The flag the request's model goes to.
    pub const fn model_flag(mut self, flag: &'static str) -> Self {
        self.model_flag = Some(flag);
        self
    }

    /// The last arguments, after the caller's.
    pub const fn trailing(mut self, args: &'static [&'static str]) -> Self {
        self.trailing = args;
        self
    }

    /// The agent's arguments for `request` run in `dir`, never the prompt: `leading`, the
    /// directory flag, the model flag, `permission` (the flags the request's permission mode
    /// stands for, [`Harness::permission_args`]), `request.extra_args`, `trailing`. Values go as
    /// one word ([`option`]), so one starting with `-` is never read as an option.
    pub fn args(&self, request: &RunRequest, dir: &Path, permission: Vec<String>) -> Vec<String> {
        let mut args: Vec<String> = self.leading.iter().map(|a| a.to_string()).collect();
        if let Some(flag) = self.dir_flag {
            args.push(option(flag, &dir.display().to_string()));
        }
        if let (Some(flag), Some(model)) = (self.model_flag, &request.model) {
            args.push(option(flag, model));
        }
        args.extend(permission);
        args.extend(request.extra_args.iter().cloned());
        args.extend(self.trailing.iter().map(|a| a.to_string()));
        args
    }
}

/// Where a live run's prompt goes. Every choice keeps it from being read as an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptInput {
    /// The agent's standard input (the default, and the safest).
    Stdin,
    /// The last argument, after a `--` that ends the options.
    AfterDoubleDash,
    /// One argument `FLAG=PROMPT`, after the others (`"--prompt"` gives `--prompt=...`).
    Flag(&'static str),
}

/// `name=value` as one word, so a value that starts with `-` is never read as an option.
///
/// ```
/// assert_eq!(harness_agents_core::option("--model", "-x"), "--model=-x");
/// ```
pub fn option(name: &str, value: &str) -> String {
    format!("{name}={value}")
}

/// What a live run needs.
///
/// ```
/// use std::time::Duration;
/// use harness_agents_core::RunRequest;
///
/// let mut request = RunRequest::new("Explain src/main.rs");
/// request.cwd = Some("/path/to/project".into());
/// request.timeout = Some(Duration::from_secs(600));
/// request.normalizer.started = true;
/// ```
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RunRequest {
    /// The prompt, written to the agent's standard input (never put on its command line; a
    /// protocol backend such as `acp` sends it in the protocol's own request).
    pub prompt: String,
    /// The directory the agent works in; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// The agent's binary; the backend's default (and its environment variable) when `None`.
    pub binary: Option<PathBuf>,
    /// The model to ask for.
    pub model: Option<String>,
    /// The permission mode to ask for.
    pub permission_mode: Option<String>,
    /// Further arguments for the agent's command line.
    pub extra_args: Vec<String>,
    /// Environment variables to add.
    pub env: BTreeMap<String, String>,
    /// How long the run may take before it is stopped: the agent's whole process group is
    /// killed, an `error` event says so, and the stream ends as usual with the outcome. The
    /// outcome's status is what the agent's lines made it (O1): `incomplete` when the timeout
    /// came before its terminal line, `success` or `error` as that line said when it came after.
    pub timeout: Option<Duration>,
    /// The normalizer's settings for this run. Its `cwd`, when `None`, is the directory the
    /// agent runs in; set it to resolve paths against another one (an agent that sees its
    /// project under another path, in a container or behind a wrapper script).
    pub normalizer: NormalizerConfig,
    /// The agent's whole command line, for backends that drive any agent of a protocol (the
    /// `acp` backend: `["gemini", "--acp"]`); the others use [`RunRequest::binary`] and
    /// ignore it.
    pub agent: Option<Vec<String>>,
    /// Where to save the run's transcript (`docs/transcript.md`): a header naming the backend
    /// and the normalizer's settings, then every line its normalizer reads, standard error
    /// included, in order, so `harness normalize` on the file alone gives the run's events
    /// again (for `acp`, the output lines are the JSON-RPC messages of both directions).
    pub transcript: Option<PathBuf>,
    /// Stops the run early when it fires (for example on Ctrl-C): the agent's process group is
    /// killed, an `error` event says so, and the stream still ends with the outcome. Dropping
    /// the stream instead kills the agent without an outcome.
    pub stop: Option<StopSignal>,
}

impl RunRequest {
    /// A request with this prompt and every other setting at its default.
    pub fn new(prompt: impl Into<String>) -> Self {
        RunRequest {
            prompt: prompt.into(),
            ..RunRequest::default()
        }
    }
}

/// A future that asks a live run to stop when it completes; cheap to clone.
///
/// ```
/// use harness_agents_core::{RunRequest, StopSignal};
///
/// let (tx, rx) = futures::channel::oneshot::channel::<()>();
/// let mut request = RunRequest::new("hello");
/// request.stop = Some(StopSignal::new(async move {
///     let _ = rx.await;
/// }));
/// # drop((tx, request));
/// ```
#[derive(Clone)]
pub struct StopSignal(Shared<BoxFuture<'static, ()>>);

impl StopSignal {
    /// A signal that fires when `future` completes.
    pub fn new(future: impl Future<Output = ()> + Send + 'static) -> Self {
        StopSignal(future.boxed().shared())
    }

    /// Completes when the signal fires.
    pub fn fired(&self) -> impl Future<Output = ()> + Send + 'static {
        self.0.clone()
    }
}

impl std::fmt::Debug for StopSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StopSignal")
    }
}

/// One item of a live run's stream: events as they happen, then the outcome once.
#[derive(Debug, Clone, PartialEq)]
pub enum RunItem {
    /// A normalized event.
    Event(Event),
    /// The outcome; the last item of the stream.
    Outcome(Outcome),
}

/// The stream a live run returns.
pub type RunStream = BoxStream<'static, RunItem>;

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

/// One coding-agent backend.
///
/// Two methods make a backend: [`Harness::name`] and [`Harness::normalizer`] (a
/// [`crate::backend::Driver`] of its [`crate::backend::Decoder`]). A backend that runs live
/// adds [`Harness::launch`] and [`Harness::args`]; the core's [`Harness::run`] does the rest.
/// A backend crate states all of it as data instead, a [`crate::backend::Spec`], and declares
/// itself with [`crate::declare_backend!`]: the core implements this trait for every
/// [`crate::backend::Backend`].
#[async_trait]
pub trait Harness: Send + Sync {
    /// The name callers choose the backend by (`"claude"`).
    fn name(&self) -> &'static str;

    /// A fresh normalizer for one stream of this backend's output.
    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer>;

    /// Whether `line`, one parsed line of a recorded stream, is one only this backend prints:
    /// its signature, by which `harness normalize` picks the backend of a stream it was not
    /// told (the first line that exactly one backend recognizes decides). A line another
    /// backend could print too (a bare `{"type":"error"}`) is recognized by none. The default
    /// recognizes nothing.
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

    /// How its agent is started live; `None` (the default) when it cannot run live.
    fn launch(&self) -> Option<Launch> {
        None
    }

    /// The flags `mode`, the request's `permission_mode`, stands for (`--sandbox=read-only`).
    /// The default gives none: a backend whose agent has no permission setting ignores it.
    fn permission_args(&self, mode: &str) -> Vec<String> {
        let _ = mode;
        Vec::new()
    }

    /// The agent's arguments for a request, never the prompt (see [`Launch::prompt`]). `dir` is
    /// the absolute directory the agent runs in. The default is [`Launch::args`] of
    /// [`Harness::launch`] with [`Harness::permission_args`], or only `request.extra_args`
    /// without a launch.
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

    /// Runs the agent live and streams its events as they happen, then the outcome.
    ///
    /// The default starts the agent [`Harness::launch`] describes (with the `process`
    /// feature; without it, or without a launch, it says the backend cannot run live).
    async fn run(&self, request: RunRequest) -> Result<RunStream, RunError> {
        launch_run(self, self.launch(), request)
    }
}

/// [`Harness::run`] for a backend with a [`Launch`]: the directory, the normalizer (its `cwd`
/// the agent's directory unless the request names another), the binary, the arguments and the
/// prompt's place, handed to the shared process driver. Without a launch, or without the
/// `process` feature, the backend cannot run live.
pub(crate) fn launch_run<H: Harness + ?Sized>(
    harness: &H,
    launch: Option<Launch>,
    request: RunRequest,
) -> Result<RunStream, RunError> {
    #[cfg(feature = "process")]
    if let Some(launch) = launch {
        return spawn_launch(harness, launch, request);
    }
    let _ = (launch, request);
    Err(RunError::Unsupported {
        backend: harness.name().to_string(),
    })
}

/// [`launch_run`] with a launch and the process driver.
#[cfg(feature = "process")]
fn spawn_launch<H: Harness + ?Sized>(
    harness: &H,
    launch: Launch,
    request: RunRequest,
) -> Result<RunStream, RunError> {
    use crate::process::{self, ProcessSpec};

    let (dir, config) = process::run_dir(&request)?;
    let mut args = harness.args(&request, &dir);
    let prompt = request.prompt.clone();
    let mut spec = ProcessSpec::for_request(
        request,
        launch.env_var,
        launch.program,
        Vec::new(),
        launch.install,
    );
    match launch.prompt {
        PromptInput::Stdin => {}
        PromptInput::AfterDoubleDash => {
            args.extend(["--".to_string(), prompt]);
            spec.stdin = Vec::new();
        }
        PromptInput::Flag(flag) => {
            args.push(option(flag, &prompt));
            spec.stdin = Vec::new();
        }
    }
    spec.args = args;
    spec.header = crate::transcript::Header::new(harness.name(), &config);
    process::spawn(spec, harness.normalizer(config))
}

/// Maps backend names to backends, so callers choose one at run time.
///
/// ```
/// use harness_agents_core::{Harness, Normalizer, NormalizerConfig, Registry};
/// # struct Echo;
/// # impl Harness for Echo {
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
    backends: Vec<Box<dyn Harness>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// Adds a backend; one registered later under the same name replaces it.
    pub fn register(&mut self, backend: Box<dyn Harness>) {
        self.backends.retain(|b| b.name() != backend.name());
        self.backends.push(backend);
    }

    /// The backend with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Harness> {
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
