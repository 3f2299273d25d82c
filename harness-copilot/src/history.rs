//! The GitHub Copilot CLI's stored history (the CH rules of `docs/sessions.md`): each session's
//! `events.jsonl`, whose events are the stdout lines of the live stream (CP rules), read through
//! the live decoder, with the records stdout lacks read for the session's id and figures.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::stored::{self, Accounting, History, SessionFiles, Tokens};
use harness_agents_core::{Event, NormalizerConfig, Outcome};
use serde_json::{Map, Value, json};

use crate::CopilotNormalizer;

/// Copilot's stored history, registered as `"copilot"`: the files
/// `~/.copilot/session-state/<session id>/events.jsonl` (`COPILOT_HOME` stands for
/// `~/.copilot`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CopilotHistory;

/// The file of a session's folder that holds its events.
const EVENTS: &str = "events.jsonl";

impl History for CopilotHistory {
    fn name(&self) -> &'static str {
        "copilot"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["COPILOT_HOME", "HOME"]
    }

    /// CH1: `$COPILOT_HOME/session-state`, else `~/.copilot/session-state`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        match var("COPILOT_HOME") {
            Some(dir) => vec![Path::new(&dir).join("session-state")],
            None => var("HOME")
                .map(|home| Path::new(&home).join(".copilot/session-state"))
                .into_iter()
                .collect(),
        }
    }

    /// A home folder (its `.copilot/session-state`), Copilot's folder (its `session-state`),
    /// or the folder of sessions itself.
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        stored::first_folder(dir, &[".copilot/session-state", "session-state"])
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        for folder in stored::sorted_paths(root, |_| true) {
            let main = folder.join(EVENTS);
            if !main.is_file() {
                continue;
            }
            // CH1: the folder's name is the session id its `session.start` names.
            let id = folder
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            found.push(SessionFiles {
                backend: self.name(),
                id,
                main,
                subagents: Vec::new(),
                project_dir: None,
            });
        }
    }

    fn decode(
        &self,
        files: &SessionFiles,
        index: usize,
        sink: &mut dyn FnMut(Event),
    ) -> io::Result<(Outcome, Accounting)> {
        // CH2: paths resolve against the session's directory, as the live run's `--cwd` (CP10).
        let mut config = NormalizerConfig::default();
        config.cwd = start_cwd(&files.main);
        stored::decode_one_file(
            files,
            index,
            CopilotNormalizer::new(config),
            read_events,
            sink,
        )
    }

    fn tally(
        &self,
        files: &SessionFiles,
        index: usize,
        _buf: &mut Vec<u8>,
    ) -> io::Result<(Option<String>, Accounting)> {
        stored::tally_one_file(files, index, read_events)
    }
}

/// The directory the file's first line, a `session.start`, names, when it does.
fn start_cwd(path: &Path) -> Option<String> {
    let value = stored::first_line_value(path)?;
    if value.get("type")?.as_str()? != "session.start" {
        return None;
    }
    let cwd = value.pointer("/data/context/cwd")?.as_str()?;
    (!cwd.is_empty()).then(|| cwd.to_string())
}

/// The translation of one events file: where it is and the figures.
#[derive(Default)]
struct Stored {
    session_id: Option<String>,
    /// Whether the run since the last start or resume reported a failure (CH5).
    failed: bool,
    /// The session's API time at the last `session.shutdown` (CH5): Copilot's figure is a
    /// running total.
    api_ms: u64,
    /// A model call's figures, waiting for the message that names its tools (CH4).
    pending: Option<(String, Tokens)>,
    accounting: Accounting,
}

/// CH2-CH6: reads an events file line by line; each line the live decoder is to read goes to
/// `out`.
fn read_events(path: &Path, out: &mut dyn FnMut(&str)) -> io::Result<(Option<String>, Accounting)> {
    let mut stored = Stored::default();
    stored::each_text_line(path, &mut |text| stored.line(text, out))?;
    stored.charge(&[]);
    Ok((stored.session_id, stored.accounting))
}

/// The string at `key` of `map`, when it is one.
fn text<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    map.get(key).and_then(Value::as_str)
}

impl Stored {
    fn line(&mut self, line: &str, out: &mut dyn FnMut(&str)) {
        let Ok(Value::Object(entry)) = serde_json::from_str::<Value>(line) else {
            // CH6: not a JSON object: the decoder reports it (S2, S3).
            out(line);
            return;
        };
        if let Some(at) = text(&entry, "timestamp") {
            self.accounting.timestamp(at);
        }
        let data = entry.get("data").and_then(Value::as_object);
        match (text(&entry, "type"), data) {
            // CH2: the session's id, directory and model; stdout prints no such line.
            (Some("session.start"), Some(data)) => {
                if self.session_id.is_none() {
                    self.session_id = text(data, "sessionId").map(String::from);
                }
                if self.accounting.cwd.is_none() {
                    self.accounting.cwd = data
                        .get("context")
                        .and_then(|c| c.get("cwd"))
                        .and_then(Value::as_str)
                        .map(String::from);
                }
                self.failed = false;
            }
            // CH2: a resumed run starts; the system prompt is the agent's own.
            (Some("session.resume"), Some(_)) => self.failed = false,
            (Some("system.message"), Some(_)) => {}
            // CH3: a permission asked and its answer, which stdout never prints; the tool's
            // completion carries a denial as its error (CP8).
            (Some("permission.requested" | "permission.completed"), Some(_)) => {}
            // CH4: one model call's figures.
            (Some("session.usage_record"), Some(data)) => self.usage(data),
            // CH5: the process ends: the live `result` line.
            (Some("session.shutdown"), Some(data)) => self.shutdown(data, out),
            (Some("user.message"), Some(data)) => {
                // CH3: a prompt, and the live echo (CP4).
                self.accounting.prompt(text(data, "content").unwrap_or(""));
                out(line);
            }
            (Some("session.error"), _) => {
                // CH5: the run fails (its `result` says so), and the live line is the error.
                self.failed = true;
                out(line);
            }
            (Some("assistant.message"), Some(data)) => {
                // CH4: the message of the call before it: its tools are that call's.
                let tools: Vec<String> = data
                    .get("toolRequests")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.get("name").and_then(Value::as_str))
                    .map(String::from)
                    .collect();
                self.charge(&tools);
                out(line);
            }
            // CH3, CH6: every other line is the live line itself, read by its CP rule.
            _ => out(line),
        }
    }

    /// CH4: a `session.usage_record`: one model message of its model, its tokens.
    fn usage(&mut self, data: &Map<String, Value>) {
        let usage = data.get("usage");
        let n = |key: &str| {
            usage
                .and_then(|u| u.get(key))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let (cache_read, cache_write) = (n("cacheReadTokens"), n("cacheWriteTokens"));
        let tokens = Tokens {
            input: n("inputTokens").saturating_sub(cache_read.saturating_add(cache_write)),
            output: n("outputTokens"),
            cache_read,
            cache_write,
        };
        let model = usage
            .and_then(|u| u.get("model"))
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        self.charge(&[]);
        self.pending = Some((model.to_string(), tokens));
    }

    /// CH4: the waiting call's figures, charged with the tools its message asked for.
    fn charge(&mut self, tools: &[String]) {
        if let Some((model, tokens)) = self.pending.take() {
            self.accounting.message(&model, &tokens, tools);
        }
    }

    /// CH5: the live `result` of the run that ends: the session id, the verdict (1 after a
    /// `session.error`, else 0) and the run's API time (the growth of Copilot's running
    /// total, so the outcome's sum over the runs is the session's).
    fn shutdown(&mut self, data: &Map<String, Value>, out: &mut dyn FnMut(&str)) {
        self.charge(&[]);
        let exit = if std::mem::take(&mut self.failed) {
            1
        } else {
            0
        };
        let mut result = json!({"type": "result", "exitCode": exit});
        if let Some(id) = &self.session_id {
            result["sessionId"] = json!(id);
        }
        if let Some(ms) = data
            .get("accountingSnapshot")
            .and_then(|a| a.get("totalApiDurationMs"))
            .and_then(Value::as_u64)
        {
            let run = ms.saturating_sub(self.api_ms);
            self.api_ms = ms;
            result["usage"] = json!({"totalApiDurationMs": run});
        }
        out(&result.to_string());
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use harness_agents_core::{EventBody, Status, UnknownReason, WarningSource};

    use super::*;

    /// Writes `lines` as a session's `events.jsonl` in a folder of its own and decodes it.
    fn decode(name: &str, lines: &[&str]) -> (Vec<Event>, Outcome, Accounting) {
        let root =
            std::env::temp_dir().join(format!("copilot-history-{}-{name}", std::process::id()));
        let folder = root.join("s-1");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(EVENTS), lines.join("\n")).unwrap();
        let mut found = Vec::new();
        CopilotHistory.discover(&root, &mut found);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].id, "s-1");
        let mut events = Vec::new();
        let (outcome, accounting) = CopilotHistory
            .decode(&found[0], 0, &mut |e| events.push(e))
            .unwrap();
        assert!(CopilotHistory.tally(&found[0], 1, &mut Vec::new()).is_err());
        std::fs::remove_dir_all(&root).unwrap();
        (events, outcome, accounting)
    }

    const START: &str = r#"{"type":"session.start","timestamp":"2026-01-01T00:00:00Z","data":{"sessionId":"s-1","context":{"cwd":"/p"}}}"#;

    /// CH2-CH6: the stored lines are the live ones, a relative path resolved against the
    /// session's directory; a line that is not JSON and an unknown type are reported; a
    /// `session.error` makes the run's `result` a failure; the usage records give the tokens.
    #[test]
    fn stored_lines_read_as_the_live_ones() {
        let (events, outcome, accounting) = decode(
            "lines",
            &[
                START,
                r#"{"type":"system.message","data":{"role":"system","content":"..."}}"#,
                r#"{"type":"user.message","data":{"content":"Read a.txt"}}"#,
                "not json",
                r#"{"type":"session.novelty","data":{}}"#,
                r#"{"type":"session.usage_record","data":{"usage":{"model":"gpt-4.1","inputTokens":100,"outputTokens":7,"cacheReadTokens":60,"cacheWriteTokens":10}}}"#,
                r#"{"type":"assistant.message","data":{"content":"","toolRequests":[{"toolCallId":"c1","name":"view"}]}}"#,
                r#"{"type":"tool.execution_start","data":{"toolCallId":"c1","toolName":"view","arguments":{"path":"a.txt"}}}"#,
                r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true,"result":{"content":"a"}}}"#,
                r#"{"type":"session.error","data":{"message":"gave up"}}"#,
                r#"{"type":"session.shutdown","timestamp":"2026-01-01T00:00:09Z","data":{"accountingSnapshot":{"totalApiDurationMs":5}}}"#,
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
        assert!(matches!(bodies[2], EventBody::Read { path, .. } if path == "/p/a.txt"));
        assert!(matches!(bodies[3], EventBody::Error { message } if message == "gave up"));
        assert_eq!(bodies.len(), 4);
        assert_eq!(outcome.status, Status::Error);
        assert_eq!(outcome.session_id.as_deref(), Some("s-1"));
        assert_eq!(accounting.first_prompt.as_deref(), Some("Read a.txt"));
        assert_eq!(accounting.cwd.as_deref(), Some("/p"));
        let tokens = accounting.tokens();
        let four = (
            tokens.input,
            tokens.output,
            tokens.cache_read,
            tokens.cache_write,
        );
        assert_eq!(four, (30, 7, 60, 10));
        assert_eq!(accounting.tools["view"].uses, 1);
        assert_eq!(
            accounting.last_timestamp.as_deref(),
            Some("2026-01-01T00:00:09Z")
        );
    }

    /// CH5: a run cut short stores no `session.shutdown`: no `result`, and S9's error.
    #[test]
    fn a_run_without_its_shutdown_is_incomplete() {
        let (events, outcome, _) = decode(
            "cut",
            &[START, r#"{"type":"user.message","data":{"content":"Hi"}}"#],
        );
        assert!(
            matches!(&events[..], [Event { body: EventBody::Error { message }, .. }] if message == "stream ended without a result")
        );
        assert_eq!(outcome.status, Status::Incomplete);
    }
}
