//! A live run: what it needs ([`RunRequest`], with a [`StopSignal`]) and what it streams
//! ([`RunItem`]s, in a [`RunStream`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt, Shared};
use futures::stream::BoxStream;

use crate::event::Event;
use crate::normalizer::NormalizerConfig;
use crate::outcome::Outcome;

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
    /// The stored session to continue, through the agent's own resume (I5): a run is then
    /// its one-turn form, a session goes on from it. A backend whose agent cannot resume
    /// refuses the request ([`crate::RunError::CannotResume`]) before anything starts.
    pub resume: Option<String>,
    /// The id a new session of the agent is to have, chosen by the caller, so that it is known
    /// before the agent says it (an ACP agent's `session/new` answers with it, and a later
    /// `resume` names it). Only a backend whose agent takes one uses it
    /// ([`crate::Backend::takes_session_id`]: Claude Code's `--session-id`, which wants a
    /// UUID); the others ignore it. Set it or `resume`, not both.
    pub session_id: Option<String>,
    /// In a session, how long a turn may go without a line from the agent before the session
    /// closes (I6); `timeout` bounds each turn. A run ignores it.
    pub idle_timeout: Option<Duration>,
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
