//! The scripted stand-in for the Anthropic Messages API that Claude Code talks to.
//!
//! Routes: `HEAD /` (the binary's reachability probe), `POST /v1/messages/count_tokens`,
//! `POST /v1/messages`, and a JSON 404 for anything else. A `/v1/messages` request that
//! carries `tools` is a turn of the conversation and takes the scenario's next [`Turn`]; one
//! without tools (a title, a summary, WebFetch's digest of a page) gets the scenario's side
//! answer. Streaming requests get the Messages API's server-sent events; the others one JSON
//! message.
//!
//! Every message reports 120 input and 30 output tokens, as the shared recordings do.

use std::collections::VecDeque;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::scenario::{Scenario, Turn};
use super::server::{Reply, Request};

/// The side answer when the scenario names none.
const SIDE_ANSWER: &str = "OK.";
/// The model named in answers when the request names none.
const MODEL: &str = "claude-opus-4-8";

/// The conversation state of one run.
pub struct Anthropic {
    turns: VecDeque<Turn>,
    side_answer: String,
    counter: u64,
    seed: u64,
    /// Requests with tools that came after the script ran out.
    pub overflow: usize,
}

impl Anthropic {
    /// A stand-in that plays `scenario`'s turns; `seed` varies the generated ids.
    pub fn new(scenario: &Scenario, seed: u64) -> Anthropic {
        Anthropic {
            turns: scenario.turns.iter().cloned().collect(),
            side_answer: scenario
                .side_answer
                .clone()
                .unwrap_or_else(|| SIDE_ANSWER.to_string()),
            counter: 0,
            seed,
            overflow: 0,
        }
    }

    /// Turns not yet played.
    pub fn remaining(&self) -> usize {
        self.turns.len()
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
            self.turns.pop_front().unwrap_or_else(|| {
                self.overflow += 1;
                text_turn("(the script has no more turns)")
            })
        } else {
            text_turn(&self.side_answer)
        };
        let mut reply = self.answer(&turn, &model, stream);
        let request_id = format!("req_mock_{}", self.hex(16));
        reply.headers.push(("request-id".into(), request_id));
        reply
    }

    /// The reply for one turn.
    pub fn answer(&mut self, turn: &Turn, model: &str, stream: bool) -> Reply {
        if let Some(error) = &turn.error {
            let mut reply = Reply::json(error.status, &error.body);
            reply
                .headers
                .extend(error.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
            return reply;
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
            Reply::sse(&events(turn, &id, model, &stop_reason))
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
        let mut api = Anthropic::new(&scenario(), 1);
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

        let (_, body) = send(port, "POST", "/v1/messages", tools);
        let events = data(&body);
        assert_eq!(events.last().unwrap()["type"], "error");
        assert!(body.contains("event: error"));
        server.stop();
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
