//! The scripted stand-in for the OpenAI chat-completions API (Qwen Code, GitHub Copilot CLI).
//!
//! Routes: `POST .../chat/completions` (any prefix, so `/v1/chat/completions` and a base URL
//! without `/v1` both work) and a JSON 404 for anything else. The script is the scenario's
//! [`Turn`]s, written as Messages API blocks like every other scenario (`text`, `thinking`,
//! `tool_use`, each optionally with `chunks`), and chosen from the request alone by the
//! Anthropic stand-in's [`Script`]: a request's step is the number of `assistant` messages it
//! carries, which the chat format counts the same way.
//!
//! A turn is streamed as `chat.completion.chunk` lines (`data: {...}`, no `event:` lines): a
//! `thinking` block as `delta.reasoning_content` pieces, a `text` block as `delta.content`
//! pieces, each `tool_use` block as `delta.tool_calls` entries (the first carries `id`, `type`
//! and the name, the later ones only argument pieces: the block's `chunks`, or its `arguments`
//! string, or its `input` as compact JSON, whole). Then a chunk with the `finish_reason`
//! (`tool_calls`, `stop`, `length` from the turn's `stop_reason`), the usage chunk when the
//! request asks for it (`stream_options.include_usage`), and `data: [DONE]`. A turn with
//! `stream_error` ends with a `data: {"error": ...}` line instead; a turn with `error` is that
//! HTTP error. A request with `stream: false` gets one `chat.completion` object.
//!
//! Side requests take no turn and get the scenario's side answer: requests without tools, and
//! requests recognised by their text ([`SIDE_MARKERS`] in the system message or the last user
//! message), which is steadier than counting requests: how many an agent sends beside the
//! conversation varies with its settings and version.
//!
//! Every answer reports 120 prompt and 30 completion tokens.

use serde_json::{Value, json};

use super::anthropic::{Script, Steps, show_key};
use super::scenario::{Scenario, Turn};
use super::server::{Reply, Request};

/// The side answer when the scenario names none.
const SIDE_ANSWER: &str = "OK.";
/// The model named in answers when the request names none.
const MODEL: &str = "mock-model";
/// Texts that mark a request beside the conversation, found in its system message or its last
/// user message: Qwen Code's managed-memory extraction (which carries tools of its own) and
/// its follow-up suggestion request (ACP).
pub const SIDE_MARKERS: &[&str] = &[
    "You are now acting as the managed memory extraction subagent",
    "[SUGGESTION MODE:",
];

/// The conversation state of one run.
pub struct Chat {
    script: Script,
    side_answer: String,
    counter: u64,
    /// Requests with tools the script has no turn for, by key.
    pub overflow: Vec<String>,
    /// Every conversation request's key, in arrival order (for notes).
    pub asked: Vec<String>,
    /// How many side requests were answered.
    pub sides: usize,
}

impl super::shared::StandIn for Chat {
    fn handle(&mut self, request: &Request) -> Reply {
        Chat::handle(self, request)
    }

    /// The keys of the requests the script had no turn for and of the turns never played.
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

impl Chat {
    /// A stand-in that plays `scenario`'s turns.
    pub fn new(scenario: &Scenario) -> Chat {
        Chat {
            script: Script::new(scenario, Steps::AssistantMessages),
            side_answer: scenario
                .side_answer
                .clone()
                .unwrap_or_else(|| SIDE_ANSWER.to_string()),
            counter: 0,
            overflow: Vec::new(),
            asked: Vec::new(),
            sides: 0,
        }
    }

    /// Turns never played, by key.
    pub fn remaining(&self) -> Vec<String> {
        self.script.left()
    }

    /// Answers one request.
    pub fn handle(&mut self, request: &Request) -> Reply {
        if request.method != "POST" || !request.path.ends_with("/chat/completions") {
            return Reply::not_found(&request.path);
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(MODEL)
            .to_string();
        let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let usage = body
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let turn = if is_side(&body) {
            self.sides += 1;
            text_turn(&self.side_answer)
        } else {
            let key = self.script.key(&body);
            let shown = show_key(&key);
            self.asked.push(shown.clone());
            self.script.take(&key).unwrap_or_else(|| {
                self.overflow.push(shown);
                text_turn("(the script has no turn for this request)")
            })
        };
        self.counter += 1;
        let mut reply = match &turn.error {
            Some(error) => error.reply(),
            None => {
                let id = turn
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("chatcmpl-mock-{}", self.counter));
                if stream {
                    sse(&chunks(&turn, &id, &model, usage), turn.pause_ms)
                } else {
                    Reply::json(200, &whole(&turn, &id, &model))
                }
            }
        };
        reply
            .headers
            .extend(turn.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        reply
            .headers
            .push(("x-request-id".into(), format!("req_mock_{}", self.counter)));
        reply.delay = std::time::Duration::from_millis(turn.delay_ms.unwrap_or(0));
        reply
    }
}

/// Whether a request is beside the conversation: it has no tools, or its system message or
/// last user message holds one of [`SIDE_MARKERS`].
pub fn is_side(body: &Value) -> bool {
    let no_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let role = |m: &&Value, r: &str| m.get("role").and_then(Value::as_str) == Some(r);
    let texts = [
        messages.iter().find(|m| role(m, "system")),
        messages.iter().rev().find(|m| role(m, "user")),
    ];
    no_tools
        || texts.into_iter().flatten().any(|m| {
            let text = message_text(m);
            SIDE_MARKERS.iter().any(|marker| text.contains(marker))
        })
}

/// The text of a chat message: its string content, or its text parts joined.
fn message_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A turn of one text block.
fn text_turn(text: &str) -> Turn {
    let block = json!({"type": "text", "text": text}).to_string();
    Turn {
        blocks: serde_json::value::RawValue::from_string(block)
            .into_iter()
            .collect(),
        ..Turn::default()
    }
}

/// The chat `finish_reason` of a turn: its `stop_reason` translated, or `tool_calls` when it
/// has a tool use, else `stop`.
fn finish_reason(turn: &Turn, blocks: &[Value]) -> String {
    match turn.stop_reason.as_deref() {
        Some("tool_use") => "tool_calls".into(),
        Some("end_turn") => "stop".into(),
        Some("max_tokens") => "length".into(),
        Some(other) => other.into(),
        None if blocks.iter().any(|b| kind(b) == "tool_use") => "tool_calls".into(),
        None => "stop".into(),
    }
}

fn kind(block: &Value) -> &str {
    block.get("type").and_then(Value::as_str).unwrap_or("text")
}

fn text_of<'a>(block: &'a Value, key: &str) -> &'a str {
    block.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A tool use's arguments string: its `arguments` as written, or its `input` as JSON.
fn arguments(block: &Value) -> String {
    match block.get("arguments").and_then(Value::as_str) {
        Some(text) => text.to_string(),
        None => block
            .get("input")
            .map_or_else(|| "{}".to_string(), Value::to_string),
    }
}

/// The delta pieces of a block: its `chunks`, or `whole` as one piece.
fn pieces(block: &Value, whole: String) -> Vec<String> {
    match block.get("chunks").and_then(Value::as_array) {
        Some(chunks) => chunks
            .iter()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect(),
        None => vec![whole],
    }
}

fn usage() -> Value {
    json!({"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
           "prompt_tokens_details": {"cached_tokens": 0}})
}

/// The `data:` payloads of one streamed turn, grouped by block (a pause may follow each
/// group), the last group holding the finish, usage and `[DONE]` lines.
pub fn chunks(turn: &Turn, id: &str, model: &str, with_usage: bool) -> Vec<Vec<String>> {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    };
    let blocks = turn.values();
    let mut groups = Vec::new();
    let mut first = true;
    let mut tool_index = 0;
    for block in &blocks {
        let mut group = Vec::new();
        let mut push = |mut delta: Value| {
            if first && let Some(map) = delta.as_object_mut() {
                map.insert("role".into(), json!("assistant"));
            }
            first = false;
            group.push(chunk(delta, Value::Null));
        };
        match kind(block) {
            "thinking" => {
                for piece in pieces(block, text_of(block, "thinking").to_string()) {
                    push(json!({"reasoning_content": piece}));
                }
            }
            "redacted_thinking" => {}
            "tool_use" => {
                for (n, piece) in pieces(block, arguments(block)).into_iter().enumerate() {
                    push(if n == 0 {
                        json!({"tool_calls": [{"index": tool_index, "id": block.get("id"),
                               "type": "function",
                               "function": {"name": block.get("name"), "arguments": piece}}]})
                    } else {
                        json!({"tool_calls": [{"index": tool_index,
                               "function": {"arguments": piece}}]})
                    });
                }
                tool_index += 1;
            }
            _ => {
                for piece in pieces(block, text_of(block, "text").to_string()) {
                    push(json!({"content": piece}));
                }
            }
        }
        groups.push(group);
    }
    let mut end = Vec::new();
    if let Some(error) = &turn.stream_error {
        end.push(json!({"error": error}).to_string());
        groups.push(end);
        return groups;
    }
    end.push(chunk(json!({}), json!(finish_reason(turn, &blocks))));
    if with_usage {
        end.push(
            json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
                   "model": model, "choices": [], "usage": usage()})
            .to_string(),
        );
    }
    end.push("[DONE]".into());
    groups.push(end);
    groups
}

/// The event stream of `groups`, pausing `pause_ms` after each group but the last two (the
/// last block and the end arrive together).
fn sse(groups: &[Vec<String>], pause_ms: Option<u64>) -> Reply {
    let pause = std::time::Duration::from_millis(pause_ms.unwrap_or(0));
    let mut body = String::new();
    let mut pauses = Vec::new();
    for (n, group) in groups.iter().enumerate() {
        for data in group {
            body.push_str("data: ");
            body.push_str(data);
            body.push_str("\n\n");
        }
        if !pause.is_zero() && n + 2 < groups.len() {
            pauses.push((body.len(), pause));
        }
    }
    Reply {
        status: 200,
        headers: vec![
            ("content-type".into(), "text/event-stream".into()),
            ("cache-control".into(), "no-cache".into()),
        ],
        body: body.into_bytes(),
        delay: std::time::Duration::ZERO,
        pauses,
    }
}

/// One `chat.completion` object for a request without streaming.
fn whole(turn: &Turn, id: &str, model: &str) -> Value {
    let blocks = turn.values();
    let join = |k: &str, field: &str| {
        let text: String = blocks
            .iter()
            .filter(|b| kind(b) == k)
            .map(|b| text_of(b, field))
            .collect();
        if text.is_empty() {
            Value::Null
        } else {
            json!(text)
        }
    };
    let calls: Vec<Value> = blocks
        .iter()
        .filter(|b| kind(b) == "tool_use")
        .map(|b| {
            json!({"id": b.get("id"), "type": "function",
                   "function": {"name": b.get("name"), "arguments": arguments(b)}})
        })
        .collect();
    let mut message = json!({"role": "assistant", "content": join("text", "text")});
    if let Value::String(_) = join("thinking", "thinking") {
        message["reasoning_content"] = join("thinking", "thinking");
    }
    if !calls.is_empty() {
        message["tool_calls"] = json!(calls);
    }
    json!({"id": id, "object": "chat.completion", "created": 1_700_000_000, "model": model,
           "choices": [{"index": 0, "message": message,
                        "finish_reason": finish_reason(turn, &blocks)}],
           "usage": usage()})
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::server::{Server, tests::send};
    use super::*;

    fn scenario() -> Scenario {
        serde_json::from_str(
            &json!({
                "prompt": "hi", "args": [], "side_answer": "Nothing to keep.",
                "turns": [
                    {"error": {"status": 500, "body": {"error": {"message": "boom"}}}},
                    {"blocks": [
                        {"type": "thinking", "thinking": "ab", "chunks": ["a", "b"]},
                        {"type": "text", "text": "Reading."},
                        {"type": "tool_use", "id": "call_1", "name": "read_file",
                         "input": {"file_path": "/x"}, "chunks": ["{\"file_pa", "th\":\"/x\"}"]}
                    ]},
                    {"blocks": [{"type": "text", "text": "partial"}],
                     "stream_error": {"message": "cut"}}
                ]
            })
            .to_string(),
        )
        .unwrap()
    }

    fn data(body: &str) -> Vec<String> {
        body.lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn plays_chunks_errors_and_side_requests_over_loopback() {
        let mut api = Chat::new(&scenario());
        let server = Server::start(0, Box::new(move |r: &Request| api.handle(r))).unwrap();
        let port = server.port();
        let path = "/v1/chat/completions";
        let ask = |assistants: usize| {
            let mut messages = vec![json!({"role": "system", "content": "You are an agent."})];
            messages.extend((0..assistants).map(|_| json!({"role": "assistant", "content": "x"})));
            json!({"model": "m", "stream": true, "stream_options": {"include_usage": true},
                   "tools": [{"type": "function"}], "messages": messages})
            .to_string()
        };
        assert_eq!(send(port, "POST", "/v1/responses", "{}").0, 404);
        let (status, body) = send(port, "POST", path, &ask(0));
        assert_eq!(
            (status, body.as_str()),
            (500, r#"{"error":{"message":"boom"}}"#)
        );

        // The memory extraction carries tools but is recognised by its system prompt.
        let side = json!({"stream": true, "tools": [{"type": "function"}], "messages": [
            {"role": "system", "content": "You are now acting as the managed memory extraction subagent."},
            {"role": "user", "content": [{"type": "text", "text": "go"}]}]});
        let (_, body) = send(port, "POST", path, &side.to_string());
        assert!(body.contains(r#""content":"Nothing to keep.""#));
        assert!(!body.contains("usage"), "no usage chunk unless asked for");

        let (status, body) = send(port, "POST", path, &ask(0));
        assert_eq!(status, 200);
        let lines = data(&body);
        let deltas: Vec<String> = lines
            .iter()
            .filter(|l| *l != "[DONE]")
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                match v["choices"].get(0) {
                    Some(c) => format!("{}|{}", c["delta"], c["finish_reason"]),
                    None => format!("usage {}", v["usage"]["total_tokens"]),
                }
            })
            .collect();
        assert_eq!(
            deltas,
            [
                r#"{"reasoning_content":"a","role":"assistant"}|null"#,
                r#"{"reasoning_content":"b"}|null"#,
                r#"{"content":"Reading."}|null"#,
                r#"{"tool_calls":[{"function":{"arguments":"{\"file_pa","name":"read_file"},"id":"call_1","index":0,"type":"function"}]}|null"#,
                r#"{"tool_calls":[{"function":{"arguments":"th\":\"/x\"}"},"index":0}]}|null"#,
                r#"{}|"tool_calls""#,
                "usage 150",
            ]
        );
        assert_eq!(lines.last().unwrap(), "[DONE]");

        let (_, body) = send(port, "POST", path, &ask(1));
        assert_eq!(
            data(&body).last().unwrap(),
            r#"{"error":{"message":"cut"}}"#
        );
        server.stop();
    }

    #[test]
    fn answers_whole_without_streaming() {
        let turn: Turn = serde_json::from_str(
            &json!({"blocks": [
                {"type": "text", "text": "Hi."},
                {"type": "tool_use", "id": "c", "name": "n", "arguments": "{\"a\": 1}"}
            ]})
            .to_string(),
        )
        .unwrap();
        assert_eq!(
            whole(&turn, "x", "m")["choices"][0],
            json!({"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Hi.",
                "tool_calls": [{"id": "c", "type": "function",
                                "function": {"name": "n", "arguments": "{\"a\": 1}"}}]}})
        );
    }
}
