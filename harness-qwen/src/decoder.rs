//! The incremental normalizer for `qwen --output-format stream-json` (S and QW rules, O1).

use std::sync::Arc;

use harness_agents_core::backend::text::truncate_chars;
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, Summary, parse_value, reparse, tool_raw,
};
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

/// A recorded tool use, waiting for its result (QW6).
#[derive(Debug)]
struct Use {
    tool_use: PendingToolUse,
    /// The `tool_use` block, for the mapping and for `raw`.
    block: Value,
}

/// The decoding of Qwen Code's `stream-json` lines (QW rules).
///
/// Its state is the tool uses recorded and not yet answered, in the order they were recorded
/// (QW6), the working directory (QW2) and the outcome's figures (QW10).
#[derive(Debug, Default)]
pub struct QwenDecoder {
    /// The `--cwd` given to the harness.
    config_cwd: Option<String>,
    /// The init line's `cwd` (QW2), which wins.
    cwd: Option<String>,
    uses: Vec<Use>,
    metrics: Metrics,
    /// The last agent text (QW4), the final output when the result names none.
    answer: Option<Arc<str>>,
}

fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

fn non_empty<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    str_at(value, key).filter(|s| !s.is_empty())
}

/// A number figure, when it is one.
fn number(value: Option<&Value>) -> Option<Number> {
    match value {
        Some(Value::Number(n)) => Some(n.clone()),
        _ => None,
    }
}

/// QW7: a result's `content` as text: the string, or its text blocks' `text` joined with
/// `"\n"` (C10a).
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| str_at(b, "type") == Some("text"))
            .filter_map(|b| str_at(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl QwenDecoder {
    /// The directory relative paths are resolved against (C14a).
    fn dir(&self) -> Option<&str> {
        self.cwd.as_deref().or(self.config_cwd.as_deref())
    }

    fn on_line(&mut self, value: Value, out: &mut Emitter<'_>) {
        let Some(kind) = str_at(&value, "type") else {
            // QW1 (S3): no string `type`.
            out.unknown(UnknownReason::NotAnEvent, value);
            return;
        };
        match kind {
            "system" => self.system(value, out),
            "stream_event" => out.consumed_by("QW3"),
            "assistant" => self.assistant(value, out),
            "user" => self.user(value, out),
            "result" => self.result(&value, out),
            // QW1: a type this backend does not know.
            _ => out.unknown(UnknownReason::UnknownType, value),
        }
    }

    /// QW2: `init` names the session and the working directory; `retry` is a warning.
    fn system(&mut self, value: Value, out: &mut Emitter<'_>) {
        match str_at(&value, "subtype") {
            Some("init") => {
                if let Some(id) = non_empty(&value, "session_id") {
                    out.session_id(id);
                }
                if let Some(cwd) = non_empty(&value, "cwd") {
                    self.cwd = Some(cwd.to_string());
                }
                out.consumed_by("QW2");
            }
            Some("retry") => {
                let data = value.get("data").unwrap_or(&Value::Null);
                let discarded = number(data.get("discardedToolCalls"))
                    .map_or_else(|| "?".to_string(), |n| n.to_string());
                out.emit(EventBody::Warning {
                    message: format!(
                        "retrying the model request ({discarded} buffered tool call(s) discarded)"
                    ),
                    source: WarningSource::Stream,
                });
            }
            _ => out.unknown(UnknownReason::UnknownSystemSubtype, value),
        }
    }

    /// QW4-QW6: an `assistant` line: its blocks, in order.
    fn assistant(&mut self, value: Value, out: &mut Emitter<'_>) {
        let Some(blocks) = value.pointer("/message/content").and_then(Value::as_array) else {
            out.unknown(UnknownReason::MalformedMessage, value);
            return;
        };
        let mut thinking = Vec::new();
        let mut texts = Vec::new();
        let mut unknown = Vec::new();
        let mut uses = Vec::new();
        for block in blocks {
            match (str_at(block, "type"), block) {
                (Some("text"), b) if b.get("text").is_some_and(Value::is_string) => {
                    if let Some(text) = non_empty(b, "text") {
                        texts.push(text.to_string());
                    }
                }
                (Some("thinking"), b) if b.get("thinking").is_some_and(Value::is_string) => {
                    if let Some(text) = non_empty(b, "thinking") {
                        thinking.push(text.to_string());
                    }
                }
                (Some("tool_use"), b) => uses.push(b.clone()),
                (_, b) => unknown.push(b.clone()),
            }
        }
        for block in unknown {
            out.unknown(UnknownReason::UnknownBlock, block);
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
        for block in uses {
            self.record(block, &value, out);
        }
        out.consumed_by("QW4");
    }

    /// QW6: a `tool_use` block is recorded under its `id`; one without a string `id`, `name`
    /// or object `input` is `malformed_tool_use` at once (C13).
    fn record(&mut self, block: Value, line: &Value, out: &mut Emitter<'_>) {
        let id = str_at(&block, "id").map(str::to_string);
        let name = str_at(&block, "name").map(str::to_string);
        let (Some(id), Some(_), true) = (
            id.clone(),
            name.clone(),
            block.get("input").is_some_and(Value::is_object),
        ) else {
            let tool = ToolRef {
                tool: name,
                tool_use_id: id,
            };
            out.unknown_of(
                UnknownReason::MalformedToolUse,
                tool_raw(block, Value::Null),
                tool,
            );
            return;
        };
        let parent = str_at(line, "parent_tool_use_id").map(str::to_string);
        if out.wants_started() {
            let tool = ToolRef {
                tool: name.clone(),
                tool_use_id: Some(id.clone()),
            };
            let ok = ToolStatus {
                success: true,
                error: None,
            };
            let input = block.get("input").unwrap_or(&Value::Null);
            let would_be = match tools::map(
                name.as_deref().unwrap_or(""),
                input,
                &ok,
                None,
                &tool,
                self.dir(),
            ) {
                Mapping::Events(bodies) => bodies,
                _ => Vec::new(),
            };
            out.started_from(tool, &would_be, parent.clone());
        }
        self.uses.push(Use {
            tool_use: PendingToolUse {
                id,
                tool: name,
                thread: parent,
            },
            block,
        });
        out.defer();
    }

    /// QW7: a `user` line: its `tool_result` blocks resolve recorded uses; anything else in it
    /// is consumed.
    fn user(&mut self, value: Value, out: &mut Emitter<'_>) {
        let Some(blocks) = value.pointer("/message/content") else {
            out.unknown(UnknownReason::MalformedMessage, value);
            return;
        };
        let results: Vec<Value> = match blocks {
            Value::Array(blocks) => blocks
                .iter()
                .filter(|b| str_at(b, "type") == Some("tool_result"))
                .cloned()
                .collect(),
            Value::String(_) => Vec::new(),
            _ => {
                out.unknown(UnknownReason::MalformedMessage, value);
                return;
            }
        };
        for result in results {
            self.resolve(result, out);
        }
        out.consumed_by("QW7");
    }

    /// QW7: one `tool_result` pairs with the recorded use of its `tool_use_id`; never a
    /// guess (C11, C12).
    fn resolve(&mut self, result: Value, out: &mut Emitter<'_>) {
        let id = str_at(&result, "tool_use_id");
        let (mut matching, rest): (Vec<Use>, Vec<Use>) = std::mem::take(&mut self.uses)
            .into_iter()
            .partition(|u| Some(u.tool_use.id.as_str()) == id);
        self.uses = rest;
        let tool_use_id = id.map(str::to_string);
        if matching.len() != 1 {
            let tool = ToolRef {
                tool: None,
                tool_use_id,
            };
            if matching.is_empty() {
                out.unknown_of(
                    UnknownReason::UnpairedResult,
                    tool_raw(Value::Null, result),
                    tool,
                );
            } else {
                let candidates = matching.into_iter().map(|u| u.block).collect();
                out.unknown_of(
                    UnknownReason::AmbiguousToolUseId,
                    tool_raw(Value::Array(candidates), result),
                    tool,
                );
            }
            return;
        }
        let Some(tool_use) = matching.pop() else {
            return;
        };
        let failed = result.get("is_error") == Some(&Value::Bool(true));
        let text = if failed {
            content_text(result.get("content"))
        } else {
            String::new()
        };
        let status = ToolStatus {
            success: !failed,
            error: (!text.is_empty()).then(|| truncate_chars(&text, MAX_ERROR).to_string()),
        };
        let name = tool_use.tool_use.tool.as_deref().unwrap_or("");
        let exit = match name {
            "run_shell_command" if failed => tools::exit_code(&text),
            _ => None,
        };
        let tool = ToolRef {
            tool: tool_use.tool_use.tool.clone(),
            tool_use_id: Some(tool_use.tool_use.id.clone()),
        };
        let input = tool_use.block.get("input").unwrap_or(&Value::Null);
        let parent = tool_use.tool_use.thread.clone();
        match tools::map(name, input, &status, exit, &tool, self.dir()) {
            Mapping::Events(bodies) => {
                for body in bodies {
                    out.emit_in(body, parent.clone());
                }
            }
            Mapping::UnknownTool => out.unknown_of(
                UnknownReason::UnknownTool,
                tool_raw(tool_use.block, result),
                tool,
            ),
            Mapping::Malformed => out.unknown_of(
                UnknownReason::MalformedToolUse,
                tool_raw(tool_use.block, result),
                tool,
            ),
        }
    }

    /// QW10: `result` ends the run: its figures feed the outcome, a failure is an `error`.
    fn result(&mut self, value: &Value, out: &mut Emitter<'_>) {
        out.terminal();
        let usage = value.get("usage").unwrap_or(&Value::Null);
        let metrics = &mut self.metrics;
        metrics.input_tokens = number(usage.get("input_tokens"));
        metrics.output_tokens = number(usage.get("output_tokens"));
        metrics.cache_read_input_tokens = number(usage.get("cache_read_input_tokens"));
        metrics.duration_ms = number(value.get("duration_ms"));
        metrics.duration_api_ms = number(value.get("duration_api_ms"));
        metrics.num_turns = number(value.get("num_turns"));
        let failed = value.get("is_error") == Some(&Value::Bool(true))
            || str_at(value, "subtype").is_some_and(|s| s.starts_with("error"));
        if failed {
            let message = value
                .pointer("/error/message")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .or_else(|| non_empty(value, "result"))
                .or_else(|| str_at(value, "subtype"))
                .unwrap_or("error")
                .to_string();
            out.emit(EventBody::Error { message });
            out.fail();
        }
        // S7: the answer's own text when the result repeats it.
        let answer = self.answer.take();
        let text = match (non_empty(value, "result"), answer) {
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
        let value = parse_value(line)?;
        if value.is_object() {
            self.on_line(value, out);
        } else {
            // S3: valid JSON that is not an object.
            out.unknown(UnknownReason::NotAnEvent, reparse(line));
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        // QW11: uses never answered, one at a time, in the order they were recorded (S9).
        for tool_use in std::mem::take(&mut self.uses) {
            out.unresolved(tool_use.tool_use, tool_raw(tool_use.block, Value::Null));
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.metrics.clone())
    }

    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.uses.iter().map(|u| u.tool_use.clone()).collect()
    }
}
