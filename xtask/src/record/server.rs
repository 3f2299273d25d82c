//! A loopback HTTP server for scripted API stand-ins, shared by every backend's stand-in.
//!
//! [`Server::start`] binds `127.0.0.1` (a free port, or a fixed one when a scenario needs the
//! port in its recorded text), and answers each request with whatever the [`Handler`] returns,
//! one request at a time on one thread. Bodies are written whole: a server-sent event stream is
//! just a [`Reply`] whose body holds every event, which the agents accept; a reply with
//! [`Reply::pauses`] is written in parts, each flushed, with a pause after each.
//!
//! The server never reaches beyond the loopback interface and always stops by itself: when the
//! [`Server`] is dropped or [`Server::stop`] is called, after [`MAX_REQUESTS`] requests, or
//! after [`IDLE_LIMIT`] without any request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};

/// The most requests one server answers before it stops (a runaway agent cannot loop forever).
pub const MAX_REQUESTS: usize = 2_000;
/// How long the server waits without any request before it stops.
pub const IDLE_LIMIT: Duration = Duration::from_secs(600);

/// One request as the handler sees it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `GET`, `HEAD`, `POST`, ...
    pub method: String,
    /// The path without the query string.
    pub path: String,
    /// The body as sent.
    pub body: Vec<u8>,
}

/// One answer: status, headers, body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The HTTP status code.
    pub status: u16,
    /// Headers beside `content-length`.
    pub headers: Vec<(String, String)>,
    /// The body, written whole.
    pub body: Vec<u8>,
    /// How long to wait before answering. A delayed answer is written from a thread of its
    /// own, so the requests that come meanwhile are answered first (a scenario orders two
    /// threads of a conversation this way).
    pub delay: Duration,
    /// Where the body's writing pauses, and how long: byte offsets in increasing order. Such a
    /// reply is written from a thread of its own, each part flushed before its pause (the
    /// agent acts on the part before the next arrives), and closes its connection.
    pub pauses: Vec<(usize, Duration)>,
}

impl Reply {
    /// A JSON answer.
    pub fn json(status: u16, value: &serde_json::Value) -> Reply {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: value.to_string().into_bytes(),
            delay: Duration::ZERO,
            pauses: Vec::new(),
        }
    }

    /// A server-sent event stream; `events` holds `(event name, data)` pairs.
    pub fn sse(events: &[(String, serde_json::Value)]) -> Reply {
        Reply::sse_paused(events, &[])
    }

    /// A server-sent event stream that pauses after each event `pauses` names by its index.
    pub fn sse_paused(
        events: &[(String, serde_json::Value)],
        pauses: &[(usize, Duration)],
    ) -> Reply {
        let mut body = String::new();
        let mut at = Vec::new();
        for (i, (name, data)) in events.iter().enumerate() {
            body.push_str("event: ");
            body.push_str(name);
            body.push_str("\ndata: ");
            body.push_str(&data.to_string());
            body.push_str("\n\n");
            at.extend(
                pauses
                    .iter()
                    .filter(|(n, _)| *n == i)
                    .map(|(_, d)| (body.len(), *d)),
            );
        }
        Reply {
            status: 200,
            headers: vec![
                ("content-type".into(), "text/event-stream".into()),
                ("cache-control".into(), "no-cache".into()),
            ],
            body: body.into_bytes(),
            delay: Duration::ZERO,
            pauses: at,
        }
    }

    /// The JSON 404 for any path the stand-in does not know.
    pub fn not_found(path: &str) -> Reply {
        Reply::json(
            404,
            &serde_json::json!({
                "type": "error",
                "error": {"type": "not_found_error", "message": format!("no route for {path}")}
            }),
        )
    }
}

/// Writes `reply` on a connection of its own: the status line, the headers, then the body in
/// the parts its pauses make, each flushed before its pause.
fn write_in_parts(mut out: Box<dyn std::io::Write + Send>, reply: &Reply) -> std::io::Result<()> {
    let body = &reply.body;
    let reason = tiny_http::StatusCode(reply.status).default_reason_phrase();
    let mut head = format!("HTTP/1.1 {} {reason}\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    ));
    out.write_all(head.as_bytes())?;
    let mut from = 0;
    for &(to, pause) in &reply.pauses {
        let to = to.clamp(from, body.len());
        out.write_all(&body[from..to])?;
        out.flush()?;
        std::thread::sleep(pause);
        from = to;
    }
    out.write_all(&body[from..])?;
    out.flush()
}

/// What answers the requests: called once per request, in arrival order.
pub type Handler = Box<dyn FnMut(&Request) -> Reply + Send>;

/// A running loopback server.
pub struct Server {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Binds `127.0.0.1:port` (`0` for a free port) and starts answering with `handler`.
    pub fn start(port: u16, mut handler: Handler) -> Result<Server> {
        let http = tiny_http::Server::http(("127.0.0.1", port))
            .map_err(|e| anyhow!("binding 127.0.0.1:{port}: {e}"))?;
        let port = http
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .context("the server has no IP address")?;
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (flag, seen) = (Arc::clone(&stop), Arc::clone(&log));
        let thread = std::thread::spawn(move || {
            let mut last = Instant::now();
            let mut served = 0;
            while !flag.load(Ordering::Relaxed)
                && served < MAX_REQUESTS
                && last.elapsed() < IDLE_LIMIT
            {
                let Ok(Some(mut incoming)) = http.recv_timeout(Duration::from_millis(50)) else {
                    continue;
                };
                served += 1;
                last = Instant::now();
                let mut request = Request {
                    method: incoming.method().as_str().to_ascii_uppercase(),
                    path: incoming.url().split('?').next().unwrap_or("").to_string(),
                    body: Vec::new(),
                };
                // A body we cannot read is answered as an empty one.
                let _ = incoming.as_reader().read_to_end(&mut request.body);
                let reply = handler(&request);
                if let Ok(mut log) = seen.lock() {
                    log.push(format!(
                        "{} {} -> {}",
                        request.method, request.path, reply.status
                    ));
                }
                // A client that hung up early is not our failure.
                if !reply.pauses.is_empty() {
                    std::thread::spawn(move || {
                        std::thread::sleep(reply.delay);
                        let _ = write_in_parts(incoming.into_writer(), &reply);
                    });
                    continue;
                }
                let delay = reply.delay;
                let mut response = tiny_http::Response::from_data(reply.body)
                    .with_status_code(tiny_http::StatusCode(reply.status));
                for (name, value) in &reply.headers {
                    if let Ok(header) =
                        tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes())
                    {
                        response.add_header(header);
                    }
                }
                if delay.is_zero() {
                    let _ = incoming.respond(response);
                } else {
                    std::thread::spawn(move || {
                        std::thread::sleep(delay);
                        let _ = incoming.respond(response);
                    });
                }
            }
        });
        Ok(Server {
            port,
            stop,
            thread: Some(thread),
            log,
        })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `METHOD PATH -> STATUS` for every request answered so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// Stops the server and waits for its thread.
    pub fn stop(mut self) -> Vec<String> {
        self.halt();
        self.log()
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.halt();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;

    /// Sends one HTTP/1.1 request to `127.0.0.1:port` and returns the status and the body.
    pub(crate) fn send(port: u16, method: &str, path: &str, body: &str) -> (u16, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
        (status, body.to_string())
    }

    #[test]
    fn answers_in_order_and_logs() {
        let mut n = 0;
        let server = Server::start(
            0,
            Box::new(move |req: &Request| {
                n += 1;
                Reply::json(
                    200,
                    &serde_json::json!({"n": n, "path": req.path, "len": req.body.len()}),
                )
            }),
        )
        .unwrap();
        let port = server.port();
        assert_ne!(port, 0);
        let (status, body) = send(port, "POST", "/a?x=1", "{}");
        assert_eq!(status, 200);
        assert_eq!(body, r#"{"len":2,"n":1,"path":"/a"}"#);
        let (_, body) = send(port, "GET", "/b", "");
        assert!(body.contains(r#""n":2"#));
        assert_eq!(server.stop(), ["POST /a -> 200", "GET /b -> 200"]);
    }

    #[test]
    fn a_delayed_answer_lets_later_requests_through_first() {
        let server = Server::start(
            0,
            Box::new(|req: &Request| {
                let mut reply = Reply::json(200, &serde_json::json!({"path": req.path}));
                if req.path == "/slow" {
                    reply.delay = Duration::from_millis(600);
                }
                reply
            }),
        )
        .unwrap();
        let port = server.port();
        let (tx, rx) = std::sync::mpsc::channel();
        let slow_tx = tx.clone();
        let slow = std::thread::spawn(move || {
            let answer = send(port, "GET", "/slow", "");
            slow_tx.send("slow").unwrap();
            answer
        });
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(send(port, "GET", "/fast", "").1, r#"{"path":"/fast"}"#);
        tx.send("fast").unwrap();
        assert_eq!(slow.join().unwrap().1, r#"{"path":"/slow"}"#);
        let order: Vec<&str> = rx.try_iter().collect();
        assert_eq!(order, ["fast", "slow"]);
    }

    #[test]
    fn a_paused_stream_arrives_whole_after_its_pauses() {
        let events = [
            ("a".to_string(), serde_json::json!({"n": 1})),
            ("b".to_string(), serde_json::json!({"n": 2})),
        ];
        let whole = Reply::sse(&events).body;
        let server = Server::start(
            0,
            Box::new(move |_: &Request| {
                Reply::sse_paused(&events, &[(0, Duration::from_millis(300))])
            }),
        )
        .unwrap();
        let started = Instant::now();
        let (status, body) = send(server.port(), "POST", "/", "");
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!((status, body.as_bytes()), (200, whole.as_slice()));
        let paused = Reply::sse_paused(
            &[("a".into(), serde_json::json!(1))],
            &[(0, Duration::ZERO)],
        );
        assert_eq!(paused.pauses, [(paused.body.len(), Duration::ZERO)]);
        server.stop();
    }

    #[test]
    fn sse_bodies_name_each_event() {
        let reply = Reply::sse(&[("ping".into(), serde_json::json!({"type": "ping"}))]);
        assert_eq!(reply.body, b"event: ping\ndata: {\"type\":\"ping\"}\n\n");
        assert_eq!(Reply::not_found("/x").status, 404);
    }
}
