//! The arbiter of `harness-acp`'s protocol messages: parses ACP transcripts (the format of
//! `docs/acp.md` A1, one `{"from":"client"|"agent","message":...}` per line) with the
//! protocol's official types from `agent-client-protocol-schema`, and reports every message
//! they reject.
//!
//! `harness-acp` reads and writes the protocol's JSON with its own small types (the official
//! crate turns on serde_json's `preserve_order` for every binary that links it); this crate,
//! outside the main workspace, keeps those types honest: its tests parse every recorded
//! transcript under `fixtures/acp/` and `fixtures/qwen-session/`, and the file of every
//! message the client writes (`fixtures/acp/client/messages.jsonl`, kept current by a
//! `harness-acp` test).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use agent_client_protocol_schema::v1::{
    AgentNotification, AgentRequest, AgentResponse, ClientNotification, ClientRequest,
    ClientResponse, Error, JsonRpcMessage, Notification, Request, Response,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// What a transcript held: how many messages of each kind the official types accepted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Checked {
    /// `(side, kind, method)` -> count, e.g. `("client", "request", "initialize")`; a response's
    /// method is the one of the request it answers (`""` for an error that answers none).
    pub counts: HashMap<(String, &'static str, String), usize>,
}

impl Checked {
    /// How many messages of `side` (`client`, `agent`), `kind` (`request`, `notification`,
    /// `result`, `error`) and `method` were accepted.
    pub fn count(&self, side: &str, kind: &str, method: &str) -> usize {
        self.counts
            .iter()
            .filter(|((s, k, m), _)| s == side && *k == kind && m == method)
            .map(|(_, n)| n)
            .sum()
    }

    /// How many messages were accepted in all.
    pub fn total(&self) -> usize {
        self.counts.values().sum()
    }
}

/// The methods an agent was measured sending that the protocol does not define (nor mark as
/// an extension with a leading `_`): Qwen Code's request `craft/drainMidTurnQueue` and its
/// notification `qwen/notify/session/mode-update` (QW16 in `docs/qwen.md`). Their JSON-RPC
/// shape is checked, and they are counted apart (kinds `vendor_request`,
/// `vendor_notification`), so that a transcript holding anything else off the protocol still
/// fails.
pub const VENDOR_METHODS: &[&str] = &["craft/drainMidTurnQueue", "qwen/notify/session/mode-update"];

fn is_vendor(side: &str, method: &str) -> bool {
    side == "agent" && VENDOR_METHODS.contains(&method)
}

fn parse<T: DeserializeOwned>(message: &Value) -> Result<T, String> {
    serde_json::from_value(message.clone()).map_err(|e| e.to_string())
}

/// Checks one transcript's text: every message, by its side and its JSON-RPC shape, against the
/// official types (a response's result by the method of the request it answers). Lines of the
/// agent's output that were not JSON (`{"from":"agent","text":...}`) are skipped.
///
/// # Errors
///
/// One line per message the official types reject, or that is not a transcript line.
pub fn check_transcript(text: &str) -> Result<Checked, Vec<String>> {
    let mut checked = Checked::default();
    let mut failures = Vec::new();
    // The requests waiting for their answers, per side that sent them: id -> method.
    let mut pending: HashMap<(&'static str, String), String> = HashMap::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        match check_line(line, &mut pending) {
            Ok(Some(key)) => *checked.counts.entry(key).or_default() += 1,
            Ok(None) => {}
            Err(e) => failures.push(format!("line {n}: {e}: {line}")),
        }
    }
    if failures.is_empty() {
        Ok(checked)
    } else {
        Err(failures)
    }
}

type Key = (String, &'static str, String);

fn check_line(
    line: &str,
    pending: &mut HashMap<(&'static str, String), String>,
) -> Result<Option<Key>, String> {
    let wrapper: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let side: &'static str = match wrapper.get("from").and_then(Value::as_str) {
        Some("client") => "client",
        Some("agent") => "agent",
        _ => return Err("no `from`".into()),
    };
    let Some(message) = wrapper.get("message") else {
        if side == "agent" && wrapper.get("text").is_some_and(Value::is_string) {
            return Ok(None);
        }
        return Err("neither `message` nor the agent's `text`".into());
    };
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id");
    let params = message.get("params").cloned().unwrap_or(Value::Null);
    let key = match (id, method) {
        (Some(id), Some(method)) => {
            parse::<JsonRpcMessage<Request<Value>>>(message)?;
            if is_vendor(side, method) {
                pending.insert((side, id.to_string()), method.to_string());
                return Ok(Some((
                    side.to_string(),
                    "vendor_request",
                    method.to_string(),
                )));
            }
            let dispatched = if side == "client" {
                ClientRequest::from_method_and_params(method, &params).map(drop)
            } else {
                AgentRequest::from_method_and_params(method, &params).map(drop)
            };
            dispatched.map_err(|e| format!("{side} request {method}: {e}"))?;
            pending.insert((side, id.to_string()), method.to_string());
            (side.to_string(), "request", method.to_string())
        }
        (None, Some(method)) => {
            parse::<JsonRpcMessage<Notification<Value>>>(message)?;
            if is_vendor(side, method) {
                return Ok(Some((
                    side.to_string(),
                    "vendor_notification",
                    method.to_string(),
                )));
            }
            let dispatched = if side == "client" {
                ClientNotification::from_method_and_params(method, &params).map(drop)
            } else {
                AgentNotification::from_method_and_params(method, &params).map(drop)
            };
            dispatched.map_err(|e| format!("{side} notification {method}: {e}"))?;
            (side.to_string(), "notification", method.to_string())
        }
        (Some(id), None) => {
            parse::<JsonRpcMessage<Response<Value>>>(message)?;
            // The request it answers came from the other side.
            let asker = if side == "client" { "agent" } else { "client" };
            let method = pending.remove(&(asker, id.to_string()));
            if let Some(error) = message.get("error") {
                // An error may answer a request too broken to be one (JSON-RPC): it needs no
                // request; its method is then "".
                parse::<Error>(error).map_err(|e| format!("error object: {e}"))?;
                (side.to_string(), "error", method.unwrap_or_default())
            } else {
                let method =
                    method.ok_or_else(|| format!("an answer to no {asker} request (id {id})"))?;
                let result = message.get("result").cloned().unwrap_or(Value::Null);
                let answered = if side == "client" {
                    ClientResponse::from_method_and_result(&method, result).map(drop)
                } else {
                    AgentResponse::from_method_and_result(&method, result).map(drop)
                };
                answered.map_err(|e| format!("{side} result of {method}: {e}"))?;
                (side.to_string(), "result", method)
            }
        }
        (None, None) => return Err("neither a request, a notification nor a response".into()),
    };
    Ok(Some(key))
}

/// Every transcript under `dir` (recursively): the `.jsonl` files that are not
/// `.expected.jsonl`, sorted.
///
/// # Errors
///
/// When a folder cannot be read.
pub fn transcripts(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let path = entry?.path();
            if path.is_dir() {
                folders.push(path);
            } else if path
                .to_str()
                .is_some_and(|p| p.ends_with(".jsonl") && !p.ends_with(".expected.jsonl"))
            {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}
