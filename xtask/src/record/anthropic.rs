//! The scripted stand-in for the Anthropic Messages API that Claude Code talks to.
//!
//! Routes: `HEAD /` (the binary's reachability probe), `POST /v1/messages/count_tokens`,
//! `POST /v1/messages`, and a JSON 404 for anything else. A `/v1/messages` request that
//! carries `tools` is a turn of a conversation; one without tools (a title, a summary,
//! WebFetch's digest of a page) gets the scenario's side answer. Streaming requests get the
//! Messages API's server-sent events; the others one JSON message.
//!
//! The answer to a turn is chosen from the request alone, never from the order requests
//! arrive in ([`Script::key`]): the *thread* is the sub-agent whose key its first user message
//! contains (or the main thread), the *step* is the request's place in its conversation
//! ([`Steps`]: how many assistant messages it carries, for Claude Code; how many tool results,
//! for opencode), and the *attempt* counts the requests already answered at that thread and
//! step (a retry after an HTTP error repeats the same messages). A background sub-agent, or
//! two sub-agents at once, therefore get the same answers whichever asks first, and record
//! the same bytes.
//!
//! Every message reports 120 input and 30 output tokens, as the shared recordings do.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::scenario::{Scenario, Turn};
use super::server::{Reply, Request};

/// The side answer when the scenario names none.
const SIDE_ANSWER: &str = "OK.";
/// The model named in answers when the request names none.
const MODEL: &str = "claude-opus-4-8";

/// Where a turn belongs: thread (`None` for the main one, else the sub-agent's key), step,
/// attempt.
pub type Key = (Option<String>, usize, usize);

/// What a request's step counts: its place in its conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Steps {
    /// The assistant messages it carries (Claude Code keeps every one; a turn without a tool
    /// use still moves the next request on a step). A turn's step is by default one more than
    /// the turn before's, or the same after an HTTP error.
    #[default]
    AssistantMessages,
    /// The tool results it carries (opencode: its compaction replaces the conversation with a
    /// summary, an assistant message of its own, and drops the results). A turn's step is by
    /// default the turn before's plus that turn's tool uses, so a retry after an HTTP error
    /// and the first request after a compaction take the next turn at the same step.
    ToolResults,
}

/// Every scripted turn of a scenario, by [`Key`].
#[derive(Debug, Default)]
pub struct Script {
    turns: BTreeMap<Key, Turn>,
    agents: Vec<String>,
    steps: Steps,
    /// Requests answered so far, by thread and step.
    seen: BTreeMap<(Option<String>, usize), usize>,
}

impl Script {
    /// The turns of `scenario`, each at its key, steps counted as `steps` says.
    pub fn new(scenario: &Scenario, steps: Steps) -> Script {
        let mut script = Script {
            agents: scenario.agents.keys().cloned().collect(),
            steps,
            ..Script::default()
        };
        let threads = std::iter::once((None, &scenario.turns))
            .chain(scenario.agents.iter().map(|(k, t)| (Some(k.clone()), t)));
        for (thread, turns) in threads {
            let (mut step, mut advance) = (0, 0);
            let mut attempts: BTreeMap<usize, usize> = BTreeMap::new();
            for turn in turns {
                step = turn.step.unwrap_or(step + advance);
                advance = match steps {
                    _ if turn.error.is_some() => 0,
                    Steps::AssistantMessages => 1,
                    Steps::ToolResults => turn
                        .values()
                        .iter()
                        .filter(|b| b.get("type") == Some(&json!("tool_use")))
                        .count(),
                };
                let attempt = attempts.entry(step).or_default();
                script
                    .turns
                    .insert((thread.clone(), step, *attempt), turn.clone());
                *attempt += 1;
            }
        }
        script
    }

    /// The key of a request body: its thread, step and attempt. Counts the request.
    pub fn key(&mut self, body: &Value) -> Key {
        let messages = body
            .get("messages")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let first_user = messages
            .iter()
            .find(|m| m.get("role") == Some(&json!("user")))
            .map(message_text)
            .unwrap_or_default();
        // The longest key found wins, so one key may extend another.
        let thread = self
            .agents
            .iter()
            .filter(|k| first_user.contains(k.as_str()))
            .max_by_key(|k| k.len())
            .cloned();
        let step = match self.steps {
            Steps::AssistantMessages => messages
                .iter()
                .filter(|m| m.get("role") == Some(&json!("assistant")))
                .count(),
            Steps::ToolResults => messages
                .iter()
                .filter_map(|m| m.get("content").and_then(Value::as_array))
                .flatten()
                .filter(|b| b.get("type") == Some(&json!("tool_result")))
                .count(),
        };
        let seen = self.seen.entry((thread.clone(), step)).or_default();
        let attempt = *seen;
        *seen += 1;
        (thread, step, attempt)
    }

    /// Takes the turn of `key`, if the scenario has one.
    pub fn take(&mut self, key: &Key) -> Option<Turn> {
        self.turns.remove(key)
    }

    /// Turns not yet played, by key.
    pub fn left(&self) -> Vec<String> {
        self.turns.keys().map(show_key).collect()
    }
}

/// `main/2/0` or `agent "Read the README"/1/0`.
pub fn show_key((thread, step, attempt): &Key) -> String {
    match thread {
        None => format!("main/{step}/{attempt}"),
        Some(agent) => format!("agent {agent:?}/{step}/{attempt}"),
    }
}

/// The text of a message: its string content, or its text blocks joined.
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl super::shared::StandIn for Anthropic {
    fn handle(&mut self, request: &Request) -> Reply {
        Anthropic::handle(self, request)
    }

    /// The keys of the requests the script had no turn for and of the turns never played,
    /// each with every key asked, in arrival order.
    fn notes(&self, requests: &[String]) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.overflow.is_empty() {
            notes.push(format!(
                "no scripted turn for {}; turns asked: {}; requests: {}",
                self.overflow.join(", "),
                self.asked.join(", "),
                requests.join(", ")
            ));
        }
        let left = self.remaining();
        if !left.is_empty() {
            notes.push(format!(
                "scripted turn(s) never requested: {}; turns asked: {}",
                left.join(", "),
                self.asked.join(", ")
            ));
        }
        notes
    }
}

/// The conversation state of one run.
pub struct Anthropic {
    script: Script,
    side_answer: String,
    counter: u64,
    seed: u64,
    /// Requests with tools the script has no turn for, by key.
    pub overflow: Vec<String>,
    /// Every conversation request's key, in arrival order (for notes).
    pub asked: Vec<String>,
}

impl Anthropic {
    /// A stand-in that plays `scenario`'s turns, steps counted as `steps` says; `seed` varies
    /// the generated ids.
    pub fn new(scenario: &Scenario, steps: Steps, seed: u64) -> Anthropic {
        Anthropic {
            script: Script::new(scenario, steps),
            side_answer: scenario
                .side_answer
                .clone()
                .unwrap_or_else(|| SIDE_ANSWER.to_string()),
            counter: 0,
            seed,
            overflow: Vec::new(),
            asked: Vec::new(),
        }
    }

    /// Turns never played, by key.
    pub fn remaining(&self) -> Vec<String> {
        self.script.left()
    }

    /// A hex id of `len` digits, different for every call.
    fn hex(&mut self, len: usize) -> String {
        self.counter += 1;
        // splitmix64: cheap, well spread, no dependency.
        let mut out = String::new();
        let mut x = self.seed ^ self.counter.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        while out.len() < len {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            out.push_str(&format!("{z:016x}"));
        }
        out.truncate(len);
        out
    }

    /// Answers one request.
    pub fn handle(&mut self, request: &Request) -> Reply {
        match (request.method.as_str(), request.path.as_str()) {
            ("HEAD", "/") => Reply {
                status: 200,
                headers: Vec::new(),
                body: Vec::new(),
                delay: std::time::Duration::ZERO,
                pauses: Vec::new(),
            },
            ("POST", "/v1/messages/count_tokens") => {
                Reply::json(200, &json!({"input_tokens": 120}))
            }
            ("POST", "/v1/messages") => self.messages(request),
            _ => Reply::not_found(&request.path),
        }
    }

    fn messages(&mut self, request: &Request) -> Reply {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let has_tools = body
            .get("tools")
            .and_then(Value::as_array)
            .is_some_and(|t| !t.is_empty());
        let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(MODEL)
            .to_string();
        let turn = if has_tools {
            let key = self.script.key(&body);
            let shown = show_key(&key);
            self.asked.push(shown.clone());
            self.script.take(&key).unwrap_or_else(|| {
                self.overflow.push(shown);
                text_turn("(the script has no turn for this request)")
            })
        } else {
            text_turn(&self.side_answer)
        };
        let mut reply = self.answer(&turn, &model, stream);
        reply.delay = std::time::Duration::from_millis(turn.delay_ms.unwrap_or(0));
        let request_id = format!("req_mock_{}", self.hex(16));
        reply.headers.push(("request-id".into(), request_id));
        reply
    }

    /// The reply for one turn.
    pub fn answer(&mut self, turn: &Turn, model: &str, stream: bool) -> Reply {
        if let Some(error) = &turn.error {
            return error.reply();
        }
        let id = turn
            .id
            .clone()
            .unwrap_or_else(|| format!("msg_mock_{}", self.hex(20)));
        let blocks = turn.values();
        let stop_reason = turn.stop_reason.clone().unwrap_or_else(|| {
            let last = blocks.last().and_then(|b| b.get("type"));
            if last == Some(&json!("tool_use")) {
                "tool_use"
            } else {
                "end_turn"
            }
            .to_string()
        });
        let mut reply = if stream {
            let events = events(turn, &id, model, &stop_reason);
            // After each content block but the last: the agent holds the block before the next.
            let pause = std::time::Duration::from_millis(turn.pause_ms.unwrap_or(0));
            let stops: Vec<usize> = events
                .iter()
                .enumerate()
                .filter(|(_, (name, _))| name == "content_block_stop")
                .map(|(i, _)| i)
                .collect();
            let pauses: Vec<_> = match stops.split_last() {
                Some((_, before)) if !pause.is_zero() => {
                    before.iter().map(|&i| (i, pause)).collect()
                }
                _ => Vec::new(),
            };
            Reply::sse_paused(&events, &pauses)
        } else {
            let content: Vec<Value> = blocks.iter().map(without_chunks).collect();
            Reply::json(
                200,
                &json!({
                    "id": id, "type": "message", "role": "assistant", "model": model,
                    "content": content, "stop_reason": stop_reason, "stop_sequence": null,
                    "usage": {"input_tokens": 120, "output_tokens": 30,
                              "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
                }),
            )
        };
        reply
            .headers
            .extend(turn.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        reply
    }
}

/// A turn of one text block.
fn text_turn(text: &str) -> Turn {
    let block = json!({"type": "text", "text": text}).to_string();
    Turn {
        blocks: RawValue::from_string(block).into_iter().collect(),
        ..Turn::default()
    }
}

/// The `input` of a tool use block exactly as written in the scenario.
#[derive(serde::Deserialize)]
struct RawInput<'a> {
    #[serde(borrow)]
    input: Option<&'a RawValue>,
}

/// JSON text without the whitespace between tokens (key order kept, unlike a `Value`).
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if !c.is_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// A block as the API returns it whole (without our `chunks`).
fn without_chunks(block: &Value) -> Value {
    let mut block = block.clone();
    if let Some(map) = block.as_object_mut() {
        map.remove("chunks");
    }
    block
}

/// The delta pieces of a block: its `chunks`, or the whole `text` as one piece.
fn pieces(block: &Value, whole: String) -> Vec<String> {
    match block.get("chunks").and_then(Value::as_array) {
        Some(chunks) => chunks
            .iter()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect(),
        None => vec![whole],
    }
}

fn text_of(block: &Value, key: &str) -> String {
    block
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The server-sent events of one streamed message.
pub fn events(turn: &Turn, id: &str, model: &str, stop_reason: &str) -> Vec<(String, Value)> {
    let mut out = vec![(
        "message_start".to_string(),
        json!({"type": "message_start", "message": {
            "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 120, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
    )];
    let delta = |index: usize, delta: Value| {
        (
            "content_block_delta".to_string(),
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        )
    };
    for (index, (raw, block)) in turn.blocks.iter().zip(turn.values()).enumerate() {
        let block = &block;
        let kind = block.get("type").and_then(Value::as_str).unwrap_or("text");
        let (start, deltas): (Value, Vec<Value>) = match kind {
            "thinking" => {
                let mut deltas: Vec<Value> = pieces(block, text_of(block, "thinking"))
                    .into_iter()
                    .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                    .collect();
                deltas.push(
                    json!({"type": "signature_delta", "signature": text_of(block, "signature")}),
                );
                (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    deltas,
                )
            }
            "redacted_thinking" => (without_chunks(block), Vec::new()),
            "tool_use" => {
                let input = serde_json::from_str::<RawInput>(raw.get())
                    .ok()
                    .and_then(|r| r.input)
                    .map_or_else(|| "{}".to_string(), |i| compact(i.get()));
                let deltas = pieces(block, input)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect();
                (
                    json!({"type": "tool_use", "id": block.get("id"), "name": block.get("name"), "input": {}}),
                    deltas,
                )
            }
            _ => {
                let deltas = pieces(block, text_of(block, "text"))
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect();
                (json!({"type": "text", "text": ""}), deltas)
            }
        };
        out.push((
            "content_block_start".into(),
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        out.extend(deltas.into_iter().map(|d| delta(index, d)));
        out.push((
            "content_block_stop".into(),
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    if let Some(error) = &turn.stream_error {
        out.push(("error".into(), json!({"type": "error", "error": error})));
        return out;
    }
    out.push((
        "message_delta".into(),
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": 30}}),
    ));
    out.push(("message_stop".into(), json!({"type": "message_stop"})));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::server::{Server, tests::send};
    use super::*;

    fn scenario() -> Scenario {
        serde_json::from_str(&json!({
            "prompt": "hi", "args": [], "side_answer": "A title",
            "turns": [
                {"error": {"status": 529, "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}}},
                {"id": "msg_1", "blocks": [
                    {"type": "thinking", "thinking": "ab", "signature": "sig", "chunks": ["a", "b"]},
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "x"}}
                ]},
                {"blocks": [{"type": "text", "text": "partial"}], "stream_error": {"type": "overloaded_error", "message": "Overloaded"}}
            ]
        }).to_string())
        .unwrap()
    }

    fn data(body: &str) -> Vec<Value> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(|d| serde_json::from_str(d).unwrap())
            .collect()
    }

    #[test]
    fn plays_turns_over_loopback() {
        let mut api = Anthropic::new(&scenario(), Steps::AssistantMessages, 1);
        let server = Server::start(0, Box::new(move |r: &Request| api.handle(r))).unwrap();
        let port = server.port();
        let tools = r#"{"model":"m","stream":true,"tools":[{"name":"Read"}],"messages":[]}"#;

        assert_eq!(send(port, "HEAD", "/", "").0, 200);
        assert_eq!(send(port, "GET", "/v1/models", "").0, 404);
        let (status, body) = send(port, "POST", "/v1/messages/count_tokens", "{}");
        assert_eq!((status, body.as_str()), (200, r#"{"input_tokens":120}"#));

        let (status, body) = send(port, "POST", "/v1/messages", tools);
        assert_eq!(status, 529);
        assert!(body.contains("overloaded_error"));

        // A request without tools does not take a turn.
        let (_, body) = send(
            port,
            "POST",
            "/v1/messages",
            r#"{"stream":true,"messages":[]}"#,
        );
        assert!(body.contains(r#""text":"A title""#));

        let (status, body) = send(port, "POST", "/v1/messages", tools);
        assert_eq!(status, 200);
        let kinds: Vec<String> = data(&body)
            .iter()
            .map(|d| {
                let t = d["type"].as_str().unwrap();
                match d["delta"]["type"].as_str() {
                    Some(delta) => format!("{t}:{delta}"),
                    None => t.to_string(),
                }
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "message_start",
                "content_block_start",
                "content_block_delta:thinking_delta",
                "content_block_delta:thinking_delta",
                "content_block_delta:signature_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta:input_json_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        let events = data(&body);
        assert_eq!(events[0]["message"]["id"], "msg_1");
        assert_eq!(events[7]["delta"]["partial_json"], r#"{"file_path":"x"}"#);
        assert_eq!(events[9]["delta"]["stop_reason"], "tool_use");

        // The next step: the request carries the answer before.
        let after = r#"{"model":"m","stream":true,"tools":[{"name":"Read"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[]}]}"#;
        let (_, body) = send(port, "POST", "/v1/messages", after);
        let events = data(&body);
        assert_eq!(events.last().unwrap()["type"], "error");
        assert!(body.contains("event: error"));
        server.stop();
    }

    /// A request body of `thread`'s conversation (its first user text) after `answers`
    /// assistant messages.
    fn request(first_user: &str, answers: usize) -> Value {
        let mut messages = vec![json!({"role": "user", "content": [
            {"type": "text", "text": "<system-reminder>x</system-reminder>"},
            {"type": "text", "text": first_user}]})];
        for i in 0..answers {
            messages.push(
                json!({"role": "assistant", "content": [{"type": "text", "text": i.to_string()}]}),
            );
            messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]}));
        }
        json!({"tools": [{"name": "Read"}], "messages": messages})
    }

    fn text_of_turn(turn: &Turn) -> String {
        turn.values()[0]["text"].as_str().unwrap().to_string()
    }

    #[test]
    fn the_answer_depends_on_the_request_not_on_arrival_order() {
        let scenario: Scenario = serde_json::from_value(json!({
            "prompt": "main prompt", "args": [],
            "turns": [
                {"blocks": [{"type": "text", "text": "main 0"}]},
                {"error": {"status": 529, "body": {}}},
                {"blocks": [{"type": "text", "text": "main 1 retried"}]},
                {"blocks": [{"type": "text", "text": "main 2"}]}
            ],
            "agents": {
                "Read the README": [
                    {"blocks": [{"type": "text", "text": "agent 0"}]},
                    {"blocks": [{"type": "text", "text": "agent 1"}]}
                ],
                "Read the README twice": [{"blocks": [{"type": "text", "text": "longer key"}]}]
            }
        }))
        .unwrap();
        // Two arrival orders of the same requests give the same answer to each request.
        let requests = [
            request("main prompt", 0),
            request("Read the README", 0),
            request("main prompt", 1),
            request("Read the README", 1),
            request("main prompt", 1),
            request("Read the README twice", 0),
            request("main prompt", 2),
        ];
        let mut answers = Vec::new();
        for order in [[0, 1, 2, 3, 4, 5, 6], [1, 5, 3, 0, 2, 4, 6]] {
            let mut script = Script::new(&scenario, Steps::AssistantMessages);
            let mut by_request = vec![String::new(); requests.len()];
            for i in order {
                let key = script.key(&requests[i]);
                by_request[i] = match script.take(&key) {
                    Some(turn) if turn.error.is_some() => "error".to_string(),
                    Some(turn) => text_of_turn(&turn),
                    None => format!("none for {}", show_key(&key)),
                };
            }
            assert!(script.left().is_empty(), "{:?}", script.left());
            answers.push(by_request);
        }
        // Within one thread and step, retries keep their order (the second main/1 request is
        // the retry after the 529), which any order of the other requests leaves alone.
        assert_eq!(
            answers[0],
            [
                "main 0",
                "agent 0",
                "error",
                "agent 1",
                "main 1 retried",
                "longer key",
                "main 2"
            ]
        );
        assert_eq!(answers[0], answers[1]);
    }

    #[test]
    fn a_request_the_script_has_no_turn_for_is_counted() {
        let mut api = Anthropic::new(&scenario(), Steps::AssistantMessages, 1);
        let body = serde_json::to_vec(&request("hi", 5)).unwrap();
        let reply = api.handle(&Request {
            method: "POST".into(),
            path: "/v1/messages".into(),
            body,
        });
        assert_eq!(reply.status, 200);
        assert_eq!(api.overflow, ["main/5/0"]);
        assert_eq!(api.remaining(), ["main/0/0", "main/0/1", "main/1/0"]);
    }

    #[test]
    fn tool_input_keeps_the_scenario_key_order() {
        let turn: Turn = serde_json::from_str(
            r#"{"blocks": [{"type": "tool_use", "id": "t", "name": "StructuredOutput",
                "input": {"name": "demo a",  "count": 4}}]}"#,
        )
        .unwrap();
        let events = events(&turn, "m", "model", "tool_use");
        assert_eq!(
            events[2].1["delta"]["partial_json"],
            r#"{"name":"demo a","count":4}"#
        );
        assert_eq!(compact(r#"{ "a" : "x \" y" }"#), r#"{"a":"x \" y"}"#);
    }
}
