//! The scripted stand-in for the OpenAI Responses API that `codex exec` talks to.
//!
//! Routes: `POST /v1/responses` takes the scenario's next [`Turn`]; anything else gets the
//! shared JSON 404. A turn is output items (as the Responses API spells them: `message`,
//! `reasoning`, `function_call`, `custom_tool_call`, `web_search_call`), streamed as
//! `response.created`, then per item `response.output_item.added`, text deltas for messages,
//! `response.output_item.done`, and finally `response.completed` with the turn's usage; or an
//! HTTP error; or the items followed by `response.failed`, or by nothing at all (a stream cut
//! before `response.completed`).

use std::collections::{BTreeMap, VecDeque};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::scenario::HttpError;
use super::server::{Reply, Request};

/// One answer of the Responses stand-in.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// Output items, kept as written (argument strings and key order reach the binary as is).
    #[serde(default)]
    pub items: Vec<Box<RawValue>>,
    /// `usage` of `response.completed`; 1200 input and 40 output tokens when absent.
    #[serde(default)]
    pub usage: Option<Value>,
    /// Extra response headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Answer with this HTTP error instead.
    #[serde(default)]
    pub error: Option<HttpError>,
    /// End with `response.failed` carrying this error object after the items.
    #[serde(default)]
    pub failed: Option<Value>,
    /// End the stream after the items without `response.completed`.
    #[serde(default)]
    pub cut: bool,
    /// Wait this long before answering (a slow model; at most 10 s).
    #[serde(default)]
    pub delay_ms: u64,
}

impl super::shared::StandIn for Responses {
    fn handle(&mut self, request: &Request) -> Reply {
        Responses::handle(self, request)
    }

    fn notes(&self, requests: &[String]) -> Vec<String> {
        let count = |n: usize| if n > 0 { n.to_string() } else { String::new() };
        super::shared::script_notes(&count(self.overflow), &count(self.remaining()), requests)
    }
}

/// The conversation state of one `codex exec` run.
pub struct Responses {
    turns: VecDeque<Turn>,
    counter: u64,
    /// Requests after the script ran out.
    pub overflow: usize,
}

impl Responses {
    /// A stand-in that plays `turns` in order.
    pub fn new(turns: &[Turn]) -> Responses {
        Responses {
            turns: turns.iter().cloned().collect(),
            counter: 0,
            overflow: 0,
        }
    }

    /// Turns not yet played.
    pub fn remaining(&self) -> usize {
        self.turns.len()
    }

    /// Answers one request.
    pub fn handle(&mut self, request: &Request) -> Reply {
        if (request.method.as_str(), request.path.as_str()) != ("POST", "/v1/responses") {
            return Reply::not_found(&request.path);
        }
        let turn = self.turns.pop_front().unwrap_or_else(|| {
            self.overflow += 1;
            Turn {
                items: RawValue::from_string(
                    json!({"type": "message", "role": "assistant",
                           "content": [{"type": "output_text", "text": "(the script has no more turns)"}]})
                    .to_string(),
                )
                .into_iter()
                .collect(),
                ..Turn::default()
            }
        });
        self.counter += 1;
        if turn.delay_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(turn.delay_ms.min(10_000)));
        }
        if let Some(error) = &turn.error {
            return error.reply();
        }
        let mut reply = Reply::sse(&events(&turn, self.counter));
        reply
            .headers
            .extend(turn.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        reply
    }
}

/// The server-sent events of one turn; `n` numbers the response and its items' ids.
pub fn events(turn: &Turn, n: u64) -> Vec<(String, Value)> {
    let response_id = format!("resp_mock_{n}");
    let mut out = vec![(
        "response.created".to_string(),
        json!({"type": "response.created", "response": {"id": response_id}}),
    )];
    for (index, raw) in turn.items.iter().enumerate() {
        let Ok(mut item) = serde_json::from_str::<Value>(raw.get()) else {
            continue;
        };
        if let Some(map) = item.as_object_mut()
            && !map.contains_key("id")
        {
            map.insert("id".into(), json!(format!("item_mock_{n}_{index}")));
        }
        let id = item.get("id").cloned().unwrap_or(Value::Null);
        let mut added = item.clone();
        if item.get("type") == Some(&json!("message"))
            && let Some(map) = added.as_object_mut()
        {
            map.insert("content".into(), json!([]));
        }
        out.push((
            "response.output_item.added".into(),
            json!({"type": "response.output_item.added", "output_index": index, "item": added}),
        ));
        if item.get("type") == Some(&json!("message")) {
            let texts = item
                .get("content")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (content_index, part) in texts.iter().enumerate() {
                if let Some(text) = part.get("text").and_then(Value::as_str) {
                    out.push((
                        "response.output_text.delta".into(),
                        json!({"type": "response.output_text.delta", "item_id": id,
                               "output_index": index, "content_index": content_index, "delta": text}),
                    ));
                }
            }
        }
        out.push((
            "response.output_item.done".into(),
            json!({"type": "response.output_item.done", "output_index": index, "item": item}),
        ));
    }
    if turn.cut {
        return out;
    }
    if let Some(error) = &turn.failed {
        out.push((
            "response.failed".into(),
            json!({"type": "response.failed", "response": {"id": response_id, "error": error}}),
        ));
        return out;
    }
    let usage = turn.usage.clone().unwrap_or_else(|| {
        json!({"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 0},
               "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0},
               "total_tokens": 1240})
    });
    out.push((
        "response.completed".into(),
        json!({"type": "response.completed", "response": {"id": response_id, "usage": usage}}),
    ));
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::server::{Server, tests::send};
    use super::*;

    #[test]
    fn plays_items_errors_and_cuts_over_loopback() {
        let turns: Vec<Turn> = serde_json::from_str(
            r#"[
              {"error": {"status": 429, "headers": {"x-request-id": "req_1"}, "body": {"error": {"message": "slow down"}}}},
              {"items": [
                {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}
              ]},
              {"items": [], "failed": {"code": "server_error", "message": "boom"}},
              {"items": [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "part"}]}], "cut": true}
            ]"#,
        )
        .unwrap();
        let mut api = Responses::new(&turns);
        let server = Server::start(0, Box::new(move |r: &Request| api.handle(r))).unwrap();
        let port = server.port();
        assert_eq!(send(port, "POST", "/v1/models", "{}").0, 404);
        let (status, body) = send(port, "POST", "/v1/responses", "{}");
        assert_eq!(
            (status, body.as_str()),
            (429, r#"{"error":{"message":"slow down"}}"#)
        );

        let names = |body: &str| -> Vec<String> {
            body.lines()
                .filter_map(|l| l.strip_prefix("event: "))
                .map(str::to_string)
                .collect()
        };
        let (_, body) = send(port, "POST", "/v1/responses", "{}");
        assert_eq!(
            names(&body),
            [
                "response.created",
                "response.output_item.added",
                "response.output_item.done",
                "response.output_item.added",
                "response.output_text.delta",
                "response.output_item.done",
                "response.completed"
            ]
        );
        assert!(body.contains(r#""arguments":"{\"cmd\":\"ls\"}""#));
        assert!(body.contains(r#""total_tokens":1240"#));
        let (_, body) = send(port, "POST", "/v1/responses", "{}");
        assert_eq!(names(&body), ["response.created", "response.failed"]);
        let (_, body) = send(port, "POST", "/v1/responses", "{}");
        assert_eq!(names(&body).last().unwrap(), "response.output_item.done");
        server.stop();
    }
}
