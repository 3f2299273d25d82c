//! The tool map (P5-P9 of `docs/opencode.md`): one finished tool part to its events. Pure
//! functions of the part's view.

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::backend::text::truncate_chars;
use harness_agents_core::{
    EventBody, LineRange, NormalizerConfig, PlanItem, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
use serde_json::{Number, Value};

use crate::wire::{Input, Metadata, Part, State};

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

/// An input field read as P6 says (`null` counts as absent): a required non-empty string.
fn string<'a>(field: &'a Loose<'_>) -> Result<&'a str, Malformed> {
    field.non_empty_str().ok_or(Malformed)
}

/// An optional string; an empty one counts as absent.
fn optional_string<'a>(field: &'a Loose<'_>) -> Result<Option<&'a str>, Malformed> {
    match field {
        Loose::Absent | Loose::Null => Ok(None),
        Loose::Str(s) => Ok(Some(s.as_ref()).filter(|s| !s.is_empty())),
        _ => Err(Malformed),
    }
}

/// An optional integer from 0 to 2^32-1.
fn optional_line(field: &Loose<'_>) -> Result<Option<u64>, Malformed> {
    match field {
        Loose::Absent | Loose::Null => Ok(None),
        Loose::Number(n) => n
            .as_u64()
            .filter(|n| *n <= u64::from(u32::MAX))
            .map(Some)
            .ok_or(Malformed),
        _ => Err(Malformed),
    }
}

/// The part's `state.metadata`, when both are objects.
fn metadata<'s, 'a>(state: Option<&'s State<'a>>) -> Option<&'s Metadata<'a>> {
    state.and_then(|s| s.metadata.as_ref())
}

/// P5: success and error text from the part's `state`.
fn status_of(state: Option<&State<'_>>, completed: bool) -> ToolStatus {
    let error = (!completed)
        .then(|| state.and_then(|s| s.error.non_empty_str()))
        .flatten()
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
/// `<type>` line of its output (kept in the view only when read for this).
fn read_a_directory(state: Option<&State<'_>>) -> bool {
    let Some(state) = state else {
        return false;
    };
    let display = metadata(Some(state)).and_then(|m| m.display_type.as_str());
    match display {
        Some(kind) => kind == "directory",
        None => state
            .output
            .as_str()
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
/// of a running one as it would finish (L1). `tool` is `part.tool`. An `unknown` event's `raw`
/// is left `null`: the caller puts the part as printed there (J8).
pub(crate) fn tool_events(
    tools: &Tools,
    tool: &str,
    part: &Part<'_>,
    completed: bool,
) -> Vec<EventBody> {
    let tool_ref = ToolRef {
        tool: Some(tool.to_string()),
        tool_use_id: part.call_id.non_empty_str().map(str::to_string),
    };
    let unknown = |reason| {
        vec![EventBody::Unknown {
            reason,
            raw: Value::Null,
            tool: tool_ref.clone(),
        }]
    };
    let state = part.state.as_ref();
    let none = Input::default();
    let input = state.and_then(|s| s.input.as_ref()).unwrap_or(&none);
    let status = status_of(state, completed);
    match mapped(tools, tool, input, state, status, &tool_ref) {
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
    state: Option<&State<'_>>,
    status: ToolStatus,
    tool_ref: &ToolRef,
) -> Option<Result<Vec<EventBody>, Malformed>> {
    let tool_ref = tool_ref.clone();
    let events = (|| -> Result<Vec<EventBody>, Malformed> {
        Ok(match tool {
            "read" => {
                let path = tools.path(string(&input.file_path)?);
                let offset = optional_line(&input.offset)?;
                let limit = optional_line(&input.limit)?;
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
                let path = tools.path(string(&input.file_path)?);
                input.content.as_str().ok_or(Malformed)?;
                let change = match metadata(state).map(|m| &m.exists) {
                    Some(Loose::Bool(true)) => Some("update".to_string()),
                    Some(Loose::Bool(false)) => Some("add".to_string()),
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
                path: tools.path(string(&input.file_path)?),
                change: Some("update".to_string()),
                status,
                tool: tool_ref,
            }],
            "apply_patch" | "patch" => {
                let text = string(&input.patch_text)?;
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
                let query = string(&input.pattern)?.to_string();
                let path = optional_string(&input.path)?.map(|p| tools.path(p));
                if tool == "grep" {
                    optional_string(&input.include)?;
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
                path: optional_string(&input.path)?.map(|p| tools.path(p)),
                command: None,
                status,
                tool: tool_ref,
            }],
            "bash" => {
                let command = string(&input.command)?;
                let workdir = optional_string(&input.workdir)?.map(|w| tools.path(w));
                let exit_code = match metadata(state).map(|m| &m.exit) {
                    Some(Loose::Number(n)) if n.is_i64() || n.is_u64() => Some(n.clone()),
                    _ => None,
                };
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
                let name = string(&input.name)?;
                vec![EventBody::Skill {
                    name: name.to_string(),
                    path: skill_path(tools, name, state),
                    status,
                    tool: tool_ref,
                }]
            }
            "todowrite" => {
                let Some(Value::Array(todos)) = &input.todos else {
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
fn shell_status(
    status: ToolStatus,
    exit: Option<&Number>,
    state: Option<&State<'_>>,
) -> ToolStatus {
    let nonzero = exit.is_some_and(|n| n.as_i64() != Some(0));
    // An exit status present but `null`: opencode ended the command (its timeout, an abort).
    let killed = metadata(state).is_some_and(|m| m.exit == Loose::Null);
    if !status.success || !(nonzero || killed) {
        return status;
    }
    let output = state
        .and_then(|s| s.output.non_empty_str())
        .map(|o| truncate_chars(o, MAX_ERROR).to_string());
    ToolStatus {
        success: false,
        error: output,
    }
}

/// P8: where a skill lives: the directory opencode reports in the tool's metadata (`dir`),
/// else `<workspace>/skill/<name>/SKILL.md`.
fn skill_path(tools: &Tools, name: &str, state: Option<&State<'_>>) -> String {
    match metadata(state).and_then(|m| m.dir.non_empty_str()) {
        Some(dir) => tools.path(&format!("{dir}/SKILL.md")),
        None => format!("{}/skill/{name}/SKILL.md", tools.workspace),
    }
}
