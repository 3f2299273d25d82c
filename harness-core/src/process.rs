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
//! - a timeout or a [`StopSignal`] kills the whole process group and yields an `error` event
//!   saying why at once; what the child had already written follows, and the stream ends as
//!   above (the outcome's `counts` include that event). The status stays what the agent's own
//!   lines made it: a timeout after its terminal line (O1) leaves `success` or `error`, and only
//!   a run cut short before one is `incomplete`;
//! - a timeout or a stop acts even while the consumer is not reading: events wait in a bounded
//!   queue, reading the pipes pauses, but the deadline and the stop signal are still watched;
//! - dropping the stream kills the process group and reaps the child;
//! - with [`spawn_conversation`], the agent talks both ways: a [`Conversation`] answers each
//!   line of its standard output on its standard input (an ACP client answering permission
//!   requests) and says which lines the normalizer reads; what waits for the agent's input is
//!   bounded (reading pauses beyond 1 MiB), and a timeout or a stop first asks the conversation
//!   what to write (a cancel) and how long the agent may take to end by itself;
//! - [`ProcessSpec::transcript`] saves every line the normalizer reads, so the run can be
//!   normalized again offline;
//! - when the child has exited but something it left running still holds its pipes open,
//!   the run waits two seconds, then kills the process group and ends.
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
//! started. Those share its process group, which every ending above kills; but after the caller
//! is killed with SIGKILL nothing is left to kill the group, and a grandchild the agent left
//! running is orphaned (its writes to the agent's pipes fail, with SIGPIPE, and nothing more).
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
use crate::event::{Event, EventBody, Kind};
use crate::harness::{Normalizer, NormalizerConfig, RunItem, RunRequest, RunStream, StopSignal};
use crate::lines::LineSplitter;

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
    /// Where to save the transcript: every line the normalizer reads, each followed by `\n`,
    /// in order (the agent's standard output; with a [`Conversation`], the lines it records).
    /// `harness normalize` on that file gives the events of the run.
    pub transcript: Option<PathBuf>,
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
        ProcessSpec {
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
/// permissions and answers requests): it reads each line of the agent's standard output and
/// says what goes back to the agent's standard input and what the normalizer reads. Given to
/// [`spawn_conversation`]; the runner does the rest as for any run (process group, pipes,
/// timeout, stop signal, outcome).
///
/// The normalizer reads only what [`Reply::record`] holds, so a conversation can record the
/// lines of both directions in one transcript, in the order they crossed the pipes.
pub trait Conversation: Send + 'static {
    /// The run has started: what to write first.
    fn open(&mut self) -> Reply;

    /// One line of the agent's standard output, without its `\n`.
    fn line(&mut self, line: &[u8]) -> Reply;

    /// The run is being cut short (a timeout or the stop signal; the `error` event saying so
    /// is already out): what to write, and how long the agent may take to end by itself
    /// before its process group is killed.
    fn stop(&mut self) -> (Reply, Duration);
}

/// What a [`Conversation`] does with one line: lines for the normalizer, bytes for the
/// agent's standard input, and whether to close it.
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
}

/// How many bytes may wait for the agent's standard input in a [`Conversation`] before
/// reading its output pauses: an agent that asks without reading the answers is slowed down,
/// never given unbounded memory.
const INPUT_LIMIT: usize = 1 << 20;

/// Why the run was cut short by the harness.
#[derive(Debug, Clone, Copy)]
enum Ending {
    TimedOut(Duration),
    Stopped,
}

impl Ending {
    fn message(self) -> String {
        match self {
            Ending::TimedOut(limit) => {
                let secs = limit.as_secs_f64();
                let unit = if secs == 1.0 { "second" } else { "seconds" };
                format!("the run timed out after {secs} {unit}; its process group was killed")
            }
            Ending::Stopped => "the run was stopped; its process group was killed".to_string(),
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
    start(spec, normalizer, None)
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
    start(spec, normalizer, Some(conversation))
}

fn start(
    spec: ProcessSpec,
    normalizer: Box<dyn Normalizer>,
    conversation: Option<Box<dyn Conversation>>,
) -> Result<RunStream, RunError> {
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
        Some(path) => match std::fs::File::create(path) {
            Ok(file) => Some(io::BufWriter::new(file)),
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
    die_with_parent(&mut command, rustix::process::getpid());
    let child = match fork(command, runtime.clone()) {
        Ok(child) => child,
        Err(e) => return Err(spawn_error(e, spec.program, spec.install_hint)),
    };
    let (tx, mut rx) = mpsc::channel(QUEUE);
    let input_open = true;
    let feed = match conversation {
        Some(conversation) => Feed {
            normalizer,
            conversation: Some(conversation),
            transcript,
            input: Vec::new(),
            input_open,
            close: false,
            failed_writes: 0,
        },
        None => Feed {
            normalizer,
            conversation: None,
            transcript,
            input: spec.stdin,
            input_open,
            close: true,
            failed_writes: 0,
        },
    };
    let run = Run {
        group: Group::of(&child),
        child,
        feed,
        tx,
    };
    runtime.spawn(run.drive(spec.timeout, spec.stop));
    Ok(futures::stream::poll_fn(move |cx| rx.poll_recv(cx)).boxed())
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

/// Makes the child die with this process (`parent`): between fork and exec it sets its
/// parent-death signal to SIGKILL, then refuses to start when its parent is no longer
/// `parent` (the caller died before the signal was set, so it would never be sent).
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command, parent: rustix::process::Pid) {
    let hook = move || -> io::Result<()> {
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
        if rustix::process::getppid() != Some(parent) {
            return Err(rustix::io::Errno::SRCH.into());
        }
        Ok(())
    };
    // SAFETY: `pre_exec` runs `hook` in the child between fork and exec, where only
    // async-signal-safe operations are allowed (another thread of the parent may have held a
    // lock, such as the allocator's, at the fork). The hook makes two system calls through
    // rustix, prctl(PR_SET_PDEATHSIG) and getppid, which take no lock and allocate nothing;
    // it turns an errno into an `io::Error` with `from_raw_os_error`, which allocates nothing;
    // and it captures only a `Pid`, which is `Copy`. It touches no state shared with the parent.
    unsafe {
        command.pre_exec(hook);
    }
}

/// The child's process group; killed on drop unless disarmed, so a run cancelled with its
/// runtime still takes its processes with it.
struct Group {
    pgid: Option<rustix::process::Pid>,
}

impl Group {
    fn of(child: &Child) -> Self {
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw);
        Group { pgid }
    }

    fn kill(&self) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is the only expected failure.
            let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
        }
    }

    fn disarm(&mut self) {
        self.pgid = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One live run, owned by the task that drives it.
struct Run {
    child: Child,
    group: Group,
    feed: Feed,
    tx: mpsc::Sender<RunItem>,
}

/// Where the agent's lines go (the normalizer, through the conversation when there is one,
/// and the transcript) and what waits for its standard input.
struct Feed {
    normalizer: Box<dyn Normalizer>,
    conversation: Option<Box<dyn Conversation>>,
    transcript: Option<io::BufWriter<std::fs::File>>,
    /// Bytes waiting for the agent's standard input.
    input: Vec<u8>,
    /// Whether the agent's standard input is still open (writes are dropped once it is not).
    input_open: bool,
    /// Close the agent's standard input once `input` is written.
    close: bool,
    /// Transcript writes that failed (the first one reported, then the transcript dropped).
    failed_writes: u64,
}

impl Feed {
    /// One line of the agent's standard output.
    fn stdout(&mut self, line: &[u8], events: &mut Vec<Event>) {
        match self.conversation.as_mut() {
            Some(conversation) => {
                let reply = conversation.line(line);
                self.apply(reply, events);
            }
            None => self.record(line, events),
        }
    }

    /// What the conversation said to do.
    fn apply(&mut self, reply: Reply, events: &mut Vec<Event>) {
        for line in &reply.record {
            self.record(line, events);
        }
        if self.input_open {
            self.input.extend_from_slice(&reply.write);
        }
        self.close |= reply.close;
    }

    /// A line for the normalizer, saved in the transcript first.
    fn record(&mut self, line: &[u8], events: &mut Vec<Event>) {
        if let Some(transcript) = &mut self.transcript {
            use std::io::Write as _;
            if let Err(e) = transcript
                .write_all(line)
                .and_then(|()| transcript.write_all(b"\n"))
            {
                self.transcript = None;
                self.failed_writes += 1;
                events.push(Event::new(EventBody::Error {
                    message: format!("the transcript could not be written: {e}"),
                }));
            }
        }
        self.normalizer.push_line(line, events);
    }

    /// The transcript written out; a failure is an `error` event.
    fn flush(&mut self, events: &mut Vec<Event>) {
        if let Some(mut transcript) = self.transcript.take() {
            use std::io::Write as _;
            if let Err(e) = transcript.flush() {
                self.failed_writes += 1;
                events.push(Event::new(EventBody::Error {
                    message: format!("the transcript could not be written: {e}"),
                }));
            }
        }
    }
}

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

/// Hands events to the consumer, waiting while its queue is full.
async fn send(tx: &mpsc::Sender<RunItem>, events: &mut Vec<Event>) -> Result<(), Abandoned> {
    for event in events.drain(..) {
        tx.send(RunItem::Event(event))
            .await
            .map_err(|_| Abandoned)?;
    }
    Ok(())
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
    /// once, or, with a conversation, what it writes first and the time it gives the agent.
    fn cut_short(
        feed: &mut Feed,
        group: &Group,
        ending: Ending,
        events: &mut Vec<Event>,
        kill_at: std::pin::Pin<&mut tokio::time::Sleep>,
    ) -> bool {
        events.push(ending.event());
        match feed.conversation.as_mut() {
            Some(conversation) => {
                let (reply, grace) = conversation.stop();
                feed.apply(reply, events);
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
        let deadline = sleep_for(timeout);
        tokio::pin!(deadline);
        let stopped = wait_for(stop);
        tokio::pin!(stopped);
        let linger = tokio::time::sleep(LINGER);
        tokio::pin!(linger);
        // With a conversation, the process group is killed when the time it gave ends.
        let kill_at = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(kill_at);
        let mut kill_pending = false;

        let mut out_lines = LineSplitter::new();
        let mut err_lines = LineSplitter::new();
        let mut out_buf = vec![0u8; CHUNK];
        let mut err_buf = vec![0u8; CHUNK];
        // What the normalizer made from the last input, and what still waits for the consumer.
        let mut events = Vec::new();
        if let Some(conversation) = self.feed.conversation.as_mut() {
            let reply = conversation.open();
            self.feed.apply(reply, &mut events);
        }
        let mut queue = VecDeque::new();
        let mut status: Option<io::Result<ExitStatus>> = None;
        let mut ending: Option<Ending> = None;
        let talking = self.feed.conversation.is_some();

        while stdout.is_some() || stderr.is_some() || status.is_none() {
            if self.feed.close && self.feed.input.is_empty() && stdin.is_some() {
                // Dropping the pipe closes it: the agent reads the end of its input.
                stdin = None;
                self.feed.input_open = false;
            }
            let feed = &mut self.feed;
            // Reading waits while events wait (the consumer sets the pace, memory stays
            // bounded), and in a conversation while too much waits for the agent's input; the
            // exit, the deadline and the stop signal are watched all along, so a consumer that
            // does not read never delays killing the agent.
            let reading = queue.is_empty() && !(talking && feed.input.len() >= INPUT_LIMIT);
            tokio::select! {
                permit = self.tx.reserve(), if !queue.is_empty() => {
                    let mut permit = permit.map_err(|_| Abandoned)?;
                    // Then as many more as there is room for, without waiting.
                    while let Some(event) = queue.pop_front() {
                        permit.send(RunItem::Event(event));
                        if queue.is_empty() {
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
                read = read_from(&mut stdout, &mut out_buf), if reading && stdout.is_some() => {
                    match read {
                        Ok(n) if n > 0 => {
                            out_lines.push(&out_buf[..n], |l| feed.stdout(l, &mut events));
                        }
                        // End of file, or a pipe that cannot be read any more: the stream ends.
                        _ => {
                            out_lines.finish(|l| feed.stdout(l, &mut events));
                            stdout = None;
                        }
                    }
                }
                read = read_from(&mut stderr, &mut err_buf), if reading && stderr.is_some() => {
                    let normalizer = &mut feed.normalizer;
                    match read {
                        Ok(n) if n > 0 => {
                            err_lines
                                .push(&err_buf[..n], |l| normalizer.push_stderr(l, &mut events));
                        }
                        _ => {
                            err_lines.finish(|l| normalizer.push_stderr(l, &mut events));
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
                        kill_pending = Run::cut_short(feed, &self.group, ending, &mut events, kill_at.as_mut());
                    }
                }
                () = &mut stopped, if ending.is_none() => {
                    ending = Some(Ending::Stopped);
                    kill_pending = Run::cut_short(feed, &self.group, Ending::Stopped, &mut events, kill_at.as_mut());
                }
                () = &mut kill_at, if kill_pending => {
                    kill_pending = false;
                    self.group.kill();
                }
                () = &mut linger, if status.is_some() => {
                    // The agent is gone but something it started still holds its pipes.
                    self.group.kill();
                    out_lines.finish(|l| feed.stdout(l, &mut events));
                    let normalizer = &mut feed.normalizer;
                    err_lines.finish(|l| normalizer.push_stderr(l, &mut events));
                    stdout = None;
                    stderr = None;
                }
                () = self.tx.closed() => return Err(Abandoned),
            }
            queue.extend(events.drain(..));
        }
        if ending.is_some() {
            // The agent ended within the time its conversation gave it: what it left running
            // goes too, as the `error` event said.
            self.group.kill();
        }
        self.group.disarm();

        // The child is gone and its pipes are closed: nothing is left to watch but the consumer.
        let mut events = Vec::from(queue);
        self.feed.flush(&mut events);
        let mut outcome = self.feed.normalizer.finish(&mut events);
        let extra = u64::from(ending.is_some()) + self.feed.failed_writes;
        if extra > 0 {
            *outcome.counts.entry(Kind::Error).or_insert(0) += extra;
        }
        outcome.exit_code = Some(match status {
            Some(Ok(status)) => status.code(),
            _ => None,
        });
        send(&self.tx, &mut events).await?;
        self.tx
            .send(RunItem::Outcome(outcome))
            .await
            .map_err(|_| Abandoned)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_binary_is_the_requests_then_the_backends_variable_then_its_default() {
        let mut request = RunRequest::default();
        assert_eq!(
            choose_binary(&request, None, "claude"),
            PathBuf::from("claude")
        );
        let empty = Some("".into());
        assert_eq!(
            choose_binary(&request, empty, "claude"),
            PathBuf::from("claude")
        );
        let var = || Some("/opt/claude".into());
        assert_eq!(
            choose_binary(&request, var(), "claude"),
            PathBuf::from("/opt/claude")
        );
        request.binary = Some("/bin/fake".into());
        assert_eq!(
            choose_binary(&request, var(), "claude"),
            PathBuf::from("/bin/fake")
        );
    }

    #[test]
    fn a_relative_working_directory_is_made_absolute() {
        let mut request = RunRequest::default();
        assert_eq!(absolute_cwd(&request), None);
        request.cwd = Some("sub/dir".into());
        let expected = std::env::current_dir().unwrap().join("sub/dir");
        assert_eq!(absolute_cwd(&request), Some(expected));
    }
    use super::*;
    use crate::Outcome;
    use crate::outcome::Status;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    /// Stdout lines become agent events; stderr lines warnings; a line `END` makes it a success.
    #[derive(Default)]
    struct Echo {
        ended: bool,
        lines: u64,
        errs: u64,
        counts: BTreeMap<Kind, u64>,
    }

    impl Echo {
        fn emit(&mut self, event: Event, out: &mut Vec<Event>) {
            *self.counts.entry(event.kind()).or_insert(0) += 1;
            out.push(event);
        }
    }

    impl Normalizer for Echo {
        fn push_line(&mut self, line: &[u8], out: &mut Vec<Event>) {
            self.lines += 1;
            if line == b"END" {
                self.ended = true;
                return;
            }
            let text = String::from_utf8_lossy(line).into();
            self.emit(
                Event::new(EventBody::Agent { text }).at_line(self.lines),
                out,
            );
        }
        fn push_stderr(&mut self, line: &[u8], out: &mut Vec<Event>) {
            self.errs += 1;
            let message = String::from_utf8_lossy(line).into_owned();
            let body = EventBody::Warning {
                message,
                source: crate::WarningSource::Stderr,
            };
            self.emit(Event::new(body).at_line(self.errs), out);
        }
        fn finish_each(&mut self, emit: &mut dyn FnMut(Event)) -> Outcome {
            let mut outcome = Outcome::empty();
            if self.ended {
                outcome.status = Status::Success;
            } else {
                let message = "stream ended without a result".to_string();
                let out = &mut Vec::new();
                self.emit(Event::new(EventBody::Error { message }), out);
                out.drain(..).for_each(emit);
            }
            outcome.counts = self.counts.clone();
            outcome
        }
        fn end_turn(&mut self) -> Outcome {
            Outcome::empty()
        }
        fn last_disposition(&self) -> crate::Disposition {
            crate::Disposition::Emitted
        }
        fn session_id(&self) -> Option<&str> {
            None
        }
        fn cwd(&self) -> Option<&str> {
            None
        }
        fn pending_tool_uses(&self) -> Vec<crate::PendingToolUse> {
            Vec::new()
        }
    }

    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("harness-process-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Dir(dir)
        }

        fn script(&self, body: &str) -> PathBuf {
            let path = self.0.join("agent");
            std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn spec(program: PathBuf) -> ProcessSpec {
        ProcessSpec {
            program,
            install_hint: Some("install it".into()),
            ..ProcessSpec::default()
        }
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    async fn collect(stream: RunStream) -> (Vec<Event>, Outcome) {
        let items: Vec<RunItem> = tokio::time::timeout(Duration::from_secs(60), stream.collect())
            .await
            .expect("hang guard");
        let mut events = Vec::new();
        let mut outcome = None;
        for item in items {
            assert!(outcome.is_none(), "the outcome is the last item");
            match item {
                RunItem::Event(e) => events.push(e),
                RunItem::Outcome(o) => outcome = Some(o),
            }
        }
        (events, outcome.expect("an outcome"))
    }

    fn texts(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| match &e.body {
                EventBody::Agent { text } => format!("out:{text}"),
                EventBody::Warning { message, .. } => format!("err:{message}"),
                EventBody::Error { message } => format!("error:{message}"),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// Polls until `pid` no longer exists (a zombie still has its /proc entry).
    async fn gone(pid: &str) {
        gone_path(&Path::new("/proc").join(pid.trim())).await;
    }

    /// Polls until `proc`, an entry under /proc, no longer exists.
    async fn gone_path(proc: &Path) {
        tokio::time::timeout(Duration::from_secs(60), async {
            while proc.exists() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the process is still there");
    }

    /// Polls until `pid` has written nothing for a while (it waits on a full pipe), or a
    /// minute has passed. Only makes a test sharper: a process slow to run returns early.
    async fn blocked(pid: &str) {
        let io = Path::new("/proc").join(pid.trim()).join("io");
        let written = || {
            let text = std::fs::read_to_string(&io).unwrap_or_default();
            text.lines()
                .find_map(|l| l.strip_prefix("wchar:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
        };
        let (mut last, mut same) = (written(), 0);
        for _ in 0..3000 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let now = written();
            same = if now == last { same + 1 } else { 0 };
            if same == 5 {
                return;
            }
            last = now;
        }
    }

    async fn read_when_written(path: &Path) -> String {
        tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                if let Ok(text) = std::fs::read_to_string(path) {
                    if text.ends_with('\n') {
                        return text;
                    }
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect("the file was never written")
    }

    #[test]
    fn stdout_and_stderr_lines_become_events_then_the_outcome_with_the_exit_code() {
        let dir = Dir::new("basic");
        let agent = dir.script("echo one; echo warn >&2; printf 'END\\nlast'; exit 3");
        runtime().block_on(async {
            let (events, outcome) =
                collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
            let mut texts = texts(&events);
            texts.sort();
            assert_eq!(texts, ["err:warn", "out:last", "out:one"]);
            assert_eq!(outcome.exit_code, Some(Some(3)));
            assert_eq!(outcome.status, Status::Success);
        });
    }

    #[test]
    fn the_prompt_reaches_stdin_exactly_and_stdin_is_closed() {
        let dir = Dir::new("stdin");
        let copy = dir.0.join("prompt");
        let agent = dir.script(&format!("cat > '{}'; echo END", copy.display()));
        let prompt = "--dangerously-skip-permissions\nline two\r\n\u{e9}".to_string();
        runtime().block_on(async {
            let mut spec = spec(agent);
            spec.stdin = prompt.clone().into_bytes();
            let (_, outcome) = collect(spawn(spec, Box::new(Echo::default())).unwrap()).await;
            assert_eq!(outcome.status, Status::Success);
        });
        assert_eq!(std::fs::read_to_string(copy).unwrap(), prompt);
    }

    fn spawn_error(spec: ProcessSpec) -> RunError {
        runtime().block_on(async {
            match spawn(spec, Box::new(Echo::default())) {
                Ok(_) => panic!("spawned"),
                Err(err) => err,
            }
        })
    }

    /// A path that does not exist says so, with no install hint.
    #[test]
    fn a_missing_path_is_binary_not_found_saying_it_does_not_exist() {
        let missing = PathBuf::from("/nonexistent/harness-agent");
        let err = spawn_error(spec(missing.clone()));
        let RunError::BinaryNotFound { binary, install } = &err else {
            panic!("{err:?}")
        };
        assert_eq!((binary, install), (&missing, &None));
        assert_eq!(err.to_string(), "/nonexistent/harness-agent does not exist");
    }

    #[test]
    fn a_name_not_on_path_gets_the_install_hint_only_when_it_is_the_backends_default() {
        let default = "harness-test-no-such-agent";
        let request = RunRequest::default();
        let unset = "HARNESS_TEST_UNSET_BINARY_VARIABLE";
        let spec = ProcessSpec::for_request(request, unset, default, vec![], "install it");
        assert_eq!(spec.install_hint.as_deref(), Some("install it"));
        let err = spawn_error(spec);
        assert!(matches!(err, RunError::BinaryNotFound { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "harness-test-no-such-agent was not found on PATH; install it with `install it`"
        );

        let request = RunRequest {
            binary: Some("harness-test-other-agent".into()),
            ..RunRequest::default()
        };
        let spec = ProcessSpec::for_request(request, unset, default, vec![], "install it");
        assert_eq!(spec.install_hint, None);
        assert_eq!(
            spawn_error(spec).to_string(),
            "harness-test-other-agent was not found on PATH"
        );

        let request = RunRequest {
            binary: Some(PathBuf::from("/opt").join(default)),
            ..RunRequest::default()
        };
        let spec = ProcessSpec::for_request(request, unset, default, vec![], "install it");
        assert_eq!(spec.install_hint, None);
    }

    #[test]
    fn a_file_without_execute_permission_is_binary_not_executable() {
        let dir = Dir::new("noexec");
        let agent = dir.script("echo END");
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = spawn_error(spec(agent.clone()));
        assert!(
            matches!(err, RunError::BinaryNotExecutable { .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!("{} is not executable", agent.display())
        );
    }

    #[test]
    fn a_script_whose_interpreter_is_missing_is_not_reported_as_missing_itself() {
        let dir = Dir::new("interp");
        let agent = dir.0.join("agent");
        std::fs::write(&agent, "#!/nonexistent/interpreter\n").unwrap();
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = spawn_error(spec(agent.clone()));
        let RunError::Io { binary, source } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(binary, &agent);
        assert_eq!(source.kind(), io::ErrorKind::NotFound);
    }

    /// A caller that died before the death signal was set would never send
    /// it, so a child whose parent is not the caller does not start.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_child_whose_parent_is_not_the_caller_does_not_start() {
        runtime().block_on(async {
            let mut command = Command::new("true");
            let init = rustix::process::Pid::from_raw(1).unwrap();
            assert_ne!(rustix::process::getpid(), init);
            die_with_parent(&mut command, init);
            let err = command.spawn().unwrap_err();
            assert_eq!(
                err.raw_os_error(),
                Some(rustix::io::Errno::SRCH.raw_os_error())
            );
        });
    }

    /// The death signal is tied to the thread that forks, so a run started
    /// from a thread that then ends must go on (the driver forks on a thread of its own).
    #[test]
    fn the_agent_outlives_the_thread_that_started_it() {
        let dir = Dir::new("thread");
        let go = dir.0.join("go");
        let agent = dir.script(&format!(
            "while [ ! -e '{g}' ]; do sleep 0.02; done; echo one; echo END",
            g = go.display()
        ));
        let runtime = runtime();
        let handle = runtime.handle().clone();
        let (stream, task) = std::thread::spawn(move || {
            let _entered = handle.enter();
            let stream = spawn(spec(agent), Box::new(Echo::default()));
            (stream, std::fs::read_link("/proc/thread-self").unwrap())
        })
        .join()
        .unwrap();
        // The thread's entry goes after the kernel has sent any parent-death signal it causes.
        runtime.block_on(gone_path(&Path::new("/proc").join(task)));
        std::fs::write(&go, "").unwrap();
        let (events, outcome) = runtime.block_on(collect(stream.unwrap()));
        assert_eq!(texts(&events), ["out:one"]);
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(outcome.exit_code, Some(Some(0)));
    }

    /// A consumer that stops reading must not hold back the timeout.
    #[test]
    fn a_timeout_kills_the_agent_while_the_consumer_is_not_reading() {
        unread_consumer(|spec| {
            spec.timeout = Some(Duration::from_secs(1));
            None
        });
    }

    /// Nor the stop signal.
    #[test]
    fn a_stop_signal_kills_the_agent_while_the_consumer_is_not_reading() {
        unread_consumer(|spec| {
            let (tx, rx) = futures::channel::oneshot::channel::<()>();
            spec.stop = Some(StopSignal::new(async move {
                let _ = rx.await;
            }));
            Some(tx)
        });
    }

    /// Runs an agent that prints lines forever without reading the stream; fires the stop
    /// signal `setup` returns, if any, once the agent runs; expects the agent killed anyway,
    /// then everything (the error saying why included) once the stream is read.
    fn unread_consumer(
        setup: impl FnOnce(&mut ProcessSpec) -> Option<futures::channel::oneshot::Sender<()>>,
    ) {
        let dir = Dir::new("unread");
        let pid = dir.0.join("pid");
        let agent = dir.script(&format!(
            "echo $$ > '{p}.tmp'; mv '{p}.tmp' '{p}'; while :; do echo line; done",
            p = pid.display()
        ));
        runtime().block_on(async {
            let mut spec = spec(agent);
            let stop = setup(&mut spec);
            let expected = match spec.timeout {
                Some(_) => "error:the run timed out after 1 second; its process group was killed",
                None => "error:the run was stopped; its process group was killed",
            };
            let stream = spawn(spec, Box::new(Echo::default())).unwrap();
            let pid = read_when_written(&pid).await;
            if let Some(stop) = stop {
                // Nothing reads the stream: once every buffer is full, the agent waits.
                blocked(&pid).await;
                stop.send(()).unwrap();
            }
            gone(&pid).await;
            let (events, outcome) = collect(stream).await;
            let texts = texts(&events);
            let errors: Vec<&str> = texts
                .iter()
                .map(String::as_str)
                .filter(|t| t.starts_with("error:"))
                .collect();
            assert_eq!(errors, [expected, "error:stream ended without a result"]);
            assert_eq!(outcome.status, Status::Incomplete);
            assert_eq!(outcome.exit_code, Some(None));
        });
    }

    /// A timeout after the agent's terminal line keeps the status that line
    /// gave (O1): the answer is known; the timeout is an `error` event and a null exit code.
    #[test]
    fn a_timeout_after_the_terminal_line_keeps_its_status() {
        let dir = Dir::new("late-timeout");
        let printed = dir.0.join("printed");
        let agent = dir.script(&format!(
            "echo one; echo END; echo > '{p}'; exec sleep 1000",
            p = printed.display()
        ));
        // The fake must have printed its lines before the deadline: on a machine too slow
        // for that within a second, try again with more time.
        for secs in [1, 5, 30] {
            let _ = std::fs::remove_file(&printed);
            let mut spec = spec(agent.clone());
            spec.timeout = Some(Duration::from_secs(secs));
            let (events, outcome) = runtime()
                .block_on(async { collect(spawn(spec, Box::new(Echo::default())).unwrap()).await });
            if !printed.exists() {
                continue;
            }
            let unit = if secs == 1 { "second" } else { "seconds" };
            assert_eq!(
                texts(&events),
                [
                    "out:one".to_string(),
                    format!(
                        "error:the run timed out after {secs} {unit}; its process group was killed"
                    )
                ]
            );
            assert_eq!(outcome.status, Status::Success);
            assert_eq!(outcome.exit_code, Some(None));
            assert_eq!(outcome.counts.get(&Kind::Error), Some(&1));
            return;
        }
        panic!("the agent never printed its lines before the deadline");
    }

    #[test]
    fn a_missing_working_directory_is_not_reported_as_a_missing_binary() {
        runtime().block_on(async {
            let mut spec = spec(PathBuf::from("sh"));
            spec.cwd = Some(PathBuf::from("/nonexistent/dir"));
            let Err(err) = spawn(spec, Box::new(Echo::default())) else {
                panic!("ran in a missing directory");
            };
            assert!(matches!(err, RunError::WorkingDirectory { .. }), "{err:?}");
        });
    }

    #[test]
    fn a_child_killed_by_a_signal_gives_events_so_far_end_of_input_events_and_a_null_exit_code() {
        let dir = Dir::new("killed");
        let agent = dir.script("echo one; kill -9 $$");
        runtime().block_on(async {
            let (events, outcome) =
                collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
            assert_eq!(
                texts(&events),
                ["out:one", "error:stream ended without a result"]
            );
            assert_eq!(outcome.exit_code, Some(None));
            assert_eq!(outcome.status, Status::Incomplete);
        });
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group_and_says_so() {
        let dir = Dir::new("timeout");
        let pids = dir.0.join("pids");
        let agent = dir.script(&format!(
            "echo started; sleep 1000 & echo $! > '{p}.tmp'; echo $$ >> '{p}.tmp'; mv '{p}.tmp' '{p}'; wait",
            p = pids.display()
        ));
        runtime().block_on(async {
            let mut spec = spec(agent);
            spec.timeout = Some(Duration::from_millis(1500));
            let (events, outcome) = collect(spawn(spec, Box::new(Echo::default())).unwrap()).await;
            // Under load the deadline may be seen before the first line is read: the timeout
            // is reported when it fires, so only the errors' order is fixed.
            let mut texts = texts(&events);
            assert!(texts.contains(&"out:started".to_string()), "{texts:?}");
            texts.retain(|t| t != "out:started");
            assert_eq!(
                texts,
                [
                    "error:the run timed out after 1.5 seconds; its process group was killed",
                    "error:stream ended without a result",
                ]
            );
            assert_eq!(outcome.status, Status::Incomplete);
            assert_eq!(outcome.exit_code, Some(None));
            assert_eq!(outcome.counts.get(&Kind::Error), Some(&2));
            let pids = read_when_written(&pids).await;
            for pid in pids.lines() {
                gone(pid).await;
            }
        });
    }

    #[test]
    fn a_stop_signal_kills_the_group_and_the_stream_still_ends_with_the_outcome() {
        let dir = Dir::new("stop");
        let agent = dir.script("echo started; exec sleep 1000");
        runtime().block_on(async {
            let (tx, rx) = futures::channel::oneshot::channel::<()>();
            let mut spec = spec(agent);
            spec.stop = Some(StopSignal::new(async move {
                let _ = rx.await;
            }));
            let mut stream = spawn(spec, Box::new(Echo::default())).unwrap();
            let first = stream.next().await;
            assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
            tx.send(()).unwrap();
            let (events, outcome) = collect(stream).await;
            assert_eq!(
                texts(&events),
                [
                    "error:the run was stopped; its process group was killed",
                    "error:stream ended without a result",
                ]
            );
            assert_eq!(outcome.exit_code, Some(None));
        });
    }

    #[test]
    fn the_first_event_arrives_before_the_child_exits() {
        let dir = Dir::new("live");
        let go = dir.0.join("go");
        let agent = dir.script(&format!(
            "echo first; while [ ! -e '{g}' ]; do sleep 0.02; done; echo END",
            g = go.display()
        ));
        runtime().block_on(async {
            let mut stream = spawn(spec(agent), Box::new(Echo::default())).unwrap();
            let first = tokio::time::timeout(Duration::from_secs(60), stream.next())
                .await
                .expect("hang guard");
            let Some(RunItem::Event(first)) = first else {
                panic!("{first:?}")
            };
            assert_eq!(texts(&[first]), ["out:first"]);
            std::fs::write(&go, "").unwrap();
            let (_, outcome) = collect(stream).await;
            assert_eq!(outcome.status, Status::Success);
            assert_eq!(outcome.exit_code, Some(Some(0)));
        });
    }

    #[test]
    fn dropping_the_stream_kills_and_reaps_the_child() {
        let dir = Dir::new("drop");
        let pid = dir.0.join("pid");
        let agent = dir.script(&format!(
            "echo $$ > '{p}.tmp'; mv '{p}.tmp' '{p}'; echo started; exec sleep 1000",
            p = pid.display()
        ));
        runtime().block_on(async {
            let mut stream = spawn(spec(agent), Box::new(Echo::default())).unwrap();
            let first = stream.next().await;
            assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
            drop(stream);
            let pid = read_when_written(&pid).await;
            gone(&pid).await;
        });
    }

    #[test]
    fn a_stderr_flood_while_stdout_is_written_loses_no_line() {
        let dir = Dir::new("flood");
        let agent = dir.script("seq 100000 >&2 & seq 100000; wait; echo END");
        runtime().block_on(async {
            let (events, outcome) =
                collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
            assert_eq!(outcome.counts.get(&Kind::Warning), Some(&100_000));
            assert_eq!(outcome.counts.get(&Kind::Agent), Some(&100_000));
            assert_eq!(events.len(), 200_000);
            let err_lines: Vec<u64> = events
                .iter()
                .filter(|e| e.kind() == Kind::Warning)
                .filter_map(|e| e.line)
                .collect();
            assert_eq!(err_lines, (1..=100_000).collect::<Vec<_>>());
        });
    }

    #[test]
    fn a_line_of_tens_of_megabytes_arrives_whole() {
        let dir = Dir::new("long");
        let agent = dir.script("head -c 40000000 /dev/zero | tr '\\0' a; echo; echo END");
        runtime().block_on(async {
            let (events, outcome) =
                collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
            assert_eq!(outcome.status, Status::Success);
            let [event] = &events[..] else {
                panic!("{} events", events.len())
            };
            let EventBody::Agent { text } = &event.body else {
                panic!("{event:?}")
            };
            assert_eq!(text.len(), 40_000_000);
            assert!(text.bytes().all(|b| b == b'a'));
        });
    }

    #[test]
    fn something_left_holding_the_pipes_after_the_child_exits_is_killed() {
        let dir = Dir::new("linger");
        let pid = dir.0.join("pid");
        let agent = dir.script(&format!(
            "sleep 1000 & echo $! > '{p}.tmp'; mv '{p}.tmp' '{p}'; echo END; exit 0",
            p = pid.display()
        ));
        runtime().block_on(async {
            let (_, outcome) =
                collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
            assert_eq!(outcome.exit_code, Some(Some(0)));
            assert_eq!(outcome.status, Status::Success);
            let pid = read_when_written(&pid).await;
            gone(&pid).await;
        });
    }

    /// A conversation for the tests: records each agent line as `<LINE` and what it writes
    /// as `>LINE`; answers `ask N` with `answer N`, closes the agent's input on `bye`, and
    /// writes `cancel` when the run is cut short.
    struct Chat {
        grace: Duration,
    }

    impl Chat {
        fn say(reply: &mut Reply, text: &str) {
            reply.record.push(format!(">{text}").into_bytes());
            reply
                .write
                .extend_from_slice(format!("{text}\n").as_bytes());
        }
    }

    impl Conversation for Chat {
        fn open(&mut self) -> Reply {
            let mut reply = Reply::default();
            Chat::say(&mut reply, "hello");
            reply
        }
        fn line(&mut self, line: &[u8]) -> Reply {
            let line = String::from_utf8_lossy(line).into_owned();
            let mut reply = Reply {
                record: vec![format!("<{line}").into_bytes()],
                ..Reply::default()
            };
            if let Some(n) = line.strip_prefix("ask ") {
                Chat::say(&mut reply, &format!("answer {n}"));
            } else if line == "bye" {
                reply.close = true;
            }
            reply
        }
        fn stop(&mut self) -> (Reply, Duration) {
            let mut reply = Reply::default();
            Chat::say(&mut reply, "cancel");
            (reply, self.grace)
        }
    }

    /// A conversation answers the agent's lines as they come, the normalizer
    /// reads what it records (both directions, in order), the transcript saves exactly that,
    /// and closing the agent's input lets it end.
    #[test]
    fn a_conversation_answers_each_line_and_the_transcript_holds_what_the_normalizer_read() {
        let dir = Dir::new("conversation");
        let agent = dir.script(
            "read hello; echo \"got $hello\"; echo 'ask 1'; read a; echo \"got $a\"; \
             echo 'ask 2'; read b; echo \"got $b\"; echo bye; read rest || echo eof; echo END",
        );
        let transcript = dir.0.join("transcript");
        runtime().block_on(async {
            let mut spec = spec(agent);
            spec.transcript = Some(transcript.clone());
            let conversation = Box::new(Chat {
                grace: Duration::from_secs(30),
            });
            let stream = spawn_conversation(spec, Box::new(Echo::default()), conversation);
            let (events, outcome) = collect(stream.unwrap()).await;
            let expected = [
                ">hello",
                "<got hello",
                "<ask 1",
                ">answer 1",
                "<got answer 1",
                "<ask 2",
                ">answer 2",
                "<got answer 2",
                "<bye",
                "<eof",
                "<END",
            ];
            let mut out: Vec<String> = expected.iter().map(|l| format!("out:{l}")).collect();
            // The test normalizer ends only on a bare `END`; it read `<END`.
            out.push("error:stream ended without a result".into());
            assert_eq!(texts(&events), out);
            let saved = std::fs::read_to_string(&transcript).unwrap();
            assert_eq!(saved, expected.map(|l| format!("{l}\n")).concat());
            assert_eq!(outcome.exit_code, Some(Some(0)));
        });
    }

    /// A timeout asks the conversation what to write (a cancel), and an
    /// agent that ends by itself within the time given is not killed.
    #[test]
    fn a_timeout_in_a_conversation_writes_its_cancel_and_the_agent_may_end_by_itself() {
        let dir = Dir::new("conversation-cancel");
        let agent = dir.script("read hello; echo waiting; read c; echo \"got $c\"; exit 3");
        runtime().block_on(async {
            let mut spec = spec(agent);
            spec.timeout = Some(Duration::from_millis(500));
            let conversation = Box::new(Chat {
                grace: Duration::from_secs(30),
            });
            let stream = spawn_conversation(spec, Box::new(Echo::default()), conversation);
            let (events, outcome) = collect(stream.unwrap()).await;
            let texts = texts(&events);
            assert_eq!(
                texts,
                [
                    "out:>hello",
                    "out:<waiting",
                    "error:the run timed out after 0.5 seconds; its process group was killed",
                    "out:>cancel",
                    "out:<got cancel",
                    "error:stream ended without a result",
                ]
            );
            assert_eq!(outcome.exit_code, Some(Some(3)));
            assert_eq!(outcome.counts.get(&Kind::Error), Some(&2));
        });
    }

    /// An agent that ignores the cancel is killed when the time given ends.
    #[test]
    fn an_agent_that_ignores_the_cancel_is_killed_when_its_time_is_up() {
        let dir = Dir::new("conversation-ignore");
        let agent = dir.script("read hello; echo waiting; exec sleep 1000");
        runtime().block_on(async {
            let (tx, rx) = futures::channel::oneshot::channel::<()>();
            let mut spec = spec(agent);
            spec.stop = Some(StopSignal::new(async move {
                let _ = rx.await;
            }));
            let conversation = Box::new(Chat {
                grace: Duration::from_millis(200),
            });
            let mut stream =
                spawn_conversation(spec, Box::new(Echo::default()), conversation).unwrap();
            let mut seen = Vec::new();
            while let Some(RunItem::Event(event)) = stream.next().await {
                let waiting = texts(std::slice::from_ref(&event)) == ["out:<waiting"];
                seen.push(event);
                if waiting {
                    break;
                }
            }
            tx.send(()).unwrap();
            let (events, outcome) = collect(stream).await;
            seen.extend(events);
            assert_eq!(
                texts(&seen),
                [
                    "out:>hello",
                    "out:<waiting",
                    "error:the run was stopped; its process group was killed",
                    "out:>cancel",
                    "error:stream ended without a result",
                ]
            );
            assert_eq!(outcome.exit_code, Some(None));
        });
    }

    /// A transcript that cannot be created stops the run before it starts.
    #[test]
    fn a_transcript_that_cannot_be_created_is_an_error() {
        runtime().block_on(async {
            let mut spec = spec(PathBuf::from("sh"));
            spec.transcript = Some(PathBuf::from("/nonexistent/dir/transcript"));
            let Err(err) = spawn(spec, Box::new(Echo::default())) else {
                panic!("ran without its transcript");
            };
            assert!(matches!(err, RunError::Transcript { .. }), "{err:?}");
            assert!(
                err.to_string()
                    .starts_with("cannot write the transcript /nonexistent/dir/transcript: "),
                "{err}"
            );
        });
    }

    /// Without a conversation, the transcript holds the agent's standard
    /// output lines, as the normalizer read them.
    #[test]
    fn the_transcript_of_a_plain_run_holds_its_stdout_lines() {
        let dir = Dir::new("transcript");
        let agent = dir.script("echo one; echo two >&2; printf 'three\\r\\nEND'");
        let transcript = dir.0.join("t");
        runtime().block_on(async {
            let mut spec = spec(agent);
            spec.transcript = Some(transcript.clone());
            let (events, outcome) = collect(spawn(spec, Box::new(Echo::default())).unwrap()).await;
            assert_eq!(outcome.status, Status::Success);
            assert_eq!(events.len(), 3);
        });
        assert_eq!(std::fs::read(&transcript).unwrap(), b"one\nthree\r\nEND\n");
    }
}
