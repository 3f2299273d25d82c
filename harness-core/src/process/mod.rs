//! Driving a live agent process, for any backend (feature `process`).
//!
//! A backend builds a [`ProcessSpec`] (its binary, its command line, the prompt for standard
//! input) and hands it to [`spawn`] with a fresh [`Normalizer`]. What follows is the same for
//! every backend:
//!
//! - the child starts in its own process group, with standard input, output and error piped;
//! - the prompt is written to its standard input, which is then closed (the prompt never goes
//!   on the command line, where text starting with `-` would be read as an option);
//! - standard output and standard error are read concurrently, chunk by chunk, split into lines
//!   and fed to the normalizer (`push_line`, `push_stderr`), so neither pipe can fill and stall
//!   the child, and each event is yielded as soon as its line is complete (S6, S10). Memory
//!   holds at most one partial line per pipe, however long the run;
//! - after both pipes close and the child exits, the end-of-input events (S9) follow, then
//!   [`RunItem::Outcome`] with the child's exit status (`exit_code`, O1);
//! - a timeout or a [`StopSignal`] kills the run's processes ([`RunTree`]) and yields an `error` event
//!   saying why at once; what the child had already written follows, and the stream ends as
//!   above (the outcome's `counts` include that event). The status stays what the agent's own
//!   lines made it: a timeout after its terminal line (O1) leaves `success` or `error`, and only
//!   a run cut short before one is `incomplete`;
//! - a timeout or a stop acts even while the consumer is not reading: events wait in a bounded
//!   queue, reading the pipes pauses, but the deadline and the stop signal are still watched;
//! - dropping the stream kills the run's processes and reaps the child;
//! - however the run ends, its normal end included, every process it started is killed
//!   before the outcome: the agent's process group, and every descendant that left it for a
//!   group or a session of its own (see [`RunTree`] for how they are found, and its limits);
//! - with [`spawn_conversation`], the agent talks both ways: a [`Conversation`] answers each
//!   line of its standard output on its standard input (an ACP client answering permission
//!   requests) and says which lines the normalizer reads; what waits for the agent's input is
//!   bounded (reading pauses beyond 1 MiB), and a timeout or a stop first asks the conversation
//!   what to write (a cancel) and how long the agent may take to end by itself;
//! - a conversation whose agent speaks on another channel (opencode's server sends its events
//!   over HTTP) hands the driver an inbox ([`Conversation::inbox`]): its lines are read beside
//!   standard output as if the agent had printed them, and a failure of that channel ends the
//!   session as the agent's death does ([`Inbound`]);
//! - [`ProcessSpec::transcript`] saves every line the normalizer reads, standard error
//!   included, in the order it read them, after a header naming the backend and the
//!   normalizer's settings ([`crate::transcript`]), so the run normalizes again offline to the
//!   same events from that file alone;
//! - when the child has exited but something it left running still holds its pipes open,
//!   the run waits two seconds, then kills the run's processes and ends.
//!
//! # What a run leaves behind
//!
//! An agent starts tools, and a tool may leave the agent's process group: opencode starts
//! shell commands in a session of their own (`setsid`), a daemon double-forks, a test runner
//! puts its workers in groups of their own. Killing the agent's process group misses all of
//! them, and once the agent is gone they are re-parented to init (or to a subreaper), so the
//! tree of parents no longer leads to them either.
//!
//! A [`RunTree`] therefore marks the run: the agent is started with an environment variable
//! that names the run alone (`HARNESS_RUN_<pid>_<token>_<n>=1`: the process, a random token
//! of the process, the run's number in it), which every descendant inherits unless it clears its
//! environment. [`RunTree::kill`] then, on Linux, scans `/proc` for every process whose
//! environment holds the mark, adds every descendant of those by the tree of parents (which
//! catches a child that cleared its environment while its parent lives), sends each SIGKILL
//! through a pidfd (so a pid reused in the meantime is never signalled), and scans again
//! until a scan finds nothing alive. Other runs of the same process carry other marks, so
//! their processes are never touched: several runs may end at once in one process.
//!
//! With [`adopt_orphans`], the calling process is also a child subreaper: orphaned
//! descendants are re-parented to it rather than to init, and [`RunTree::kill`] reaps the
//! run's processes it adopted, so none is left a zombie. A program that calls it takes on
//! reaping: the `harness` CLI, which runs one agent and exits, does; a long-lived orchestrator
//! whose other children expect to be re-parented to init should not.
//!
//! Its limits:
//!
//! - A descendant that clears or replaces its environment (`env -i`, a `sudo`) and whose
//!   parent then exits before the run ends is found by neither the mark nor the tree.
//! - A process of another user (a setuid program) cannot be read, nor killed.
//! - Without `/proc` (macOS, the BSDs) only the agent's process group is killed.
//! - The agent sees the mark in its environment; one that removes it from the environment of
//!   what it starts hides those processes as `env -i` does.
//! - Each end of a run reads the environment of every process of the machine a few times
//!   (milliseconds), on the task that drives the run; a tree that forks faster than it is
//!   killed is given up on after 200 scans.
//!
//! # When the caller dies
//!
//! Everything above needs the caller alive. On Linux the child is also given a parent-death
//! signal (`PR_SET_PDEATHSIG`, SIGKILL): when the process that started it ends in any way,
//! `kill -9` and crashes included, the kernel kills the agent. Two details make that hold:
//!
//! - the kernel sends the signal when the *thread* that forked the child ends, not the process.
//!   So every child is forked by one thread kept for the life of the process, never by the
//!   caller's thread (a blocking-pool or short-lived thread would otherwise take the agent with
//!   it on exit);
//! - a caller that died between the fork and the `prctl` would never send the signal: the child
//!   checks its parent after setting it, and does not start the agent when it was orphaned.
//!
//! What it does not cover: the signal reaches only the agent, not the processes the agent
//! started. Every ending above kills those ([`RunTree`]); but after the caller is killed with
//! SIGKILL nothing is left to kill them, and a grandchild the agent left running is orphaned
//! (its writes to the agent's pipes fail, with SIGPIPE, and nothing more).
//! A program using this module should therefore catch the signals it can (the `harness` CLI
//! stops the run on SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1 and SIGUSR2). On other systems
//! (macOS, the BSDs) no parent-death signal is set: only the endings above stop the agent.
//!
//! *Architecture invariant:* this module knows no backend; decoding stays in the normalizer.
//!
//! [`StopSignal`]: crate::StopSignal

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::StreamExt;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use crate::error::RunError;
use crate::event::{Decision, Event, EventBody, Kind};
use crate::lines::LineSplitter;
use crate::normalizer::{Normalizer, NormalizerConfig};
use crate::run::{RunItem, RunRequest, RunStream, StopSignal};
use crate::session::{EndReason, Input, SessionEnd, SessionItem, Withdrawal};
use crate::transcript::{self, Header};

pub(crate) mod launch;
mod session;
mod tree;

pub(crate) use launch::launch_run;
pub use launch::{Launch, PromptInput, session_spec};
pub use session::{SessionSpec, spawn_session};
pub use tree::{RunTree, adopt_orphans};

/// How long the pipes may stay open after the child has exited (held by something it left
/// running) before that process group is killed and the run ends.
const LINGER: Duration = Duration::from_secs(2);

/// The size of each read from a pipe.
const CHUNK: usize = 64 * 1024;

/// How many items may wait for the consumer before reading pauses.
const QUEUE: usize = 256;

/// A live process to run: what a backend builds from a `RunRequest`.
#[derive(Debug, Clone, Default)]
pub struct ProcessSpec {
    /// The binary: a path, or a name looked up on `PATH`.
    pub program: PathBuf,
    /// The arguments after the binary.
    pub args: Vec<String>,
    /// The working directory; the caller's when `None`.
    pub cwd: Option<PathBuf>,
    /// Environment variables to add to the inherited environment.
    pub env: BTreeMap<String, String>,
    /// Written to the child's standard input, which is then closed.
    pub stdin: Vec<u8>,
    /// Kill the process group after this long.
    pub timeout: Option<Duration>,
    /// Kill the process group when this fires.
    pub stop: Option<StopSignal>,
    /// How to install the binary, for [`RunError::BinaryNotFound`] when it is not on `PATH`
    /// (e.g. `npm install -g @anthropic-ai/claude-code`); `None` when the binary was named
    /// explicitly, so the error only says it was not found.
    pub install_hint: Option<String>,
    /// Where to save the transcript (`docs/transcript.md`, [`crate::transcript`]): `header`,
    /// then every line the normalizer reads, in the order it reads them: the agent's standard
    /// output (with a [`Conversation`], the lines it records) and its standard error.
    /// `harness normalize` on that file alone gives the events of the run.
    pub transcript: Option<PathBuf>,
    /// The transcript's first line: the backend and the normalizer's settings. [`Self::for_request`]
    /// fills in the settings; the caller names the backend.
    pub header: Header,
}

impl ProcessSpec {
    /// The spec of a live run for `request`: its working directory made absolute (a relative
    /// one against the caller's), its environment, its prompt (for standard input), timeout and
    /// stop signal. The binary is the request's, else the backend's environment variable
    /// `binary_var` when it is set and not empty, else `default_binary` on `PATH`; `args` are
    /// the backend's, and `install_hint` is kept only when the binary is `default_binary`
    /// (installing the backend's agent does not create a binary named otherwise).
    pub fn for_request(
        request: RunRequest,
        binary_var: &str,
        default_binary: &str,
        args: Vec<String>,
        install_hint: &str,
    ) -> Self {
        let program = choose_binary(&request, std::env::var_os(binary_var), default_binary);
        let install_hint = (program.as_os_str() == default_binary).then(|| install_hint.into());
        let mut config = request.normalizer.clone();
        if config.cwd.is_none() {
            config.cwd = absolute_cwd(&request)
                .or_else(|| std::env::current_dir().ok())
                .map(|dir| dir.display().to_string());
        }
        ProcessSpec {
            header: Header::from_config(&config),
            program,
            args,
            cwd: absolute_cwd(&request),
            env: request.env,
            stdin: request.prompt.into_bytes(),
            timeout: request.timeout,
            stop: request.stop,
            install_hint,
            transcript: request.transcript,
        }
    }
}

/// The request's working directory made absolute (a relative one against the caller's).
pub fn absolute_cwd(request: &RunRequest) -> Option<PathBuf> {
    let cwd = request.cwd.as_ref()?;
    Some(std::path::absolute(cwd).unwrap_or_else(|_| cwd.clone()))
}

/// Where a live run's agent works and how its output is normalized: the request's working
/// directory made absolute, else the caller's current one; and the request's normalizer
/// settings, their `cwd` that directory unless the request names another (C14a, X9).
pub fn run_dir(request: &RunRequest) -> Result<(PathBuf, NormalizerConfig), RunError> {
    let dir = match absolute_cwd(request) {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|source| RunError::WorkingDirectory {
            cwd: PathBuf::from("."),
            source,
        })?,
    };
    let mut config = request.normalizer.clone();
    if config.cwd.is_none() {
        config.cwd = Some(dir.display().to_string());
    }
    Ok((dir, config))
}

/// The binary of a live run: the request's, else `env` (the backend's variable, such as
/// `$CLAUDE_BIN`) when set and not empty, else `default` (looked up on `PATH`).
pub fn choose_binary(
    request: &RunRequest,
    env: Option<std::ffi::OsString>,
    default: &str,
) -> PathBuf {
    match (&request.binary, env) {
        (Some(binary), _) => binary.clone(),
        (None, Some(env)) if !env.is_empty() => PathBuf::from(env),
        (None, _) => PathBuf::from(default),
    }
}

/// The client side of an agent that talks both ways (an Agent Client Protocol agent asks for
/// permissions and answers requests; Claude Code in a session takes user and control
/// messages): it reads each line of the agent's standard output and says what goes back to
/// the agent's standard input and what the normalizer reads. Given to [`spawn_conversation`]
/// for a run or to [`spawn_session`] for a session; the driver does the rest (process group,
/// pipes, timeouts, stop signal, outcome, and in a session the prompt queue and the pending
/// permission requests of [`crate::session::SessionState`]).
///
/// The normalizer reads only what [`Reply::record`] holds, so a conversation can record the
/// lines of both directions in one transcript, in the order they crossed the pipes.
///
/// The methods after [`Conversation::stop`] are a session's transport: how a turn starts,
/// how an answer to a permission request and an interrupt look on the agent's wire, and how
/// the session ends. A conversation only ever used for runs keeps their defaults, which
/// write nothing (and close the agent's input on [`Conversation::close`]).
pub trait Conversation: Send + 'static {
    /// The run has started: what to write first.
    fn open(&mut self) -> Reply;

    /// One line of the agent's standard output, without its `\n`.
    fn line(&mut self, line: &[u8]) -> Reply;

    /// The run is being cut short (a timeout or the stop signal; the `error` event saying so
    /// is already out): what to write, and how long the agent may take to end by itself
    /// before its process group is killed.
    fn stop(&mut self) -> (Reply, Duration);

    /// A session's turn `turn` (1, 2, ...) starts with the prompt `text` (I2).
    fn start_turn(&mut self, turn: u32, text: &str) -> Reply {
        let _ = (turn, text);
        Reply::default()
    }

    /// The caller's answer to the permission request `id`, one of the decisions its
    /// `permission` event offered (I4); `message` goes with a denial.
    fn answer(&mut self, id: &str, decision: Decision, message: Option<&str>) -> Reply {
        let _ = (id, decision, message);
        Reply::default()
    }

    /// The permission request `id` gets no answer from the caller (its turn is being
    /// interrupted, or nobody is left to answer): release the agent from waiting.
    fn withdraw(&mut self, id: &str, why: Withdrawal) -> Reply {
        let _ = (id, why);
        Reply::default()
    }

    /// Stop the running turn through the agent's own protocol (I2); the turn's end still
    /// comes from the agent ([`Reply::turn_ended`]).
    fn interrupt(&mut self) -> Reply {
        Reply::default()
    }

    /// The session ends (no turn runs, or its interrupt was sent): what to write, and how long
    /// the agent may take to exit by itself before its processes are killed.
    fn close(&mut self) -> (Reply, Duration) {
        (Reply::close(), CLOSE_GRACE)
    }

    /// Where the agent's lines come from besides its standard output, for an agent whose
    /// events arrive on another channel (a server's event stream over HTTP), asked once, right
    /// after [`Conversation::open`]. The driver reads it beside the pipes: each
    /// [`Inbound::Line`] goes to [`Conversation::line`] as a line of standard output would (and
    /// keeps a turn from being silent, I6); an [`Inbound::Failed`] ends the session as the
    /// agent's death does. Its tasks do their own I/O (the transport's HTTP calls); the
    /// driver only reads. `None`, the default, for an agent that speaks on its pipes alone.
    fn inbox(&mut self) -> Option<mpsc::Receiver<Inbound>> {
        None
    }
}

/// What a [`Conversation`]'s own tasks bring the driver through [`Conversation::inbox`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Inbound {
    /// A line of the agent's, without its `\n`, read as if the agent had printed it.
    Line(Vec<u8>),
    /// The channel to the agent failed (its event stream broke, it never became ready): the
    /// driver makes an `error` event with this message; the running turn ends with status
    /// `error`, and the session ends as when the agent dies (I6).
    Failed(String),
    /// The agent has named its own id for the session (I8), as [`Reply::session_id`] does:
    /// for a transport that learns it on its own tasks (opencode's answer to `POST /session`).
    SessionId(String),
}

/// What a [`Conversation`] does with one line: lines for the normalizer, bytes for the
/// agent's standard input, whether to close it, and in a session what the line meant for the
/// turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Reply {
    /// Lines the normalizer reads (and the transcript saves), in order, each without `\n`.
    pub record: Vec<Vec<u8>>,
    /// Bytes to write to the agent's standard input (after what is still waiting there).
    pub write: Vec<u8>,
    /// Close the agent's standard input once everything waiting has been written; later
    /// writes are dropped.
    pub close: bool,
    /// In a session: the running turn has ended (Claude Code's `result` line, the answer to
    /// ACP's `session/prompt`), once the lines of `record` are read.
    pub turn_ended: bool,
    /// In a session: permission requests the agent no longer waits for (Claude Code's
    /// `control_cancel_request`); an answer to one of them is then a warning.
    pub withdrawn: Vec<String>,
    /// In a session: the agent has named its own id for the session (I8): the id Claude Code
    /// was given, the thread Codex's `thread/start` answered, ACP's `sessionId`. The first id
    /// named stands ([`crate::session::SessionHandle::session_id`]); a later one is ignored.
    pub session_id: Option<String>,
}

impl Reply {
    /// A reply that closes the agent's standard input and does nothing else.
    pub fn close() -> Reply {
        Reply {
            close: true,
            ..Reply::default()
        }
    }

    /// A reply that writes `bytes` to the agent and records nothing.
    pub fn write(bytes: Vec<u8>) -> Reply {
        Reply {
            write: bytes,
            ..Reply::default()
        }
    }
}

/// How long a session's agent may take to end once it is closed (its turn interrupted, its
/// input closed) before its processes are killed: the bound of I6 on an agent that ignores
/// the interrupt or keeps a tool running.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// How many bytes may wait for the agent's standard input in a [`Conversation`] before
/// reading its output pauses: an agent that asks without reading the answers is slowed down,
/// never given unbounded memory.
const INPUT_LIMIT: usize = 1 << 20;

/// Why the run was cut short by the harness.
#[derive(Debug, Clone, Copy)]
enum Ending {
    TimedOut(Duration),
    Stopped,
    /// A session's turn ran longer than its limit.
    TurnTimedOut(Duration),
    /// A session's turn was silent longer than its limit.
    Idle(Duration),
}

impl Ending {
    fn message(self) -> String {
        let seconds = |limit: Duration| {
            let secs = limit.as_secs_f64();
            let unit = if secs == 1.0 { "second" } else { "seconds" };
            format!("{secs} {unit}")
        };
        match self {
            Ending::TimedOut(limit) => format!(
                "the run timed out after {}; its process group was killed",
                seconds(limit)
            ),
            Ending::Stopped => "the run was stopped; its process group was killed".to_string(),
            Ending::TurnTimedOut(limit) => format!(
                "the turn timed out after {}; the session is closed",
                seconds(limit)
            ),
            Ending::Idle(limit) => format!(
                "the agent was silent for {} during the turn; the session is closed",
                seconds(limit)
            ),
        }
    }

    /// The `error` event that says so, emitted the moment it happens.
    fn event(self) -> Event {
        Event::new(EventBody::Error {
            message: self.message(),
        })
    }
}

/// Spawns `spec` and returns the stream of its events, then its outcome.
///
/// Must be called from within a tokio runtime with I/O and time enabled (the run is driven by a
/// task spawned on it). Any runtime flavour and any thread will do: the child is forked by a
/// thread kept for the life of the process (see [the module documentation](self)).
///
/// # Errors
///
/// [`RunError::BinaryNotFound`] when the binary is a name not found on `PATH` or a path that
/// does not exist, [`RunError::BinaryNotExecutable`] when it cannot be executed,
/// [`RunError::WorkingDirectory`] when `cwd` is not a directory, [`RunError::Io`] when the
/// child cannot be started otherwise.
pub fn spawn(spec: ProcessSpec, normalizer: Box<dyn Normalizer>) -> Result<RunStream, RunError> {
    let (items, _) = start(spec, normalizer, None, None)?;
    Ok(run_stream(items))
}

/// Spawns `spec` like [`spawn`], with `conversation` as the client side of the agent: it is
/// given every line of the agent's standard output and writes to its standard input
/// ([`ProcessSpec::stdin`] is not written); the normalizer reads the lines it records.
/// A timeout or the stop signal asks it what to write ([`Conversation::stop`]) and kills the
/// process group when the agent has not ended by itself in the time it says.
///
/// # Errors
///
/// As [`spawn`].
pub fn spawn_conversation(
    spec: ProcessSpec,
    normalizer: Box<dyn Normalizer>,
    conversation: Box<dyn Conversation>,
) -> Result<RunStream, RunError> {
    let (items, _) = start(spec, normalizer, Some(conversation), None)?;
    Ok(run_stream(items))
}

/// A run's items: its events, then its outcome (a run has no turns).
fn run_stream(mut items: mpsc::Receiver<SessionItem>) -> RunStream {
    futures::stream::poll_fn(move |cx| {
        items.poll_recv(cx).map(|item| {
            item.and_then(|item| match item {
                SessionItem::Event(event) => Some(RunItem::Event(event)),
                SessionItem::Ended(end) => Some(RunItem::Outcome(end.outcome)),
                SessionItem::TurnEnd(_) => None,
            })
        })
    })
    .boxed()
}

/// Starts the agent and the task that drives it: a run when `session` is `None`, else a
/// session whose commands arrive on the returned sender.
fn start(
    spec: ProcessSpec,
    normalizer: Box<dyn Normalizer>,
    conversation: Option<Box<dyn Conversation>>,
    session: Option<session::Turns>,
) -> Result<
    (
        mpsc::Receiver<SessionItem>,
        Option<mpsc::UnboundedSender<Input>>,
    ),
    RunError,
> {
    let io_error = |source: io::Error| RunError::Io {
        binary: spec.program.clone(),
        source,
    };
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|e| io_error(io::Error::other(e.to_string())))?;
    if let Some(cwd) = &spec.cwd {
        match std::fs::metadata(cwd) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(RunError::WorkingDirectory {
                    cwd: cwd.clone(),
                    source: io::Error::other("not a directory"),
                });
            }
            Err(source) => {
                return Err(RunError::WorkingDirectory {
                    cwd: cwd.clone(),
                    source,
                });
            }
        }
    }
    let transcript = match &spec.transcript {
        Some(path) => match std::fs::File::create(path)
            .and_then(|file| transcript::Writer::new(io::BufWriter::new(file), &spec.header))
        {
            Ok(writer) => Some(writer),
            Err(source) => {
                return Err(RunError::Transcript {
                    path: path.clone(),
                    source,
                });
            }
        },
        None => None,
    };
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(cwd) = &spec.cwd {
        command.current_dir(cwd);
    }
    #[cfg(any(target_os = "linux", target_os = "android"))]
    die_with_parent(&mut command, std::process::id());
    let mut tree = RunTree::new();
    tree.mark(&mut command);
    let child = match fork(command, runtime.clone()) {
        Ok(child) => child,
        Err(e) => return Err(spawn_error(e, spec.program, spec.install_hint)),
    };
    let (tx, rx) = mpsc::channel(QUEUE);
    let mut feed = Feed::new(normalizer, transcript);
    match conversation {
        Some(conversation) => feed.conversation = Some(conversation),
        None => {
            feed.input = spec.stdin;
            feed.close = true;
        }
    }
    let (commands, sender) = match session {
        Some(turns) => {
            feed.session = Some(turns);
            let (sender, commands) = mpsc::unbounded_channel();
            (Some(commands), Some(sender))
        }
        None => (None, None),
    };
    tree.set_leader(child.id());
    let run = Run {
        group: Group { tree: Some(tree) },
        child,
        feed,
        tx,
        commands,
    };
    runtime.spawn(run.drive(spec.timeout, spec.stop));
    Ok((rx, sender))
}

/// The error for a child that could not be started: a missing binary says whether it was a
/// name looked up on `PATH` or a path, and only the backend's default gets the install hint.
fn spawn_error(e: io::Error, binary: PathBuf, install: Option<String>) -> RunError {
    // A name without a slash is looked up on `PATH`; anything else is a path, run as it is.
    let is_path = binary.as_os_str().as_encoded_bytes().contains(&b'/');
    match e.kind() {
        // A script whose interpreter is missing fails with ENOENT too: that path does exist.
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            if !is_path || std::fs::symlink_metadata(&binary).is_err() =>
        {
            RunError::BinaryNotFound {
                binary,
                install: install.filter(|_| !is_path),
            }
        }
        io::ErrorKind::PermissionDenied => RunError::BinaryNotExecutable { binary },
        _ => RunError::Io { binary, source: e },
    }
}

/// A request for the forking thread: the command, the runtime that will own the child, and
/// where to send the result.
type Fork = (
    Command,
    tokio::runtime::Handle,
    std::sync::mpsc::SyncSender<io::Result<Child>>,
);

/// Forks `command` on the forking thread, registering the child with `runtime`.
///
/// A child's parent-death signal fires when the thread that forked it ends: forking on the
/// caller's thread would tie the agent's life to that thread (a tokio blocking-pool thread, a
/// thread a library user spawned for one run) instead of to the process. The forking thread
/// is started on first use and never ends.
fn fork(command: Command, runtime: tokio::runtime::Handle) -> io::Result<Child> {
    static FORKER: std::sync::OnceLock<std::sync::mpsc::Sender<Fork>> = std::sync::OnceLock::new();
    let forker = match FORKER.get() {
        Some(forker) => forker,
        None => {
            let (tx, rx) = std::sync::mpsc::channel::<Fork>();
            std::thread::Builder::new()
                .name("harness-fork".into())
                .spawn(move || {
                    for (mut command, runtime, reply) in rx {
                        // Spawning registers the child with the runtime's process driver.
                        let _entered = runtime.enter();
                        let _ = reply.send(command.spawn());
                    }
                })?;
            // When two callers race here, the thread of the sender that is not kept ends at
            // once, having forked nothing.
            FORKER.get_or_init(|| tx)
        }
    };
    let gone = || io::Error::other("the thread that starts agents has ended");
    let (reply, result) = std::sync::mpsc::sync_channel(1);
    forker.send((command, runtime, reply)).map_err(|_| gone())?;
    result.recv().map_err(|_| gone())?
}

/// Makes the child of `command` die with the process `parent` (Linux; the caller's own pid,
/// `std::process::id()`, for a child it forks): between fork and exec the child sets its
/// parent-death signal to SIGKILL, then refuses to start (its spawn fails with ESRCH) when its
/// parent is no longer `parent` (the caller died before the signal was set, so it would never
/// be sent). The signal fires when the *thread* that forked the child ends: see the module
/// documentation for why [`spawn`] forks on a thread of its own.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
pub fn die_with_parent(command: &mut Command, parent: u32) {
    let parent = i32::try_from(parent)
        .ok()
        .and_then(rustix::process::Pid::from_raw);
    let hook = move || -> io::Result<()> {
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
        if rustix::process::getppid() != parent {
            return Err(rustix::io::Errno::SRCH.into());
        }
        Ok(())
    };
    // SAFETY: `pre_exec` runs `hook` in the child between fork and exec, where only
    // async-signal-safe operations are allowed (another thread of the parent may have held a
    // lock, such as the allocator's, at the fork). The hook makes two system calls through
    // rustix, prctl(PR_SET_PDEATHSIG) and getppid, which take no lock and allocate nothing;
    // it turns an errno into an `io::Error` with `from_raw_os_error`, which allocates nothing;
    // and it captures only an `Option<Pid>`, which is `Copy`. It touches no state shared with the parent.
    unsafe {
        command.pre_exec(hook);
    }
}

/// The run's processes ([`RunTree`]): killed on drop unless disarmed, so a run cancelled with
/// its runtime still takes its processes with it.
struct Group {
    tree: Option<RunTree>,
}

impl Group {
    fn kill(&self) {
        if let Some(tree) = &self.tree {
            tree.kill();
        }
    }

    fn disarm(&mut self) {
        self.tree = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One live run or session, owned by the task that drives it.
struct Run {
    child: Child,
    group: Group,
    feed: Feed,
    tx: mpsc::Sender<SessionItem>,
    /// A session's commands (`None` for a run, and once the caller can send no more).
    commands: Option<mpsc::UnboundedReceiver<Input>>,
}

/// Where the agent's lines go (the normalizer, through the conversation when there is one,
/// and the transcript), what waits for its standard input, and in a session the turns.
struct Feed {
    normalizer: Box<dyn Normalizer>,
    conversation: Option<Box<dyn Conversation>>,
    transcript: Option<transcript::Writer<io::BufWriter<std::fs::File>>>,
    /// Bytes waiting for the agent's standard input.
    input: Vec<u8>,
    /// Whether the agent's standard input is still open (writes are dropped once it is not).
    input_open: bool,
    /// Close the agent's standard input once `input` is written.
    close: bool,
    /// Transcript writes that failed (the first one reported, then the transcript dropped).
    failed_writes: u64,
    /// `error` events the driver made itself (a timeout, a stop, the agent's death), which the
    /// outcome counts beside the normalizer's.
    made_errors: u64,
    /// The session's bookkeeping; `None` for a run.
    session: Option<session::Turns>,
    /// The conversation's channel failed ([`Inbound::Failed`]): kill the run's processes now.
    kill: bool,
    /// What the normalizer made from the last line.
    events: Vec<Event>,
    /// What waits for the consumer, in order.
    out: VecDeque<SessionItem>,
}

impl Feed {
    fn new(normalizer: Box<dyn Normalizer>, transcript: Option<TranscriptWriter>) -> Self {
        Feed {
            normalizer,
            conversation: None,
            transcript,
            input: Vec::new(),
            input_open: true,
            close: false,
            failed_writes: 0,
            made_errors: 0,
            session: None,
            kill: false,
            events: Vec::new(),
            out: VecDeque::new(),
        }
    }

    /// One line of the agent's standard output.
    fn stdout(&mut self, line: &[u8]) {
        match self.conversation.as_mut() {
            Some(conversation) => {
                let reply = conversation.line(line);
                self.apply(reply);
            }
            None => self.record(line),
        }
    }

    /// What the conversation said to do.
    fn apply(&mut self, reply: Reply) {
        for line in &reply.record {
            self.record(line);
        }
        if self.input_open {
            self.input.extend_from_slice(&reply.write);
        }
        self.close |= reply.close;
        for id in &reply.withdrawn {
            self.withdrawn(id);
        }
        if let Some(id) = reply.session_id {
            self.named(id);
        }
        if reply.turn_ended {
            self.turn_ended();
        }
    }

    /// A line for the normalizer, saved in the transcript first.
    fn record(&mut self, line: &[u8]) {
        if let Some(transcript) = &mut self.transcript {
            let written = transcript.stdout(line);
            self.transcript_written(written);
        }
        self.normalizer.push_line(line, &mut self.events);
        self.settle();
    }

    /// One line of the agent's standard error, saved in the transcript first (S4, TR3).
    fn stderr(&mut self, line: &[u8]) {
        if let Some(transcript) = &mut self.transcript {
            let written = transcript.stderr(line);
            self.transcript_written(written);
        }
        self.normalizer.push_stderr(line, &mut self.events);
        self.settle();
    }

    /// An event the driver made itself, after what the normalizer made.
    fn made(&mut self, event: Event) {
        if event.kind() == Kind::Error {
            self.made_errors += 1;
            if let Some(turns) = &mut self.session {
                turns.made_errors += 1;
            }
        }
        self.events.push(event);
        self.settle();
    }

    /// A failed write is reported once, as an `error` event, and the transcript dropped.
    fn transcript_written(&mut self, written: io::Result<()>) {
        if let Err(e) = written {
            self.transcript = None;
            self.failed_writes += 1;
            self.made_errors += 1;
            self.events.push(Event::new(EventBody::Error {
                message: format!("the transcript could not be written: {e}"),
            }));
        }
    }

    /// The transcript written out; a failure is an `error` event.
    fn flush(&mut self) {
        if let Some(mut transcript) = self.transcript.take() {
            if let Err(e) = transcript.flush() {
                self.failed_writes += 1;
                self.made(Event::new(EventBody::Error {
                    message: format!("the transcript could not be written: {e}"),
                }));
            }
        }
    }

    /// The events made so far go to the consumer's queue; in a session, each permission
    /// request among them is handed to the session's bookkeeping first (I4).
    fn settle(&mut self) {
        if self.session.is_none() {
            self.out
                .extend(self.events.drain(..).map(SessionItem::Event));
            return;
        }
        let events = std::mem::take(&mut self.events);
        for event in events {
            let asked = match &event.body {
                EventBody::Permission { id, options, .. } => Some((id.clone(), options.clone())),
                _ => None,
            };
            self.out.push_back(SessionItem::Event(event));
            if let Some((id, options)) = asked {
                self.permission_asked(&id, &options);
            }
        }
    }
}

type TranscriptWriter = transcript::Writer<io::BufWriter<std::fs::File>>;

/// Writes some of `input` to a pipe that may already be closed (then never completes).
async fn write_to(
    pipe: &mut Option<tokio::process::ChildStdin>,
    input: &[u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.write(input).await,
        None => std::future::pending().await,
    }
}

/// The consumer dropped the stream.
struct Abandoned;

/// Reads from a pipe that may already be closed (then never completes).
async fn read_from<R: AsyncRead + Unpin>(
    pipe: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match pipe {
        Some(pipe) => pipe.read(buf).await,
        None => std::future::pending().await,
    }
}

/// The next item of a conversation's inbox (never completes when there is none).
async fn inbound_from(inbox: &mut Option<mpsc::Receiver<Inbound>>) -> Option<Inbound> {
    match inbox {
        Some(inbox) => inbox.recv().await,
        None => std::future::pending().await,
    }
}

/// The caller's next command (never completes once the caller can send none).
async fn command_from(commands: &mut Option<mpsc::UnboundedReceiver<Input>>) -> Option<Input> {
    match commands {
        Some(commands) => commands.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_for(limit: Option<Duration>) {
    match limit {
        Some(limit) => tokio::time::sleep(limit).await,
        None => std::future::pending().await,
    }
}

async fn wait_for(stop: Option<StopSignal>) {
    match stop {
        Some(stop) => stop.fired().await,
        None => std::future::pending().await,
    }
}

/// A deadline far enough away to mean "not armed" for a timer that is re-armed later.
fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600)
}

impl Run {
    async fn drive(mut self, timeout: Option<Duration>, stop: Option<StopSignal>) {
        if self.pump(timeout, stop).await.is_err() {
            // Nobody is listening any more: stop the agent and reap it (no zombie).
            self.group.kill();
            let _ = self.child.wait().await;
            self.group.disarm();
        }
    }

    /// The run is cut short: the `error` event saying why, then the process group killed at
    /// once, or, with a conversation, what it writes first and the time it gives the agent. A
    /// session closes instead (I6): its turn is interrupted and the agent given the same time.
    fn cut_short(
        feed: &mut Feed,
        group: &Group,
        ending: Ending,
        kill_at: std::pin::Pin<&mut tokio::time::Sleep>,
    ) -> bool {
        if feed.session.is_some() {
            feed.cut_session(ending);
            return false;
        }
        feed.made(ending.event());
        match feed.conversation.as_mut() {
            Some(conversation) => {
                let (reply, grace) = conversation.stop();
                feed.apply(reply);
                kill_at.reset(tokio::time::Instant::now() + grace);
                true
            }
            None => {
                group.kill();
                false
            }
        }
    }

    async fn pump(
        &mut self,
        timeout: Option<Duration>,
        stop: Option<StopSignal>,
    ) -> Result<(), Abandoned> {
        let mut stdout = self.child.stdout.take();
        let mut stderr = self.child.stderr.take();
        let mut stdin = self.child.stdin.take();
        let mut commands = self.commands.take();
        let deadline = sleep_for(timeout);
        tokio::pin!(deadline);
        let stopped = wait_for(stop);
        tokio::pin!(stopped);
        let linger = tokio::time::sleep(LINGER);
        tokio::pin!(linger);
        // With a conversation, the process group is killed when the time it gave ends.
        let kill_at = tokio::time::sleep_until(far_future());
        tokio::pin!(kill_at);
        let mut kill_pending = false;
        // A session's turn: its time limit and its silence limit, armed while a turn runs.
        let turn_at = tokio::time::sleep_until(far_future());
        tokio::pin!(turn_at);
        let idle_at = tokio::time::sleep_until(far_future());
        tokio::pin!(idle_at);
        let (turn_limit, idle_limit) = match &self.feed.session {
            Some(turns) => (turns.turn_timeout, turns.idle_timeout),
            None => (None, None),
        };

        let mut out_lines = LineSplitter::new();
        let mut err_lines = LineSplitter::new();
        let mut out_buf = vec![0u8; CHUNK];
        let mut err_buf = vec![0u8; CHUNK];
        let mut inbox = None;
        if let Some(conversation) = self.feed.conversation.as_mut() {
            let reply = conversation.open();
            inbox = conversation.inbox();
            self.feed.apply(reply);
        }
        let mut status: Option<io::Result<ExitStatus>> = None;
        let mut ending: Option<Ending> = None;
        let talking = self.feed.conversation.is_some();

        while stdout.is_some() || stderr.is_some() || inbox.is_some() || status.is_none() {
            if self.feed.close && self.feed.input.is_empty() && stdin.is_some() {
                // Dropping the pipe closes it: the agent reads the end of its input.
                stdin = None;
                self.feed.input_open = false;
            }
            let feed = &mut self.feed;
            if std::mem::take(&mut feed.kill) {
                self.group.kill();
            }
            // A session's timers follow its turns; its close bounds the agent's last moments.
            if let Some(turns) = &mut feed.session {
                let now = tokio::time::Instant::now();
                if std::mem::take(&mut turns.turn_started) {
                    turn_at
                        .as_mut()
                        .reset(turn_limit.map_or_else(far_future, |l| now + l));
                    idle_at
                        .as_mut()
                        .reset(idle_limit.map_or_else(far_future, |l| now + l));
                }
                if let Some(grace) = turns.finish_grace.take() {
                    let at = now + grace;
                    if !kill_pending || at < kill_at.deadline() {
                        kill_at.as_mut().reset(at);
                    }
                    kill_pending = true;
                }
                if turns.state.running_turn().is_none() {
                    turn_at.as_mut().reset(far_future());
                    idle_at.as_mut().reset(far_future());
                }
                if turns.state.is_finished() {
                    // Nothing more to do with commands: a closed session ignores them.
                    commands = None;
                }
            }
            let in_turn = feed
                .session
                .as_ref()
                .is_some_and(|t| t.state.running_turn().is_some() && !t.cut);
            // Reading waits while events wait (the consumer sets the pace, memory stays
            // bounded), and in a conversation while too much waits for the agent's input; the
            // exit, the deadline and the stop signal are watched all along, so a consumer that
            // does not read never delays killing the agent.
            let reading = feed.out.is_empty() && !(talking && feed.input.len() >= INPUT_LIMIT);
            tokio::select! {
                permit = self.tx.reserve(), if !feed.out.is_empty() => {
                    let mut permit = permit.map_err(|_| Abandoned)?;
                    // Then as many more as there is room for, without waiting.
                    while let Some(item) = feed.out.pop_front() {
                        permit.send(item);
                        if feed.out.is_empty() {
                            break;
                        }
                        permit = match self.tx.try_reserve() {
                            Ok(permit) => permit,
                            Err(mpsc::error::TrySendError::Full(())) => break,
                            Err(mpsc::error::TrySendError::Closed(())) => return Err(Abandoned),
                        };
                    }
                }
                written = write_to(&mut stdin, &feed.input), if stdin.is_some() && !feed.input.is_empty() => {
                    match written {
                        Ok(n) if n > 0 => {
                            feed.input.drain(..n);
                        }
                        // A child that exits without reading its input closes the pipe: not
                        // our error; what it did not read is dropped.
                        _ => {
                            stdin = None;
                            feed.input_open = false;
                            feed.input = Vec::new();
                        }
                    }
                }
                input = command_from(&mut commands), if feed.out.is_empty() => {
                    match input {
                        Some(input) => feed.command(input),
                        None => {
                            // Every handle is gone: the caller's input has ended (I2).
                            commands = None;
                            feed.command(Input::End);
                        }
                    }
                }
                read = read_from(&mut stdout, &mut out_buf), if reading && stdout.is_some() => {
                    match read {
                        Ok(n) if n > 0 => {
                            if let (true, Some(limit)) = (in_turn, idle_limit) {
                                idle_at.as_mut().reset(tokio::time::Instant::now() + limit);
                            }
                            out_lines.push(&out_buf[..n], |l| feed.stdout(l));
                        }
                        // End of file, or a pipe that cannot be read any more: the stream ends.
                        _ => {
                            out_lines.finish(|l| feed.stdout(l));
                            stdout = None;
                        }
                    }
                }
                inbound = inbound_from(&mut inbox), if reading && inbox.is_some() => {
                    match inbound {
                        Some(Inbound::Line(line)) => {
                            if let (true, Some(limit)) = (in_turn, idle_limit) {
                                idle_at.as_mut().reset(tokio::time::Instant::now() + limit);
                            }
                            feed.stdout(&line);
                        }
                        Some(Inbound::Failed(message)) => feed.transport_failed(message),
                        Some(Inbound::SessionId(id)) => feed.named(id),
                        // Every sender is gone: nothing more comes this way.
                        None => inbox = None,
                    }
                }
                read = read_from(&mut stderr, &mut err_buf), if reading && stderr.is_some() => {
                    match read {
                        Ok(n) if n > 0 => {
                            if let (true, Some(limit)) = (in_turn, idle_limit) {
                                idle_at.as_mut().reset(tokio::time::Instant::now() + limit);
                            }
                            err_lines.push(&err_buf[..n], |l| feed.stderr(l));
                        }
                        _ => {
                            err_lines.finish(|l| feed.stderr(l));
                            stderr = None;
                        }
                    }
                }
                exit = self.child.wait(), if status.is_none() => {
                    status = Some(exit);
                    linger.as_mut().reset(tokio::time::Instant::now() + LINGER);
                }
                () = &mut deadline, if timeout.is_some() && ending.is_none() => {
                    ending = timeout.map(Ending::TimedOut);
                    if let Some(ending) = ending {
                        kill_pending |= Run::cut_short(feed, &self.group, ending, kill_at.as_mut());
                    }
                }
                () = &mut turn_at, if in_turn && turn_limit.is_some() => {
                    if let Some(limit) = turn_limit {
                        feed.cut_session(Ending::TurnTimedOut(limit));
                    }
                }
                () = &mut idle_at, if in_turn && idle_limit.is_some() => {
                    if let Some(limit) = idle_limit {
                        feed.cut_session(Ending::Idle(limit));
                    }
                }
                () = &mut stopped, if ending.is_none() => {
                    ending = Some(Ending::Stopped);
                    kill_pending |= Run::cut_short(feed, &self.group, Ending::Stopped, kill_at.as_mut());
                }
                () = &mut kill_at, if kill_pending => {
                    kill_pending = false;
                    self.group.kill();
                }
                () = &mut linger, if status.is_some() => {
                    // The agent is gone but something it started still holds its pipes.
                    self.group.kill();
                    out_lines.finish(|l| feed.stdout(l));
                    err_lines.finish(|l| feed.stderr(l));
                    stdout = None;
                    stderr = None;
                    inbox = None;
                }
                () = self.tx.closed() => return Err(Abandoned),
            }
        }
        // Whatever the agent left running goes with the run, however it ended (a normal end,
        // a timeout, a stop, or an agent that ended within the time its conversation gave it),
        // in its process group or not.
        self.group.kill();
        self.group.disarm();

        // The child is gone and its pipes are closed: nothing is left to watch but the consumer.
        let exit_code = match status {
            Some(Ok(status)) => status.code(),
            _ => None,
        };
        let feed = &mut self.feed;
        feed.flush();
        // The agent's last words come first: what its output left pending and the end-of-input
        // events (S9). A session that never started a turn asked nothing, so nothing can be
        // missing from it: no end-of-input check.
        let asked_nothing = feed
            .session
            .as_ref()
            .is_some_and(|turns| turns.state.turns_started() == 0);
        let mut outcome = if asked_nothing {
            feed.normalizer.end_turn()
        } else {
            let mut events = Vec::new();
            let outcome = feed.normalizer.finish(&mut events);
            feed.events = events;
            feed.settle();
            outcome
        };
        let last_turn = feed.agent_gone(exit_code);
        if let Some(turn) = last_turn {
            feed.close_turn(turn);
        }
        if feed.made_errors > 0 {
            *outcome.counts.entry(Kind::Error).or_insert(0) += feed.made_errors;
        }
        outcome.exit_code = Some(exit_code);
        let reason = feed
            .session
            .as_ref()
            .map_or(EndReason::Caller, |t| t.reason.unwrap_or(EndReason::Caller));
        feed.out
            .push_back(SessionItem::Ended(SessionEnd { reason, outcome }));
        for item in feed.out.drain(..) {
            self.tx.send(item).await.map_err(|_| Abandoned)?;
        }
        Ok(())
    }
}
