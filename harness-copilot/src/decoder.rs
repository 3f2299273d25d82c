//! The incremental normalizer for `copilot -p --output-format json` (S and CP rules, O1).

use std::sync::Arc;

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::pairing::{Paired, ToolUses, Waiting};
use harness_agents_core::backend::text::truncate_chars;
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, Summary, add_figure, reparse, tool_raw,
};
use harness_agents_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
use serde_json::{Number, Value};

use crate::tools::{self, Done, Mapping};
use crate::wire::{self, Data, LineView};

/// J6: a tool's failure text is cut to its first 1,000 characters.
const MAX_ERROR: usize = 1_000;

/// The Copilot normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`CopilotDecoder`] the CP rules.
pub type CopilotNormalizer = Driver<CopilotDecoder>;

/// A tool use Copilot started, waiting for its completion (CP7).
#[derive(Debug)]
struct Use {
    /// Its `toolCallId`, and its `toolName` when a string.
    tool_use: PendingToolUse,
    /// `arguments` (`null` when missing), for the mapping.
    args: Value,
    /// The `tool.execution_start` line, parsed again only when an event needs it as `raw`.
    line: Box<[u8]>,
}

impl Waiting for Use {
    fn id(&self) -> &str {
        &self.tool_use.id
    }

    fn pending(&self) -> PendingToolUse {
        self.tool_use.clone()
    }
}

/// The decoding of Copilot's JSON lines (CP rules).
///
/// Its state is the tool uses started and not completed (CP7), the last answer and the
/// outcome's figures (CP12). Messages need no assembly: `assistant.message` carries each
/// whole.
#[derive(Debug, Default)]
pub struct CopilotDecoder {
    /// The `--cwd` given to the harness: Copilot's stdout never names its directory (CP10).
    cwd: Option<String>,
    /// Pending tool uses, in the order they started.
    uses: ToolUses<Use>,
    /// The last agent text since the previous `result` (CP12): its event's, shared (S7).
    answer: Option<Arc<str>>,
    /// The durations of the `result` line and the `assistant.turn_end` count (CP12).
    metrics: Metrics,
    turns: u64,
}

/// A number or string figure as text, for a message; `?` otherwise.
fn shown(value: &Loose<'_>) -> String {
    match value {
        Loose::Number(n) => n.to_string(),
        Loose::Str(s) => s.to_string(),
        _ => "?".to_string(),
    }
}

impl CopilotDecoder {
    fn on_view(&mut self, view: LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let Some(kind) = view.kind.as_str() else {
            // S3: no string `type`.
            out.unknown(UnknownReason::NotAnEvent, reparse(line));
            return;
        };
        if kind == "result" {
            self.result(&view, out);
            return;
        }
        let known = matches!(
            kind,
            "session.skills_loaded"
                | "session.mcp_servers_loaded"
                | "session.tools_updated"
                | "session.background_tasks_changed"
                | "session.info"
                | "user.message"
                | "assistant.turn_start"
                | "assistant.turn_end"
                | "assistant.turn_retry"
                | "assistant.idle"
                | "assistant.message_start"
                | "assistant.message_delta"
                | "assistant.reasoning_delta"
                | "assistant.reasoning"
                | "assistant.tool_call_delta"
                | "assistant.message"
                | "model.call_start"
                | "model.call_finished"
                | "model.call_final_result"
                | "model.call_failure"
                | "tool.execution_start"
                | "tool.execution_complete"
                | "tool.execution_partial_result"
                | "tool.shell_output"
                | "session.error"
                | "session.warning"
        );
        if !known {
            // CP1: a type this backend does not know.
            out.unknown(UnknownReason::UnknownType, reparse(line));
            return;
        }
        let Some(data) = view.data else {
            // CP1: every event of Copilot's carries its `data` object.
            out.unknown(UnknownReason::MalformedMessage, reparse(line));
            return;
        };
        match kind {
            "session.skills_loaded"
            | "session.mcp_servers_loaded"
            | "session.tools_updated"
            | "session.background_tasks_changed"
            | "session.info" => out.consumed_by("CP3"),
            "user.message" => out.consumed_by("CP4"),
            "assistant.turn_end" => {
                self.turns += 1;
                self.metrics.num_turns = Some(Number::from(self.turns));
                out.consumed_by("CP3");
            }
            "assistant.turn_start"
            | "assistant.idle"
            | "model.call_start"
            | "model.call_finished"
            | "model.call_final_result" => out.consumed_by("CP3"),
            "assistant.message_start"
            | "assistant.message_delta"
            | "assistant.reasoning_delta"
            | "assistant.tool_call_delta" => out.consumed_by("CP5"),
            "assistant.reasoning" => out.consumed_by("CP6"),
            "assistant.message" => self.message(&data, out),
            "tool.execution_start" => self.tool_start(data, line, out),
            "tool.execution_partial_result" | "tool.shell_output" => out.consumed_by("CP7"),
            "tool.execution_complete" => self.tool_end(&data, line, out),
            "model.call_failure" => out.emit(EventBody::Warning {
                message: format!(
                    "the model request failed (HTTP {}, attempt {}): {}",
                    shown(&data.status_code),
                    shown(&data.retry_attempt),
                    data.error_message
                        .non_empty_str()
                        .unwrap_or("unknown error"),
                ),
                source: WarningSource::Stream,
            }),
            "assistant.turn_retry" => out.consumed_by("CP11"),
            "session.warning" => out.emit(EventBody::Warning {
                message: data
                    .message
                    .non_empty_str()
                    .unwrap_or("Copilot warned without a message")
                    .to_string(),
                source: WarningSource::Stream,
            }),
            // "session.error"
            _ => out.emit(EventBody::Error {
                message: data
                    .message
                    .non_empty_str()
                    .unwrap_or("Copilot reported an error without a message")
                    .to_string(),
            }),
        }
    }

    /// CP2, CP12: the closing `result` line: the session id, the verdict and the durations.
    fn result(&mut self, view: &LineView<'_>, out: &mut Emitter<'_>) {
        if let Some(id) = view.session_id.non_empty_str() {
            out.session_id(id);
        }
        if let Some([api, session]) = &view.usage {
            add_figure(&mut self.metrics.duration_api_ms, Some(api));
            add_figure(&mut self.metrics.duration_ms, Some(session));
        }
        out.terminal();
        out.final_output(self.answer.take());
        let success = matches!(&view.exit_code, Loose::Number(n) if n.as_u64() == Some(0));
        if !success {
            out.fail();
        }
    }

    /// CP5, CP6: a finished message: its reasoning (`reasoningText`, read here only), then
    /// its text; its tool requests are recorded by their `tool.execution_start` (CP7).
    fn message(&mut self, data: &Data<'_>, out: &mut Emitter<'_>) {
        if let Some(text) = data.reasoning_text.shared() {
            out.emit(EventBody::Reasoning {
                text: text.to_string(),
            });
        }
        match data.content.shared() {
            Some(text) => {
                self.answer = Some(Arc::clone(&text));
                out.emit(EventBody::Agent { text });
            }
            None => out.consumed_by("CP5"),
        }
    }

    /// CP7: `tool.execution_start` records a use under its `toolCallId`; one without a string
    /// id cannot be paired and is `malformed_tool_use` at once.
    fn tool_start(&mut self, data: Data<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let tool = data.tool_name.as_str().map(str::to_string);
        let Some(id) = data.tool_call_id.as_str().map(str::to_string) else {
            let tool = ToolRef {
                tool,
                tool_use_id: None,
            };
            let raw = tool_raw(reparse(line), Value::Null);
            out.unknown_of(UnknownReason::MalformedToolUse, raw, tool);
            return;
        };
        let args = data.arguments.unwrap_or(Value::Null);
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
                    let done = Done::default();
                    match tools::map(name, &args, &ok, &done, &tool_ref, self.cwd.as_deref()) {
                        Mapping::Events(bodies) => bodies,
                        _ => Vec::new(),
                    }
                }
                None => Vec::new(),
            };
            out.started_from(tool_ref, &would_be, None);
        }
        self.uses.record(Use {
            tool_use: PendingToolUse {
                id,
                tool,
                thread: None,
            },
            args,
            line: line.into(),
        });
        out.defer();
    }

    /// CP7: `tool.execution_complete` resolves the pending use with its `toolCallId`, in
    /// whatever order the uses complete; pairing never guesses (C11, C12).
    fn tool_end(&mut self, data: &Data<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let id = data.tool_call_id.as_str();
        // Built only for a result that pairs with no single use.
        let tool = || ToolRef {
            tool: None,
            tool_use_id: id.map(str::to_string),
        };
        match self.uses.take(id) {
            Paired::One(tool_use) => self.resolved(tool_use, data, line, out),
            Paired::None => {
                let raw = tool_raw(Value::Null, reparse(line));
                out.unknown_of(UnknownReason::UnpairedResult, raw, tool());
            }
            // C11: one id started twice while pending; every candidate is settled.
            Paired::Ambiguous(matching) => {
                let candidates = matching.iter().map(|u| reparse(&u.line)).collect();
                let raw = tool_raw(Value::Array(candidates), reparse(line));
                out.unknown_of(UnknownReason::AmbiguousToolUseId, raw, tool());
            }
        }
    }

    /// CP8, CP9: the events of a tool use its completion resolved.
    fn resolved(&mut self, tool_use: Use, data: &Data<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let exit_code = match &data.shell_exit {
            Loose::Number(n) => Some(n.clone()),
            _ => None,
        };
        // CP9: Copilot calls a shell command that exits non-zero a success.
        let exited_badly = exit_code.as_ref().is_some_and(|n| n.as_i64() != Some(0));
        let failed = !data.success.is_true() || exited_badly;
        let text = if !data.success.is_true() {
            data.error.non_empty_str().unwrap_or_default()
        } else if exited_badly {
            data.result.non_empty_str().unwrap_or_default()
        } else {
            ""
        };
        let status = ToolStatus {
            success: !failed,
            error: (failed && !text.is_empty())
                .then(|| truncate_chars(text, MAX_ERROR).to_string()),
        };
        let directory = data
            .telemetry
            .as_ref()
            .is_some_and(|t| t.view_type.as_str() == Some("directory"));
        let done = Done {
            directory,
            exit_code,
        };
        let tool = ToolRef {
            tool: tool_use.tool_use.tool.clone(),
            tool_use_id: Some(tool_use.tool_use.id.clone()),
        };
        let mapping = match tool_use.tool_use.tool.as_deref() {
            Some(name) => tools::map(
                name,
                &tool_use.args,
                &status,
                &done,
                &tool,
                self.cwd.as_deref(),
            ),
            None => Mapping::Malformed,
        };
        match mapping {
            Mapping::Events(bodies) => {
                for body in bodies {
                    out.emit(body);
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
}

impl Decoder for CopilotDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.cwd = config.cwd.clone();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        let mut view = None;
        wire::parse(line, &mut view)?;
        match view {
            Some(view) => self.on_view(view, line, out),
            // S3: valid JSON that is not an object.
            None => out.unknown(UnknownReason::NotAnEvent, reparse(line)),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        // CP13: one use at a time, in the order they started (S9).
        while let Some(tool_use) = self.uses.pop_first() {
            let raw = tool_raw(reparse(&tool_use.line), Value::Null);
            out.unresolved(tool_use.tool_use, raw);
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.metrics.clone())
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses.pending()
    }
}
