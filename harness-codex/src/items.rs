//! The item map (X3-X6): what one completed Codex item becomes. Pure functions of the item.

use std::path::Path;

use harness_core::backend::paths::resolve;
use harness_core::backend::reclassify::{ShellInput, shell_events};
use harness_core::{EventBody, PlanItem, ToolRef, ToolStatus, UnknownReason, WarningSource};
use serde_json::Value;

/// The item's string `id`, when it has one.
pub(crate) fn item_id(item: &Value) -> Option<&str> {
    item.get("id").and_then(Value::as_str)
}

fn tool_ref(tool: &str, item: &Value) -> ToolRef {
    ToolRef {
        tool: Some(tool.to_string()),
        tool_use_id: item_id(item).map(str::to_string),
    }
}

fn unknown(reason: UnknownReason, item: &Value, tool: ToolRef) -> EventBody {
    EventBody::Unknown {
        reason,
        raw: item.clone(),
        tool,
    }
}

/// `success` of a tool item: its `status` is `"completed"` (X4, X6).
fn status_of(item: &Value) -> ToolStatus {
    ToolStatus {
        success: item.get("status").and_then(Value::as_str) == Some("completed"),
        error: None,
    }
}

/// The events of a completed item of type `kind` (X3-X6). `cwd` resolves relative paths (X9).
pub(crate) fn completed(item: &Value, kind: &str, cwd: Option<&str>) -> Vec<EventBody> {
    let text = || {
        item.get("text")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    };
    match kind {
        "agent_message" => text()
            .map(|text| EventBody::Agent { text })
            .into_iter()
            .collect(),
        "reasoning" => text()
            .map(|text| EventBody::Reasoning { text })
            .into_iter()
            .collect(),
        "command_execution" => command_events(item, cwd),
        "file_change" => file_change_events(item, cwd),
        "todo_list" => vec![EventBody::Plan {
            items: plan_items(item),
        }],
        "error" => vec![EventBody::Warning {
            message: item
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            source: WarningSource::Stream,
        }],
        "mcp_tool_call" => {
            let name = match (
                item.get("server").and_then(Value::as_str),
                item.get("tool").and_then(Value::as_str),
            ) {
                (Some(server), Some(tool)) => format!("{server}/{tool}"),
                _ => "mcp_tool_call".to_string(),
            };
            vec![unknown(
                UnknownReason::UnknownTool,
                item,
                tool_ref(&name, item),
            )]
        }
        "web_search" => vec![unknown(
            UnknownReason::UnknownTool,
            item,
            tool_ref("web_search", item),
        )],
        _ => vec![unknown(
            UnknownReason::UnknownItem,
            item,
            ToolRef::default(),
        )],
    }
}

/// X5: a `todo_list`'s entries: `text` and `completed` of each object entry, as given.
pub(crate) fn plan_items(item: &Value) -> Vec<PlanItem> {
    let Some(Value::Array(entries)) = item.get("items") else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.is_object())
        .map(|e| PlanItem {
            text: e.get("text").cloned().unwrap_or(Value::Null),
            completed: e.get("completed").cloned().unwrap_or(Value::Null),
        })
        .collect()
}

/// The script of a shell wrapper `[bash|zsh|sh (any path), -c|-lc, script]` (X4).
fn wrapped_script(argv: &[String]) -> Option<&str> {
    let [program, flag, script] = argv else {
        return None;
    };
    let name = Path::new(program).file_name().and_then(|n| n.to_str());
    let shell = matches!(name, Some("bash" | "zsh" | "sh"));
    (shell && (flag == "-c" || flag == "-lc")).then_some(script.as_str())
}

/// X4: a `command_execution` item: read/search/list events when every part Codex finds is one
/// of those, else one `command` event with its `exit_code` (i64 or u64, as serde_json keeps an
/// integer).
fn command_events(item: &Value, cwd: Option<&str>) -> Vec<EventBody> {
    let tool = tool_ref("command_execution", item);
    let Some(line) = item.get("command").and_then(Value::as_str) else {
        return vec![unknown(UnknownReason::MalformedToolUse, item, tool)];
    };
    let argv = shlex::split(line).unwrap_or_else(|| vec![line.to_string()]);
    let command = wrapped_script(&argv).unwrap_or(line);
    let exit_code = item
        .get("exit_code")
        .and_then(Value::as_number)
        .filter(|n| n.is_i64() || n.is_u64())
        .cloned();
    let input = ShellInput::Argv(&argv);
    shell_events(input, command, exit_code, cwd, &status_of(item), &tool)
}

/// X6: one `write` per change, each entry without a non-empty string `path` a
/// `malformed_tool_use` in its place; a `changes` that is not a list gives one.
fn file_change_events(item: &Value, cwd: Option<&str>) -> Vec<EventBody> {
    let tool = tool_ref("file_change", item);
    let Some(Value::Array(changes)) = item.get("changes") else {
        return vec![unknown(UnknownReason::MalformedToolUse, item, tool)];
    };
    let status = status_of(item);
    changes
        .iter()
        .map(|change| {
            match change
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
            {
                Some(path) => EventBody::Write {
                    path: resolve(path, cwd),
                    change: change
                        .get("kind")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    status: status.clone(),
                    tool: tool.clone(),
                },
                None => unknown(UnknownReason::MalformedToolUse, item, tool.clone()),
            }
        })
        .collect()
}
