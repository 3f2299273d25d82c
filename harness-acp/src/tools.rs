//! A7: the events of a finished tool call, by its `kind`.

use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::backend::text::truncate_chars;
use harness_agents_core::{EventBody, ToolRef, ToolStatus, UnknownReason};
use serde_json::{Map, Number, Value};

use crate::wire::{ContentBlock, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind};

/// The longest `error` text kept (J6).
const MAX_ERROR: usize = 1_000;

/// The keys of `rawInput` that name a file or directory, in the order they are tried (A7).
const PATH_KEYS: [&str; 5] = ["file_path", "filePath", "path", "absolute_path", "dir_path"];

/// The keys of `rawInput` that hold a search's pattern (A7).
const QUERY_KEYS: [&str; 3] = ["pattern", "query", "regex"];

/// The call's `kind` as written (`None` when no notification gave one): the J3 `tool`.
pub(crate) fn kind_name(fields: &Map<String, Value>) -> Option<String> {
    fields
        .get("kind")
        .and_then(Value::as_str)
        .map(str::to_string)
}

fn parse<T: serde::de::DeserializeOwned>(fields: &Map<String, Value>, key: &str) -> Option<T> {
    T::deserialize(fields.get(key)?).ok()
}

/// A7: a string of `rawInput` under the first of `keys` that holds a non-empty one.
fn raw_string<'a>(fields: &'a Map<String, Value>, keys: &[&str]) -> Option<&'a str> {
    let input = fields.get("rawInput")?;
    keys.iter().find_map(|key| {
        input
            .get(*key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    })
}

/// A7: success from the status; on failure the error is the content's text, else
/// `rawOutput.error`, else `rawOutput.message`, else `rawOutput` when a string (cut to 1,000
/// characters; absent when empty).
fn status(fields: &Map<String, Value>, outcome: ToolCallStatus) -> ToolStatus {
    if outcome == ToolCallStatus::Completed {
        return ToolStatus {
            success: true,
            error: None,
        };
    }
    let content: Vec<ToolCallContent> = parse(fields, "content").unwrap_or_default();
    let texts: Vec<String> = content
        .into_iter()
        .filter_map(|item| match item {
            ToolCallContent::Content {
                content: ContentBlock::Text { text },
            } => Some(text),
            _ => None,
        })
        .filter(|t| !t.is_empty())
        .collect();
    let output = fields.get("rawOutput");
    let error = if texts.is_empty() {
        output
            .and_then(|o| {
                let field = |key: &str| o.get(key).and_then(Value::as_str);
                field("error").or(field("message")).or(o.as_str())
            })
            .map(str::to_string)
    } else {
        Some(texts.join("\n\n"))
    };
    ToolStatus {
        success: false,
        error: error
            .filter(|e| !e.is_empty())
            .map(|e| truncate_chars(&e, MAX_ERROR).to_string()),
    }
}

/// A7a: the exit code an `execute` call's `rawOutput` names: the `exitCode` of the first entry
/// of its `contents` list whose `type` is `shell_exit` (the GitHub Copilot CLI's shape), else
/// its own `exitCode` when its `signal` is absent or `null` (Qwen Code's `shell_result`: a
/// command a signal ended reports 0, which is not its status); read when it is an integer as
/// serde_json keeps one (i64 or u64).
fn exit_code(fields: &Map<String, Value>) -> Option<Number> {
    let output = fields.get("rawOutput")?;
    let code = match output.get("contents").and_then(Value::as_array) {
        Some(contents) => contents
            .iter()
            .find(|entry| entry.get("type").and_then(Value::as_str) == Some("shell_exit"))?
            .get("exitCode")?,
        None => output
            .get("exitCode")
            .filter(|_| output.get("signal").is_none_or(Value::is_null))?,
    };
    match code {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.clone()),
        _ => None,
    }
}

/// A7a: a command that exited non-zero failed, though the agent ended its call `completed`;
/// its `error` is the text of its content blocks, as a `failed` call's (J6).
fn exit_status(
    fields: &Map<String, Value>,
    outcome: ToolCallStatus,
    code: Option<&Number>,
) -> ToolStatus {
    match code {
        Some(code) if code.as_u64() != Some(0) && outcome == ToolCallStatus::Completed => {
            status(fields, ToolCallStatus::Failed)
        }
        _ => status(fields, outcome),
    }
}

/// The paths a call names: its `locations`, else the path of its `rawInput` (A7).
fn paths(fields: &Map<String, Value>, cwd: Option<&str>) -> Vec<String> {
    let locations: Vec<ToolCallLocation> = parse(fields, "locations").unwrap_or_default();
    let mut paths: Vec<String> = locations
        .iter()
        .map(|l| l.path.as_str())
        .filter(|p| !p.is_empty())
        .map(|p| resolve(p, cwd))
        .collect();
    if paths.is_empty() {
        paths.extend(raw_string(fields, &PATH_KEYS).map(|p| resolve(p, cwd)));
    }
    paths
}

/// The events of a call that reached `completed` or `failed` (A7), or why it is `unknown`
/// (the reason and its J3 fields).
pub(crate) fn events(
    fields: &Map<String, Value>,
    cwd: Option<&str>,
) -> Result<Vec<EventBody>, (UnknownReason, ToolRef)> {
    let tool = ToolRef {
        tool: kind_name(fields),
        tool_use_id: fields
            .get("toolCallId")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let malformed = || (UnknownReason::MalformedToolUse, tool.clone());
    let outcome = ToolCallStatus::of(fields.get("status")).ok_or_else(malformed)?;
    let kind = ToolKind::of(fields.get("kind")).unwrap_or(ToolKind::Other);
    let status = status(fields, outcome);
    let write = |path: String, change: Option<&str>| EventBody::Write {
        path,
        change: change.map(str::to_string),
        status: status.clone(),
        tool: tool.clone(),
    };
    let events = match kind {
        ToolKind::Read => {
            let path = paths(fields, cwd)
                .into_iter()
                .next()
                .ok_or_else(malformed)?;
            vec![EventBody::Read {
                path,
                range: None,
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            }]
        }
        ToolKind::Edit => {
            let content: Vec<ToolCallContent> = parse(fields, "content").unwrap_or_default();
            let diffs: Vec<EventBody> = content
                .into_iter()
                .filter_map(|item| match item {
                    ToolCallContent::Diff { path, old_text, .. } => {
                        let path = resolve(&path, cwd);
                        let change = match old_text.as_ref().and_then(Value::as_str) {
                            None | Some("") => "add",
                            Some(_) => "update",
                        };
                        Some(write(path, Some(change)))
                    }
                    _ => None,
                })
                .collect();
            if diffs.is_empty() {
                let paths = paths(fields, cwd);
                if paths.is_empty() {
                    return Err(malformed());
                }
                paths.into_iter().map(|p| write(p, None)).collect()
            } else {
                diffs
            }
        }
        ToolKind::Delete | ToolKind::Move => {
            let change = (kind == ToolKind::Delete).then_some("delete");
            let paths = paths(fields, cwd);
            if paths.is_empty() {
                return Err(malformed());
            }
            paths.into_iter().map(|p| write(p, change)).collect()
        }
        ToolKind::Search => {
            let query = raw_string(fields, &QUERY_KEYS).map(str::to_string);
            let path = paths(fields, cwd).into_iter().next();
            vec![EventBody::Search {
                query,
                path,
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            }]
        }
        ToolKind::Execute => {
            // Gemini CLI sends no `rawInput`: its title is the command.
            let title = fields
                .get("title")
                .filter(|t| t.as_str().is_some_and(|t| !t.is_empty()));
            let command = fields
                .get("rawInput")
                .and_then(|i| i.get("command"))
                .or(title);
            let code = exit_code(fields);
            let status = exit_status(fields, outcome, code.as_ref());
            match command {
                Some(Value::String(script)) if !script.is_empty() => shell_events(
                    ShellInput::Script(script),
                    script,
                    code.clone(),
                    cwd,
                    &status,
                    &tool,
                ),
                Some(Value::Array(argv)) if !argv.is_empty() => {
                    let argv: Vec<String> = argv
                        .iter()
                        .map(|a| a.as_str().map(str::to_string))
                        .collect::<Option<_>>()
                        .ok_or_else(malformed)?;
                    let text = argv.join(" ");
                    shell_events(ShellInput::Argv(&argv), &text, code, cwd, &status, &tool)
                }
                _ => return Err(malformed()),
            }
        }
        _ => return Err((UnknownReason::UnknownTool, tool)),
    };
    Ok(events)
}
