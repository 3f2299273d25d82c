//! The tool map (P5-P9 of `docs/opencode.md`): one finished tool part to its events. Pure
//! functions of the part.

use harness_core::backend::paths::resolve;
use harness_core::backend::reclassify::{ShellInput, shell_events};
use harness_core::backend::text::truncate_chars;
use harness_core::{
    EventBody, LineRange, NormalizerConfig, PlanItem, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
use serde_json::{Map, Number, Value};

/// The longest `error` text an event carries (J6).
const MAX_ERROR: usize = 1_000;

/// What the tool map needs from the caller's settings: where relative paths resolve and where
/// skills live.
#[derive(Debug, Clone, Default)]
pub(crate) struct Tools {
    cwd: Option<String>,
    /// The workspace for skills (P8): `--workspace`, else `<cwd>/.opencode`.
    workspace: String,
}

impl Tools {
    pub(crate) fn new(config: &NormalizerConfig) -> Self {
        let cwd = config.cwd.clone();
        let workspace = resolve(
            config.workspace.as_deref().unwrap_or(".opencode"),
            cwd.as_deref(),
        );
        Tools { cwd, workspace }
    }

    fn path(&self, path: &str) -> String {
        resolve(path, self.cwd.as_deref())
    }
}

/// A required field was missing or of the wrong type (P6).
struct Malformed;

/// The input fields of a tool use, read as P6 says: `null` counts as absent.
struct Input<'a>(Option<&'a Map<String, Value>>);

impl<'a> Input<'a> {
    fn field(&self, key: &str) -> Option<&'a Value> {
        self.0?.get(key).filter(|v| !v.is_null())
    }

    /// A required non-empty string.
    fn string(&self, key: &str) -> Result<&'a str, Malformed> {
        match self.field(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(s),
            _ => Err(Malformed),
        }
    }

    /// An optional string; an empty one counts as absent.
    fn optional_string(&self, key: &str) -> Result<Option<&'a str>, Malformed> {
        match self.field(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str()).filter(|s| !s.is_empty())),
            Some(_) => Err(Malformed),
        }
    }

    /// An optional integer from 0 to 2^32-1.
    fn optional_line(&self, key: &str) -> Result<Option<u64>, Malformed> {
        match self.field(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|n| *n <= u64::from(u32::MAX))
                .map(Some)
                .ok_or(Malformed),
        }
    }
}

/// P5: success and error text from the part's `state`.
fn status_of(state: Option<&Value>, completed: bool) -> ToolStatus {
    let error = (!completed)
        .then(|| state.and_then(|s| s.get("error")).and_then(Value::as_str))
        .flatten()
        .filter(|e| !e.is_empty())
        .map(|e| truncate_chars(e, MAX_ERROR).to_string());
    ToolStatus {
        success: completed,
        error,
    }
}

/// P6a: `offset` and `limit` as a range, as C14 reads them.
fn range(offset: Option<u64>, limit: Option<u64>) -> Option<LineRange> {
    let limit = limit.filter(|l| *l > 0);
    if offset.is_none() && limit.is_none() {
        return None;
    }
    let start = offset.filter(|o| *o > 0).unwrap_or(1);
    Some(LineRange {
        start,
        end: limit.map(|l| start.saturating_add(l - 1)),
    })
}

/// Whether a finished `read` read a directory (P6a): its metadata's `display.type`, else the
/// `<type>` line of its output.
fn read_a_directory(state: Option<&Value>) -> bool {
    let Some(state) = state else {
        return false;
    };
    match state
        .pointer("/metadata/display/type")
        .and_then(Value::as_str)
    {
        Some(kind) => kind == "directory",
        None => state
            .get("output")
            .and_then(Value::as_str)
            .and_then(|o| o.lines().nth(1))
            .is_some_and(|l| l == "<type>directory</type>"),
    }
}

/// The files an `apply_patch`/`patch` text names, with their change (P6b).
fn patch_files(text: &str) -> Vec<(&str, &'static str)> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_end();
            [
                ("*** Add File: ", "add"),
                ("*** Update File: ", "update"),
                ("*** Delete File: ", "delete"),
            ]
            .into_iter()
            .find_map(|(prefix, change)| {
                line.strip_prefix(prefix)
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(|p| (p, change))
            })
        })
        .collect()
}

/// P6d: a `todowrite`'s list as plan items: `content` as the text, `completed` whether its
/// `status` is `"completed"` (`null` when it has no string status).
fn plan_items(todos: &[Value]) -> Vec<PlanItem> {
    todos
        .iter()
        .filter(|t| t.is_object())
        .map(|t| PlanItem {
            text: t.get("content").cloned().unwrap_or(Value::Null),
            completed: match t.get("status").and_then(Value::as_str) {
                Some(status) => Value::Bool(status == "completed"),
                None => Value::Null,
            },
        })
        .collect()
}

/// The events of a finished tool part (`completed` says whether its status is `completed`), or
/// of a running one as it would finish (L1). `tool` is `part.tool`.
pub(crate) fn tool_events(
    tools: &Tools,
    tool: &str,
    part: &Value,
    completed: bool,
) -> Vec<EventBody> {
    let tool_ref = ToolRef {
        tool: Some(tool.to_string()),
        tool_use_id: part
            .get("callID")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .map(str::to_string),
    };
    let unknown = |reason| {
        vec![EventBody::Unknown {
            reason,
            raw: part.clone(),
            tool: tool_ref.clone(),
        }]
    };
    let state = part.get("state");
    let input = Input(
        state
            .and_then(|s| s.get("input"))
            .and_then(Value::as_object),
    );
    let status = status_of(state, completed);
    match mapped(tools, tool, &input, state, status, &tool_ref) {
        Some(Ok(events)) => events,
        Some(Err(Malformed)) => unknown(UnknownReason::MalformedToolUse),
        None => unknown(UnknownReason::UnknownTool),
    }
}

/// The mapped tools (P6); `None` for a tool the map does not know (P6e).
fn mapped(
    tools: &Tools,
    tool: &str,
    input: &Input<'_>,
    state: Option<&Value>,
    status: ToolStatus,
    tool_ref: &ToolRef,
) -> Option<Result<Vec<EventBody>, Malformed>> {
    let tool_ref = tool_ref.clone();
    let events = (|| -> Result<Vec<EventBody>, Malformed> {
        Ok(match tool {
            "read" => {
                let path = tools.path(input.string("filePath")?);
                let offset = input.optional_line("offset")?;
                let limit = input.optional_line("limit")?;
                if status.success && read_a_directory(state) {
                    vec![EventBody::List {
                        path: Some(path),
                        command: None,
                        status,
                        tool: tool_ref,
                    }]
                } else {
                    vec![EventBody::Read {
                        path,
                        range: range(offset, limit),
                        command: None,
                        status,
                        tool: tool_ref,
                    }]
                }
            }
            "write" => {
                let path = tools.path(input.string("filePath")?);
                input
                    .field("content")
                    .filter(|c| c.is_string())
                    .ok_or(Malformed)?;
                let change = match state.and_then(|s| s.pointer("/metadata/exists")) {
                    Some(Value::Bool(true)) => Some("update".to_string()),
                    Some(Value::Bool(false)) => Some("add".to_string()),
                    _ => None,
                };
                vec![EventBody::Write {
                    path,
                    change,
                    status,
                    tool: tool_ref,
                }]
            }
            "edit" | "multiedit" => vec![EventBody::Write {
                path: tools.path(input.string("filePath")?),
                change: Some("update".to_string()),
                status,
                tool: tool_ref,
            }],
            "apply_patch" | "patch" => {
                let text = input.string("patchText")?;
                let files = patch_files(text);
                if files.is_empty() {
                    return Err(Malformed);
                }
                files
                    .into_iter()
                    .map(|(path, change)| EventBody::Write {
                        path: tools.path(path),
                        change: Some(change.to_string()),
                        status: status.clone(),
                        tool: tool_ref.clone(),
                    })
                    .collect()
            }
            "grep" | "glob" => {
                let query = input.string("pattern")?.to_string();
                let path = input.optional_string("path")?.map(|p| tools.path(p));
                if tool == "grep" {
                    input.optional_string("include")?;
                }
                vec![EventBody::Search {
                    query: Some(query),
                    path,
                    command: None,
                    status,
                    tool: tool_ref,
                }]
            }
            "list" => vec![EventBody::List {
                path: input.optional_string("path")?.map(|p| tools.path(p)),
                command: None,
                status,
                tool: tool_ref,
            }],
            "bash" => {
                let command = input.string("command")?;
                let workdir = input.optional_string("workdir")?.map(|w| tools.path(w));
                let exit_code = state
                    .and_then(|s| s.pointer("/metadata/exit"))
                    .and_then(Value::as_number)
                    .filter(|n| n.is_i64() || n.is_u64())
                    .cloned();
                let status = shell_status(status, exit_code.as_ref(), state);
                let cwd = workdir.as_deref().or(tools.cwd.as_deref());
                shell_events(
                    ShellInput::Script(command),
                    command,
                    exit_code,
                    cwd,
                    &status,
                    &tool_ref,
                )
            }
            "skill" => {
                let name = input.string("name")?;
                vec![EventBody::Skill {
                    name: name.to_string(),
                    path: skill_path(tools, name, state),
                    status,
                    tool: tool_ref,
                }]
            }
            "todowrite" => {
                let Some(Value::Array(todos)) = input.field("todos") else {
                    return Err(Malformed);
                };
                if status.success {
                    vec![EventBody::Plan {
                        items: plan_items(todos),
                    }]
                } else {
                    vec![EventBody::Warning {
                        message: format!(
                            "todowrite failed: {}",
                            status.error.as_deref().unwrap_or("no error text")
                        ),
                        source: WarningSource::Stream,
                    }]
                }
            }
            _ => return Err(Malformed),
        })
    })();
    let known = matches!(
        tool,
        "read"
            | "write"
            | "edit"
            | "multiedit"
            | "apply_patch"
            | "patch"
            | "grep"
            | "glob"
            | "list"
            | "bash"
            | "skill"
            | "todowrite"
    );
    known.then_some(events)
}

/// P6c: a shell command that exited non-zero, or that opencode killed (`metadata.exit` is
/// `null`), failed, though opencode calls it `completed`; its error text is then the command's
/// output.
fn shell_status(status: ToolStatus, exit: Option<&Number>, state: Option<&Value>) -> ToolStatus {
    let nonzero = exit.is_some_and(|n| n.as_i64() != Some(0));
    // An exit status present but `null`: opencode ended the command (its timeout, an abort).
    let killed = state.and_then(|s| s.pointer("/metadata/exit")) == Some(&Value::Null);
    if !status.success || !(nonzero || killed) {
        return status;
    }
    let output = state
        .and_then(|s| s.get("output"))
        .and_then(Value::as_str)
        .filter(|o| !o.is_empty())
        .map(|o| truncate_chars(o, MAX_ERROR).to_string());
    ToolStatus {
        success: false,
        error: output,
    }
}

/// P8: where a skill lives: the directory opencode reports in the tool's metadata (`dir`),
/// else `<workspace>/skill/<name>/SKILL.md`.
fn skill_path(tools: &Tools, name: &str, state: Option<&Value>) -> String {
    match state
        .and_then(|s| s.pointer("/metadata/dir"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
    {
        Some(dir) => tools.path(&format!("{dir}/SKILL.md")),
        None => format!("{}/skill/{name}/SKILL.md", tools.workspace),
    }
}
