//! Gemini CLI's stored history (the GS rules of `docs/sessions.md`): its chat files, each
//! record read back as the `gemini --output-format stream-json` lines it stands for, through
//! the live decoder (G rules).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::stored::{self, Accounting, History, SessionFiles, Tokens};
use harness_agents_core::{Event, NormalizerConfig, Outcome};
use serde_json::{Map, Value, json};

use crate::GeminiNormalizer;

/// Gemini CLI's stored history, registered as `"gemini"`: the chats in
/// `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl` (`GEMINI_CLI_HOME` stands for the
/// home folder).
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatHistory;

impl History for ChatHistory {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["GEMINI_CLI_HOME", "HOME"]
    }

    /// GS1: `$GEMINI_CLI_HOME/.gemini/tmp`, else `~/.gemini/tmp`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        var("GEMINI_CLI_HOME")
            .or_else(|| var("HOME"))
            .map(|home| Path::new(&home).join(".gemini/tmp"))
            .into_iter()
            .collect()
    }

    /// A home folder (its `.gemini/tmp`), a `.gemini` folder (its `tmp`), or the folder of
    /// projects itself.
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        stored::first_folder(dir, &[".gemini/tmp", "tmp"])
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        for project in stored::sorted_paths(root, Path::is_dir) {
            let chats = stored::sorted_paths(&project.join("chats"), |p| {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                name.is_some_and(|n| n.starts_with("session-") && n.ends_with(".jsonl"))
            });
            // GS1: the project's folder, as Gemini CLI noted it.
            let project_dir = std::fs::read_to_string(project.join(".project_root"))
                .ok()
                .map(|p| p.trim().to_string())
                .filter(|p| !p.is_empty())
                .or_else(|| {
                    project
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                });
            for main in chats {
                let id = header_id(&main).unwrap_or_else(|| {
                    main.file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default()
                });
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
        // GS1: relative paths are the project's (G8), which the chat's folder names.
        let mut config = NormalizerConfig::default();
        config.cwd = files.project_dir.clone();
        stored::decode_one_file(files, index, GeminiNormalizer::new(config), read_chat, sink)
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

/// The `sessionId` of a chat's first line, when it has one.
fn header_id(path: &Path) -> Option<String> {
    let value = stored::first_line_value(path)?;
    value.get("sessionId")?.as_str().map(str::to_string)
}

/// The translation of one chat: the lines given so far and the figures.
#[derive(Default)]
struct Chat {
    session_id: Option<String>,
    /// The last version of the record being read (GS3: a record is written again as it
    /// grows; the last one counts).
    pending: Option<(String, Value)>,
    /// Whether a model message came since the last prompt (a turn to close).
    answered: bool,
    /// The session's sums so far, as a `result`'s `stats` spells them (GS6).
    input: u64,
    output: u64,
    cached: u64,
    accounting: Accounting,
}

/// GS2-GS7: reads a chat line by line; each line the live decoder is to read goes to `out`.
fn read_chat(path: &Path, out: &mut dyn FnMut(&[u8])) -> io::Result<(Option<String>, Accounting)> {
    let mut chat = Chat::default();
    stored::each_line(path, &mut |line| chat.line(line, out))?;
    chat.flush(out);
    // GS6: a chat that ends after a model message ends its turn.
    if chat.answered {
        chat.result(out);
    }
    Ok((chat.session_id, chat.accounting))
}

impl Chat {
    fn line(&mut self, line: &[u8], out: &mut dyn FnMut(&[u8])) {
        let Ok(Value::Object(record)) = serde_json::from_slice::<Value>(line) else {
            // GS7: not a JSON object: the decoder reports it (S2, S3).
            self.flush(out);
            out(line);
            return;
        };
        if let Some(at) = record.get("timestamp").and_then(Value::as_str) {
            self.accounting.timestamp(at);
        }
        // GS2: the header (again when a session is resumed) and the `$set`, `$push`, ...
        // updates of the session's own fields.
        if record.keys().any(|k| k.starts_with('$')) {
            return;
        }
        if record.contains_key("sessionId") && !record.contains_key("type") {
            if let Some(at) = record.get("startTime").and_then(Value::as_str) {
                self.accounting.timestamp(at);
            }
            if self.session_id.is_none() {
                if let Some(id) = record.get("sessionId").and_then(Value::as_str) {
                    self.session_id = Some(id.to_string());
                    out(json!({"type": "init", "session_id": id})
                        .to_string()
                        .as_bytes());
                }
            }
            return;
        }
        let id = record.get("id").and_then(Value::as_str).map(str::to_string);
        match (id, &self.pending) {
            (Some(id), Some((pending, _))) if *pending == id => {
                self.pending = Some((id, Value::Object(record)));
            }
            (Some(id), _) => {
                self.flush(out);
                self.pending = Some((id, Value::Object(record)));
            }
            (None, _) => {
                self.flush(out);
                self.record(&record, line, out);
            }
        }
    }

    /// The record being read is complete: its lines go out.
    fn flush(&mut self, out: &mut dyn FnMut(&[u8])) {
        if let Some((_, Value::Object(record))) = self.pending.take() {
            let line = Value::Object(record.clone()).to_string();
            self.record(&record, line.as_bytes(), out);
        }
    }

    fn record(&mut self, record: &Map<String, Value>, line: &[u8], out: &mut dyn FnMut(&[u8])) {
        match record.get("type").and_then(Value::as_str) {
            Some("user") => self.user(record, out),
            Some("gemini") => self.gemini(record, out),
            // GS7: any other record (none was recorded to map) is kept for the decoder to
            // report (G: `unknown_type`).
            _ => out(line),
        }
    }

    /// GS4: a user record with text is a prompt; one holding only tool responses is the
    /// answer to the model's calls, which the model record already carries.
    fn user(&mut self, record: &Map<String, Value>, out: &mut dyn FnMut(&[u8])) {
        let parts = record.get("content");
        let texts: Vec<&str> = match parts {
            Some(Value::String(text)) => vec![text.as_str()],
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
            _ => Vec::new(),
        };
        if texts.is_empty() {
            return;
        }
        if self.answered {
            self.result(out);
        }
        let text = texts.join("\n");
        self.accounting.prompt(&text);
        out(json!({"type": "message", "role": "user", "content": text})
            .to_string()
            .as_bytes());
    }

    /// GS5: a model record: its text, then each tool call and its result; its tokens.
    fn gemini(&mut self, record: &Map<String, Value>, out: &mut dyn FnMut(&[u8])) {
        self.answered = true;
        if let Some(text) = record.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                let line = json!({"type": "message", "role": "assistant", "content": text,
                    "delta": true});
                out(line.to_string().as_bytes());
            }
        }
        let calls: &[Value] = match record.get("toolCalls") {
            Some(Value::Array(calls)) => calls,
            _ => &[],
        };
        let mut tools = Vec::new();
        for call in calls {
            let name = call.get("name").cloned().unwrap_or(Value::Null);
            if let Some(name) = name.as_str() {
                tools.push(name.to_string());
            }
            out(json!({"type": "tool_use", "tool_name": name,
                "tool_id": call.get("id").cloned().unwrap_or(Value::Null),
                "parameters": call.get("args").cloned().unwrap_or(Value::Null)})
            .to_string()
            .as_bytes());
        }
        for call in calls {
            out(tool_result(call).to_string().as_bytes());
        }
        let n = |key: &str| {
            record
                .get("tokens")
                .and_then(|t| t.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (input, output, cached, thoughts) =
            (n("input"), n("output"), n("cached"), n("thoughts"));
        self.input += input;
        self.output += output + thoughts;
        self.cached += cached;
        let model = record
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let tokens = Tokens {
            input: input.saturating_sub(cached),
            output: output.saturating_add(thoughts),
            cache_read: cached,
            cache_write: 0,
        };
        self.accounting.message(model, &tokens, &tools);
    }

    /// GS6: the end of a turn, as the `result` line the live run prints, with the session's
    /// sums so far.
    fn result(&mut self, out: &mut dyn FnMut(&[u8])) {
        self.answered = false;
        out(json!({"type": "result", "status": "success", "stats": {
            "input_tokens": self.input, "output_tokens": self.output, "cached": self.cached}})
        .to_string()
        .as_bytes());
    }
}

/// GS5: a tool call's `tool_result` line: its status, its display text as `output`, and the
/// error its response names.
fn tool_result(call: &Value) -> Value {
    let mut line = Map::new();
    line.insert("type".into(), json!("tool_result"));
    line.insert(
        "tool_id".into(),
        call.get("id").cloned().unwrap_or(Value::Null),
    );
    line.insert(
        "status".into(),
        call.get("status").cloned().unwrap_or(Value::Null),
    );
    if let Some(display) = call.get("resultDisplay").filter(|d| d.is_string()) {
        line.insert("output".into(), display.clone());
    }
    let error = call
        .get("result")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find_map(|r| r.pointer("/functionResponse/response/error")?.as_str());
    if let Some(message) = error {
        line.insert("error".into(), json!({ "message": message }));
    }
    Value::Object(line)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A chat written by hand, with what Gemini CLI writes and what it should not: the events
    /// and figures it gives.
    fn decoded(lines: &[&str]) -> (Vec<Value>, Outcome, Accounting) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-2026-12-06T12-00-abc.jsonl");
        // `<INVALID>` stands for a byte that is not UTF-8.
        let text = lines.join("\n").replace("<INVALID>", "\u{1}");
        let bytes: Vec<u8> = text
            .bytes()
            .map(|b| if b == 1 { 0xff } else { b })
            .collect();
        std::fs::write(&path, bytes).unwrap();
        let files = SessionFiles {
            backend: "gemini",
            id: "abc".into(),
            main: path,
            subagents: Vec::new(),
            project_dir: Some("/repo".into()),
        };
        let mut events = Vec::new();
        let (outcome, accounting) = ChatHistory
            .decode(&files, 0, &mut |e| {
                events.push(serde_json::to_value(e).unwrap());
            })
            .unwrap();
        let (id, tallied) = ChatHistory.tally(&files, 0, &mut Vec::new()).unwrap();
        assert_eq!(tallied, accounting);
        assert_eq!(id.as_deref(), Some("abc-1"));
        (events, outcome, accounting)
    }

    #[test]
    fn a_chat_reads_as_its_live_lines() {
        let (events, outcome, accounting) = decoded(&[
            r#"{"sessionId":"abc-1","projectHash":"h","startTime":"2026-12-06T12:00:00.000Z","lastUpdated":"2026-12-06T12:00:00.000Z","kind":"main"}"#,
            r#"{"$set":{"messages":[{"id":"ctx","type":"user","content":[{"text":"<session_context>"}]}]}}"#,
            r#"{"id":"u1","timestamp":"2026-12-06T12:00:01.000Z","type":"user","content":[{"text":"Read a.txt"}]}"#,
            r#"{"id":"g1","timestamp":"2026-12-06T12:00:02.000Z","type":"gemini","content":"Reading.","tokens":{"input":100,"output":5,"cached":40,"thoughts":2},"model":"m"}"#,
            r#"{"$set":{"lastUpdated":"2026-12-06T12:00:02.000Z"}}"#,
            r#"{"id":"g1","timestamp":"2026-12-06T12:00:02.000Z","type":"gemini","content":"Reading.","tokens":{"input":100,"output":5,"cached":40,"thoughts":2},"model":"m","toolCalls":[{"id":"t1","name":"read_file","args":{"file_path":"a.txt"},"status":"error","resultDisplay":"File not found.","result":[{"functionResponse":{"id":"t1","name":"read_file","response":{"error":"File not found: /repo/a.txt"}}}]}]}"#,
            r#"{"id":"u2","timestamp":"2026-12-06T12:00:03.000Z","type":"user","content":[{"functionResponse":{"id":"t1"}}]}"#,
            // S2: a line that is not UTF-8 is not JSON, whatever it would be once repaired.
            r#"{"id":"bad","type":"info","content":"<INVALID>x"}"#,
            r#"{"id":"i1","timestamp":"2026-12-06T12:00:04.000Z","type":"info","content":"note"}"#,
            r#"{"id":"g2","timestamp":"2026-12-06T12:00:05.000Z","type":"gemini","content":"Gone.","tokens":{"input":200,"output":7,"cached":0,"thoughts":0},"model":"m"}"#,
        ]);
        let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            ["agent", "read", "warning", "unknown", "agent"],
            "{events:#?}"
        );
        assert_eq!(events[0]["text"], "Reading.");
        assert_eq!(events[1]["path"], "/repo/a.txt");
        assert_eq!(events[1]["success"], false);
        assert_eq!(events[1]["error"], "File not found: /repo/a.txt");
        // S2: as the line is, its bytes unchanged.
        assert_eq!(events[2]["source"], "non_json");
        assert!(events[2]["message"].as_str().unwrap().contains("\u{fffd}x"));
        assert_eq!(events[3]["reason"], "unknown_type");
        assert_eq!(events[3]["raw"]["type"], "info");
        assert_eq!(events[4]["text"], "Gone.");
        assert_eq!(outcome.status, harness_agents_core::Status::Success);
        assert_eq!(outcome.session_id.as_deref(), Some("abc-1"));
        assert_eq!(outcome.final_output.as_deref(), Some("Gone."));
        assert_eq!(accounting.prompts, 1);
        assert_eq!(accounting.first_prompt.as_deref(), Some("Read a.txt"));
        assert_eq!(accounting.messages, 2);
        assert_eq!(
            accounting.models["m"],
            Tokens {
                input: 260,
                output: 14,
                cache_read: 40,
                cache_write: 0
            }
        );
        assert_eq!(accounting.tools["read_file"].uses, 1);
        assert_eq!(
            accounting.first_timestamp.as_deref(),
            Some("2026-12-06T12:00:00.000Z")
        );
        assert_eq!(
            accounting.last_timestamp.as_deref(),
            Some("2026-12-06T12:00:05.000Z")
        );
    }

    #[test]
    fn gemini_cli_home_stands_for_the_home_folder() {
        let roots = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            ChatHistory.default_roots(&|name| {
                vars.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| OsString::from(v))
            })
        };
        assert_eq!(roots(&[("HOME", "/h")]), [PathBuf::from("/h/.gemini/tmp")]);
        assert_eq!(
            roots(&[("HOME", "/h"), ("GEMINI_CLI_HOME", "/g")]),
            [PathBuf::from("/g/.gemini/tmp")]
        );
        assert!(roots(&[]).is_empty());
    }

    #[test]
    fn a_chat_whose_last_prompt_got_no_answer_is_incomplete() {
        let (events, outcome, _) = decoded(&[
            r#"{"sessionId":"abc-1","startTime":"2026-12-06T12:00:00.000Z","kind":"main"}"#,
            r#"{"id":"u1","timestamp":"2026-12-06T12:00:01.000Z","type":"user","content":[{"text":"Hi"}]}"#,
        ]);
        assert_eq!(
            events,
            [json!({"kind": "error", "message": "stream ended without a result"})]
        );
        assert_eq!(outcome.status, harness_agents_core::Status::Incomplete);
    }
}
