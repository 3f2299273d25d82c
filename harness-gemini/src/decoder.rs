//! The incremental normalizer for `gemini --output-format stream-json` (S and G rules, O1).

use harness_core::backend::text::truncate_chars;
use harness_core::backend::{Decoder, Driver, Emitter, NotJson, Summary, parse_value};
use harness_core::{
    Event, EventBody, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus,
    UnknownReason, WarningSource,
};
use serde_json::{Number, Value, json};

use crate::tools::{self, Context, Mapping};

/// J6: a tool's failure text is cut to its first 1,000 characters.
const MAX_ERROR: usize = 1_000;

/// The Gemini CLI normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`GeminiDecoder`] the G rules.
pub type GeminiNormalizer = Driver<GeminiDecoder>;

/// A `tool_use` waiting for its `tool_result` (G4).
#[derive(Debug)]
struct Use {
    id: String,
    /// `tool_name`, when a string.
    tool: Option<String>,
    /// The `tool_use` line, for `raw` and for the mapping.
    line: Value,
}

/// The decoding of Gemini CLI's `stream-json` lines (G rules).
///
/// Its state is the assistant text being assembled (G3), the tool uses waiting for their
/// results in the order they were recorded (G4), and a few figures for the outcome (G10).
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    cwd: Option<String>,
    workspace: Option<String>,
    session_id: Option<String>,

    /// The assistant chunks of the current turn, joined (G3).
    text: String,
    /// The last line that added non-empty text (J2).
    text_line: Option<u64>,

    /// Pending tool uses, in record order (G4).
    uses: Vec<Use>,

    results: u64,
    failed: bool,
    /// An `error` line of severity `error` arrived since the last `result` (G10).
    reported: bool,
    /// The last `result` line's `stats` (G10).
    stats: Option<Value>,
    /// The last agent text since the previous `result` line (O1).
    answer: Option<String>,
    final_output: Option<String>,
}

/// A string field of a line.
fn string<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// `{"tool_use": U, "tool_result": R}` (J8, as for Claude's tool uses).
fn tool_raw(tool_use: Value, tool_result: Value) -> Value {
    json!({"tool_use": tool_use, "tool_result": tool_result})
}

impl GeminiDecoder {
    fn context(&self) -> Context<'_> {
        Context {
            cwd: self.cwd.as_deref(),
            workspace: self.workspace.as_deref(),
        }
    }

    /// G3: the turn's text as one `agent` event, on the last line that added to it.
    fn flush(&mut self, out: &mut Emitter<'_>) {
        let text = std::mem::take(&mut self.text);
        let line = self.text_line.take();
        if text.is_empty() {
            return;
        }
        self.answer = Some(text.clone());
        let mut event = Event::new(EventBody::Agent { text });
        if let Some(line) = line {
            event = event.at_line(line);
        }
        out.event(event);
    }

    fn unknown(out: &mut Emitter<'_>, reason: UnknownReason, raw: Value, tool: ToolRef) {
        out.emit(EventBody::Unknown { reason, raw, tool });
    }

    fn on_value(&mut self, value: Value, out: &mut Emitter<'_>) {
        let Some(kind) = string(&value, "type") else {
            // S3: not an object, or no string `type`.
            self.flush(out);
            Self::unknown(out, UnknownReason::NotAnEvent, value, ToolRef::default());
            return;
        };
        if kind == "message" && string(&value, "role") == Some("assistant") {
            if let Some(chunk) = string(&value, "content") {
                // G3: a chunk of the turn's text; it flushes nothing.
                if chunk.is_empty() {
                    out.consumed_by("G3");
                } else {
                    self.text.push_str(chunk);
                    self.text_line = out.line();
                    out.defer();
                }
                return;
            }
        }
        // G3: every other JSON line ends the text being assembled.
        self.flush(out);
        match kind {
            "init" => {
                out.consumed_by("G2");
                if self.session_id.is_none() {
                    self.session_id = string(&value, "session_id")
                        .filter(|id| !id.is_empty())
                        .map(str::to_string);
                }
            }
            "message" => match (string(&value, "role"), string(&value, "content")) {
                (Some("user"), Some(_)) => out.consumed_by("G3"),
                _ => Self::unknown(
                    out,
                    UnknownReason::MalformedMessage,
                    value,
                    ToolRef::default(),
                ),
            },
            "tool_use" => self.tool_use(value, out),
            "tool_result" => self.tool_result(value, out),
            // G9: by severity.
            "error" => {
                let message = string(&value, "message").unwrap_or_default().to_string();
                if string(&value, "severity") == Some("warning") {
                    let source = WarningSource::Stream;
                    out.emit(EventBody::Warning { message, source });
                } else {
                    let message = if message.is_empty() {
                        "error".to_string()
                    } else {
                        message
                    };
                    self.reported = true;
                    out.emit(EventBody::Error { message });
                }
            }
            "result" => self.result(&value, out),
            // G1: a type this backend does not know.
            _ => Self::unknown(out, UnknownReason::UnknownType, value, ToolRef::default()),
        }
    }

    /// G4: records a tool use under its `tool_id`; one without a string id cannot be paired
    /// and is `malformed_tool_use` at once.
    fn tool_use(&mut self, line: Value, out: &mut Emitter<'_>) {
        let tool = string(&line, "tool_name").map(str::to_string);
        let Some(id) = string(&line, "tool_id").map(str::to_string) else {
            let tool = ToolRef {
                tool,
                tool_use_id: None,
            };
            let raw = tool_raw(line, Value::Null);
            Self::unknown(out, UnknownReason::MalformedToolUse, raw, tool);
            return;
        };
        let tool_ref = ToolRef {
            tool: tool.clone(),
            tool_use_id: Some(id.clone()),
        };
        if out.wants_started() {
            let ok = ToolStatus {
                success: true,
                error: None,
            };
            let would_be = match tool.as_deref() {
                Some(name) => {
                    match tools::map(name, &params(&line), &ok, &tool_ref, self.context()) {
                        Mapping::Events(bodies) => bodies,
                        _ => Vec::new(),
                    }
                }
                None => Vec::new(),
            };
            out.started_from(tool_ref, &would_be, None);
        }
        self.uses.push(Use { id, tool, line });
        out.defer();
    }

    /// G5: resolves the pending use with the result's `tool_id`.
    fn tool_result(&mut self, line: Value, out: &mut Emitter<'_>) {
        let id = string(&line, "tool_id").map(str::to_string);
        let candidates: Vec<usize> = match &id {
            Some(id) => (0..self.uses.len())
                .filter(|&i| self.uses[i].id == *id)
                .collect(),
            None => Vec::new(),
        };
        match candidates[..] {
            [] => {
                let tool = ToolRef {
                    tool: None,
                    tool_use_id: id,
                };
                let raw = tool_raw(Value::Null, line);
                Self::unknown(out, UnknownReason::UnpairedResult, raw, tool);
            }
            [i] => {
                let tool_use = self.uses.remove(i);
                self.resolved(tool_use, line, out);
            }
            _ => {
                // G5 (C11): never guess; every candidate is settled.
                let mut uses = Vec::with_capacity(candidates.len());
                for i in candidates.into_iter().rev() {
                    uses.push(self.uses.remove(i).line);
                }
                uses.reverse();
                let tool = ToolRef {
                    tool: None,
                    tool_use_id: id,
                };
                let raw = tool_raw(Value::Array(uses), line);
                Self::unknown(out, UnknownReason::AmbiguousToolUseId, raw, tool);
            }
        }
    }

    /// G5-G7: the events of a tool use its result resolved.
    fn resolved(&mut self, tool_use: Use, result: Value, out: &mut Emitter<'_>) {
        let status = result_status(&result);
        let tool = ToolRef {
            tool: tool_use.tool.clone(),
            tool_use_id: Some(tool_use.id.clone()),
        };
        let mapping = match tool_use.tool.as_deref() {
            Some(name) => tools::map(
                name,
                &params(&tool_use.line),
                &status,
                &tool,
                self.context(),
            ),
            None => Mapping::Malformed,
        };
        match mapping {
            Mapping::Events(bodies) => {
                for body in bodies {
                    out.emit(body);
                }
            }
            Mapping::Plan(items) => {
                if status.success {
                    out.emit(EventBody::Plan { items });
                } else {
                    // G7: a failed `write_todos` changed no plan; the caller still sees it.
                    let why = status.error.as_deref().unwrap_or("no reason given");
                    out.emit(EventBody::Warning {
                        message: format!("write_todos failed: {why}"),
                        source: WarningSource::Stream,
                    });
                }
            }
            Mapping::UnknownTool => {
                let raw = tool_raw(tool_use.line, result);
                Self::unknown(out, UnknownReason::UnknownTool, raw, tool);
            }
            Mapping::Malformed => {
                let raw = tool_raw(tool_use.line, result);
                Self::unknown(out, UnknownReason::MalformedToolUse, raw, tool);
            }
        }
    }

    /// G10: the terminal `result` line.
    fn result(&mut self, line: &Value, out: &mut Emitter<'_>) {
        out.terminal();
        self.results += 1;
        self.final_output = self.answer.take();
        if let Some(stats) = line.get("stats").filter(|s| s.is_object()) {
            self.stats = Some(stats.clone());
        }
        let status = string(line, "status");
        let reported = std::mem::take(&mut self.reported);
        if status == Some("success") {
            return;
        }
        self.failed = true;
        let message = line
            .get("error")
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty());
        match (message, reported) {
            (Some(message), _) => out.emit(EventBody::Error {
                message: message.to_string(),
            }),
            // The failure was already reported by an `error` line.
            (None, true) => {}
            (None, false) => out.emit(EventBody::Error {
                message: match status {
                    Some(status) => format!("result status: {status}"),
                    None => "result without a status".to_string(),
                },
            }),
        }
    }

    fn metrics(&self) -> Metrics {
        let mut metrics = Metrics::default();
        let number = |key: &str| match self.stats.as_ref().and_then(|s| s.get(key)) {
            Some(Value::Number(n)) => Some(n.clone()),
            _ => None,
        };
        metrics.input_tokens = number("input_tokens");
        metrics.output_tokens = number("output_tokens");
        metrics.cache_read_input_tokens = number("cached");
        metrics.duration_ms = number("duration_ms");
        metrics.num_turns = (self.results > 0).then(|| Number::from(self.results));
        metrics
    }
}

/// A tool use's `parameters` (`null` when missing).
fn params(line: &Value) -> Value {
    line.get("parameters").cloned().unwrap_or(Value::Null)
}

/// G5: `success` when `status` is `"success"`; otherwise the failure text is the result's
/// `error.message`, else its `output`, when a non-empty string (J6).
fn result_status(result: &Value) -> ToolStatus {
    if string(result, "status") == Some("success") {
        return ToolStatus {
            success: true,
            error: None,
        };
    }
    let message = result
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
        .or_else(|| string(result, "output").filter(|o| !o.is_empty()));
    ToolStatus {
        success: false,
        error: message.map(|m| truncate_chars(m, MAX_ERROR).to_string()),
    }
}

impl Decoder for GeminiDecoder {
    fn new(config: &NormalizerConfig) -> Self {
        GeminiDecoder {
            cwd: config.cwd.clone(),
            workspace: config.workspace.clone(),
            ..GeminiDecoder::default()
        }
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // G3: a line that is not JSON does not end the text being assembled.
        self.on_value(parse_value(line)?, out);
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush(out);
        // G11: one use at a time, in record order, its memory freed as it goes (S7, S9).
        for tool_use in std::mem::take(&mut self.uses) {
            let tool = ToolRef {
                tool: tool_use.tool,
                tool_use_id: Some(tool_use.id),
            };
            let raw = tool_raw(tool_use.line, Value::Null);
            Self::unknown(out, UnknownReason::UnresolvedToolUse, raw, tool);
        }
    }

    fn summary(&self) -> Summary {
        let mut summary = Summary::default();
        summary.failed = self.failed;
        summary.final_output = self.final_output.clone();
        summary.metrics = self.metrics();
        summary
    }

    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses
            .iter()
            .map(|u| PendingToolUse {
                id: u.id.clone(),
                tool: u.tool.clone(),
                thread: None,
            })
            .collect()
    }
}
