//! The incremental normalizer for `gemini --output-format stream-json` (S and G rules, O1).

use harness_agents_core::backend::text::{Joined, truncate_chars};
use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson, Summary, reparse, tool_raw};
use harness_agents_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
use std::sync::Arc;

use harness_agents_core::backend::json::{Loose, read_line};
use serde_json::{Number, Value};

use crate::tools::{self, Context, Mapping};
use crate::wire::{self, LineView};

/// J6: a tool's failure text is cut to its first 1,000 characters.
const MAX_ERROR: usize = 1_000;

/// The Gemini CLI normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`GeminiDecoder`] the G rules.
pub type GeminiNormalizer = Driver<GeminiDecoder>;

/// A `tool_use` waiting for its `tool_result` (G4).
#[derive(Debug)]
struct Use {
    /// Its `tool_id`, and its `tool_name` when a string.
    tool_use: PendingToolUse,
    /// `parameters` (`null` when missing), for the mapping.
    params: Value,
    /// The `tool_use` line, parsed again only when an event needs it as `raw`.
    line: Box<[u8]>,
}

/// The decoding of Gemini CLI's `stream-json` lines (G rules).
///
/// Its state is the assistant text being assembled (G3), the tool uses waiting for their
/// results in the order they were recorded (G4), and a few figures for the outcome (G10).
#[derive(Debug, Default)]
pub struct GeminiDecoder {
    cwd: Option<String>,
    workspace: Option<String>,

    /// The assistant chunks of the current turn, joined (G3); one chunk's text is shared with
    /// its event and the outcome (S7).
    text: Joined,
    /// The last line that added non-empty text (J2).
    text_line: Option<u64>,

    /// Pending tool uses, in record order (G4).
    uses: Vec<Use>,

    results: u64,
    /// An `error` line of severity `error` arrived since the last `result` (G10).
    reported: bool,
    /// The numbers of the last `result` line's `stats` object, in [`wire::STATS`] order (G10).
    stats: Option<[Option<Number>; 4]>,
    /// The last agent text since the previous `result` line (O1): its event's, shared (S7).
    answer: Option<Arc<str>>,
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
        let text = text.into_text();
        self.answer = Some(Arc::clone(&text));
        out.emit_at(EventBody::Agent { text }, line);
    }

    fn on_view(&mut self, view: LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let Some(kind) = view.kind.as_str() else {
            // S3: no string `type`.
            self.flush(out);
            out.unknown(UnknownReason::NotAnEvent, reparse(line));
            return;
        };
        if kind == "message" && view.role.as_str() == Some("assistant") {
            if let Some(chunk) = view.content.as_str() {
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
                if let Some(id) = view.session_id.non_empty_str() {
                    out.session_id(id);
                }
            }
            "message" => match (view.role.as_str(), view.content.as_str()) {
                (Some("user"), Some(_)) => out.consumed_by("G3"),
                _ => out.unknown(UnknownReason::MalformedMessage, reparse(line)),
            },
            "tool_use" => self.tool_use(view, line, out),
            "tool_result" => self.tool_result(&view, line, out),
            // G9: by severity.
            "error" => {
                let message = view.message.as_str().unwrap_or_default();
                if view.severity.as_str() == Some("warning") {
                    let source = WarningSource::Stream;
                    let message = message.to_string();
                    out.emit(EventBody::Warning { message, source });
                } else {
                    let message = if message.is_empty() { "error" } else { message };
                    self.reported = true;
                    out.emit(EventBody::Error {
                        message: message.to_string(),
                    });
                }
            }
            "result" => self.result(&view, out),
            // G1: a type this backend does not know.
            _ => out.unknown(UnknownReason::UnknownType, reparse(line)),
        }
    }

    /// G4: records a tool use under its `tool_id`; one without a string id cannot be paired
    /// and is `malformed_tool_use` at once.
    fn tool_use(&mut self, view: LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let tool = view.tool_name.as_str().map(str::to_string);
        let Some(id) = view.tool_id.as_str().map(str::to_string) else {
            let tool = ToolRef {
                tool,
                tool_use_id: None,
            };
            let raw = tool_raw(reparse(line), Value::Null);
            out.unknown_of(UnknownReason::MalformedToolUse, raw, tool);
            return;
        };
        let params = wire::Params::value(view.parameters);
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
                Some(name) => match tools::map(name, &params, &ok, &tool_ref, self.context()) {
                    Mapping::Events(bodies) => bodies,
                    _ => Vec::new(),
                },
                None => Vec::new(),
            };
            out.started_from(tool_ref, &would_be, None);
        }
        self.uses.push(Use {
            tool_use: PendingToolUse {
                id,
                tool,
                thread: None,
            },
            params,
            line: line.into(),
        });
        out.defer();
    }

    /// G5: resolves the pending use with the result's `tool_id`.
    fn tool_result(&mut self, view: &LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let id = view.tool_id.as_str();
        let candidates: Vec<usize> = match id {
            Some(id) => (0..self.uses.len())
                .filter(|&i| self.uses[i].tool_use.id == id)
                .collect(),
            None => Vec::new(),
        };
        let tool_use_id = id.map(str::to_string);
        match candidates[..] {
            [] => {
                let tool = ToolRef {
                    tool: None,
                    tool_use_id,
                };
                let raw = tool_raw(Value::Null, reparse(line));
                out.unknown_of(UnknownReason::UnpairedResult, raw, tool);
            }
            [i] => {
                let tool_use = self.uses.remove(i);
                self.resolved(tool_use, view, line, out);
            }
            _ => {
                // G5 (C11): never guess; every candidate is settled.
                let mut uses = Vec::with_capacity(candidates.len());
                for i in candidates.into_iter().rev() {
                    uses.push(reparse(&self.uses.remove(i).line));
                }
                uses.reverse();
                let tool = ToolRef {
                    tool: None,
                    tool_use_id,
                };
                let raw = tool_raw(Value::Array(uses), reparse(line));
                out.unknown_of(UnknownReason::AmbiguousToolUseId, raw, tool);
            }
        }
    }

    /// G5-G7: the events of a tool use its result resolved.
    fn resolved(&mut self, tool_use: Use, view: &LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let status = result_status(view);
        let tool = ToolRef {
            tool: tool_use.tool_use.tool.clone(),
            tool_use_id: Some(tool_use.tool_use.id.clone()),
        };
        let mapping = match tool_use.tool_use.tool.as_deref() {
            Some(name) => tools::map(name, &tool_use.params, &status, &tool, self.context()),
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
                let raw = tool_raw(reparse(&tool_use.line), reparse(line));
                out.unknown_of(UnknownReason::UnknownTool, raw, tool);
            }
            Mapping::Malformed => {
                let raw = tool_raw(reparse(&tool_use.line), reparse(line));
                out.unknown_of(UnknownReason::MalformedToolUse, raw, tool);
            }
        }
    }

    /// G10: the terminal `result` line.
    fn result(&mut self, view: &LineView<'_>, out: &mut Emitter<'_>) {
        out.terminal();
        self.results += 1;
        out.final_output(self.answer.take());
        if let Some(stats) = &view.stats {
            self.stats = Some(stats.clone().map(|figure| match figure {
                Loose::Number(n) => Some(n),
                _ => None,
            }));
        }
        let status = view.status.as_str();
        let reported = std::mem::take(&mut self.reported);
        if status == Some("success") {
            return;
        }
        out.fail();
        match (view.error_message.non_empty_str(), reported) {
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
        if let Some([input, output, cached, duration]) = self.stats.clone() {
            metrics.input_tokens = input;
            metrics.output_tokens = output;
            metrics.cache_read_input_tokens = cached;
            metrics.duration_ms = duration;
        }
        metrics.num_turns = (self.results > 0).then(|| Number::from(self.results));
        metrics
    }
}

/// G5: `success` when `status` is `"success"`; otherwise the failure text is the result's
/// `error.message`, else its `output`, when a non-empty string (J6).
fn result_status(view: &LineView<'_>) -> ToolStatus {
    if view.status.as_str() == Some("success") {
        return ToolStatus {
            success: true,
            error: None,
        };
    }
    let message = view
        .error_message
        .non_empty_str()
        .or_else(|| view.output.non_empty_str());
    ToolStatus {
        success: false,
        error: message.map(|m| truncate_chars(m, MAX_ERROR).to_string()),
    }
}

impl Decoder for GeminiDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.cwd = config.cwd.clone();
        self.workspace = config.workspace.clone();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // G3: a line that is not JSON does not end the text being assembled.
        match read_line::<LineView<'_>>(line)? {
            Some(view) => self.on_view(view, line, out),
            None => {
                // S3: valid JSON that is not an object.
                self.flush(out);
                out.unknown(UnknownReason::NotAnEvent, reparse(line));
            }
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.flush(out);
        // G11: one use at a time, in record order, its memory freed as it goes (S7, S9).
        for tool_use in std::mem::take(&mut self.uses) {
            let raw = tool_raw(reparse(&tool_use.line), Value::Null);
            out.unresolved(tool_use.tool_use, raw);
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.metrics())
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses.iter().map(|u| u.tool_use.clone()).collect()
    }
}
