//! The tool map (C13, C14, C15): what one resolved tool use becomes.

use harness_agents_core::backend::json::Loose;
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::{EventBody, LineRange, ToolRef, ToolStatus};

use crate::wire::InputView;

/// What a tool use maps to, before it is turned into events.
#[derive(Debug)]
pub(crate) enum Mapping {
    /// One or more events (Bash can give several, C15).
    Events(Vec<EventBody>),
    /// `StructuredOutput`: no event at all.
    Nothing,
    /// The tool has no mapping (C14).
    UnknownTool,
    /// The use lacks a field its mapping needs, or has one of the wrong type (C13).
    Malformed,
}

/// Where paths are resolved from (C14a).
pub(crate) struct Context<'a> {
    /// The working directory in effect.
    pub cwd: Option<&'a str>,
    /// The `--workspace` given to the harness.
    pub workspace: Option<&'a str>,
}

/// A field that was absent, or present with a value the mapping cannot take.
struct Bad;

/// A field's value, with `null` counting as absent (C13).
fn field<'v, 'a>(value: &'v Loose<'a>) -> Option<&'v Loose<'a>> {
    Some(value).filter(|v| !v.is_absent_or_null())
}

/// A required string: present, a string, not empty.
fn required_str<'v>(value: &'v Loose<'_>) -> Result<&'v str, Bad> {
    value.non_empty_str().ok_or(Bad)
}

/// An optional path: absent or empty counts as none; any other type is malformed.
fn optional_path<'v>(value: &'v Loose<'_>) -> Result<Option<&'v str>, Bad> {
    match field(value) {
        None => Ok(None),
        Some(Loose::Str(s)) => Ok(Some(s.as_ref()).filter(|s| !s.is_empty())),
        Some(_) => Err(Bad),
    }
}

/// An optional integer from 0 to 2^32-1 (the Read tool's `offset` and `limit`).
fn optional_u32(value: &Loose<'_>) -> Result<Option<u64>, Bad> {
    match field(value) {
        None => Ok(None),
        Some(Loose::Number(n)) => match n.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n)),
            _ => Err(Bad),
        },
        Some(_) => Err(Bad),
    }
}

/// The range of a Read tool use (C14).
fn read_range(input: &InputView<'_>) -> Result<Option<LineRange>, Bad> {
    let offset = optional_u32(&input.offset)?;
    let limit = optional_u32(&input.limit)?.filter(|&l| l != 0);
    if offset.is_none() && limit.is_none() {
        return Ok(None);
    }
    let start = offset.filter(|&o| o != 0).unwrap_or(1);
    Ok(Some(LineRange {
        start,
        end: limit.map(|l| start + l - 1),
    }))
}

/// Maps one tool use (C14). `status` and `tool` go on every event it yields.
pub(crate) fn map_tool(
    name: &str,
    input: &InputView<'_>,
    status: &ToolStatus,
    tool: &ToolRef,
    cx: &Context<'_>,
) -> Mapping {
    match map_fields(name, input, status, tool, cx) {
        Ok(mapping) => mapping,
        Err(Bad) => Mapping::Malformed,
    }
}

fn map_fields(
    name: &str,
    input: &InputView<'_>,
    status: &ToolStatus,
    tool: &ToolRef,
    cx: &Context<'_>,
) -> Result<Mapping, Bad> {
    let path = |p: &str| resolve(p, cx.cwd);
    let one = |body: EventBody| Ok(Mapping::Events(vec![body]));
    match name {
        "Read" => {
            let file = required_str(&input.file_path)?;
            let range = read_range(input)?;
            one(EventBody::Read {
                path: path(file),
                range,
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            let file = if name == "NotebookEdit" {
                required_str(&input.notebook_path)?
            } else {
                required_str(&input.file_path)?
            };
            one(EventBody::Write {
                path: path(file),
                change: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "Grep" | "Glob" => {
            let pattern = required_str(&input.pattern)?;
            let dir = optional_path(&input.path)?;
            one(EventBody::Search {
                query: Some(pattern.to_string()),
                path: dir.map(path),
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "LS" => {
            let dir = optional_path(&input.path)?;
            one(EventBody::List {
                path: dir.map(path),
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "Bash" => {
            let command = required_str(&input.command)?;
            Ok(Mapping::Events(bash_events(command, status, tool, cx)))
        }
        "Skill" => {
            let skill = match field(&input.skill) {
                Some(_) => required_str(&input.skill)?,
                None => required_str(&input.command)?,
            };
            let workspace = cx.workspace.unwrap_or(".claude");
            let file = format!("{workspace}/skills/{skill}/SKILL.md");
            one(EventBody::Skill {
                name: skill.to_string(),
                path: path(&file),
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "StructuredOutput" => Ok(Mapping::Nothing),
        _ => Ok(Mapping::UnknownTool),
    }
}

/// C15: a Bash command becomes read/search/list events when every part Codex finds is one of
/// those, else one `command` event (C16: no exit code).
fn bash_events(
    command: &str,
    status: &ToolStatus,
    tool: &ToolRef,
    cx: &Context<'_>,
) -> Vec<EventBody> {
    let input = ShellInput::Script(command);
    shell_events(input, command, None, cx.cwd, status, tool)
}
