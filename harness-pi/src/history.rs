//! Pi's stored history (the PH rules of `docs/sessions.md`): its session files, each entry
//! read back as the `pi --mode json` lines it stands for, through the live decoder (PI rules).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::stored::{self, Accounting, History, SessionFiles, Tokens};
use harness_agents_core::{Event, NormalizerConfig, Outcome};
use serde_json::{Map, Value, json};

use crate::PiNormalizer;

/// Pi's stored history, registered as `"pi"`: the files
/// `~/.pi/agent/sessions/--<cwd>--/<time>_<id>.jsonl` (`PI_CODING_AGENT_DIR` stands for
/// `~/.pi/agent`).
#[derive(Debug, Clone, Copy, Default)]
pub struct PiHistory;

impl History for PiHistory {
    fn name(&self) -> &'static str {
        "pi"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["PI_CODING_AGENT_DIR", "HOME"]
    }

    /// PH1: `$PI_CODING_AGENT_DIR/sessions`, else `~/.pi/agent/sessions`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        match var("PI_CODING_AGENT_DIR") {
            Some(dir) => vec![Path::new(&dir).join("sessions")],
            None => var("HOME")
                .map(|home| Path::new(&home).join(".pi/agent/sessions"))
                .into_iter()
                .collect(),
        }
    }

    /// A home folder (its `.pi/agent/sessions`), Pi's agent folder (its `sessions`), or the
    /// folder of projects itself.
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        stored::first_folder(dir, &[".pi/agent/sessions", "agent/sessions", "sessions"])
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        for project in stored::sorted_paths(root, Path::is_dir) {
            let files =
                stored::sorted_paths(&project, |p| p.extension().is_some_and(|e| e == "jsonl"));
            let project_dir = project
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            for main in files {
                // PH1: the header's id, else what follows the time in the file's name.
                let id = header_id(&main).unwrap_or_else(|| {
                    let stem = main
                        .file_stem()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or_default();
                    match stem.split_once('_') {
                        Some((_, id)) => id.to_string(),
                        None => stem,
                    }
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
        stored::decode_one_file(
            files,
            index,
            PiNormalizer::new(NormalizerConfig::default()),
            read_session,
            sink,
        )
    }

    fn tally(
        &self,
        files: &SessionFiles,
        index: usize,
        _buf: &mut Vec<u8>,
    ) -> io::Result<(Option<String>, Accounting)> {
        stored::tally_one_file(files, index, read_session)
    }
}

/// The `id` of a session file's header line, when it has one.
fn header_id(path: &Path) -> Option<String> {
    let value = stored::first_line_value(path)?;
    if value.get("type")?.as_str()? != "session" {
        return None;
    }
    value.get("id")?.as_str().map(str::to_string)
}

/// The translation of one session file: where it is and the figures.
#[derive(Default)]
struct Stored {
    session_id: Option<String>,
    /// Whether an assistant message came since the last prompt (a run to end, PH5).
    answered: bool,
    /// Whether an assistant message's turn is still open (PH4).
    turn: bool,
    /// The sum of the assistant messages' `usage.cost.total` (PH4).
    cost: Option<f64>,
    accounting: Accounting,
}

/// PH2-PH6: reads a session file line by line; each line the live decoder is to read goes to
/// `out`.
fn read_session(
    path: &Path,
    out: &mut dyn FnMut(&str),
) -> io::Result<(Option<String>, Accounting)> {
    let mut stored = Stored::default();
    stored::each_text_line(path, &mut |text| stored.line(text, out))?;
    stored.end_run(out);
    stored.accounting.reported_cost = stored.cost;
    Ok((stored.session_id, stored.accounting))
}

impl Stored {
    fn line(&mut self, line: &str, out: &mut dyn FnMut(&str)) {
        let Ok(Value::Object(entry)) = serde_json::from_str::<Value>(line) else {
            // PH6: not a JSON object: the decoder reports it (S2, S3).
            out(line);
            return;
        };
        if let Some(at) = entry.get("timestamp").and_then(Value::as_str) {
            self.accounting.timestamp(at);
        }
        match entry.get("type").and_then(Value::as_str) {
            // PH2: the header, as the live stream prints it (PI2).
            Some("session") => {
                if self.session_id.is_none() {
                    self.session_id = entry.get("id").and_then(Value::as_str).map(String::from);
                }
                if self.accounting.cwd.is_none() {
                    self.accounting.cwd =
                        entry.get("cwd").and_then(Value::as_str).map(String::from);
                }
                out(line);
            }
            // PH3: the settings the session started with (or changed to): no event, as the
            // live stream prints none for them.
            Some("model_change" | "thinking_level_change") => {}
            Some("message") => match entry.get("message") {
                Some(Value::Object(message)) => self.message(message, out),
                // PH6: a message entry without one: the decoder reports the line.
                _ => out(line),
            },
            // PH6: any other entry (none was recorded to map) is kept for the decoder to
            // report (PI1: `unknown_type`).
            _ => out(line),
        }
    }

    /// PH4, PH5: one stored message, as the live lines around it.
    fn message(&mut self, message: &Map<String, Value>, out: &mut dyn FnMut(&str)) {
        let whole = Value::Object(message.clone());
        match message.get("role").and_then(Value::as_str) {
            Some("user") => {
                self.end_run(out);
                let text = match message.get("content") {
                    Some(Value::String(text)) => text.clone(),
                    Some(Value::Array(blocks)) => blocks
                        .iter()
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                self.accounting.prompt(&text);
                out(&json!({"type": "message_end", "message": whole}).to_string());
            }
            Some("assistant") => {
                self.end_turn(out);
                self.answered = true;
                self.turn = true;
                out(&json!({"type": "message_end", "message": whole}).to_string());
                let calls: Vec<&Map<String, Value>> = match message.get("content") {
                    Some(Value::Array(blocks)) => blocks
                        .iter()
                        .filter_map(Value::as_object)
                        .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                        .collect(),
                    _ => Vec::new(),
                };
                let mut tools = Vec::new();
                for call in &calls {
                    let name = call.get("name").cloned().unwrap_or(Value::Null);
                    if let Some(name) = name.as_str() {
                        tools.push(name.to_string());
                    }
                    out(&json!({"type": "tool_execution_start",
                        "toolCallId": call.get("id").cloned().unwrap_or(Value::Null),
                        "toolName": name,
                        "args": call.get("arguments").cloned().unwrap_or(Value::Null)})
                    .to_string());
                }
                self.figures(message, &tools);
            }
            Some("toolResult") => {
                let field = |key: &str| message.get(key).cloned().unwrap_or(Value::Null);
                let mut result = Map::new();
                result.insert("content".into(), field("content"));
                if let Some(details) = message.get("details") {
                    result.insert("details".into(), details.clone());
                }
                out(
                    &json!({"type": "tool_execution_end", "toolCallId": field("toolCallId"),
                    "toolName": field("toolName"), "result": result,
                    "isError": field("isError")})
                    .to_string(),
                );
                out(&json!({"type": "message_end", "message": whole}).to_string());
            }
            // PH4: any other role, as the live stream's `message_end` (PI4).
            _ => out(&json!({"type": "message_end", "message": whole}).to_string()),
        }
    }

    /// PH4: an assistant message's tokens, by model, and its cost.
    fn figures(&mut self, message: &Map<String, Value>, tools: &[String]) {
        let usage = message.get("usage");
        let n = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let tokens = Tokens {
            input: n("input"),
            output: n("output"),
            cache_read: n("cacheRead"),
            cache_write: n("cacheWrite"),
        };
        let model = message
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        self.accounting.message(model, &tokens, tools);
        if let Some(cost) = usage
            .and_then(|u| u.pointer("/cost/total"))
            .and_then(Value::as_f64)
        {
            *self.cost.get_or_insert(0.0) += cost;
        }
    }

    /// PH4: the turn of the last assistant message ends (the live `turn_end`).
    fn end_turn(&mut self, out: &mut dyn FnMut(&str)) {
        if std::mem::take(&mut self.turn) {
            out(r#"{"type":"turn_end"}"#);
        }
    }

    /// PH5: the agent's work on a prompt ends where the next prompt or the file begins (the
    /// live `agent_end`), when an assistant message came since the last one.
    fn end_run(&mut self, out: &mut dyn FnMut(&str)) {
        self.end_turn(out);
        if std::mem::take(&mut self.answered) {
            out(r#"{"type":"agent_end","messages":[]}"#);
        }
    }
}
