//! The tool map (C13, C14, C15): what one resolved tool use becomes.

use harness_agents_core::backend::args::view::{count, field, optional, required};
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::{EventBody, LineRange, ToolRef, ToolStatus};

use harness_agents_core::backend::stream_json::InputView;

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

impl From<()> for Bad {
    fn from((): ()) -> Self {
        Bad
    }
}

/// The range of a Read tool use (C14).
fn read_range(input: &InputView<'_>) -> Result<Option<LineRange>, Bad> {
    let offset = count(&input.offset)?;
    let limit = count(&input.limit)?.filter(|&l| l != 0);
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
            let file = required(&input.file_path)?;
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
                required(&input.notebook_path)?
            } else {
                required(&input.file_path)?
            };
            one(EventBody::Write {
                path: path(file),
                change: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "Grep" | "Glob" => {
            let pattern = required(&input.pattern)?;
            let dir = optional(&input.path)?;
            one(EventBody::Search {
                query: Some(pattern.to_string()),
                path: dir.map(path),
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "LS" => {
            let dir = optional(&input.path)?;
            one(EventBody::List {
                path: dir.map(path),
                command: None,
                status: status.clone(),
                tool: tool.clone(),
            })
        }
        "Bash" => {
            let command = required(&input.command)?;
            Ok(Mapping::Events(bash_events(command, status, tool, cx)))
        }
        "Skill" => {
            let skill = match field(&input.skill) {
                Some(_) => required(&input.skill)?,
                None => required(&input.command)?,
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
