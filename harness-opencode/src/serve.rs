//! opencode's session transport (the PS rules of `docs/opencode.md`): one `opencode serve`
//! process per session, started by the core's driver; prompts, answers and aborts as HTTP
//! calls, and the server's `/event` stream (server-sent events) as the lines the normalizer
//! reads, through the driver's inbox ([`Conversation::inbox`]).
//!
//! The HTTP side runs on one task spawned when the session opens: it waits for the address
//! the server prints, creates the session (or finds the stored one), subscribes to `/event`
//! and only then makes the caller's calls, one at a time in the order the session asked for
//! them. A second task forwards the session's events. Either one that fails says so through
//! the inbox ([`Inbound::Failed`]), which ends the session.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use base64::Engine;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use harness_agents_core::Decision;
use harness_agents_core::process::{Conversation, Inbound, Reply};
use harness_agents_core::session::Withdrawal;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::server::session_of;

/// The line `opencode serve` prints once it listens, before its address (measured on 1.18.33:
/// `opencode server listening on http://127.0.0.1:4096`).
const LISTENING: &str = "opencode server listening on ";

/// How long the server may take to print its address (it took 1.3 to 2 s when measured).
pub(crate) const READY: Duration = Duration::from_secs(30);

/// How long one HTTP call may take (they all answer at once: `prompt_async` is 204 before the
/// model is called).
const CALL: Duration = Duration::from_secs(30);

/// How many events may wait for the driver before reading the stream pauses.
const INBOX: usize = 256;

/// The message of a denial nobody could answer (the session's input has ended): with a
/// message, opencode tells the model and its loop goes on.
const NO_CALLER: &str = "Nobody is left to answer this permission request (the session's input \
                         has ended), so it is denied.";

/// One HTTP call of the session, made in order by the client task.
#[derive(Debug)]
enum Call {
    /// `POST /session/:id/prompt_async`.
    Prompt(Value),
    /// `POST /permission/:id/reply`.
    Reply(String, Value),
    /// `POST /session/:id/abort`.
    Abort,
}

/// What a session asks of the server before its first call.
#[derive(Debug, Clone)]
pub(crate) struct Setup {
    /// The `Authorization` header: Basic, user `opencode`, the session's password.
    pub(crate) auth: String,
    /// The stored session to continue (I5), else a new one.
    pub(crate) resume: Option<String>,
    /// The body of `POST /session` (its permission ruleset).
    pub(crate) create: Value,
    /// Members every prompt's body carries besides its parts (`agent`, `model`).
    pub(crate) prompt: serde_json::Map<String, Value>,
    /// How long the server may take to print its address.
    pub(crate) ready: Duration,
}

/// One session's transport.
pub(crate) struct ServeSession {
    setup: Setup,
    /// Where the address goes once printed; taken then.
    address: Option<oneshot::Sender<String>>,
    address_rx: Option<oneshot::Receiver<String>>,
    calls: mpsc::UnboundedSender<Call>,
    calls_rx: Option<mpsc::UnboundedReceiver<Call>>,
    inbox: Option<mpsc::Receiver<Inbound>>,
    inbox_tx: Option<mpsc::Sender<Inbound>>,
    /// The session is closing: the end of the event stream is then expected, not a failure.
    closing: Arc<AtomicBool>,
    /// A turn is running (its prompt was sent, its `session.idle` has not come).
    running: bool,
    /// `session.idle` events still to come from an abort before the one that ends the turn.
    skip_idle: u32,
    /// An interrupt was sent during the running turn.
    aborting: bool,
    /// The permission requests asked and not yet answered by this side.
    asked: HashSet<String>,
    /// Requests withdrawn because their turn is being interrupted, rejected after the abort.
    after_abort: Vec<String>,
}

impl ServeSession {
    pub(crate) fn new(setup: Setup) -> Self {
        let (address, address_rx) = oneshot::channel();
        let (calls, calls_rx) = mpsc::unbounded_channel();
        let (inbox_tx, inbox) = mpsc::channel(INBOX);
        ServeSession {
            setup,
            address: Some(address),
            address_rx: Some(address_rx),
            calls,
            calls_rx: Some(calls_rx),
            inbox: Some(inbox),
            inbox_tx: Some(inbox_tx),
            closing: Arc::new(AtomicBool::new(false)),
            running: false,
            skip_idle: 0,
            aborting: false,
            asked: HashSet::new(),
            after_abort: Vec::new(),
        }
    }

    fn call(&self, call: Call) {
        // The client task has ended only when the session is ending: nothing to send then.
        let _ = self.calls.send(call);
    }

    fn reply(&mut self, id: &str, reply: &str, message: Option<&str>) {
        self.asked.remove(id);
        let mut body = json!({"reply": reply});
        if let Some(message) = message {
            body["message"] = json!(message);
        }
        self.call(Call::Reply(id.to_string(), body));
    }
}

/// The Basic credential of user `opencode` with `password`, as an `Authorization` value.
pub(crate) fn basic_auth(password: &str) -> String {
    let token = base64::engine::general_purpose::STANDARD.encode(format!("opencode:{password}"));
    format!("Basic {token}")
}

/// A random password for one server (hex of 32 bytes from the operating system).
pub(crate) fn password() -> Result<String, std::io::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Conversation for ServeSession {
    /// Nothing is asked of the agent before the first prompt (I1); the client task starts and
    /// waits for the server's address.
    fn open(&mut self) -> Reply {
        let (Some(address), Some(calls), Some(inbox)) = (
            self.address_rx.take(),
            self.calls_rx.take(),
            self.inbox_tx.take(),
        ) else {
            return Reply::default();
        };
        let client = Client {
            setup: self.setup.clone(),
            inbox,
            closing: Arc::clone(&self.closing),
        };
        tokio::spawn(client.run(address, calls));
        Reply::default()
    }

    fn inbox(&mut self) -> Option<mpsc::Receiver<Inbound>> {
        self.inbox.take()
    }

    /// A line of the server's standard output (its address, PS9) or an event of the session
    /// from the inbox (PS1-PS8), recorded for the normalizer.
    fn line(&mut self, line: &[u8]) -> Reply {
        let event = match serde_json::from_slice::<Value>(line) {
            Ok(event @ Value::Object(_)) => event,
            _ => {
                if let Some(address) = std::str::from_utf8(line)
                    .ok()
                    .and_then(|l| l.trim().strip_prefix(LISTENING))
                {
                    if let Some(tx) = self.address.take() {
                        let _ = tx.send(address.trim().to_string());
                        return Reply::default();
                    }
                }
                // Anything else the server prints is kept, so nothing is lost (S3).
                let mut reply = Reply::default();
                reply.record.push(line.to_vec());
                return reply;
            }
        };
        let mut reply = Reply::default();
        reply.record.push(line.to_vec());
        let props = event.get("properties");
        match event.get("type").and_then(Value::as_str) {
            Some("session.idle") => {
                if self.skip_idle > 0 {
                    self.skip_idle -= 1;
                } else if self.running {
                    self.running = false;
                    self.aborting = false;
                    reply.turn_ended = true;
                }
            }
            Some("session.error") => {
                let name = props.and_then(|p| p.pointer("/error/name"));
                if self.aborting && name.and_then(Value::as_str) == Some("MessageAbortedError") {
                    // An aborted running turn idles twice: once at the abort, once after its
                    // last events (the tool's end, the aborted message). The second ends it.
                    self.skip_idle += 1;
                    self.aborting = false;
                }
            }
            Some("permission.asked") => {
                if let Some(id) = props.and_then(|p| p.get("id")).and_then(Value::as_str) {
                    self.asked.insert(id.to_string());
                }
            }
            Some("permission.replied") => {
                // Answered by someone else (another client of the server): the request waits
                // no more.
                let id = props
                    .and_then(|p| p.get("requestID"))
                    .and_then(Value::as_str);
                if let Some(id) = id {
                    if self.asked.remove(id) {
                        reply.withdrawn.push(id.to_string());
                    }
                }
            }
            _ => {}
        }
        reply
    }

    /// A cut-short session is closed as `close` does it.
    fn stop(&mut self) -> (Reply, Duration) {
        self.close()
    }

    fn start_turn(&mut self, _turn: u32, text: &str) -> Reply {
        self.running = true;
        self.aborting = false;
        self.skip_idle = 0;
        let mut body = self.setup.prompt.clone();
        body.insert("parts".into(), json!([{"type": "text", "text": text}]));
        self.call(Call::Prompt(Value::Object(body)));
        Reply::default()
    }

    /// I4: `once`, `always`, `reject` (with the caller's message when given).
    fn answer(&mut self, id: &str, decision: Decision, message: Option<&str>) -> Reply {
        match decision {
            Decision::Allow => self.reply(id, "once", None),
            Decision::AllowAlways => self.reply(id, "always", None),
            Decision::Deny => self.reply(id, "reject", message),
        }
        Reply::default()
    }

    /// A request nobody answers is rejected: with a message when nobody is left to answer
    /// (the agent goes on), and plainly when its turn is being interrupted, after the abort
    /// (the interrupt that follows sends both): a request survives an abort, while a
    /// rejection sent first would end the turn by itself and the abort would then idle the
    /// session once more, after the turn's end.
    fn withdraw(&mut self, id: &str, why: Withdrawal) -> Reply {
        match why {
            Withdrawal::Interrupted => {
                self.asked.remove(id);
                self.after_abort.push(id.to_string());
            }
            Withdrawal::NoCaller => self.reply(id, "reject", Some(NO_CALLER)),
        }
        Reply::default()
    }

    /// `POST /session/:id/abort`, then the rejections of the requests it withdrew; the turn
    /// ends at the `session.idle` that follows its last events.
    fn interrupt(&mut self) -> Reply {
        if self.running {
            self.aborting = true;
        }
        self.call(Call::Abort);
        for id in std::mem::take(&mut self.after_abort) {
            self.reply(&id, "reject", None);
        }
        Reply::default()
    }

    /// The server does not end by itself (closing its input stops nothing), so it is killed
    /// at once, with every process of the session: a running command's process group of its
    /// own included (the core's `RunTree`).
    fn close(&mut self) -> (Reply, Duration) {
        self.closing.store(true, Ordering::SeqCst);
        (Reply::default(), Duration::ZERO)
    }
}

/// The session's HTTP side, on a task of its own.
struct Client {
    setup: Setup,
    inbox: mpsc::Sender<Inbound>,
    closing: Arc<AtomicBool>,
}

impl Client {
    async fn run(
        self,
        address: oneshot::Receiver<String>,
        mut calls: mpsc::UnboundedReceiver<Call>,
    ) {
        let Client {
            setup,
            inbox,
            closing,
        } = self;
        let address = match tokio::time::timeout(setup.ready, address).await {
            Ok(Ok(address)) => address,
            // The session ended before the server printed anything.
            Ok(Err(_)) => return,
            Err(_) => {
                let message = format!(
                    "opencode serve did not say where it listens within {} s; the session has ended",
                    setup.ready.as_secs_f64()
                );
                let _ = inbox.send(Inbound::Failed(message)).await;
                return;
            }
        };
        let http = match Http::new(&address, setup.auth.clone()) {
            Some(http) => http,
            None => {
                let message = format!(
                    "opencode serve printed an address that is not http://HOST:PORT: {address}"
                );
                let _ = inbox.send(Inbound::Failed(message)).await;
                return;
            }
        };
        let session = match open_session(&http, &setup).await {
            Ok(session) => session,
            Err(message) => {
                let _ = inbox.send(Inbound::Failed(message)).await;
                return;
            }
        };
        // PS16: the session's id is known from here on, before any turn.
        if inbox
            .send(Inbound::SessionId(session.clone()))
            .await
            .is_err()
        {
            return;
        }
        // Subscribed before the first prompt, so no event of the session is missed.
        let events = match http.send(Method::GET, "/event", None).await {
            Ok(response) if response.status() == StatusCode::OK => response,
            Ok(response) => {
                let message = format!(
                    "opencode serve answered {} to GET /event",
                    response.status()
                );
                let _ = inbox.send(Inbound::Failed(message)).await;
                return;
            }
            Err(message) => {
                let _ = inbox.send(Inbound::Failed(message)).await;
                return;
            }
        };
        let (connected_tx, connected) = oneshot::channel();
        let weak = inbox.downgrade();
        tokio::spawn(forward(
            events,
            session.clone(),
            inbox,
            connected_tx,
            http.clone(),
            closing.clone(),
        ));
        // The stream is live once its first frame (`server.connected`) is read.
        let _ = tokio::time::timeout(CALL, connected).await;
        let base = format!("/session/{session}");
        while let Some(call) = calls.recv().await {
            let (path, body, forgiving) = match call {
                Call::Prompt(body) => (format!("{base}/prompt_async"), Some(body), false),
                // A request already answered or gone is no failure of the session.
                Call::Reply(id, body) => (format!("/permission/{id}/reply"), Some(body), true),
                Call::Abort => (format!("{base}/abort"), None, false),
            };
            let failed = match http.call(Method::POST, &path, body.as_ref()).await {
                Ok((status, _)) if status.is_success() => None,
                Ok((StatusCode::NOT_FOUND, _)) if forgiving => None,
                Ok((status, body)) => Some(format!(
                    "opencode serve answered {status} to POST {path}: {}",
                    String::from_utf8_lossy(&body)
                )),
                Err(message) => Some(message),
            };
            // A call cut off because the session is closing (the server is killed at once,
            // an abort of the running turn may still be in flight) fails nothing.
            if closing.load(Ordering::SeqCst) {
                return;
            }
            if let (Some(message), Some(inbox)) = (failed, weak.upgrade()) {
                let _ = inbox.send(Inbound::Failed(message)).await;
                return;
            }
        }
    }
}

/// The session id: the stored one, checked (I5), or a new one.
async fn open_session(http: &Http, setup: &Setup) -> Result<String, String> {
    let (path, method, body) = match &setup.resume {
        Some(id) => (format!("/session/{id}"), Method::GET, None),
        None => ("/session".to_string(), Method::POST, Some(&setup.create)),
    };
    let (status, answer) = http.call(method.clone(), &path, body).await?;
    if status == StatusCode::NOT_FOUND {
        if let Some(id) = &setup.resume {
            return Err(format!("opencode has no stored session {id} to resume"));
        }
    }
    if !status.is_success() {
        return Err(format!(
            "opencode serve answered {status} to {method} {path}: {}",
            String::from_utf8_lossy(&answer)
        ));
    }
    let id = serde_json::from_slice::<Value>(&answer)
        .ok()
        .and_then(|s| s.get("id").and_then(Value::as_str).map(str::to_string));
    id.filter(|id| !id.is_empty() && !id.contains('/'))
        .ok_or_else(|| format!("opencode serve's answer to {method} {path} names no session id"))
}

/// Forwards the session's events to the driver (PS1: other sessions' and the server's own
/// events stay out of the transcript) until the stream ends. A stream that ends while the
/// server still answers is reconnected once (PS15), with what was lost meanwhile caught up;
/// a second end is a failure.
async fn forward(
    events: Response<Incoming>,
    session: String,
    inbox: mpsc::Sender<Inbound>,
    connected: oneshot::Sender<()>,
    http: Http,
    closing: Arc<AtomicBool>,
) {
    let mut feed = Feed {
        session,
        inbox,
        seen: HashSet::new(),
        caught: HashSet::new(),
        idle_sent: false,
    };
    let Some(why) = feed.pump(events, First::Connected(connected)).await else {
        return;
    };
    // A server that has died ends its stream too: the driver reports its exit then.
    if !feed.still_up(&http, &closing).await {
        return;
    }
    let events = match http.send(Method::GET, "/event", None).await {
        Ok(response) if response.status() == StatusCode::OK => response,
        Ok(response) => {
            let message = format!(
                "{why}, and opencode serve answered {} to GET /event again; the session has ended",
                response.status()
            );
            feed.fail(message, &closing).await;
            return;
        }
        Err(message) => {
            feed.fail(
                format!("{why}, and reconnecting failed: {message}"),
                &closing,
            )
            .await;
            return;
        }
    };
    let Some(why) = feed.pump(events, First::CatchUp(&http)).await else {
        return;
    };
    if feed.still_up(&http, &closing).await {
        let message = format!("{why} again while the server runs; the session has ended");
        feed.fail(message, &closing).await;
    }
}

/// What the first frame of a stream is awaited for.
enum First<'a> {
    /// The first stream: the client task waits for it before the first prompt.
    Connected(oneshot::Sender<()>),
    /// The stream that replaces a broken one: what was lost is caught up once it is live.
    CatchUp(&'a Http),
}

/// The session's side of the event stream, across one reconnection.
struct Feed {
    session: String,
    inbox: mpsc::Sender<Inbound>,
    /// Parts of the current turn forwarded whole (PS15), by id: the catch-up sends none of
    /// them again.
    seen: HashSet<String>,
    /// Parts the catch-up forwarded: the new stream sends none of them again.
    caught: HashSet<String>,
    /// The catch-up found the session idle and said so: the stream's own `session.idle` for
    /// the same end, if it comes before the session is busy again, is dropped.
    idle_sent: bool,
}

impl Feed {
    /// Forwards one stream's frames; `None` once the driver is gone, else why the stream
    /// ended.
    async fn pump(&mut self, events: Response<Incoming>, first: First<'_>) -> Option<String> {
        let mut first = Some(first);
        let mut stream = events.into_body().into_data_stream().eventsource();
        loop {
            match stream.next().await {
                Some(Ok(frame)) => {
                    match first.take() {
                        Some(First::Connected(tx)) => {
                            let _ = tx.send(());
                        }
                        Some(First::CatchUp(http)) => {
                            // Subscribed already, so nothing that follows is lost; what came
                            // between the two streams is read from the server's state.
                            if let Err(message) = self.catch_up(http).await {
                                let _ = self.inbox.send(Inbound::Failed(message)).await;
                                return None;
                            }
                        }
                        None => {}
                    }
                    let data = frame.data;
                    let keep = match serde_json::from_str::<Value>(&data) {
                        Ok(event) => self.keep(&event),
                        // Not an event at all: kept, so that the normalizer reports it (S3).
                        Err(_) => true,
                    };
                    if keep
                        && self
                            .inbox
                            .send(Inbound::Line(data.into_bytes()))
                            .await
                            .is_err()
                    {
                        return None;
                    }
                }
                Some(Err(e)) => return Some(format!("opencode's event stream broke: {e}")),
                None => return Some("opencode's event stream ended".to_string()),
            }
        }
    }

    /// Whether a frame of the stream goes to the driver (PS1, PS15).
    fn keep(&mut self, event: &Value) -> bool {
        if session_of(event) != Some(self.session.as_str()) {
            return false;
        }
        match event.get("type").and_then(Value::as_str) {
            Some("message.part.updated") => {
                let Some(id) = event.pointer("/properties/part").and_then(whole_part) else {
                    return true;
                };
                if self.caught.contains(id) {
                    return false;
                }
                self.seen.insert(id.to_string());
                true
            }
            Some("session.status") => {
                if event
                    .pointer("/properties/status/type")
                    .and_then(Value::as_str)
                    == Some("busy")
                {
                    self.idle_sent = false;
                }
                true
            }
            Some("message.updated") => {
                // A user message opens a turn: the catch-up reads only the parts after the
                // last one, so the ids kept so far are no longer needed.
                if event
                    .pointer("/properties/info/role")
                    .and_then(Value::as_str)
                    == Some("user")
                {
                    self.seen.clear();
                    self.caught.clear();
                }
                true
            }
            Some("session.idle") => !std::mem::take(&mut self.idle_sent),
            _ => true,
        }
    }

    /// PS15: the whole parts of the session's last turn (the messages after its last user
    /// message) not forwarded yet, then `session.idle` when the session is no longer busy.
    async fn catch_up(&mut self, http: &Http) -> Result<(), String> {
        let path = format!("/session/{}/message", self.session);
        let messages = get_json(http, &path).await?;
        let messages = messages.as_array().map(Vec::as_slice).unwrap_or_default();
        let user = |m: &Value| m.pointer("/info/role").and_then(Value::as_str) == Some("user");
        let start = messages.iter().rposition(user).map_or(0, |i| i + 1);
        let parts = messages[start..]
            .iter()
            .filter_map(|m| m.get("parts").and_then(Value::as_array))
            .flatten();
        let mut lines = Vec::new();
        for part in parts {
            let Some(id) = whole_part(part) else { continue };
            if self.seen.contains(id) {
                continue;
            }
            self.caught.insert(id.to_string());
            let event = json!({"type": "message.part.updated",
                "properties": {"sessionID": self.session, "part": part}});
            lines.push(event.to_string());
        }
        let status = get_json(http, "/session/status").await?;
        let busy = status
            .get(&self.session)
            .and_then(|s| s.get("type"))
            .and_then(Value::as_str)
            == Some("busy");
        if !busy {
            let event = json!({"type": "session.idle", "properties": {"sessionID": self.session}});
            lines.push(event.to_string());
            self.idle_sent = true;
        }
        for line in lines {
            let _ = self.inbox.send(Inbound::Line(line.into_bytes())).await;
        }
        Ok(())
    }

    /// Whether the stream's end is a fault: the session is not closing and the server
    /// still answers.
    async fn still_up(&self, http: &Http, closing: &AtomicBool) -> bool {
        if closing.load(Ordering::SeqCst) {
            return false;
        }
        let alive = http.call(Method::GET, "/global/health", None).await.is_ok();
        alive && !closing.load(Ordering::SeqCst)
    }

    async fn fail(&self, message: String, closing: &AtomicBool) {
        if !closing.load(Ordering::SeqCst) {
            let _ = self.inbox.send(Inbound::Failed(message)).await;
        }
    }
}

/// The id of a part that is whole (PS2, PS3: what a line of `opencode run` prints): a text
/// or reasoning part that has ended, a tool part that has finished, a step's start or end.
fn whole_part(part: &Value) -> Option<&str> {
    let whole = match part.get("type").and_then(Value::as_str)? {
        "text" | "reasoning" => part.pointer("/time/end").is_some(),
        "tool" => matches!(
            part.pointer("/state/status").and_then(Value::as_str),
            Some("completed" | "error")
        ),
        "step-start" | "step-finish" => true,
        _ => false,
    };
    if whole {
        part.get("id").and_then(Value::as_str)
    } else {
        None
    }
}

/// A `GET` whose answer must be a success with a JSON body.
async fn get_json(http: &Http, path: &str) -> Result<Value, String> {
    let (status, body) = http.call(Method::GET, path, None).await?;
    if !status.is_success() {
        return Err(format!(
            "opencode serve answered {status} to GET {path}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    serde_json::from_slice(&body)
        .map_err(|e| format!("opencode serve's answer to GET {path} is not JSON: {e}"))
}

/// HTTP/1.1 calls to the server: a connection per call (loopback, a handful of calls per
/// turn), so no pool is needed.
#[derive(Debug, Clone)]
struct Http {
    /// `host:port`.
    authority: String,
    auth: String,
}

impl Http {
    /// From the printed address `http://HOST:PORT` (any path after it is ignored).
    fn new(address: &str, auth: String) -> Option<Http> {
        let rest = address.strip_prefix("http://")?;
        let authority = rest.split('/').next()?;
        if authority.is_empty() || !authority.contains(':') {
            return None;
        }
        Some(Http {
            authority: authority.to_string(),
            auth,
        })
    }

    /// Sends a request and returns its response once its head is read.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Response<Incoming>, String> {
        let what = format!("{method} {path}");
        let fail = |e: &dyn std::fmt::Display| format!("opencode serve: {what} failed: {e}");
        let connect = tokio::net::TcpStream::connect(&self.authority);
        let stream = match tokio::time::timeout(CALL, connect).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return Err(fail(&e)),
            Err(_) => return Err(fail(&"no connection in time")),
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| fail(&e))?;
        tokio::spawn(async move {
            // Ends with the response's body, or when the server goes away.
            let _ = connection.await;
        });
        let bytes = body.map(|b| b.to_string()).unwrap_or_default();
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header(hyper::header::HOST, &self.authority)
            .header(hyper::header::AUTHORIZATION, &self.auth);
        if body.is_some() {
            request = request.header(hyper::header::CONTENT_TYPE, "application/json");
        }
        let request = request
            .body(Full::new(Bytes::from(bytes)))
            .map_err(|e| fail(&e))?;
        match tokio::time::timeout(CALL, sender.send_request(request)).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(e)) => Err(fail(&e)),
            Err(_) => Err(fail(&"no answer in time")),
        }
    }

    /// A call whose whole answer is read: its status and body.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<(StatusCode, Bytes), String> {
        let response = self.send(method.clone(), path, body).await?;
        let status = response.status();
        let collect = response.into_body().collect();
        match tokio::time::timeout(CALL, collect).await {
            Ok(Ok(body)) => Ok((status, body.to_bytes())),
            Ok(Err(e)) => Err(format!("opencode serve: {method} {path} failed: {e}")),
            Err(_) => Err(format!(
                "opencode serve: {method} {path}: no answer in time"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_is_basic_for_user_opencode() {
        assert_eq!(basic_auth("pw"), "Basic b3BlbmNvZGU6cHc=");
        let (a, b) = (password().unwrap(), password().unwrap());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }

    #[test]
    fn the_address_is_host_and_port() {
        let http = Http::new("http://127.0.0.1:4096", String::new()).unwrap();
        assert_eq!(http.authority, "127.0.0.1:4096");
        assert!(Http::new("https://127.0.0.1:4096", String::new()).is_none());
        assert!(Http::new("http://", String::new()).is_none());
    }
}
