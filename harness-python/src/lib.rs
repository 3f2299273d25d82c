//! The Python extension of `harness`: the module `harness_agents._native`, which the
//! pure-Python package `harness_agents` (in `python/`) wraps.
//!
//! It holds no decoding of its own: every event comes from the facade crate `harness`
//! (`registry()`, each backend's `Normalizer`, `Backend::run`) and every classification from
//! `harness-codex-shell`. What it adds is the crossing into Python:
//!
//! - events and outcomes leave Rust as their JSON objects (the same serde serialization the
//!   CLI prints, J1-J10), built directly as Python dicts, and become the generated dataclasses
//!   of `harness_agents._events` through that module's `FROM_JSON` table, looked up once;
//! - `normalize(path)` reads the file in 64 KiB chunks with the GIL released, so memory holds
//!   one chunk and one partial line, never the file;
//! - a live run is driven on one tokio runtime kept for the life of the process (one worker
//!   thread); the sync iterator waits on it in short slices so Ctrl-C reaches Python, the async
//!   iterator resolves an asyncio future from the runtime with `call_soon_threadsafe`, and
//!   closing or dropping the run fires its stop signal and drops the stream, which kills the
//!   agent's process group (`harness_agents_core::process`);
//! - a session (SPEC section 8) is driven the same way: its items are pulled as a run's are,
//!   and its commands go through the library's `SessionHandle`, which never waits for them.
//!
//! No `unsafe` here: PyO3's macros and safe API only.

use std::fs::File;
use std::io::Read;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use futures::{Stream, StreamExt};
use harness_agents::session::{EndReason, SessionHandle, SessionItem};
use harness_agents::{
    Backend, Decision, Event, LineSplitter, NormalizerConfig, Outcome, RunItem, RunStream,
};
use pyo3::exceptions::{PyException, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

pyo3::create_exception!(
    _native,
    RunError,
    PyException,
    "A live run or session could not start: the agent's binary is missing or not \
     executable, the working directory does not exist, or the backend cannot run live or has \
     no sessions."
);

/// How many bytes `normalize` reads at a time.
const CHUNK: usize = 64 * 1024;

/// How long the sync iterator waits for the next item before letting Python check for signals
/// (Ctrl-C), then waits again.
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// Every backend this build has, built once.
fn registry() -> &'static harness_agents::Registry {
    static REGISTRY: OnceLock<harness_agents::Registry> = OnceLock::new();
    REGISTRY.get_or_init(harness_agents::registry)
}

/// The backend named `name`, or a `ValueError` that lists the known names.
fn backend(name: &str) -> PyResult<&'static dyn Backend> {
    let registry = registry();
    registry.get(name).ok_or_else(|| {
        let known: Vec<&str> = registry.names().collect();
        PyValueError::new_err(format!(
            "unknown backend {name:?}; known backends: {}",
            known.join(", ")
        ))
    })
}

/// The runtime live runs are driven on: one worker thread, kept for the life of the process.
fn runtime() -> PyResult<&'static tokio::runtime::Runtime> {
    static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("harness-run")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the tokio runtime: {e}")))
}

/// Locks a mutex, taking the data over from a thread that panicked while holding it (the state
/// it protects stays consistent: every update is a single assignment or a normalizer call that
/// never panics).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `harness_agents._events.FROM_JSON`: kind to the function that builds its dataclass.
fn from_json_table(py: Python<'_>) -> PyResult<&Bound<'_, PyDict>> {
    static TABLE: PyOnceLock<Py<PyDict>> = PyOnceLock::new();
    let table = TABLE.get_or_try_init(py, || -> PyResult<Py<PyDict>> {
        let module = py.import("harness_agents._events")?;
        Ok(module.getattr("FROM_JSON")?.cast_into::<PyDict>()?.unbind())
    })?;
    Ok(table.bind(py))
}

/// The generated dataclass of `kind`, built from its JSON object `data`.
fn typed<'py>(py: Python<'py>, kind: &str, data: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let Some(build) = from_json_table(py)?.get_item(kind)? else {
        return Err(PyRuntimeError::new_err(format!(
            "harness_agents._events has no class for kind {kind:?}: the generated module \
             is older than the extension (regenerate it with gen_events.py)"
        )));
    };
    build.call1((data,))
}

/// A serde value as the Python objects `json.loads` would give for its JSON, built directly
/// (no `serde_json::Value` in between).
fn serialize<'py, T: serde::Serialize>(py: Python<'py>, value: &T) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// An event as its dataclass.
fn event_to_py<'py>(py: Python<'py>, event: &Event) -> PyResult<Bound<'py, PyAny>> {
    typed(py, event.kind().as_str(), serialize(py, event)?)
}

/// An outcome as its dataclass (from the closing line's object, `"kind": "outcome"`, J9).
fn outcome_to_py<'py>(py: Python<'py>, outcome: &Outcome) -> PyResult<Bound<'py, PyAny>> {
    typed(
        py,
        "outcome",
        serialize(py, &harness_agents::OutcomeLine::new(outcome))?,
    )
}

fn events_to_py<'py>(py: Python<'py>, events: &[Event]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for event in events {
        list.append(event_to_py(py, event)?)?;
    }
    Ok(list)
}

/// The settings of a normalizer.
fn config(cwd: Option<String>, workspace: Option<String>, started: bool) -> NormalizerConfig {
    let mut config = NormalizerConfig::default();
    config.cwd = cwd;
    config.workspace = workspace;
    config.started = started;
    config
}

/// Text or bytes as bytes.
fn as_bytes(line: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(text) = line.cast::<PyString>() {
        return Ok(text.to_str()?.as_bytes().to_vec());
    }
    line.extract::<Vec<u8>>()
        .map_err(|_| PyValueError::new_err("expected str or bytes"))
}

/// One line: a single trailing `\n` is dropped (as iterating over a file leaves it), any other
/// newline is an error, since it would join two lines into one.
fn one_line(line: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let mut bytes = as_bytes(line)?;
    if bytes.last() == Some(&b'\n') {
        bytes.pop();
    }
    if bytes.contains(&b'\n') {
        return Err(PyValueError::new_err(
            "a line holds no newline inside it; feed chunks of any size with push()",
        ));
    }
    Ok(bytes)
}

struct NormalizerState {
    normalizer: Box<dyn harness_agents::Normalizer>,
    splitter: LineSplitter,
    /// Whether `push` left a partial line in the splitter.
    partial: bool,
    outcome: Option<Outcome>,
}

/// An incremental normalizer: bytes or lines in, events out, then the outcome.
#[pyclass(module = "harness_agents._native")]
struct Normalizer {
    state: Mutex<NormalizerState>,
}

#[pymethods]
impl Normalizer {
    #[new]
    #[pyo3(signature = (backend_name, *, cwd=None, workspace=None, started=false))]
    fn new(
        backend_name: &str,
        cwd: Option<String>,
        workspace: Option<String>,
        started: bool,
    ) -> PyResult<Self> {
        let normalizer = backend(backend_name)?.normalizer(config(cwd, workspace, started));
        Ok(Normalizer {
            state: Mutex::new(NormalizerState {
                normalizer,
                splitter: LineSplitter::new(),
                partial: false,
                outcome: None,
            }),
        })
    }

    /// Feeds a chunk of standard output of any size; returns the events of the lines it
    /// completes.
    fn push<'py>(&self, py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyList>> {
        let mut events = Vec::new();
        {
            let mut state = lock(&self.state);
            if state.outcome.is_none() {
                let NormalizerState {
                    normalizer,
                    splitter,
                    ..
                } = &mut *state;
                splitter.push(data, |line| normalizer.push_line(line, &mut events));
                if !data.is_empty() {
                    state.partial = !data.ends_with(b"\n");
                }
            }
        }
        // The lock is released before any Python code runs (the dataclasses are built in
        // Python, which may switch threads).
        events_to_py(py, &events)
    }

    /// Feeds one line of standard output; returns its events.
    fn push_line<'py>(
        &self,
        py: Python<'py>,
        line: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let line = one_line(line)?;
        let mut events = Vec::new();
        {
            let mut state = lock(&self.state);
            if state.partial {
                return Err(PyValueError::new_err(
                    "push() left a partial line; end it with push(b\"\\n\") before push_line()",
                ));
            }
            if state.outcome.is_none() {
                state.normalizer.push_line(&line, &mut events);
            }
        }
        events_to_py(py, &events)
    }

    /// Feeds one line of standard error; returns its events.
    fn push_stderr<'py>(
        &self,
        py: Python<'py>,
        line: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let line = one_line(line)?;
        let mut events = Vec::new();
        {
            let mut state = lock(&self.state);
            if state.outcome.is_none() {
                state.normalizer.push_stderr(&line, &mut events);
            }
        }
        events_to_py(py, &events)
    }

    /// Ends the input: the last partial line, the end-of-input events, and the outcome.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyAny>)> {
        let mut events = Vec::new();
        let outcome = {
            let mut state = lock(&self.state);
            if state.outcome.is_none() {
                let NormalizerState {
                    normalizer,
                    splitter,
                    ..
                } = &mut *state;
                splitter.finish(|line| normalizer.push_line(line, &mut events));
                let outcome = normalizer.finish(&mut events);
                state.partial = false;
                state.outcome = Some(outcome);
            }
            state.outcome.clone()
        };
        let outcome = match &outcome {
            Some(outcome) => outcome_to_py(py, outcome)?,
            None => py.None().into_bound(py),
        };
        Ok((events_to_py(py, &events)?, outcome))
    }

    /// The session id seen so far.
    #[getter]
    fn session_id(&self) -> Option<String> {
        lock(&self.state)
            .normalizer
            .session_id()
            .map(str::to_string)
    }
}

struct FileState {
    file: File,
    normalizer: Box<dyn harness_agents::Normalizer>,
    splitter: LineSplitter,
    buffer: Vec<u8>,
    outcome: Option<Outcome>,
}

/// Reads until the chunk completes a line with events, or the file ends; `None` once the
/// outcome has been given.
fn next_events(state: &mut FileState) -> std::io::Result<Option<Vec<Event>>> {
    if state.outcome.is_some() {
        return Ok(None);
    }
    let mut events = Vec::new();
    loop {
        let n = match state.file.read(&mut state.buffer) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let FileState {
            normalizer,
            splitter,
            buffer,
            ..
        } = state;
        if n == 0 {
            splitter.finish(|line| normalizer.push_line(line, &mut events));
            state.outcome = Some(normalizer.finish(&mut events));
            return Ok(Some(events));
        }
        splitter.push(&buffer[..n], |line| normalizer.push_line(line, &mut events));
        if !events.is_empty() {
            return Ok(Some(events));
        }
    }
}

/// The events of a file, a chunk's worth at a time (`normalize`).
#[pyclass(module = "harness_agents._native")]
struct FileEvents {
    state: Mutex<FileState>,
}

#[pymethods]
impl FileEvents {
    /// The events of the next chunk that gives any (the end-of-input events last), or `None`
    /// once the file is done. A read error raises `OSError`; the events before it were given.
    fn next_batch<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        // The lock is held only while reading and decoding, with the GIL released.
        let batch = py.detach(|| next_events(&mut lock(&self.state)))?;
        batch.map(|events| events_to_py(py, &events)).transpose()
    }

    /// The outcome, once the last batch has been given.
    fn outcome<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let outcome = lock(&self.state).outcome.clone();
        outcome
            .map(|outcome| outcome_to_py(py, &outcome))
            .transpose()
    }
}

/// Opens `path` for `normalize`.
#[pyfunction]
#[pyo3(signature = (path, backend_name, *, cwd=None, workspace=None, started=false))]
fn normalize_file(
    path: PathBuf,
    backend_name: &str,
    cwd: Option<String>,
    workspace: Option<String>,
    started: bool,
) -> PyResult<FileEvents> {
    let normalizer = backend(backend_name)?.normalizer(config(cwd, workspace, started));
    let file = File::open(&path).map_err(|e| {
        PyOSError::new_err((e.raw_os_error().unwrap_or(0), e.to_string(), path.clone()))
    })?;
    Ok(FileEvents {
        state: Mutex::new(FileState {
            file,
            normalizer,
            splitter: LineSplitter::new(),
            buffer: vec![0; CHUNK],
            outcome: None,
        }),
    })
}

/// How Codex classifies a shell command: a script (as `bash -lc SCRIPT`) or an argv.
#[pyfunction]
fn classify<'py>(py: Python<'py>, command: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let argv: Vec<String> = if let Ok(script) = command.cast::<PyString>() {
        vec!["bash".into(), "-lc".into(), script.to_str()?.to_string()]
    } else {
        command.extract().map_err(|_| {
            PyValueError::new_err("expected a script (str) or an argv (a sequence of str)")
        })?
    };
    serialize(py, &harness_agents_codex_shell::parse_command(&argv))
}

/// The names of the backends this build has.
#[pyfunction]
fn backends() -> Vec<&'static str> {
    registry().names().collect()
}

/// The JSON Schema of the events and the outcome (`harness schema`), as text.
#[pyfunction]
fn schema() -> PyResult<String> {
    serde_json::to_string_pretty(&harness_agents::schema::lines())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// What a live run or session shares between its Python object and the tasks that wait for
/// its items.
struct Shared<S> {
    stream: tokio::sync::Mutex<Option<S>>,
    stop: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    closed: AtomicBool,
}

impl<S: Stream + Unpin> Shared<S> {
    fn new(stream: S, stop: tokio::sync::oneshot::Sender<()>) -> Self {
        Shared {
            stream: tokio::sync::Mutex::new(Some(stream)),
            stop: Mutex::new(Some(stop)),
            closed: AtomicBool::new(false),
        }
    }

    /// The next item, or `None` at the end or once closed (then the stream is dropped).
    async fn next_item(&self) -> Option<S::Item> {
        let mut stream = self.stream.lock().await;
        let item = match stream.as_mut() {
            Some(s) if !self.closed.load(Ordering::SeqCst) => s.next().await,
            _ => None,
        };
        if item.is_none() || self.closed.load(Ordering::SeqCst) {
            *stream = None;
            return None;
        }
        item
    }

    /// Kills the agent: fires the stop signal (which stops its process group even while a
    /// reader holds the stream), and drops the stream when no reader holds it.
    fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(stop) = lock(&self.stop).take() {
            let _ = stop.send(());
        }
        if let Ok(mut stream) = self.stream.try_lock() {
            *stream = None;
        }
    }
}

/// Waits for `shared`'s next item with the GIL released, in slices so that Python's signal
/// handlers run in between (Ctrl-C raises `KeyboardInterrupt` here); converts it with `to_py`.
fn next_blocking<'py, S>(
    py: Python<'py>,
    shared: &Shared<S>,
    to_py: fn(Python<'py>, Option<S::Item>) -> PyResult<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>>
where
    S: Stream + Unpin + Send,
    S::Item: Send,
{
    match wait_in_slices(py, None, || shared.next_item())? {
        Some(item) => to_py(py, item),
        // No deadline was given, so the wait ends only with the item.
        None => Ok(py.None().into_bound(py)),
    }
}

/// Waits for the future `wait` makes with the GIL released, in slices so that Python's signal
/// handlers run in between (a handler's exception ends the wait), until `until` when given;
/// `None` once it has passed. Each slice waits on a fresh future from `wait`.
fn wait_in_slices<T, F>(
    py: Python<'_>,
    until: Option<std::time::Instant>,
    wait: impl Fn() -> F + Sync,
) -> PyResult<Option<T>>
where
    T: Send,
    F: std::future::Future<Output = T>,
{
    let runtime = runtime()?;
    loop {
        let slice = match until {
            Some(until) => {
                let left = until.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    return Ok(None);
                }
                left.min(SIGNAL_SLICE)
            }
            None => SIGNAL_SLICE,
        };
        // The timer is made inside the runtime, which owns the clock.
        let waited =
            py.detach(|| runtime.block_on(async { tokio::time::timeout(slice, wait()).await }));
        match waited {
            Ok(done) => return Ok(Some(done)),
            Err(_elapsed) => py.check_signals()?,
        }
    }
}

/// Starts waiting for `shared`'s next item on the runtime; when it comes, `resolve(future,
/// item, error)` is called on `event_loop` with `call_soon_threadsafe`, the item converted with
/// `to_py`.
fn next_resolving<S>(
    shared: Arc<Shared<S>>,
    to_py: for<'py> fn(Python<'py>, Option<S::Item>) -> PyResult<Bound<'py, PyAny>>,
    event_loop: Py<PyAny>,
    future: Py<PyAny>,
    resolve: Py<PyAny>,
) -> PyResult<()>
where
    S: Stream + Unpin + Send + 'static,
    S::Item: Send,
{
    runtime()?.spawn(async move {
        let item = shared.next_item().await;
        // Nothing to resolve once the interpreter is shutting down.
        let _ = Python::try_attach(|py| {
            let (value, error) = match to_py(py, item) {
                Ok(value) => (value.unbind(), py.None()),
                Err(err) => (py.None(), err.into_value(py).into_any()),
            };
            // A closed event loop refuses the call: nobody is waiting any more.
            let _ = event_loop.call_method1(
                py,
                "call_soon_threadsafe",
                (resolve, future, value, error),
            );
        });
    });
    Ok(())
}

fn item_to_py<'py>(py: Python<'py>, item: Option<RunItem>) -> PyResult<Bound<'py, PyAny>> {
    match item {
        Some(RunItem::Event(event)) => event_to_py(py, &event),
        Some(RunItem::Outcome(outcome)) => outcome_to_py(py, &outcome),
        None => Ok(py.None().into_bound(py)),
    }
}

/// A live run: its events as they happen, then its outcome; closing or dropping it kills the
/// agent.
#[pyclass(module = "harness_agents._native")]
struct Run {
    shared: Arc<Shared<RunStream>>,
}

#[pymethods]
impl Run {
    /// Waits for the next item (an event, then the outcome last); `None` at the end. Python's
    /// signal handlers run while it waits, so Ctrl-C raises `KeyboardInterrupt` here.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        next_blocking(py, &self.shared, item_to_py)
    }

    /// Starts waiting for the next item on the runtime; when it comes, `resolve(future, item,
    /// error)` is called on `event_loop` with `call_soon_threadsafe`.
    fn next_into(
        &self,
        event_loop: Py<PyAny>,
        future: Py<PyAny>,
        resolve: Py<PyAny>,
    ) -> PyResult<()> {
        next_resolving(
            Arc::clone(&self.shared),
            item_to_py,
            event_loop,
            future,
            resolve,
        )
    }

    /// Kills the agent's process group and ends the run; later calls to `next` give `None`.
    fn close(&self) {
        self.shared.close();
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        self.shared.close();
    }
}

/// A number of seconds from Python as a duration, or a `ValueError` naming the option.
fn seconds(name: &str, secs: Option<f64>) -> PyResult<Option<Duration>> {
    secs.map(|secs| {
        Duration::try_from_secs_f64(secs).map_err(|_| {
            PyValueError::new_err(format!(
                "{name} must be a finite number of seconds >= 0, not {secs}"
            ))
        })
    })
    .transpose()
}

/// The settings a live run and a session share, as Python passes them.
struct LiveSettings {
    cwd: Option<PathBuf>,
    model: Option<String>,
    permission_mode: Option<String>,
    timeout: Option<f64>,
    binary: Option<PathBuf>,
    extra_args: Vec<String>,
    env: Option<std::collections::BTreeMap<String, String>>,
    started: bool,
    normalizer_cwd: Option<String>,
    workspace: Option<String>,
    agent: Option<Vec<String>>,
}

impl LiveSettings {
    /// The request of `prompt` with these settings, and the sender of its stop signal.
    fn request(
        self,
        prompt: String,
    ) -> PyResult<(harness_agents::RunRequest, tokio::sync::oneshot::Sender<()>)> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let mut request = harness_agents::RunRequest::new(prompt);
        request.cwd = self.cwd;
        request.model = self.model;
        request.permission_mode = self.permission_mode;
        request.timeout = seconds("timeout", self.timeout)?;
        request.binary = self.binary;
        request.extra_args = self.extra_args;
        request.agent = self.agent;
        request.env = self.env.unwrap_or_default();
        request.normalizer = config(self.normalizer_cwd, self.workspace, self.started);
        request.stop = Some(harness_agents::StopSignal::new(async move {
            let _ = stopped.await;
        }));
        Ok((request, stop))
    }
}

/// Starts a live run of `backend_name`'s agent.
#[pyfunction]
#[pyo3(signature = (
    backend_name, prompt, *, cwd=None, model=None, permission_mode=None, timeout=None,
    binary=None, extra_args=Vec::new(), env=None, started=false, normalizer_cwd=None,
    workspace=None, agent=None,
))]
#[allow(clippy::too_many_arguments)]
fn start_run(
    py: Python<'_>,
    backend_name: &str,
    prompt: String,
    cwd: Option<PathBuf>,
    model: Option<String>,
    permission_mode: Option<String>,
    timeout: Option<f64>,
    binary: Option<PathBuf>,
    extra_args: Vec<String>,
    env: Option<std::collections::BTreeMap<String, String>>,
    started: bool,
    normalizer_cwd: Option<String>,
    workspace: Option<String>,
    agent: Option<Vec<String>>,
) -> PyResult<Run> {
    let harness = backend(backend_name)?;
    let settings = LiveSettings {
        cwd,
        model,
        permission_mode,
        timeout,
        binary,
        extra_args,
        env,
        started,
        normalizer_cwd,
        workspace,
        agent,
    };
    let (request, stop) = settings.request(prompt)?;
    let runtime = runtime()?;
    let stream = py
        .detach(|| runtime.block_on(harness.run(request)))
        .map_err(|e| RunError::new_err(e.to_string()))?;
    Ok(Run {
        shared: Arc::new(Shared::new(stream, stop)),
    })
}

/// Why a session ended, as the Python package names it.
fn reason_name(reason: EndReason) -> String {
    match reason {
        EndReason::Caller => "caller".into(),
        EndReason::AgentExited => "agent_exited".into(),
        EndReason::TimedOut => "timed_out".into(),
        EndReason::Stopped => "stopped".into(),
        // A reason newer than this extension: its Rust name, so nothing is hidden.
        other => format!("{other:?}"),
    }
}

/// A session's item: an event, a turn's outcome, the end as `(reason, outcome)`, or `None`
/// after the end.
fn session_item_to_py<'py>(
    py: Python<'py>,
    item: Option<SessionItem>,
) -> PyResult<Bound<'py, PyAny>> {
    match item {
        Some(SessionItem::Event(event)) => event_to_py(py, &event),
        Some(SessionItem::TurnEnd(outcome)) => outcome_to_py(py, &outcome),
        Some(SessionItem::Ended(end)) => {
            let reason = PyString::new(py, &reason_name(end.reason)).into_any();
            let outcome = outcome_to_py(py, &end.outcome)?;
            Ok(PyTuple::new(py, [reason, outcome])?.into_any())
        }
        None => Ok(py.None().into_bound(py)),
    }
}

/// A live session (SPEC section 8): its items as they happen, and the caller's commands. A
/// command sent once the session has ended does nothing. Killing or dropping it stops the
/// agent at once.
#[pyclass(module = "harness_agents._native")]
struct Session {
    shared: Arc<Shared<harness_agents::session::Session>>,
    /// Kept apart from the stream, so a command never waits for a reader.
    handle: SessionHandle,
}

#[pymethods]
impl Session {
    /// Waits for the next item: an event, a turn's outcome, the end as `(reason, outcome)`;
    /// `None` after it. Python's signal handlers run while it waits.
    fn next<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        next_blocking(py, &self.shared, session_item_to_py)
    }

    /// Starts waiting for the next item on the runtime, as `Run.next_into` does.
    fn next_into(
        &self,
        event_loop: Py<PyAny>,
        future: Py<PyAny>,
        resolve: Py<PyAny>,
    ) -> PyResult<()> {
        next_resolving(
            Arc::clone(&self.shared),
            session_item_to_py,
            event_loop,
            future,
            resolve,
        )
    }

    /// Starts a turn with `text`, or queues it behind the running turn.
    fn prompt(&self, text: String) {
        // An ended session has no use for a command; its end is in the stream already.
        let _ = self.handle.prompt(text);
    }

    /// Stops the running turn through the agent's protocol; the turn ends `interrupted`.
    fn interrupt(&self) {
        let _ = self.handle.interrupt();
    }

    /// Answers permission request `id` with `decision` (`allow`, `allow_always`, `deny`).
    #[pyo3(signature = (id, decision, message=None))]
    fn answer(&self, id: String, decision: &str, message: Option<String>) -> PyResult<()> {
        let decision = Decision::from_name(decision).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown decision {decision:?}; one of \"allow\", \"allow_always\", \"deny\""
            ))
        })?;
        let _ = self.handle.answer(id, decision, message);
        Ok(())
    }

    /// Ends the session now: the running turn is interrupted, queued prompts are dropped, the
    /// agent is stopped (killed 5 seconds later if it has not ended); the rest of its items
    /// still come.
    fn close(&self) {
        let _ = self.handle.close();
    }

    /// The caller sends nothing more: the queued prompts run, then the session ends.
    fn end_input(&self) {
        let _ = self.handle.end_input();
    }

    /// Kills the agent's process group and ends the session's items at once; later calls to
    /// `next` give `None`.
    fn kill(&self) {
        self.shared.close();
    }

    /// The agent's own id for the session once it has named it (I8); `None` before.
    #[getter]
    fn session_id(&self) -> Option<String> {
        self.handle.session_id()
    }

    /// Waits for the agent to name its own id for the session (I8), at most `timeout` seconds
    /// when given, with the GIL released and Python's signal handlers run in between; `None`
    /// when the session ends without one or the time runs out.
    #[pyo3(signature = (timeout=None))]
    fn wait_session_id(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<String>> {
        let limit = seconds("timeout", timeout)?;
        let until = limit.map(|limit| std::time::Instant::now() + limit);
        let named = wait_in_slices(py, until, || self.handle.named_session_id())?;
        Ok(named.flatten())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.shared.close();
    }
}

/// Opens a session with `backend_name`'s agent; nothing is asked of it before a prompt.
#[pyfunction]
#[pyo3(signature = (
    backend_name, *, cwd=None, model=None, permission_mode=None, timeout=None,
    idle_timeout=None, resume=None, binary=None, extra_args=Vec::new(), env=None,
    started=false, normalizer_cwd=None, workspace=None, agent=None,
))]
#[allow(clippy::too_many_arguments)]
fn start_session(
    py: Python<'_>,
    backend_name: &str,
    cwd: Option<PathBuf>,
    model: Option<String>,
    permission_mode: Option<String>,
    timeout: Option<f64>,
    idle_timeout: Option<f64>,
    resume: Option<String>,
    binary: Option<PathBuf>,
    extra_args: Vec<String>,
    env: Option<std::collections::BTreeMap<String, String>>,
    started: bool,
    normalizer_cwd: Option<String>,
    workspace: Option<String>,
    agent: Option<Vec<String>>,
) -> PyResult<Session> {
    let harness = backend(backend_name)?;
    let settings = LiveSettings {
        cwd,
        model,
        permission_mode,
        timeout,
        binary,
        extra_args,
        env,
        started,
        normalizer_cwd,
        workspace,
        agent,
    };
    let (mut request, stop) = settings.request(String::new())?;
    request.idle_timeout = seconds("idle_timeout", idle_timeout)?;
    request.resume = resume;
    let runtime = runtime()?;
    let session = py
        .detach(|| runtime.block_on(harness.session(request)))
        .map_err(|e| RunError::new_err(e.to_string()))?;
    let handle = session.handle();
    Ok(Session {
        shared: Arc::new(Shared::new(session, stop)),
        handle,
    })
}

/// The module `harness_agents._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Normalizer>()?;
    m.add_class::<FileEvents>()?;
    m.add_class::<Run>()?;
    m.add_class::<Session>()?;
    m.add_function(wrap_pyfunction!(normalize_file, m)?)?;
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(start_run, m)?)?;
    m.add_function(wrap_pyfunction!(start_session, m)?)?;
    m.add("RunError", m.py().get_type::<RunError>())?;
    Ok(())
}
