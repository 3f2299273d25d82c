//! The incremental normalizer for `qwen --output-format stream-json` (S and QW rules, O1).

use std::sync::Arc;

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::stream_json::{
    self, Body, Content, LineParts, Paired, ResultFields, ToolUse, ToolUses, block_value,
};
use harness_agents_core::backend::text::truncate_chars;
use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson, Summary, reparse, tool_raw};
use harness_agents_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
use serde_json::{Number, Value};

use crate::tools::{self, Mapping};

/// J6: a tool's failure text is cut to its first 1,000 characters.
const MAX_ERROR: usize = 1_000;
/// QW5: how Qwen words a failed model request in the assistant text it prints for it.
const API_ERROR: &str = "[API Error: ";

/// The Qwen Code normalizer: feed it lines, get events (see the crate docs). The core's
/// [`Driver`] does the bookkeeping; [`QwenDecoder`] the QW rules.
pub type QwenNormalizer = Driver<QwenDecoder>;

/// The decoding of Qwen Code's `stream-json` lines (QW rules).
///
/// Lines are read through the core's views of the `stream-json` shape Qwen shares with other
/// agents (`harness_agents_core::backend::stream_json`); what is Qwen's own is here: a line
/// per block, each complete on arrival (QW4), display strings as tool results (QW7, QW9), a
/// `result` whose usage counts every request (QW10). Its state is the tool uses recorded and
/// not yet answered, in the order they were recorded (QW6), the working directory (QW2) and
/// the outcome's figures (QW10).
#[derive(Debug, Default)]
pub struct QwenDecoder {
    /// The `--cwd` given to the harness.
    config_cwd: Option<String>,
    /// The init line's `cwd` (QW2), which wins.
    cwd: Option<String>,
    uses: ToolUses,
    metrics: Metrics,
    /// The last agent text (QW4), the final output when the result names none.
    answer: Option<Arc<str>>,
}

/// A number figure, when it is one.
fn number(value: &Loose<'_>) -> Option<Number> {
    match value {
        Loose::Number(n) => Some(n.clone()),
        _ => None,
    }
}

impl QwenDecoder {
    /// The directory relative paths are resolved against (C14a).
    fn dir(&self) -> Option<&str> {
        self.cwd.as_deref().or(self.config_cwd.as_deref())
    }

    /// One object line, read through its view; `text` is its JSON.
    fn on_line(&mut self, parts: LineParts<'_>, text: &str, out: &mut Emitter<'_>) {
        match parts.body {
            Body::System { subtype, cwd, .. } => {
                self.system(subtype, &parts.session_id, cwd, text, out)
            }
            Body::StreamEvent => out.consumed_by("QW3"),
            Body::Assistant { content, .. } => self.assistant(content, &parts.parent, text, out),
            Body::User { content, .. } => self.user(content, text, out),
            Body::Result(result) => self.result(&result, out),
            Body::Other => {
                let value = reparse(text);
                if value.get("type").is_some_and(Value::is_string) {
                    // QW1: a type this backend does not know.
                    out.unknown(UnknownReason::UnknownType, value);
                } else {
                    // QW1 (S3): no string `type`.
                    out.unknown(UnknownReason::NotAnEvent, value);
                }
            }
        }
    }

    /// QW2: `init` names the session and the working directory; `retry` is a warning.
    fn system(
        &mut self,
        subtype: Loose<'_>,
        session_id: &Loose<'_>,
        cwd: Loose<'_>,
        text: &str,
        out: &mut Emitter<'_>,
    ) {
        match subtype.as_str() {
            Some("init") => {
                if let Some(id) = session_id.non_empty_str() {
                    out.session_id(id);
                }
                if let Some(cwd) = cwd.non_empty_str() {
                    self.cwd = Some(cwd.to_string());
                }
                out.consumed_by("QW2");
            }
            Some("retry") => {
                // Rare: the one figure it names is read from the line itself.
                let value = reparse(text);
                let discarded = match value.pointer("/data/discardedToolCalls") {
                    Some(Value::Number(n)) => n.to_string(),
                    _ => "?".to_string(),
                };
                out.emit(EventBody::Warning {
                    message: format!(
                        "retrying the model request ({discarded} buffered tool call(s) discarded)"
                    ),
                    source: WarningSource::Stream,
                });
            }
            _ => out.unknown(UnknownReason::UnknownSystemSubtype, reparse(text)),
        }
    }

    /// QW4-QW6: an `assistant` line: its blocks, in order.
    fn assistant(
        &mut self,
        content: Content<'_>,
        parent: &Loose<'_>,
        text: &str,
        out: &mut Emitter<'_>,
    ) {
        let Content::List(blocks) = content else {
            out.unknown(UnknownReason::MalformedMessage, reparse(text));
            return;
        };
        let mut thinking = Vec::new();
        let mut texts = Vec::new();
        let mut uses = Vec::new();
        for (index, block) in blocks.iter().enumerate() {
            let view = block.view.as_ref();
            match view.map(|v| (v.kind.as_str(), v)) {
                Some((Some("text"), v)) if v.text.as_str().is_some() => {
                    texts.extend(v.text.non_empty_str());
                }
                Some((Some("thinking"), v)) if v.thinking.as_str().is_some() => {
                    thinking.extend(v.thinking.non_empty_str());
                }
                Some((Some("tool_use"), v)) => uses.push((v, block.raw, index)),
                _ => out.unknown(
                    UnknownReason::UnknownBlock,
                    block_value(block.raw, index, || reparse(text)),
                ),
            }
        }
        if !thinking.is_empty() {
            out.emit(EventBody::Reasoning {
                text: thinking.join("\n\n"),
            });
        }
        // QW5: Qwen prints a failed request as an assistant text; its `result` reports it.
        let api_error = texts.len() == 1 && texts[0].starts_with(API_ERROR);
        if !texts.is_empty() && !api_error {
            let text: Arc<str> = Arc::from(texts.join("\n\n"));
            self.answer = Some(Arc::clone(&text));
            out.emit(EventBody::Agent { text });
        }
        for (view, raw, index) in uses {
            let block: Box<str> = match raw {
                Some(raw) => raw.into(),
                None => block_value(None, index, || reparse(text))
                    .to_string()
                    .into(),
            };
            self.record(view, block, parent, out);
        }
        out.consumed_by("QW4");
    }

    /// QW6: a `tool_use` block is recorded under its `id`; one without a string `id`, `name`
    /// or object `input` is `malformed_tool_use` at once (C13).
    fn record(
        &mut self,
        view: &stream_json::BlockView<'_>,
        block: Box<str>,
        parent: &Loose<'_>,
        out: &mut Emitter<'_>,
    ) {
        let id = view.id.as_str().map(str::to_string);
        let name = view.name.as_str().map(str::to_string);
        let (Some(id), Some(name), Loose::Object) = (id.clone(), name.clone(), &view.input) else {
            let tool = ToolRef {
                tool: name,
                tool_use_id: id,
            };
            out.unknown_of(
                UnknownReason::MalformedToolUse,
                tool_raw(reparse(&*block), Value::Null),
                tool,
            );
            return;
        };
        let thread = parent.as_str().map(str::to_string);
        if out.wants_started() {
            let tool = ToolRef {
                tool: Some(name.clone()),
                tool_use_id: Some(id.clone()),
            };
            let ok = ToolStatus {
                success: true,
                error: None,
            };
            let would_be = match self.mapping(&name, &block, &ok, None, &tool) {
                Mapping::Events(bodies) => bodies,
                _ => Vec::new(),
            };
            out.started_from(tool, &would_be, thread.clone());
        }
        self.uses.record(ToolUse {
            id,
            name: Some(name),
            thread,
            block,
        });
        out.defer();
    }

    /// The events a recorded use's block maps to (QW8, QW9), with the directory in effect.
    fn mapping(
        &self,
        name: &str,
        block: &str,
        status: &ToolStatus,
        exit: Option<Number>,
        tool: &ToolRef,
    ) -> Mapping {
        let input = stream_json::tool_input(block);
        tools::map(name, input.as_ref(), status, exit, tool, self.dir())
    }

    /// QW7: a `user` line: its `tool_result` blocks resolve recorded uses; anything else in it
    /// is consumed.
    fn user(&mut self, content: Content<'_>, text: &str, out: &mut Emitter<'_>) {
        match content {
            Content::List(blocks) => {
                for (index, block) in blocks.iter().enumerate() {
                    let Some(view) = &block.view else { continue };
                    if view.kind.as_str() == Some("tool_result") {
                        self.resolve(view, block.raw, index, text, out);
                    }
                }
            }
            Content::Text => {}
            Content::Other => {
                out.unknown(UnknownReason::MalformedMessage, reparse(text));
                return;
            }
        }
        out.consumed_by("QW7");
    }

    /// QW7: one `tool_result` pairs with the recorded use of its `tool_use_id`; never a
    /// guess (C11, C12).
    fn resolve(
        &mut self,
        view: &stream_json::BlockView<'_>,
        raw: Option<&str>,
        index: usize,
        text: &str,
        out: &mut Emitter<'_>,
    ) {
        let id = view.tool_use_id.as_str();
        let result = || block_value(raw, index, || reparse(text));
        let tool_use = match self.uses.take(id) {
            Paired::One(tool_use) => tool_use,
            paired => {
                let tool = ToolRef {
                    tool: None,
                    tool_use_id: id.map(str::to_string),
                };
                let (reason, candidates) = match paired {
                    Paired::Ambiguous(uses) => (
                        UnknownReason::AmbiguousToolUseId,
                        Value::Array(uses.iter().map(|u| reparse(&*u.block)).collect()),
                    ),
                    _ => (UnknownReason::UnpairedResult, Value::Null),
                };
                out.unknown_of(reason, tool_raw(candidates, result()), tool);
                return;
            }
        };
        let failed = view.is_error.is_true();
        // The whole text: a failed command's exit code is on its last lines (QW9).
        let error = if failed {
            match raw {
                Some(raw) => stream_json::result_error_text(raw, usize::MAX),
                None => stream_json::line_result_error_text(text, index, usize::MAX),
            }
        } else {
            None
        };
        let name = tool_use.name.as_deref().unwrap_or("");
        let exit = match (name, &error) {
            ("run_shell_command", Some(error)) => tools::exit_code(error),
            _ => None,
        };
        let status = ToolStatus {
            success: !failed,
            error: error.map(|e| truncate_chars(&e, MAX_ERROR).to_string()),
        };
        let tool = ToolRef {
            tool: tool_use.name.clone(),
            tool_use_id: Some(tool_use.id.clone()),
        };
        let reason = match self.mapping(name, &tool_use.block, &status, exit, &tool) {
            Mapping::Events(bodies) => {
                for body in bodies {
                    out.emit_in(body, tool_use.thread.clone());
                }
                return;
            }
            Mapping::UnknownTool => UnknownReason::UnknownTool,
            Mapping::Malformed => UnknownReason::MalformedToolUse,
        };
        let raw = tool_raw(reparse(&*tool_use.block), result());
        out.unknown_of(reason, raw, tool);
    }

    /// QW10: `result` ends the run: its figures feed the outcome, a failure is an `error`.
    fn result(&mut self, result: &ResultFields<'_>, out: &mut Emitter<'_>) {
        out.terminal();
        let metrics = &mut self.metrics;
        metrics.input_tokens = number(&result.usage.input);
        metrics.output_tokens = number(&result.usage.output);
        metrics.cache_read_input_tokens = number(&result.usage.cache_read);
        metrics.duration_ms = number(&result.duration_ms);
        metrics.duration_api_ms = number(&result.duration_api_ms);
        metrics.num_turns = number(&result.num_turns);
        let failed = result.is_error.is_true()
            || result
                .subtype
                .as_str()
                .is_some_and(|s| s.starts_with("error"));
        if failed {
            let message = result
                .error_message
                .non_empty_str()
                .or_else(|| result.result.non_empty_str())
                .or_else(|| result.subtype.as_str())
                .unwrap_or("error")
                .to_string();
            out.emit(EventBody::Error { message });
            out.fail();
        }
        // S7: the answer's own text when the result repeats it.
        let answer = self.answer.take();
        let text = match (result.result.non_empty_str(), answer) {
            (Some(text), Some(answer)) if *answer == *text => Some(answer),
            (Some(text), _) => Some(Arc::from(text)),
            (None, answer) if !failed => answer,
            (None, _) => None,
        };
        out.final_output(text);
    }
}

impl Decoder for QwenDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.config_cwd = config.cwd.clone();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // The core's entry point: a borrowed view, which exists exactly when the line parses
        // into a `Value` object (S2).
        match stream_json::read(line)? {
            Some((text, parts)) => self.on_line(parts, text, out),
            // S3: valid JSON that is not an object.
            None => out.unknown(UnknownReason::NotAnEvent, reparse(line)),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        // QW11: uses never answered, one at a time, in the order they were recorded (S9).
        while let Some(tool_use) = self.uses.pop_first() {
            let raw = tool_raw(reparse(&*tool_use.block), Value::Null);
            let pending = PendingToolUse {
                id: tool_use.id,
                tool: tool_use.name,
                thread: tool_use.thread,
            };
            out.unresolved(pending, raw);
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
