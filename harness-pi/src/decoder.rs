//! The incremental normalizer for `pi --mode json` (S and PI rules, O1).

use std::sync::Arc;

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::pairing::{Paired, ToolUses, Waiting};
use harness_agents_core::backend::text::{Joined, truncate_chars};
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, Summary, add_figure, reparse, tool_raw,
};
use harness_agents_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
use serde_json::{Number, Value};

use crate::tools::{self, Mapping};
use crate::wire::{self, Blocks, LineView, Message};

/// J6: a tool's failure text is cut to its first 1,000 characters.
const MAX_ERROR: usize = 1_000;

/// The Pi normalizer: feed it lines, get events (see the crate docs). The core's [`Driver`]
/// does the bookkeeping; [`PiDecoder`] the PI rules.
pub type PiNormalizer = Driver<PiDecoder>;

/// A tool use Pi started, waiting for its end (PI6).
#[derive(Debug)]
struct Use {
    /// Its `toolCallId`, and its `toolName` when a string.
    tool_use: PendingToolUse,
    /// `args` (`null` when missing), for the mapping.
    args: Value,
    /// The `tool_execution_start` line, parsed again only when an event needs it as `raw`.
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

/// The decoding of Pi's `--mode json` lines (PI rules).
///
/// Its state is the tool uses started and not ended, in the order they started (PI6), whether
/// the last model request failed (PI12), the last answer and the outcome's figures (PI11).
/// Messages need no assembly: `message_end` carries each whole.
#[derive(Debug, Default)]
pub struct PiDecoder {
    /// The `--cwd` given to the harness.
    config_cwd: Option<String>,
    /// The header's `cwd` (PI2), which wins.
    cwd: Option<String>,
    /// Pending tool uses, in the order they started.
    uses: ToolUses<Use>,
    /// Whether the last model request failed (PI12): the run's status at the end.
    last_failed: bool,
    /// Whether an `agent_end` arrived (PI11).
    ended: bool,
    /// A session's failed `agent_end` waits for the answer to the harness's probe (PI16).
    awaiting: bool,
    /// The last agent text since the previous `agent_end` (PI11): its event's, shared (S7).
    answer: Option<Arc<str>>,
    /// Token and cost sums over the assistant messages, and the `turn_end` count (PI11).
    metrics: Metrics,
    turns: u64,
}

/// A number or string figure as text, for a warning's message; `?` otherwise.
fn shown(value: &Loose<'_>) -> String {
    match value {
        Loose::Number(n) => n.to_string(),
        Loose::Str(s) => s.to_string(),
        _ => "?".to_string(),
    }
}

/// PI7: the text of a result's `content`: its text blocks' `text`, joined with `"\n"` (C10a).
fn result_text(content: Option<&Value>) -> String {
    let Some(Value::Array(blocks)) = content else {
        return String::new();
    };
    let texts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

/// Texts joined with a blank line between them; a single one as it is, shared (S7).
fn joined(mut parts: Vec<Arc<str>>) -> Arc<str> {
    if parts.len() == 1
        && let Some(one) = parts.pop()
    {
        return one;
    }
    let mut joined = Joined::default();
    for part in &parts {
        joined.push(part);
    }
    joined.into_text()
}

impl PiDecoder {
    /// The directory relative paths are resolved against (PI10).
    fn dir(&self) -> Option<&str> {
        self.cwd.as_deref().or(self.config_cwd.as_deref())
    }

    fn on_view(&mut self, view: LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let Some(kind) = view.kind.as_str() else {
            // S3: no string `type`.
            out.unknown(UnknownReason::NotAnEvent, reparse(line));
            return;
        };
        match kind {
            "session" => {
                out.consumed_by("PI2");
                if let Some(id) = view.id.non_empty_str() {
                    out.session_id(id);
                }
                if let Some(cwd) = view.cwd.non_empty_str() {
                    self.cwd = Some(cwd.to_string());
                }
            }
            "agent_start" | "turn_start" | "message_start" | "message_update" => {
                out.consumed_by("PI3");
            }
            "turn_end" => {
                self.turns += 1;
                self.metrics.num_turns = Some(Number::from(self.turns));
                out.consumed_by("PI3");
            }
            "message_end" => self.message_end(view.message, line, out),
            "tool_execution_start" => self.tool_start(view, line, out),
            "tool_execution_update" => out.consumed_by("PI6"),
            "tool_execution_end" => self.tool_end(&view, line, out),
            "agent_end" => {
                // PI11: the end of the agent's work on a prompt.
                out.terminal();
                out.final_output(self.answer.take());
                self.ended = true;
                self.awaiting = self.last_failed;
            }
            "auto_retry_start" => {
                self.awaiting = false;
                self.retry_start(&view, out);
            }
            // PI12: the failure was reported where it happened; success or not, the status
            // follows the last request. Retries given up end a session's turn as failed
            // (PI16).
            "auto_retry_end" => {
                out.consumed_by("PI12");
                if matches!(view.success, Loose::Bool(false)) && self.ended {
                    self.awaiting = false;
                    out.fail();
                }
            }
            "response" => self.response(&view, line, out),
            "compaction_end" => match view.error_message.non_empty_str() {
                Some(message) => out.emit(EventBody::Warning {
                    message: format!("compaction failed: {message}"),
                    source: WarningSource::Stream,
                }),
                None => out.consumed_by("PI13"),
            },
            "compaction_start"
            | "queue_update"
            | "session_info_changed"
            | "thinking_level_changed" => out.consumed_by("PI13"),
            // PI1: a type this backend does not know.
            _ => out.unknown(UnknownReason::UnknownType, reparse(line)),
        }
    }

    /// PI16: a `response` to a command of a session's transport.
    fn response(&mut self, view: &LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let command = view.command.as_str();
        if matches!(view.success, Loose::Bool(false)) {
            let command = command.unwrap_or("?");
            let message = match view.error.non_empty_str() {
                Some(error) => format!("pi refused the `{command}` command: {error}"),
                None => format!("pi refused the `{command}` command"),
            };
            out.emit(EventBody::Error { message });
            if command == "prompt" {
                // No agent runs for a refused prompt: this answer is its end.
                out.terminal();
                out.final_output(None);
                out.fail();
            }
            return;
        }
        out.consumed_by("PI16");
        if command == Some("get_state")
            && let Value::Object(line) = reparse(line)
            && let Some(id) = line
                .get("data")
                .and_then(|d| d.get("sessionId"))
                .and_then(Value::as_str)
                .filter(|id| !id.is_empty())
        {
            // PI16: `pi --mode rpc` prints no header; its state names the session.
            out.session_id(id);
        }
        let probe =
            command == Some("get_state") && view.id.as_str().is_some_and(crate::session::is_probe);
        if probe && self.awaiting {
            // No retry was announced before the probe's answer: the failure is the turn's end.
            self.awaiting = false;
            out.fail();
        }
    }

    /// PI4, PI5: a finished message.
    fn message_end(&mut self, message: Option<Message<'_>>, line: &[u8], out: &mut Emitter<'_>) {
        let Some(message) = message else {
            out.unknown(UnknownReason::MalformedMessage, reparse(line));
            return;
        };
        match message.role.as_str() {
            Some("assistant") => self.assistant(message, line, out),
            Some(
                "user" | "toolResult" | "custom" | "bashExecution" | "compactionSummary"
                | "branchSummary",
            ) => out.consumed_by("PI4"),
            _ => out.unknown(UnknownReason::MalformedMessage, reparse(line)),
        }
    }

    /// PI5: an assistant message's thinking and text, its usage (PI11) and its failure
    /// (PI12).
    fn assistant(&mut self, message: Message<'_>, line: &[u8], out: &mut Emitter<'_>) {
        if let Some(usage) = &message.usage {
            let sums = &mut self.metrics;
            add_figure(&mut sums.input_tokens, Some(&usage.input));
            add_figure(&mut sums.output_tokens, Some(&usage.output));
            add_figure(&mut sums.cache_read_input_tokens, Some(&usage.cache_read));
            add_figure(
                &mut sums.cache_creation_input_tokens,
                Some(&usage.cache_write),
            );
            add_figure(&mut sums.total_cost_usd, Some(&usage.cost));
        }
        match &message.content {
            Blocks::List(blocks) => self.blocks(blocks, line, out),
            Blocks::Absent | Blocks::Other => {
                out.unknown(UnknownReason::MalformedMessage, reparse(line));
            }
        }
        let stop = message.stop_reason.as_str();
        self.last_failed = matches!(stop, Some("error" | "aborted"));
        if self.last_failed {
            // PI12: every failed request is reported where it failed; whether the run
            // recovered is the outcome's status.
            let message = match message.error_message.non_empty_str() {
                Some(text) => text.to_string(),
                None => format!(
                    "the model request ended with stopReason {}",
                    stop.unwrap_or_default()
                ),
            };
            out.emit(EventBody::Error { message });
        } else {
            out.consumed_by("PI5");
        }
    }

    /// PI5: the blocks of an assistant message: one `reasoning` event (the thinking texts
    /// joined with a blank line), then one `agent` event (the texts, likewise); a block of
    /// another type, or whose text is not a string, is `unknown_block`.
    fn blocks(&mut self, blocks: &[Option<wire::Block<'_>>], line: &[u8], out: &mut Emitter<'_>) {
        let mut thinking: Vec<Arc<str>> = Vec::new();
        let mut texts: Vec<Arc<str>> = Vec::new();
        let unknown = |at: usize, out: &mut Emitter<'_>| {
            let raw = reparse(line)
                .pointer(&format!("/message/content/{at}"))
                .cloned()
                .unwrap_or(Value::Null);
            out.unknown(UnknownReason::UnknownBlock, raw);
        };
        for (at, block) in blocks.iter().enumerate() {
            let Some(block) = block else {
                unknown(at, out);
                continue;
            };
            let (part, into) = match block.kind.as_str() {
                Some("text") => (&block.text, &mut texts),
                // Redacted thinking holds Pi's placeholder, not a thought (as C2).
                Some("thinking") if block.redacted.is_true() => continue,
                Some("thinking") => (&block.thinking, &mut thinking),
                // PI6: the call is recorded by its `tool_execution_start`.
                Some("toolCall") => continue,
                _ => {
                    unknown(at, out);
                    continue;
                }
            };
            match part.shared() {
                Some(text) => into.push(text),
                // An empty text adds nothing; a text that is no string is no text block.
                None if matches!(part.value(), Loose::Str(_)) => {}
                None => unknown(at, out),
            }
        }
        if !thinking.is_empty() {
            let text = joined(thinking).to_string();
            out.emit(EventBody::Reasoning { text });
        }
        if !texts.is_empty() {
            let text = joined(texts);
            self.answer = Some(Arc::clone(&text));
            out.emit(EventBody::Agent { text });
        }
    }

    /// PI12: `auto_retry_start`: the failed request is retried.
    fn retry_start(&mut self, view: &LineView<'_>, out: &mut Emitter<'_>) {
        let error = view
            .error_message
            .non_empty_str()
            .unwrap_or("unknown error");
        out.emit(EventBody::Warning {
            message: format!(
                "retrying the failed model request ({} of {}) in {} ms: {error}",
                shown(&view.attempt),
                shown(&view.max_attempts),
                shown(&view.delay_ms),
            ),
            source: WarningSource::Stream,
        });
    }

    /// PI6: `tool_execution_start` records a use under its `toolCallId`; one without a string
    /// id cannot be paired and is `malformed_tool_use` at once.
    fn tool_start(&mut self, view: LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let tool = view.tool_name.as_str().map(str::to_string);
        let Some(id) = view.tool_call_id.as_str().map(str::to_string) else {
            let tool = ToolRef {
                tool,
                tool_use_id: None,
            };
            let raw = tool_raw(reparse(line), Value::Null);
            out.unknown_of(UnknownReason::MalformedToolUse, raw, tool);
            return;
        };
        let args = view.args.unwrap_or(Value::Null);
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
                Some(name) => match tools::map(name, &args, &ok, None, &tool_ref, self.dir()) {
                    Mapping::Events(bodies) => bodies,
                    _ => Vec::new(),
                },
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

    /// PI6: `tool_execution_end` resolves the pending use with its `toolCallId`; pairing never
    /// guesses (C11, C12).
    fn tool_end(&mut self, view: &LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let id = view.tool_call_id.as_str();
        // Built only for a result that pairs with no single use.
        let tool = || ToolRef {
            tool: None,
            tool_use_id: id.map(str::to_string),
        };
        match self.uses.take(id) {
            Paired::One(tool_use) => self.resolved(tool_use, view, line, out),
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

    /// PI7-PI9: the events of a tool use its end resolved.
    fn resolved(&mut self, tool_use: Use, view: &LineView<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let failed = view.is_error.is_true();
        let text = if failed {
            result_text(view.result.as_ref().and_then(|r| r.get("content")))
        } else {
            String::new()
        };
        let status = ToolStatus {
            success: !failed,
            error: (!text.is_empty()).then(|| truncate_chars(&text, MAX_ERROR).to_string()),
        };
        let name = tool_use.tool_use.tool.as_deref();
        let exit = match name {
            Some("bash") if failed => tools::exit_code(&text),
            _ => None,
        };
        let tool = ToolRef {
            tool: tool_use.tool_use.tool.clone(),
            tool_use_id: Some(tool_use.tool_use.id.clone()),
        };
        let mapping = match name {
            Some(name) => tools::map(name, &tool_use.args, &status, exit, &tool, self.dir()),
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

impl Decoder for PiDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.config_cwd = config.cwd.clone();
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
        // PI14: one use at a time, in the order they started (S9).
        while let Some(tool_use) = self.uses.pop_first() {
            let raw = tool_raw(reparse(&tool_use.line), Value::Null);
            out.unresolved(tool_use.tool_use, raw);
        }
        // PI12: Pi prints no verdict and exits 0 after a request it gave up on: the run
        // failed when its last request did. Without any `agent_end` the run is incomplete
        // (S9), whatever its last request did.
        if self.ended && self.last_failed {
            out.fail();
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.metrics.clone())
    }

    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses.pending()
    }
}
