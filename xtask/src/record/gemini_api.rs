//! The scripted stand-in for the Gemini API that Gemini CLI talks to
//! (`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`).
//!
//! Routes:
//! - `POST /v1beta/models/MODEL:streamGenerateContent` (one per model turn) plays the
//!   scenario's [`Turn`] chosen by how many `model` entries the request's `contents` already
//!   hold: the stand-in is stateless, so retries of a turn get the same answer and side
//!   requests never shift the script. A turn is Gemini `parts` (`text`, `functionCall`,
//!   thoughts), one server-sent chunk per part, the last with `finishReason` and
//!   `usageMetadata`; or an HTTP error.
//! - `POST /v1beta/models/MODEL:generateContent` (Gemini CLI's side requests: the model
//!   router, and any other call with a `responseJsonSchema`) answers a JSON object built from
//!   the schema: the router gets a low complexity score, so the run stays on one model.
//! - anything else gets the shared JSON 404.

use std::collections::BTreeSet;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::scenario::HttpError;
use super::server::{Reply, Request};

/// One model turn of a scenario.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The answer's parts, as the Gemini API spells them; each is sent as its own chunk.
    #[serde(default)]
    pub parts: Vec<Value>,
    /// `usageMetadata` of the last chunk; 1000 prompt and 20 candidate tokens when absent.
    #[serde(default)]
    pub usage: Option<Value>,
    /// `finishReason` of the last chunk; `STOP` when absent.
    #[serde(default)]
    pub finish_reason: Option<String>,
    /// Answer with this HTTP error instead.
    #[serde(default)]
    pub error: Option<HttpError>,
}

impl super::shared::StandIn for GeminiApi {
    fn handle(&mut self, request: &Request) -> Reply {
        GeminiApi::handle(self, request)
    }

    fn notes(&self, requests: &[String]) -> Vec<String> {
        let count = |n: usize| if n > 0 { n.to_string() } else { String::new() };
        super::shared::script_notes(&count(self.overflow), &count(self.remaining()), requests)
    }
}

/// The stand-in of one run.
pub struct GeminiApi {
    turns: Vec<Turn>,
    /// The turns played at least once.
    played: BTreeSet<usize>,
    /// Stream requests beyond the script.
    pub overflow: usize,
}

impl GeminiApi {
    /// A stand-in that plays `turns`.
    pub fn new(turns: &[Turn]) -> GeminiApi {
        GeminiApi {
            turns: turns.to_vec(),
            played: BTreeSet::new(),
            overflow: 0,
        }
    }

    /// Turns never requested.
    pub fn remaining(&self) -> usize {
        self.turns.len() - self.played.len()
    }

    /// Answers one request.
    pub fn handle(&mut self, request: &Request) -> Reply {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if request.method != "POST" || !request.path.starts_with("/v1beta/models/") {
            return Reply::not_found(&request.path);
        }
        if request.path.ends_with(":streamGenerateContent") {
            let index = body
                .get("contents")
                .and_then(Value::as_array)
                .map_or(0, |contents| {
                    contents
                        .iter()
                        .filter(|c| c.get("role").and_then(Value::as_str) == Some("model"))
                        .count()
                });
            let Some(turn) = self.turns.get(index) else {
                self.overflow += 1;
                let turn = Turn {
                    parts: vec![json!({"text": "(the script has no more turns)"})],
                    ..Turn::default()
                };
                return stream(&turn);
            };
            self.played.insert(index);
            if let Some(error) = &turn.error {
                return error.reply();
            }
            return stream(turn);
        }
        if request.path.ends_with(":generateContent") {
            let schema = body
                .get("generationConfig")
                .and_then(|g| {
                    g.get("responseJsonSchema")
                        .or_else(|| g.get("responseSchema"))
                })
                .cloned()
                .unwrap_or(Value::Null);
            let text = example(&schema).to_string();
            return Reply::json(
                200,
                &json!({
                    "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                                    "finishReason": "STOP", "index": 0}],
                    "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                                      "totalTokenCount": 110}
                }),
            );
        }
        Reply::not_found(&request.path)
    }
}

/// A value that satisfies a (Gemini-style) JSON schema: the first `enum` value, `"simple"` for
/// strings, 10 for numbers (a low router complexity score), `false`, `[]`, and objects with
/// every property.
fn example(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "string" => json!("simple"),
        "integer" | "number" => json!(10),
        "boolean" => json!(false),
        "array" => json!([]),
        _ => {
            let mut object = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (name, property) in properties {
                    object.insert(name.clone(), example(property));
                }
            }
            Value::Object(object)
        }
    }
}

/// The server-sent chunks of one turn: one per part, the last with `finishReason` and
/// `usageMetadata` (a turn without parts is one chunk with no parts: an empty answer).
pub fn chunks(turn: &Turn) -> Vec<Value> {
    let usage = turn.usage.clone().unwrap_or_else(
        || json!({"promptTokenCount": 1000, "candidatesTokenCount": 20, "totalTokenCount": 1020}),
    );
    let finish = turn.finish_reason.as_deref().unwrap_or("STOP");
    let groups: Vec<Vec<Value>> = if turn.parts.is_empty() {
        vec![Vec::new()]
    } else {
        turn.parts.iter().map(|p| vec![p.clone()]).collect()
    };
    let last = groups.len() - 1;
    groups
        .into_iter()
        .enumerate()
        .map(|(i, parts)| {
            let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
            let mut chunk = json!({"modelVersion": "stand-in"});
            if i == last {
                candidate["finishReason"] = json!(finish);
                chunk["usageMetadata"] = usage.clone();
            }
            chunk["candidates"] = json!([candidate]);
            chunk
        })
        .collect()
}

/// A `text/event-stream` body of `data:` lines only, as the Gemini API sends it.
fn stream(turn: &Turn) -> Reply {
    let mut body = String::new();
    for chunk in chunks(turn) {
        body.push_str("data: ");
        body.push_str(&chunk.to_string());
        body.push_str("\r\n\r\n");
    }
    Reply {
        status: 200,
        headers: vec![("content-type".into(), "text/event-stream".into())],
        body: body.into_bytes(),
        delay: std::time::Duration::ZERO,
        pauses: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::server::{Server, tests::send};
    use super::*;

    #[test]
    fn picks_the_turn_by_model_entries_and_answers_side_requests_from_their_schema() {
        let turns: Vec<Turn> = serde_json::from_value(json!([
            {"parts": [{"functionCall": {"name": "glob", "args": {"pattern": "*"}}}]},
            {"parts": [{"text": "a"}, {"text": "b"}]},
            {"error": {"status": 400, "body": {"error": {"code": 400, "message": "bad"}}}}
        ]))
        .unwrap();
        let mut api = GeminiApi::new(&turns);
        let server = Server::start(0, Box::new(move |r: &Request| api.handle(r))).unwrap();
        let port = server.port();
        let path = "/v1beta/models/m:streamGenerateContent?alt=sse";
        let (status, body) = send(port, "POST", path, r#"{"contents":[{"role":"user"}]}"#);
        assert_eq!(status, 200);
        assert!(body.contains(r#""functionCall":{"args":{"pattern":"*"},"name":"glob"}"#));
        assert!(body.contains(r#""finishReason":"STOP""#));
        let two = r#"{"contents":[{"role":"user"},{"role":"model"},{"role":"user"}]}"#;
        let (_, body) = send(port, "POST", path, two);
        assert_eq!(body.matches("data: ").count(), 2);
        let three = r#"{"contents":[{"role":"model"},{"role":"model"}]}"#;
        assert_eq!(send(port, "POST", path, three).0, 400);

        let router = r#"{"generationConfig":{"responseJsonSchema":{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}}}}}"#;
        let (status, body) = send(port, "POST", "/v1beta/models/x:generateContent", router);
        assert_eq!(status, 200);
        assert!(
            body.contains(r#"{\"complexity_reasoning\":\"simple\",\"complexity_score\":10}"#),
            "{body}"
        );
        assert_eq!(send(port, "GET", "/v1/other", "").0, 404);
        server.stop();
    }

    #[test]
    fn an_empty_turn_is_one_chunk_without_parts() {
        let chunks = chunks(&Turn::default());
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0]["candidates"][0]["content"]["parts"], json!([]));
    }
}
