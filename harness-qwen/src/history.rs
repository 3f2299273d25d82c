//! Qwen Code's stored history (the QH rules of `docs/sessions.md`): its chat files, each record
//! read back as the `qwen --output-format stream-json` lines it stands for, through the live
//! decoder (QW rules).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::stored::{self, Accounting, History, SessionFiles, Tokens};
use harness_agents_core::{Event, NormalizerConfig, Outcome};
use serde_json::{Map, Value, json};

use crate::QwenNormalizer;

/// Qwen Code's stored history, registered as `"qwen"`: the chats
/// `~/.qwen/projects/<cwd, its "/" as "-">/chats/<session id>.jsonl` (`QWEN_RUNTIME_DIR`, else
/// `QWEN_HOME`, stands for `~/.qwen`).
#[derive(Debug, Clone, Copy, Default)]
pub struct QwenHistory;

impl History for QwenHistory {
    fn name(&self) -> &'static str {
        "qwen"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["QWEN_RUNTIME_DIR", "QWEN_HOME", "HOME"]
    }

    /// QH1: `$QWEN_RUNTIME_DIR/projects`, else `$QWEN_HOME/projects`, else
    /// `~/.qwen/projects`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        if let Some(dir) = var("QWEN_RUNTIME_DIR").or_else(|| var("QWEN_HOME")) {
            return vec![Path::new(&dir).join("projects")];
        }
        var("HOME")
            .map(|home| Path::new(&home).join(".qwen/projects"))
            .into_iter()
            .collect()
    }

    /// A home folder (its `.qwen/projects`), Qwen's folder (its `projects`), or the folder of
    /// projects itself.
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        stored::first_folder(dir, &[".qwen/projects", "projects"])
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        for project in stored::sorted_paths(root, |_| true) {
            let files = stored::sorted_paths(&project.join("chats"), |p| {
                p.is_file() && p.extension().is_some_and(|e| e == "jsonl")
            });
            let project_dir = project
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            for main in files {
                // QH1: the file's name is the session id its records carry.
                let id = main
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                found.push(SessionFiles {
                    backend: self.name(),
                    id,
                    main,
                    subagents: Vec::new(),
                    project_dir: project_dir.clone(),
                });
            }
        }
    }

    fn decode(
        &self,
        files: &SessionFiles,
        index: usize,
        sink: &mut dyn FnMut(Event),
    ) -> io::Result<(Outcome, Accounting)> {
        stored::decode_one_file(
            files,
            index,
            QwenNormalizer::new(NormalizerConfig::default()),
            read_chat,
            sink,
        )
    }

    fn tally(
        &self,
        files: &SessionFiles,
        index: usize,
        _buf: &mut Vec<u8>,
    ) -> io::Result<(Option<String>, Accounting)> {
        stored::tally_one_file(files, index, read_chat)
    }
}

/// The session's token sums so far, as the live `result`'s `usage` counts them (QW10: every
/// request, side requests included; input with the cached tokens).
#[derive(Default, Clone, Copy)]
struct Usage {
    input: u64,
    output: u64,
    cached: u64,
}

/// The translation of one chat: where it is and the figures.
#[derive(Default)]
struct Chat {
    session_id: Option<String>,
    /// Whether the live `init` line was handed on (QH2).
    started: bool,
    /// Model answers and failed requests since the last prompt (QH7's `num_turns`).
    calls: u64,
    /// The failure of the run's last model request, when it failed (QH5): Qwen's report and
    /// the request's model.
    failure: Option<(String, String)>,
    usage: Usage,
    /// A model request's figures, waiting for the answer that names its tools (QH7).
    pending: Option<(String, Tokens)>,
    accounting: Accounting,
}

/// QH2-QH8: reads a chat line by line; each line the live decoder is to read goes to `out`.
fn read_chat(path: &Path, out: &mut dyn FnMut(&str)) -> io::Result<(Option<String>, Accounting)> {
    let mut chat = Chat::default();
    stored::each_text_line(path, &mut |text| chat.line(text, out))?;
    chat.end_run(out);
    chat.charge(&[]);
    Ok((chat.session_id, chat.accounting))
}

/// The string at `key` of `map`, when it is one.
fn text<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

/// The parts of a record's `message`, when it has a list of them.
fn parts(record: &Map<String, Value>) -> Option<&Vec<Value>> {
    record.get("message")?.get("parts")?.as_array()
}

impl Chat {
    fn line(&mut self, line: &str, out: &mut dyn FnMut(&str)) {
        let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line) else {
            // QH8: not a JSON object: the decoder reports it (S2, S3).
            out(line);
            return;
        };
        if let Some(at) = text(&record, "timestamp") {
            self.accounting.timestamp(at);
        }
        if self.accounting.cwd.is_none() {
            self.accounting.cwd = text(&record, "cwd")
                .filter(|c| !c.is_empty())
                .map(String::from);
        }
        if !self.started
            && let Some(id) = text(&record, "sessionId").filter(|id| !id.is_empty())
        {
            // QH2: the live `init` line, once: the session id and the directory (QW2).
            self.started = true;
            self.session_id = Some(id.to_string());
            let mut init = json!({"type": "system", "subtype": "init", "session_id": id});
            if let Some(cwd) = &self.accounting.cwd {
                init["cwd"] = json!(cwd);
            }
            out(&init.to_string());
        }
        match (text(&record, "type"), parts(&record)) {
            (Some("user"), Some(parts)) => {
                // QH3: a prompt.
                self.end_run(out);
                let texts: Vec<&str> = parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect();
                self.accounting.prompt(&texts.join("\n"));
            }
            (Some("assistant"), Some(parts)) => self.answer(&record, parts, out),
            (Some("tool_result"), Some(parts)) => {
                let status = record
                    .get("toolCallResult")
                    .and_then(|r| r.get("status"))
                    .and_then(Value::as_str);
                for part in parts {
                    self.tool_result(part, status, out);
                }
            }
            (Some("system"), _) => match text(&record, "subtype") {
                Some("ui_telemetry") => self.telemetry(&record),
                // QH6: Qwen's bookkeeping of the prompts for commit attribution.
                Some("attribution_snapshot") => {}
                // QH8: any other subtype, for the decoder to report (QW2).
                _ => out(line),
            },
            // QH8: any other record, or one without its parts, is handed on as it is.
            _ => out(line),
        }
    }

    /// QH4: a model answer, as the live lines Qwen prints for it: its thoughts, its text, then
    /// its calls together, each a line of its own.
    fn answer(&mut self, record: &Map<String, Value>, parts: &[Value], out: &mut dyn FnMut(&str)) {
        self.calls += 1;
        self.failure = None;
        let model = text(record, "model").unwrap_or("unknown");
        let (mut thoughts, mut texts, mut calls, mut others) = (vec![], vec![], vec![], vec![]);
        let mut tools = Vec::new();
        for part in parts {
            let thought = part.get("thought") == Some(&Value::Bool(true));
            match (part.get("text"), part.get("functionCall")) {
                (Some(text), None) if thought => {
                    thoughts.push(json!({"type": "thinking", "thinking": text, "signature": ""}))
                }
                (Some(text), None) => texts.push(json!({"type": "text", "text": text})),
                (None, Some(call)) => {
                    let field = |key: &str| call.get(key).cloned().unwrap_or(Value::Null);
                    if let Some(name) = call.get("name").and_then(Value::as_str) {
                        tools.push(name.to_string());
                    }
                    calls.push(json!({"type": "tool_use", "id": field("id"),
                        "name": field("name"), "input": field("args")}));
                }
                // QH8: a part of another kind, as a block the decoder reports (QW4).
                _ => others.push(part.clone()),
            }
        }
        self.charge(&tools);
        let id = text(record, "uuid").map_or(Value::Null, |u| json!(u));
        let mut line = |content: Vec<Value>, stop: Value| {
            let message = json!({"id": id, "type": "message", "role": "assistant",
                "model": model, "content": content, "stop_reason": stop});
            out(&json!({"type": "assistant", "message": message}).to_string());
        };
        for blocks in [others, thoughts, texts] {
            if !blocks.is_empty() {
                line(blocks, Value::Null);
            }
        }
        if !calls.is_empty() {
            line(calls, json!("tool_use"));
        }
    }

    /// QH5: a call's result, as the live `user` line that carries it.
    fn tool_result(&mut self, part: &Value, status: Option<&str>, out: &mut dyn FnMut(&str)) {
        let Some(response) = part.get("functionResponse") else {
            // QH5: a part that is no call's result: a block of the live line, which QW7
            // passes over as it passes over such a block on a live line.
            let message = json!({"role": "user", "content": [part]});
            out(&json!({"type": "user", "message": message}).to_string());
            return;
        };
        let body = response.get("response");
        let error = body.and_then(|b| b.get("error"));
        let failed = status == Some("error") || (status.is_none() && error.is_some());
        let content = match (failed, error) {
            (true, Some(error)) => error.clone(),
            _ => body
                .and_then(|b| b.get("output"))
                .cloned()
                .unwrap_or(json!("")),
        };
        let block = json!({"type": "tool_result",
            "tool_use_id": response.get("id").cloned().unwrap_or(Value::Null),
            "is_error": failed, "content": content});
        let message = json!({"role": "user", "content": [block]});
        out(&json!({"type": "user", "message": message}).to_string());
    }

    /// QH5, QH7: a telemetry record: a model request's figures, or its failure.
    fn telemetry(&mut self, record: &Map<String, Value>) {
        let Some(event) = record.get("systemPayload").and_then(|p| p.get("uiEvent")) else {
            return;
        };
        let n = |key: &str| event.get(key).and_then(Value::as_u64).unwrap_or(0);
        let model = event
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        match event.get("event.name").and_then(Value::as_str) {
            Some("qwen-code.api_response") => {
                self.charge(&[]);
                let (input, output, cached) = (
                    n("input_token_count"),
                    n("output_token_count"),
                    n("cached_content_token_count"),
                );
                self.usage.input = self.usage.input.saturating_add(input);
                self.usage.output = self.usage.output.saturating_add(output);
                self.usage.cached = self.usage.cached.saturating_add(cached);
                let tokens = Tokens {
                    input: input.saturating_sub(cached),
                    // The thoughts are counted in the output already (the total is the
                    // prompt and the output).
                    output,
                    cache_read: cached,
                    cache_write: 0,
                };
                self.pending = Some((model.to_string(), tokens));
            }
            Some("qwen-code.api_error") => {
                // QH5: a failed request; whether Qwen gave up on it or retried it is known
                // only from what follows (an answer, or the run's end).
                self.charge(&[]);
                let message = event
                    .get("error_message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                self.failure = Some((format!("[API Error: {message}]"), model.to_string()));
            }
            // QH6: a tool's run and Qwen's other telemetry say nothing the records do not.
            _ => {}
        }
    }

    /// QH7: the waiting request's figures, charged with the tools its answer called.
    fn charge(&mut self, tools: &[String]) {
        if let Some((model, tokens)) = self.pending.take() {
            self.accounting.message(&model, &tokens, tools);
        }
    }

    /// QH7: the run on the last prompt ends (the live `result`) where the next prompt or the
    /// file begins, when a model request was answered or failed since that prompt.
    fn end_run(&mut self, out: &mut dyn FnMut(&str)) {
        let failure = self.failure.take();
        if let Some((report, model)) = &failure {
            // QH5: the request failed for good: Qwen's `[API Error: ...]` line (QW5).
            self.calls += 1;
            let message = json!({"type": "message", "role": "assistant", "model": model,
                "content": [{"type": "text", "text": report}], "stop_reason": null});
            out(&json!({"type": "assistant", "message": message}).to_string());
        }
        let calls = std::mem::take(&mut self.calls);
        if calls == 0 {
            return;
        }
        let usage = json!({"input_tokens": self.usage.input, "output_tokens": self.usage.output,
            "cache_read_input_tokens": self.usage.cached});
        let mut result = json!({"type": "result", "num_turns": calls, "usage": usage});
        match failure {
            Some((report, _)) => {
                result["subtype"] = json!("error_during_execution");
                result["is_error"] = json!(true);
                result["error"] = json!({"message": report});
            }
            None => {
                result["subtype"] = json!("success");
                result["is_error"] = json!(false);
            }
        }
        out(&result.to_string());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use harness_agents_core::{EventBody, Status, UnknownReason, WarningSource};

    use super::*;

    /// Writes `lines` as a chat in a folder of its own and decodes it.
    fn decode(name: &str, lines: &[&str]) -> (Vec<Event>, Outcome, Accounting) {
        let dir = std::env::temp_dir().join(format!("qwen-history-{}-{name}", std::process::id()));
        let chats = dir.join("-p/chats");
        std::fs::create_dir_all(&chats).unwrap();
        let main = chats.join("s-1.jsonl");
        std::fs::write(&main, lines.join("\n")).unwrap();
        let mut found = Vec::new();
        QwenHistory.discover(&dir, &mut found);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "s-1");
        assert_eq!(found[0].project_dir.as_deref(), Some("-p"));
        let mut events = Vec::new();
        let (outcome, accounting) = QwenHistory
            .decode(&found[0], 0, &mut |e| events.push(e))
            .unwrap();
        assert!(QwenHistory.decode(&found[0], 1, &mut |_| {}).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
        (events, outcome, accounting)
    }

    /// QH8: a line that is not JSON and a record of an unknown type reach the decoder, which
    /// reports them; the run around them still ends with its answer's figures (QH7).
    #[test]
    fn unusual_lines_are_reported_and_the_run_still_ends() {
        let (events, outcome, accounting) = decode(
            "unusual",
            &[
                r#"{"type":"user","sessionId":"s-1","cwd":"/p","timestamp":"2026-01-01T00:00:00Z","message":{"role":"user","parts":[{"text":"Hi\n\n"}]}}"#,
                "not json",
                r#"{"type":"summary","sessionId":"s-1"}"#,
                r#"{"type":"system","subtype":"ui_telemetry","sessionId":"s-1","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_response","model":"m","input_token_count":10,"output_token_count":4,"cached_content_token_count":3}}}"#,
                r#"{"type":"assistant","sessionId":"s-1","model":"m","timestamp":"2026-01-01T00:00:02Z","message":{"role":"model","parts":[{"text":"Hello."}]}}"#,
            ],
        );
        let bodies: Vec<&EventBody> = events.iter().map(|e| &e.body).collect();
        assert!(matches!(
            bodies[0],
            EventBody::Warning {
                source: WarningSource::NonJson,
                ..
            }
        ));
        assert!(matches!(
            bodies[1],
            EventBody::Unknown {
                reason: UnknownReason::UnknownType,
                ..
            }
        ));
        assert!(matches!(bodies[2], EventBody::Agent { text } if &**text == "Hello."));
        assert_eq!(bodies.len(), 3);
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
        assert_eq!(accounting.first_prompt.as_deref(), Some("Hi"));
        assert_eq!(accounting.cwd.as_deref(), Some("/p"));
        let tokens = accounting.tokens();
        assert_eq!((tokens.input, tokens.output, tokens.cache_read), (7, 4, 3));
        assert_eq!(
            accounting.last_timestamp.as_deref(),
            Some("2026-01-01T00:00:02Z")
        );
    }

    /// QH5, QH7: a request that failed for good ends its run with Qwen's error; a prompt
    /// that got no answer ends the chat without a result (S9).
    #[test]
    fn a_failed_request_fails_its_run() {
        let (events, outcome, _) = decode(
            "failed",
            &[
                r#"{"type":"user","sessionId":"s-1","message":{"role":"user","parts":[{"text":"Hi"}]}}"#,
                r#"{"type":"system","subtype":"ui_telemetry","sessionId":"s-1","systemPayload":{"uiEvent":{"event.name":"qwen-code.api_error","model":"m","error_message":"400 Bad request"}}}"#,
            ],
        );
        let bodies: Vec<&EventBody> = events.iter().map(|e| &e.body).collect();
        assert!(
            matches!(bodies[..], [EventBody::Error { message }] if message == "[API Error: 400 Bad request]"),
            "{bodies:?}"
        );
        assert_eq!(outcome.status, Status::Error);
        let (events, outcome, _) = decode(
            "unanswered",
            &[
                r#"{"type":"user","sessionId":"s-1","message":{"role":"user","parts":[{"text":"Hi"}]}}"#,
            ],
        );
        assert!(
            matches!(&events[..], [Event { body: EventBody::Error { message }, .. }] if message == "stream ended without a result")
        );
        assert_eq!(outcome.status, Status::Incomplete);
    }
}
