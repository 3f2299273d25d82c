//! `harness acp`: any backend as an Agent Client Protocol agent (AA1-AA18 of
//! `docs/acp-agent.md`). JSON-RPC 2.0 on standard input and output, one message a line; each
//! ACP session is one of the backend's sessions (SPEC section 8) under the backend's own id
//! (AA3: opened at `session/new` and named by its agent, or given to Claude Code and opened at
//! the first prompt), its events sent as `session/update`s and its permission requests as
//! `session/request_permission`; a backend without sessions is refused (AA17).
//!
//! One task owns every session's state and reads four sources: the client's lines (read on a
//! task of their own), the items of every open backend session (each forwarded by a task of its
//! own, tagged with the session and the generation of its process), the backend sessions being
//! opened until their agent names its id (a request or a prompt waits for each), and the
//! deadline of a cancel the backend has not yet honoured. Nothing else blocks it, so a cancel is answered in
//! time whatever the backend does (AA14), and the end of input closes every session (AA16).

mod updates;

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use harness_agents_core::process::CLOSE_GRACE;
use harness_agents_core::session::{Session, SessionHandle, SessionItem};
use harness_agents_core::{Backend, Decision, Event, EventBody, RunRequest, Status};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::run::live_runtime;
use updates::{OUTCOME_KEY, Updates, outcome_value, stop_reason, usage};

/// How long `session/new`, `session/load` and `session/resume` wait for the backend's session
/// to open and name its id (AA3), when `--timeout` sets no bound.
pub const OPEN_LIMIT: Duration = Duration::from_secs(60);

/// How long a cancelled prompt waits for the backend's turn to end before it is answered
/// `cancelled` anyway and the backend's session is closed (AA14).
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// The permission modes a session offers (AA6): Claude Code's, which `--permission-mode`
/// translates for the other backends.
const MODES: [(&str, &str); 4] = [
    ("default", "Default: ask before acting"),
    ("acceptEdits", "Accept edits"),
    ("plan", "Plan: read only"),
    ("bypassPermissions", "Bypass permissions"),
];

/// JSON-RPC error codes (JSON-RPC 2.0, section 5.1).
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL_ERROR: i64 = -32603;

/// Serves ACP on standard input and output for `backend`, each session's request made from
/// `base`; returns when standard input ends and every session is closed.
/// A backend without sessions is refused with exit status 2 before anything is read (AA17).
pub fn run(backend: &dyn Backend, base: RunRequest) -> ExitCode {
    if !backend.has_sessions() {
        let registry = harness_agents::registry();
        let with: Vec<&str> = registry
            .names()
            .filter(|n| registry.get(n).is_some_and(|b| b.has_sessions()))
            .collect();
        eprintln!(
            "harness: the {name} backend has no sessions, and `harness acp` serves a backend's \
             sessions: use a backend that has them ({with}), or `harness run --backend {name}` \
             for one prompt",
            name = backend.name(),
            with = with.join(", ")
        );
        return ExitCode::from(2);
    }
    let runtime = match live_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(serve(backend, base));
    ExitCode::SUCCESS
}

/// What the owning task hears from the session forwarders.
type Item = (String, u64, Option<SessionItem>);

/// A backend session being opened for a client's request (AA3, AA4) or a prompt (AA6, AA14,
/// AA15): what it is for, and the session with the id its agent named, or why not.
type Opening<'a> = BoxFuture<'a, (Purpose, Result<(Session, String), NotOpened>)>;

/// Why a backend session is being opened.
struct Purpose {
    /// The client's request waiting for it: `session/new`, `session/load` or
    /// `session/resume`, or the prompt it opens for.
    request: Value,
    cwd: PathBuf,
    mode: String,
    /// The backend's session id it resumes, if any.
    resume: Option<String>,
    kind: Kind,
}

enum Kind {
    /// `session/new`: answered with the id the backend names.
    New,
    /// `session/load` (with what harness read of the stored session, to replay) or
    /// `session/resume` (no replay) of the client's id.
    Load {
        id: String,
        replay: Option<Vec<Event>>,
    },
    /// The next prompt of the session `id`, whose process had ended.
    Reopen { id: String, text: String },
}

/// Why a backend session did not open with a named id.
enum NotOpened {
    /// The backend's session ended before naming one: its agent refused to resume it, or died.
    Ended(String),
    /// It could not start, or named no id in time; nothing of it is left running.
    Failed(String),
}

/// Opens a session of `backend` for `request` and waits, at most `limit`, for the id its agent
/// names (I8). A session that ends first gives the last error it reported; one dropped here
/// (a timeout) takes its processes with it.
async fn open_named(
    backend: &dyn Backend,
    request: RunRequest,
    limit: Duration,
) -> Result<(Session, String), NotOpened> {
    let mut session = backend
        .session(request)
        .await
        .map_err(|e| NotOpened::Failed(e.to_string()))?;
    match tokio::time::timeout(limit, session.named_session_id()).await {
        Ok(Some(id)) => Ok((session, id)),
        Ok(None) => {
            // The session has ended: its items are all waiting, the last error says why.
            let mut why = None;
            while let Some(item) = session.next().await {
                if let SessionItem::Event(Event {
                    body: EventBody::Error { message },
                    ..
                }) = item
                {
                    why = Some(message);
                }
            }
            Err(NotOpened::Ended(why.unwrap_or_else(|| {
                format!(
                    "the {} backend's session ended before naming its id",
                    backend.name()
                )
            })))
        }
        Err(_) => {
            let seconds = limit.as_secs_f64();
            let unit = if seconds == 1.0 { "second" } else { "seconds" };
            Err(NotOpened::Failed(format!(
                "the {} backend did not name its session within {seconds} {unit}",
                backend.name(),
            )))
        }
    }
}

struct Live {
    handle: Control,
    generation: u64,
    mode: String,
}

/// How a turn is commanded: the backend session's handle, whose errors (a session already
/// gone) need no answer here, as the session's own end reports it.
struct Control(SessionHandle);

impl Control {
    fn interrupt(&mut self) {
        let _ = self.0.interrupt();
    }

    fn close(&mut self) {
        let _ = self.0.close();
    }

    /// Ends the backend's session once its turn is over.
    fn end_input(&self) {
        let _ = self.0.end_input();
    }

    fn answer(&self, id: String, decision: Decision) {
        let _ = self.0.answer(id, decision, None);
    }
}

struct Prompt {
    id: Value,
    cancelled: bool,
    deadline: Option<Instant>,
    error: Option<String>,
}

/// One ACP session.
struct Conv {
    cwd: PathBuf,
    mode: String,
    live: Option<Live>,
    /// The backend has stored the session: a new process resumes it.
    stored: bool,
    prompt: Option<Prompt>,
    updates: Updates,
    /// The backend's own session id, which a turn's outcome reports: a backend that takes no
    /// id up front resumes it when its process is opened again (AA15).
    backend_id: Option<String>,
}

/// A permission request sent to the client, waiting for its answer.
struct Asked {
    session: String,
    generation: u64,
    id: String,
    options: Vec<Decision>,
}

struct Agent<'a> {
    backend: &'a dyn Backend,
    base: RunRequest,
    out: mpsc::UnboundedSender<Value>,
    items: mpsc::UnboundedSender<Item>,
    sessions: HashMap<String, Conv>,
    /// Backend sessions to open, taken by the owning loop.
    opening: Vec<Opening<'a>>,
    asked: HashMap<u64, Asked>,
    next_request: u64,
    generation: u64,
    forwarders: usize,
}

async fn serve(backend: &dyn Backend, base: RunRequest) {
    let (out, mut written) = mpsc::unbounded_channel::<Value>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(message) = written.recv().await {
            let mut line = message.to_string().into_bytes();
            line.push(b'\n');
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                // The client is gone: the end of its input follows.
                break;
            }
        }
    });
    let (lines_tx, mut lines) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut input = BufReader::new(tokio::io::stdin());
        loop {
            let mut line = Vec::new();
            match input.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if lines_tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let (items_tx, mut items) = mpsc::unbounded_channel::<Item>();
    let mut agent = Agent {
        backend,
        base,
        out,
        items: items_tx,
        sessions: HashMap::new(),
        opening: Vec::new(),
        asked: HashMap::new(),
        next_request: 0,
        generation: 0,
        forwarders: 0,
    };
    let mut opens = FuturesUnordered::new();
    loop {
        opens.extend(agent.opening.drain(..));
        let deadline = agent.next_deadline();
        tokio::select! {
            line = lines.recv() => match line {
                Some(line) => agent.line(&line).await,
                None => break,
            },
            Some(item) = items.recv() => agent.item(item),
            Some((purpose, opened)) = opens.next(), if !opens.is_empty() => {
                agent.opened(purpose, opened);
            }
            () = sleep_until(deadline) => agent.deadlines(),
        }
    }
    // Sessions still opening are dropped with their processes: nobody waits for them.
    drop(opens);
    // AA16: the end of input ends every session; the owning task waits for their ends (each
    // bounded by the core's close grace), then exits.
    agent.close_all();
    let bound = Instant::now() + CLOSE_GRACE + Duration::from_secs(2);
    while agent.forwarders > 0 {
        tokio::select! {
            Some(item) = items.recv() => agent.item(item),
            () = tokio::time::sleep_until(bound) => break,
        }
    }
    drop(agent);
    let _ = writer.await;
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn error_value(code: i64, message: &str) -> Value {
    json!({ "code": code, "message": message })
}

/// A fresh version 4 UUID (Claude Code wants a UUID as its session id).
fn new_uuid() -> String {
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        // No random source: the clock and the process id still make a fresh id here.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        bytes = (now ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Why a request's params do not fit.
struct Invalid(String);

fn text_param(params: &Value, name: &str) -> Result<String, Invalid> {
    match params.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        Some(_) => Err(Invalid(format!("`{name}` must be a non-empty string"))),
        None => Err(Invalid(format!("`{name}` is missing"))),
    }
}

/// The prompt's text (AA5): text blocks as they are, a resource link as its URI, one block a
/// line.
fn prompt_text(params: &Value) -> Result<String, Invalid> {
    let Some(Value::Array(blocks)) = params.get("prompt") else {
        return Err(Invalid(
            "`prompt` must be an array of content blocks".into(),
        ));
    };
    let mut parts = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => match block.get("text").and_then(Value::as_str) {
                Some(text) => parts.push(text.to_string()),
                None => return Err(Invalid("a text block needs its `text`".into())),
            },
            Some("resource_link") => match block.get("uri").and_then(Value::as_str) {
                Some(uri) => parts.push(uri.to_string()),
                None => return Err(Invalid("a resource_link block needs its `uri`".into())),
            },
            Some(other) => {
                return Err(Invalid(format!(
                    "harness takes text and resource_link blocks, not `{other}`"
                )));
            }
            None => return Err(Invalid("a content block needs its `type`".into())),
        }
    }
    let text = parts.join("\n");
    if text.trim().is_empty() {
        return Err(Invalid("the prompt has no text".into()));
    }
    Ok(text)
}

impl<'a> Agent<'a> {
    fn send(&self, message: Value) {
        let _ = self.out.send(message);
    }

    fn result(&self, id: &Value, result: Value) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "result": result }));
    }

    fn error(&self, id: &Value, code: i64, message: &str) {
        self.send(json!({ "jsonrpc": "2.0", "id": id, "error": error_value(code, message) }));
    }

    fn notify_update(&self, session: &str, update: Value) {
        self.send(json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": { "sessionId": session, "update": update },
        }));
    }

    fn modes(&self, current: &str) -> Value {
        json!({
            "currentModeId": current,
            "availableModes": MODES
                .iter()
                .map(|(id, name)| json!({ "id": id, "name": name }))
                .collect::<Vec<_>>(),
        })
    }

    /// Whether the agent can continue a stored session under the id `session/new`
    /// answered (AA2): one that takes the id up front and can resume (Claude Code), and every
    /// backend that names its sessions itself, since `session/new` answers that name (AA3).
    fn resumes(&self) -> bool {
        !self.backend.takes_session_id()
            || self
                .backend
                .launch()
                .is_some_and(|l| l.resume_flag.is_some())
    }

    /// The request that opens the backend's session of an ACP session in `cwd` and `mode`
    /// (AA3): `harness acp`'s options, `started` events on (L1), no transcript (one file per
    /// process would be overwritten by the next).
    fn session_request(&self, cwd: &std::path::Path, mode: &str) -> RunRequest {
        let mut request = self.base.clone();
        request.cwd = Some(cwd.to_path_buf());
        request.permission_mode = Some(mode.to_string())
            .filter(|m| m != "default" || self.base.permission_mode.is_some());
        request.transcript = None;
        request.normalizer.started = true;
        request
    }

    /// Starts opening a backend session for `purpose`; [`Agent::opened`] takes it on, bounded
    /// by `--timeout`, else [`OPEN_LIMIT`].
    fn start(&mut self, purpose: Purpose) {
        let mut request = self.session_request(&purpose.cwd, &purpose.mode);
        request.resume = purpose.resume.clone();
        let backend = self.backend;
        let limit = self.base.timeout.unwrap_or(OPEN_LIMIT);
        self.opening.push(Box::pin(async move {
            let opened = open_named(backend, request, limit).await;
            (purpose, opened)
        }));
    }

    /// A backend session that is to carry the ACP session `key`: its items forwarded to the
    /// owning task, tagged with a generation of their own.
    fn install(&mut self, key: &str, mut opened: Session, mode: String) -> Live {
        let handle = opened.handle();
        self.generation += 1;
        let generation = self.generation;
        let items = self.items.clone();
        let tag = key.to_string();
        self.forwarders += 1;
        tokio::spawn(async move {
            while let Some(item) = opened.next().await {
                if items.send((tag.clone(), generation, Some(item))).is_err() {
                    return;
                }
            }
            let _ = items.send((tag, generation, None));
        });
        Live {
            handle: Control(handle),
            generation,
            mode,
        }
    }

    /// A backend session opened for `purpose`, or why not (AA3, AA4, AA6, AA14, AA15).
    fn opened(&mut self, purpose: Purpose, opened: Result<(Session, String), NotOpened>) {
        let fallback = self.falls_back(&purpose.kind);
        let Purpose {
            request,
            cwd,
            mode,
            resume,
            kind,
        } = purpose;
        let (session, named) = match opened {
            Ok(opened) => opened,
            // AA4: nothing the backend could resume under that id (minted and never
            // prompted, for a backend that stores a session at its first turn): it opens new.
            Err(NotOpened::Ended(_)) if resume.is_some() && fallback => {
                self.start(Purpose {
                    request,
                    cwd,
                    mode,
                    resume: None,
                    kind,
                });
                return;
            }
            Err(NotOpened::Ended(why) | NotOpened::Failed(why)) => {
                if let Kind::Reopen { id, .. } = &kind {
                    let Some(conv) = self.sessions.get_mut(id) else {
                        return;
                    };
                    if conv.prompt.as_ref().is_some_and(|p| p.id == request) {
                        conv.prompt = None;
                        self.error(&request, INTERNAL_ERROR, &why);
                    }
                    return;
                }
                self.error(&request, INTERNAL_ERROR, &why);
                return;
            }
        };
        let resumed = resume.as_deref() == Some(named.as_str());
        match kind {
            Kind::New => {
                let live = self.install(&named, session, mode.clone());
                let modes = self.modes(&mode);
                self.open(named.clone(), cwd, mode, false);
                if let Some(conv) = self.sessions.get_mut(&named) {
                    conv.live = Some(live);
                    conv.backend_id = Some(named.clone());
                }
                self.result(&request, json!({ "sessionId": named, "modes": modes }));
            }
            Kind::Load { id, replay } => {
                let live = self.install(&id, session, mode.clone());
                let modes = self.modes(&mode);
                self.open(id.clone(), cwd, mode, resumed);
                if let Some(conv) = self.sessions.get_mut(&id) {
                    conv.live = Some(live);
                    conv.backend_id = Some(named);
                }
                if let (true, Some(events)) = (resumed, replay) {
                    let mut updates = Updates::default();
                    for event in &events {
                        for update in updates.of(event) {
                            self.notify_update(&id, update);
                        }
                    }
                }
                self.result(&request, json!({ "modes": modes }));
            }
            Kind::Reopen { id, text } => {
                if !self.sessions.contains_key(&id) {
                    // The session is gone meanwhile: this process is not wanted.
                    drop(session);
                    return;
                }
                let live = self.install(&id, session, mode);
                let Some(conv) = self.sessions.get_mut(&id) else {
                    return;
                };
                conv.backend_id = Some(named);
                conv.stored |= resumed;
                let handle = live.handle.0.clone();
                conv.live = Some(live);
                // A prompt cancelled meanwhile was answered already: the session waits idle.
                let waiting = conv
                    .prompt
                    .as_ref()
                    .is_some_and(|p| p.id == request && !p.cancelled);
                if waiting && handle.prompt(text).is_err() {
                    conv.prompt = None;
                    conv.live = None;
                    self.error(&request, INTERNAL_ERROR, "the backend's session has ended");
                }
            }
        }
    }

    /// Whether a resume the backend refused opens a new session instead (AA4): for a
    /// `session/load` of an id harness found nothing stored for, and for a prompt's process
    /// whose session never ended a turn (nothing of it can be lost).
    fn falls_back(&self, kind: &Kind) -> bool {
        match kind {
            Kind::New => false,
            Kind::Load { replay, .. } => replay.is_none(),
            Kind::Reopen { id, .. } => self.sessions.get(id).is_some_and(|c| !c.stored),
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.sessions
            .values()
            .filter_map(|c| c.prompt.as_ref().and_then(|p| p.deadline))
            .min()
    }

    /// AA1: one line of the client.
    async fn line(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let Ok(message) = serde_json::from_str::<Value>(text) else {
            self.error(&Value::Null, PARSE_ERROR, "Parse error");
            return;
        };
        let Value::Object(object) = &message else {
            self.error(&Value::Null, INVALID_REQUEST, "Invalid Request");
            return;
        };
        let id = object.get("id").cloned();
        let id_ok = matches!(
            id,
            None | Some(Value::String(_)) | Some(Value::Number(_)) | Some(Value::Null)
        );
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") || !id_ok {
            let id = id.filter(|_| id_ok).unwrap_or(Value::Null);
            self.error(&id, INVALID_REQUEST, "Invalid Request");
            return;
        }
        let params = object.get("params").cloned().unwrap_or(Value::Null);
        match (object.get("method"), id) {
            (Some(Value::String(method)), Some(id)) => self.request(id, method, &params).await,
            (Some(Value::String(method)), None) => self.notification(method, &params),
            (Some(_), id) => self.error(
                &id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "Invalid Request",
            ),
            (None, Some(id)) => self.response(&id, object.get("result"), object.get("error")),
            (None, None) => self.error(&Value::Null, INVALID_REQUEST, "Invalid Request"),
        }
    }

    async fn request(&mut self, id: Value, method: &str, params: &Value) {
        let answer = match method {
            "initialize" => Ok(Some(self.initialize())),
            "authenticate" => Ok(Some(json!({}))),
            "session/new" => self.new_session(&id, params),
            "session/load" => self.load(&id, params, true),
            "session/resume" => self.load(&id, params, false),
            "session/set_mode" => self.set_mode(params).map(Some),
            "session/prompt" => match self.prompt(&id, params).await {
                // Answered when its turn ends.
                Ok(()) => return,
                Err(e) => Err(e),
            },
            _ => {
                self.error(&id, METHOD_NOT_FOUND, "Method not found");
                return;
            }
        };
        match answer {
            Ok(Some(result)) => self.result(&id, result),
            // Answered once the backend's session has opened (AA3, AA4).
            Ok(None) => {}
            Err(Invalid(message)) => self.error(&id, INVALID_PARAMS, &message),
        }
    }

    fn notification(&mut self, method: &str, params: &Value) {
        if method == "session/cancel" {
            if let Some(Value::String(session)) = params.get("sessionId") {
                self.cancel(&session.clone());
            }
        }
        // AA1: any other notification is ignored, as JSON-RPC has it.
    }

    /// AA2.
    fn initialize(&self) -> Value {
        let resumes = self.resumes();
        let mut capabilities = json!({
            "loadSession": resumes,
            "promptCapabilities": { "image": false, "audio": false, "embeddedContext": false },
        });
        if resumes {
            capabilities["sessionCapabilities"] = json!({ "resume": {} });
        }
        json!({
            "protocolVersion": 1,
            "agentCapabilities": capabilities,
            "authMethods": [],
            "agentInfo": { "name": "harness", "version": env!("CARGO_PKG_VERSION") },
        })
    }

    fn cwd(params: &Value) -> Result<PathBuf, Invalid> {
        let cwd = PathBuf::from(text_param(params, "cwd")?);
        if !cwd.is_absolute() {
            return Err(Invalid("`cwd` must be an absolute path".into()));
        }
        Ok(cwd)
    }

    fn initial_mode(&self) -> String {
        self.base
            .permission_mode
            .clone()
            .unwrap_or_else(|| "default".into())
    }

    /// AA3: a session whose id is the backend's own: chosen here when the backend takes one,
    /// else named by the backend's session, opened now (the answer waits for it).
    fn new_session(&mut self, request: &Value, params: &Value) -> Result<Option<Value>, Invalid> {
        let cwd = Self::cwd(params)?;
        let mode = self.initial_mode();
        if !self.backend.takes_session_id() {
            self.start(Purpose {
                request: request.clone(),
                cwd,
                mode,
                resume: None,
                kind: Kind::New,
            });
            return Ok(None);
        }
        let id = new_uuid();
        let modes = self.modes(&mode);
        self.open(id.clone(), cwd, mode, false);
        Ok(Some(json!({ "sessionId": id, "modes": modes })))
    }

    /// A session `id` on the connection; one it replaces (loaded twice at once, or a backend
    /// that named the same id again) has its process closed.
    fn open(&mut self, id: String, cwd: PathBuf, mode: String, stored: bool) {
        let old = self.sessions.insert(
            id,
            Conv {
                cwd,
                mode,
                live: None,
                stored,
                prompt: None,
                updates: Updates::default(),
                backend_id: None,
            },
        );
        if let Some(mut live) = old.and_then(|old| old.live) {
            live.handle.close();
        }
    }

    /// AA4: `session/load` replays what the backend stored, then the session goes on from it;
    /// `session/resume` goes on without the replay.
    fn load(
        &mut self,
        request: &Value,
        params: &Value,
        replay: bool,
    ) -> Result<Option<Value>, Invalid> {
        let id = text_param(params, "sessionId")?;
        let cwd = Self::cwd(params)?;
        if !self.resumes() {
            return Err(Invalid(format!(
                "the {} backend cannot load a session",
                self.backend.name()
            )));
        }
        if self.sessions.get(&id).is_some_and(|c| c.prompt.is_some()) {
            return Err(Invalid(format!("session {id} has a prompt running")));
        }
        if let Some(old) = self.sessions.remove(&id) {
            if let Some(mut live) = old.live {
                live.handle.close();
            }
        }
        let stored = stored_events(self.backend.name(), &id);
        let mode = self.initial_mode();
        if !self.backend.takes_session_id() {
            // The backend's session opens now, resuming the id; the answer (after the replay
            // of what harness read of it) waits until it has.
            let replay = match (replay, stored) {
                (true, Some(events)) => Some(events),
                (false, Some(_)) => Some(Vec::new()),
                (_, None) => None,
            };
            self.start(Purpose {
                request: request.clone(),
                cwd,
                mode,
                resume: Some(id.clone()),
                kind: Kind::Load { id, replay },
            });
            return Ok(None);
        }
        let modes = self.modes(&mode);
        let found = stored.is_some();
        if found || self.backend.takes_session_id() {
            self.open(id.clone(), cwd, mode, found);
        } else {
            return Err(Invalid(format!("no stored session {id}")));
        }
        if let (true, Some(events)) = (replay, stored) {
            let mut updates = Updates::default();
            for event in &events {
                for update in updates.of(event) {
                    self.notify_update(&id, update);
                }
            }
        }
        Ok(Some(json!({ "modes": modes })))
    }

    /// AA6: the mode a session's next turn runs in.
    fn set_mode(&mut self, params: &Value) -> Result<Value, Invalid> {
        let id = text_param(params, "sessionId")?;
        let mode = text_param(params, "modeId")?;
        if !MODES.iter().any(|(m, _)| *m == mode) {
            return Err(Invalid(format!("unknown mode `{mode}`")));
        }
        let Some(conv) = self.sessions.get_mut(&id) else {
            return Err(Invalid(format!("unknown session {id}")));
        };
        conv.mode = mode.clone();
        // A process in another mode ends now when idle, else after its turn.
        if conv.prompt.is_none() {
            if let Some(live) = conv.live.take() {
                live.handle.end_input();
            }
        }
        self.notify_update(
            &id,
            json!({ "sessionUpdate": "current_mode_update", "currentModeId": mode }),
        );
        Ok(json!({}))
    }

    /// AA5: a turn of the session's backend session, opened first when none is.
    async fn prompt(&mut self, id: &Value, params: &Value) -> Result<(), Invalid> {
        let session = text_param(params, "sessionId")?;
        let text = prompt_text(params)?;
        let Some(conv) = self.sessions.get(&session) else {
            return Err(Invalid(format!("unknown session {session}")));
        };
        if conv.prompt.is_some() {
            return Err(Invalid(format!(
                "session {session} is already running a prompt"
            )));
        }
        if conv.live.is_none() && !self.backend.takes_session_id() {
            // The backend names its sessions itself: a new process resumes the id it named
            // (AA6, AA14, AA15); the prompt goes out once it has opened.
            let purpose = Purpose {
                request: id.clone(),
                cwd: conv.cwd.clone(),
                mode: conv.mode.clone(),
                resume: conv.backend_id.clone(),
                kind: Kind::Reopen {
                    id: session.clone(),
                    text,
                },
            };
            self.start(purpose);
        } else if conv.live.is_none() {
            let mut request = self.session_request(&conv.cwd, &conv.mode);
            let mode = conv.mode.clone();
            if conv.stored {
                request.resume = Some(session.clone());
            } else {
                request.session_id = Some(session.clone());
            }
            let opened = match self.backend.session(request).await {
                Ok(opened) => opened,
                Err(e) => {
                    self.error(id, INTERNAL_ERROR, &e.to_string());
                    return Ok(());
                }
            };
            let live = self.install(&session, opened, mode);
            if live.handle.0.prompt(text).is_err() {
                self.error(id, INTERNAL_ERROR, "the backend's session has ended");
                return Ok(());
            }
            if let Some(conv) = self.sessions.get_mut(&session) {
                conv.live = Some(live);
            }
        } else if let Some(Control(handle)) = conv.live.as_ref().map(|l| &l.handle) {
            if handle.prompt(text).is_err() {
                if let Some(conv) = self.sessions.get_mut(&session) {
                    conv.live = None;
                }
                self.error(id, INTERNAL_ERROR, "the backend's session has ended");
                return Ok(());
            }
        }
        let Some(conv) = self.sessions.get_mut(&session) else {
            return Ok(());
        };
        conv.prompt = Some(Prompt {
            id: id.clone(),
            cancelled: false,
            deadline: None,
            error: None,
        });
        Ok(())
    }

    /// AA14: the running turn is interrupted; its prompt is answered `cancelled` when the turn
    /// ends, or after [`CANCEL_GRACE`] at the latest.
    fn cancel(&mut self, session: &str) {
        let Some(conv) = self.sessions.get_mut(session) else {
            return;
        };
        let Some(prompt) = &mut conv.prompt else {
            return;
        };
        if prompt.cancelled {
            return;
        }
        prompt.cancelled = true;
        prompt.deadline = Some(Instant::now() + CANCEL_GRACE);
        if let Some(live) = &mut conv.live {
            live.handle.interrupt();
        }
    }

    /// Prompts whose cancel the backend did not honour in time: answered `cancelled`, and the
    /// backend's session closed (the next prompt opens another).
    fn deadlines(&mut self) {
        let now = Instant::now();
        let mut late = Vec::new();
        for (id, conv) in &mut self.sessions {
            if conv
                .prompt
                .as_ref()
                .and_then(|p| p.deadline)
                .is_some_and(|d| d <= now)
            {
                if let Some(prompt) = conv.prompt.take() {
                    late.push(prompt.id);
                }
                if let Some(mut live) = conv.live.take() {
                    live.handle.close();
                }
                conv.updates.turn_ended();
                let _ = id;
            }
        }
        for id in late {
            self.result(&id, json!({ "stopReason": "cancelled" }));
        }
    }

    /// AA13: the client's answer to a permission request.
    fn response(&mut self, id: &Value, result: Option<&Value>, error: Option<&Value>) {
        let Some(Some(asked)) = id.as_u64().map(|n| self.asked.remove(&n)) else {
            return;
        };
        let decision = match (result, error) {
            (Some(result), None) => {
                let outcome = result.get("outcome");
                match outcome
                    .and_then(|o| o.get("outcome"))
                    .and_then(Value::as_str)
                {
                    Some("selected") => outcome
                        .and_then(|o| o.get("optionId"))
                        .and_then(Value::as_str)
                        .and_then(Decision::from_name)
                        .filter(|d| asked.options.contains(d))
                        .unwrap_or(Decision::Deny),
                    _ => Decision::Deny,
                }
            }
            _ => Decision::Deny,
        };
        let Some(conv) = self.sessions.get(&asked.session) else {
            return;
        };
        if let Some(live) = conv
            .live
            .as_ref()
            .filter(|l| l.generation == asked.generation)
        {
            live.handle.answer(asked.id, decision);
        }
    }

    /// One item of a backend session.
    fn item(&mut self, (session, generation, item): Item) {
        let Some(item) = item else {
            self.forwarders = self.forwarders.saturating_sub(1);
            return;
        };
        let Some(conv) = self.sessions.get_mut(&session) else {
            return;
        };
        if conv.live.as_ref().map(|l| l.generation) != Some(generation) {
            return;
        }
        match item {
            SessionItem::Event(event) => self.event(&session, generation, &event),
            SessionItem::TurnEnd(outcome) => {
                conv.stored = true;
                conv.updates.turn_ended();
                if let Some(update) = usage(&outcome) {
                    self.notify_update(&session, update);
                }
                let Some(conv) = self.sessions.get_mut(&session) else {
                    return;
                };
                if let Some(id) = &outcome.session_id {
                    conv.backend_id = Some(id.clone());
                }
                // A session in another mode ends now.
                if conv.live.as_ref().is_some_and(|l| l.mode != conv.mode) {
                    if let Some(live) = conv.live.take() {
                        live.handle.end_input();
                    }
                }
                let Some(prompt) = conv.prompt.take() else {
                    return;
                };
                let meta = json!({ OUTCOME_KEY: outcome_value(&outcome) });
                let reason = if prompt.cancelled {
                    Some("cancelled")
                } else {
                    stop_reason(outcome.status)
                };
                match reason {
                    Some(reason) => {
                        self.result(&prompt.id, json!({ "stopReason": reason, "_meta": meta }))
                    }
                    None => {
                        let message = prompt.error.unwrap_or_else(|| match outcome.status {
                            Status::Incomplete => "the turn ended without its result".into(),
                            _ => "the turn ended with an error".into(),
                        });
                        let mut error = error_value(INTERNAL_ERROR, &message);
                        error["data"] = meta;
                        self.send(json!({ "jsonrpc": "2.0", "id": prompt.id, "error": error }));
                    }
                }
            }
            SessionItem::Ended(_) => {
                conv.live = None;
                conv.updates.turn_ended();
                if let Some(prompt) = conv.prompt.take() {
                    let message = prompt
                        .error
                        .unwrap_or_else(|| "the backend's session has ended".into());
                    self.error(&prompt.id, INTERNAL_ERROR, &message);
                }
            }
        }
    }

    fn event(&mut self, session: &str, generation: u64, event: &Event) {
        let Some(conv) = self.sessions.get_mut(session) else {
            return;
        };
        match &event.body {
            EventBody::Permission { id, options, .. } => {
                let call = conv.updates.permission_call(event);
                let options: Vec<Value> = options
                    .iter()
                    .map(|d| {
                        let (name, kind) = match d {
                            Decision::Allow => ("Allow", "allow_once"),
                            Decision::AllowAlways => ("Always allow", "allow_always"),
                            Decision::Deny => ("Deny", "reject_once"),
                        };
                        json!({ "optionId": d.as_str(), "name": name, "kind": kind })
                    })
                    .collect();
                self.asked.insert(
                    self.next_request,
                    Asked {
                        session: session.to_string(),
                        generation,
                        id: id.clone(),
                        options: options_of(event),
                    },
                );
                self.send(json!({
                    "jsonrpc": "2.0",
                    "id": self.next_request,
                    "method": "session/request_permission",
                    "params": { "sessionId": session, "toolCall": call, "options": options },
                }));
                self.next_request += 1;
            }
            body => {
                // The last error of the turn says why it ended: after an agent's exit, the
                // error naming the exit follows what its output left (S9's).
                if let (EventBody::Error { message }, Some(prompt)) = (body, &mut conv.prompt) {
                    prompt.error = Some(message.clone());
                }
                for update in conv.updates.of(event) {
                    self.notify_update(session, update);
                }
            }
        }
    }

    /// AA16: every session closes; prompts still running are answered `cancelled`.
    fn close_all(&mut self) {
        let mut open = Vec::new();
        for conv in self.sessions.values_mut() {
            if let Some(prompt) = conv.prompt.take() {
                open.push(prompt.id);
            }
            if let Some(live) = &mut conv.live {
                live.handle.close();
            }
        }
        for id in open {
            self.result(&id, json!({ "stopReason": "cancelled" }));
        }
    }
}

fn options_of(event: &Event) -> Vec<Decision> {
    match &event.body {
        EventBody::Permission { options, .. } => options.clone(),
        _ => Vec::new(),
    }
}

/// The events of the stored session `id` of `backend` (AA4), when it can read that backend's
/// stored sessions and finds it.
fn stored_events(backend: &str, id: &str) -> Option<Vec<Event>> {
    use harness_agents::sessions::{self, Locations};
    let mut locations = Locations::from_env();
    locations.keep_only(&[backend]);
    let files = sessions::discover(&locations)
        .into_iter()
        .find(|f| f.backend == backend && f.id == id)?;
    let mut events = Vec::new();
    let decoded = sessions::events(&files, &mut |event| {
        if !matches!(event.body, EventBody::Started { .. }) {
            events.push(event);
        }
    });
    decoded.ok().map(|_| events)
}
