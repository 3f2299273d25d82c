//! Scenarios as data: `fixtures/claude/scenarios/NAME.json`.
//!
//! A scenario says how the binary is run (the prompt, the arguments after it, extra or removed
//! environment variables, lines for its standard input, an interrupt), what the scratch project
//! holds, and what the stand-in answers: the main thread's [`Turn`]s, each sub-agent's
//! ([`Scenario::agents`]), each chosen by the place in its conversation of the request it
//! answers ([`Turn::step`]), and [`Scenario::side_answer`] for every request without tools
//! (titles, summaries, WebFetch's page digest).
//!
//! ```json
//! {
//!   "prompt": "Read nope.txt",
//!   "args": ["--output-format", "stream-json", "--verbose", "--dangerously-skip-permissions"],
//!   "files": {"README.md": "# Demo\n"},
//!   "turns": [
//!     {"blocks": [{"type": "tool_use", "id": "toolu_01", "name": "Read",
//!                  "input": {"file_path": "/home/dev/project/nope.txt"}}]},
//!     {"blocks": [{"type": "text", "text": "The file does not exist."}]},
//!     {"error": {"status": 529, "body": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}}}
//!   ]
//! }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// One scripted run.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The prompt argument right after `--print`; `None` when the prompt comes on stdin.
    pub prompt: Option<String>,
    /// The arguments after the prompt.
    pub args: Vec<String>,
    /// Variables added to (or replacing) the standard environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Standard variables this scenario leaves out (e.g. `ANTHROPIC_API_KEY` for OAuth).
    #[serde(default)]
    pub unset_env: Vec<String>,
    /// Files of the scratch project, by path relative to it.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// A fixed port for the stand-in, when the recorded text names it.
    #[serde(default)]
    pub port: Option<u16>,
    /// The answer to requests without tools.
    #[serde(default)]
    pub side_answer: Option<String>,
    /// Lines written to the binary's stdin at the start (`--input-format stream-json`).
    #[serde(default)]
    pub stdin: Vec<Value>,
    /// An HTTPS page served on 127.0.0.1 during the run (with `openssl s_server`), its
    /// self-signed certificate at `HOME/tls/cert.pem`.
    #[serde(default)]
    pub https_page: Option<HttpsPage>,
    /// Something done to the running binary once a stdout line shows a tool use.
    #[serde(default)]
    pub interrupt: Option<Interrupt>,
    /// The main thread's answers to the requests that carry `tools`, chosen from the request
    /// itself (see [`Turn::step`]).
    pub turns: Vec<Turn>,
    /// The answers of each sub-agent: the key is a text its first user message contains (the
    /// `prompt` of the `Agent` tool use that started it), the turns are chosen as the main
    /// thread's are. A background sub-agent runs beside the main thread, so which request
    /// comes first varies; the answer never depends on it.
    #[serde(default)]
    pub agents: BTreeMap<String, Vec<Turn>>,
    /// Why this scenario cannot be re-recorded here yet, when it cannot.
    #[serde(default)]
    pub unsupported: Option<String>,
}

/// A page for WebFetch to fetch over loopback HTTPS.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpsPage {
    /// The port (fixed: the scripted tool use names the URL).
    pub port: u16,
    /// The URL path, e.g. `/fixture/page.html`.
    pub path: String,
    /// The page.
    pub body: String,
}

/// How to interrupt the run once the first tool use shows on stdout.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Interrupt {
    /// Send SIGINT to the binary.
    Sigint,
    /// Write this line to its stdin (a `control_request`).
    Stdin(Value),
}

/// One answer of the stand-in.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    /// The message id; a generated one when absent.
    #[serde(default)]
    pub id: Option<String>,
    /// Content blocks: `text`, `thinking`, `redacted_thinking`, `tool_use`, each as the
    /// Messages API spells it, optionally with `chunks` (the delta pieces, in order). Kept as
    /// written, so a tool input reaches the binary with its keys in the scenario's order.
    #[serde(default)]
    pub blocks: Vec<Box<RawValue>>,
    /// `end_turn`, `tool_use`, `max_tokens`, ...; by default `tool_use` when the last block is
    /// one, else `end_turn`.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// Extra response headers (rate-limit headers).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Answer with this HTTP error instead of a stream.
    #[serde(default)]
    pub error: Option<HttpError>,
    /// End the stream with this `error` event after the blocks, instead of `message_delta`.
    #[serde(default)]
    pub stream_error: Option<Value>,
    /// The number of assistant messages the request this turn answers carries (its place in
    /// the conversation); by default one more than the turn before, or the same as the turn
    /// before when that was an HTTP `error` (the binary retries with the same messages).
    /// Several turns with the same step answer the first, second, ... request at that step.
    #[serde(default)]
    pub step: Option<usize>,
    /// Answer this long after the request came (the other requests meanwhile are answered at
    /// once): puts a background sub-agent's output after the main thread's, where the two
    /// would otherwise race.
    #[serde(default)]
    pub delay_ms: Option<u64>,
    /// Stream the blocks with this pause after each but the last: an agent that runs a tool
    /// as soon as its block is complete (opencode) runs two of one turn one after the other,
    /// in the blocks' order, where they would otherwise race.
    #[serde(default)]
    pub pause_ms: Option<u64>,
}

/// An HTTP error answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpError {
    /// The status code.
    pub status: u16,
    /// Response headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The JSON body.
    pub body: Value,
}

impl HttpError {
    /// The error as the stand-in answers it: the status, the JSON body, the headers.
    pub fn reply(&self) -> super::server::Reply {
        let mut reply = super::server::Reply::json(self.status, &self.body);
        reply
            .headers
            .extend(self.headers.iter().map(|(k, v)| (k.clone(), v.clone())));
        reply
    }
}

impl Turn {
    /// The blocks, parsed.
    pub fn values(&self) -> Vec<Value> {
        self.blocks
            .iter()
            .map(|b| serde_json::from_str(b.get()).unwrap_or(Value::Null))
            .collect()
    }
}

impl Scenario {
    /// Reads and checks one scenario file.
    pub fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: Scenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        scenario
            .validate()
            .with_context(|| format!("checking {}", path.display()))?;
        Ok(scenario)
    }

    /// The rules a scenario must follow to be run safely.
    pub fn validate(&self) -> Result<()> {
        if let Some(prompt) = &self.prompt
            && prompt.starts_with('-')
        {
            bail!("a prompt argument starting with '-' would be parsed as an option");
        }
        for file in self.files.keys() {
            let path = Path::new(file);
            if path.is_absolute()
                || path
                    .components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                bail!("file {file:?} must be a plain relative path inside the project");
            }
        }
        if let Some(page) = &self.https_page {
            let relative = page.path.trim_start_matches('/');
            if relative.is_empty() || relative.split('/').any(|c| c.is_empty() || c == "..") {
                bail!(
                    "https_page path {:?} must be a plain absolute URL path",
                    page.path
                );
            }
        }
        for (i, turn) in self
            .turns
            .iter()
            .enumerate()
            .chain(self.agents.values().flat_map(|t| t.iter().enumerate()))
        {
            if turn.step.is_some_and(|s| s > 1000) {
                bail!("turn {}: step out of range", i + 1);
            }
            if turn.delay_ms.is_some_and(|d| d > 60_000) {
                bail!("turn {}: delay_ms above a minute", i + 1);
            }
            if turn.pause_ms.is_some_and(|d| d > 10_000) {
                bail!("turn {}: pause_ms above ten seconds", i + 1);
            }
            for block in turn.values() {
                let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
                if !matches!(kind, "text" | "thinking" | "redacted_thinking" | "tool_use") {
                    bail!("turn {}: unknown block type {kind:?}", i + 1);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_scenario_loads() {
        let dir = fixtures::root().join("claude/scenarios");
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                Scenario::load(&path).unwrap();
                count += 1;
            }
        }
        assert_eq!(count, 49, "one scenario per recording in fixtures/claude");
    }

    #[test]
    fn unsafe_scenarios_are_refused() {
        let dash = Scenario {
            prompt: Some("--model x".into()),
            ..Scenario::default()
        };
        assert!(dash.validate().is_err());
        let mut escape = Scenario::default();
        escape.files.insert("../x".into(), String::new());
        assert!(escape.validate().is_err());
    }
}
