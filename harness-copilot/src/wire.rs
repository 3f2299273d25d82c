//! The parse phase: a borrowed view of one line with the fields the CP rules read, checked
//! exactly as parsing the whole line into a `serde_json::Value` would (S2).
//!
//! Every line goes through the core's entry point ([`read_line_into`]): the fast reader when
//! it is sure of the line, the checked path otherwise, which decides. A repeated key keeps its
//! last value, as in a `Value`, and a field of an unexpected type is kept for what it is.
//!
//! Most of Copilot's lines are small deltas and bookkeeping. The fields only the tool lines
//! need (a tool's `arguments` and its result text) are *costly*: a line is first read without
//! them, and only `tool.execution_start` and `tool.execution_complete` are read again with
//! them ([`parse`]). The events that carry the original JSON (`unknown`, J8) parse the line
//! again.
//!
//! [`read_line_into`]: harness_agents_core::backend::json::read_line_into

use harness_agents_core::backend::NotJson;
use harness_agents_core::backend::json::{Text, read_line_into};
use serde_json::Value;

/// The members of the `result` line's `usage` the outcome reads (CP12).
pub(crate) const USAGE: [&str; 2] = ["totalApiDurationMs", "sessionDurationMs"];

harness_agents_core::json_view! {
    /// The top-level fields the rules read; every one absent unless the line has it.
    pub(crate) struct LineView<'a> {
        /// `type`.
        kind: "type",
        /// `data`, when an object.
        data: "data" => Option<Data<'a>>,
        /// `sessionId` of the `result` line (CP12).
        session_id: "sessionId",
        /// `exitCode` of the `result` line (CP12).
        exit_code: "exitCode",
        /// `usage.totalApiDurationMs` and `usage.sessionDurationMs` of the `result` line.
        usage: "usage"[USAGE],
    }
}

harness_agents_core::json_view! {
    /// The members of `data` the rules read.
    pub(crate) struct Data<'a> {
        /// `content` of `assistant.message` (CP5).
        content: "content" => Text<'a>,
        /// `reasoningText` of `assistant.message` (CP5).
        reasoning_text: "reasoningText" => Text<'a>,
        /// `toolCallId` of the `tool.*` lines (CP7).
        tool_call_id: "toolCallId",
        /// `toolName` of `tool.execution_start` (CP7).
        tool_name: "toolName",
        /// `arguments` of `tool.execution_start`, whole; read only for the tool lines.
        arguments: "arguments" if costly => Option<Value>,
        /// `success` of `tool.execution_complete` (CP8).
        success: "success",
        /// `result.content` of `tool.execution_complete`; read only for the tool lines.
        result: "result" if costly."content",
        /// `error.message` of a failed tool (CP8).
        error: "error"."message",
        /// `shellExecution.exitCode` of a shell tool (CP9).
        shell_exit: "shellExecution"."exitCode",
        /// `message` of `session.error`, `session.warning` and `session.info` (CP11).
        message: "message",
        /// `statusCode` of `model.call_failure` (CP11).
        status_code: "statusCode",
        /// `retryAttempt` of `model.call_failure` (CP11).
        retry_attempt: "retryAttempt",
        /// `errorMessage` of `model.call_failure` (CP11).
        error_message: "errorMessage",
        /// `toolTelemetry` of `tool.execution_complete`, when an object (CP8).
        telemetry: "toolTelemetry" => Option<Telemetry<'a>>,
    }
}

harness_agents_core::json_view! {
    /// A tool's `toolTelemetry` (CP8).
    pub(crate) struct Telemetry<'a> {
        /// `properties.viewType` of `view`: `file` or `directory`.
        view_type: "properties"."viewType",
    }
}

/// The types whose rules read the costly fields.
const COSTLY: [&str; 2] = ["tool.execution_start", "tool.execution_complete"];

/// Reads the view of `line` into `view`: it stays `None` when the line is JSON but not an
/// object (S3), `Err` exactly when it is not JSON (S2). The costly fields are read only for
/// the types that need them (see the module docs).
pub(crate) fn parse<'a>(line: &'a [u8], view: &mut Option<LineView<'a>>) -> Result<(), NotJson> {
    read_line_into(line, view, false)?;
    let costly = view
        .as_ref()
        .and_then(|v| v.kind.as_str())
        .is_some_and(|kind| COSTLY.contains(&kind));
    if costly {
        read_line_into(line, view, true)?;
    }
    Ok(())
}
