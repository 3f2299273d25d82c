//! The tool map (CP8, CP9): what one finished Copilot tool use becomes. Pure functions of the
//! tool name, its `arguments` and its status.

use harness_agents_core::backend::args::{field, required};
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::{EventBody, LineRange, ToolRef, ToolStatus};
use serde_json::{Map, Number, Value};

/// What a tool use maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mapping {
    /// Its events (CP8).
    Events(Vec<EventBody>),
    /// A tool this harness does not map: `unknown` with reason `unknown_tool`.
    UnknownTool,
    /// `arguments` not an object, or a field the mapping reads missing or of the wrong type:
    /// `unknown` with reason `malformed_tool_use` (CP8).
    Malformed,
}

/// What the finished use says beyond its status: whether `view` looked at a directory, and
/// a shell command's exit code (CP9).
#[derive(Debug, Clone, Default)]
pub(crate) struct Done {
    /// `toolTelemetry.properties.viewType` is `directory`.
    pub(crate) directory: bool,
    /// `shellExecution.exitCode`.
    pub(crate) exit_code: Option<Number>,
}

/// CP8 `view`: `view_range` is `[start, end]`, 1-based and inclusive, `end` -1 meaning the
/// end of the file; absent, no range. A `start` of 0 is line 1.
fn range(args: &Map<String, Value>) -> Result<Option<LineRange>, ()> {
    let Some(value) = field(args, "view_range") else {
        return Ok(None);
    };
    let [start, end] = value.as_array().map(Vec::as_slice).ok_or(())? else {
        return Err(());
    };
    let start = start
        .as_u64()
        .filter(|&n| n <= u64::from(u32::MAX))
        .ok_or(())?
        .max(1);
    let end = match end.as_i64() {
        Some(-1) => None,
        Some(n) if n >= 0 && n.unsigned_abs() <= u64::from(u32::MAX) => {
            Some(n.unsigned_abs().max(start))
        }
        _ => return Err(()),
    };
    Ok(Some(LineRange { start, end }))
}

/// CP8 `grep` and `glob`: `paths` is one directory or a list of them; absent, the working
/// directory, which the search then names by no path.
fn paths(args: &Map<String, Value>) -> Result<Vec<Option<&str>>, ()> {
    match field(args, "paths") {
        None => Ok(vec![None]),
        Some(Value::String(p)) => Ok(vec![(!p.is_empty()).then_some(p.as_str())]),
        Some(Value::Array(list)) if list.is_empty() => Ok(vec![None]),
        Some(Value::Array(list)) => list
            .iter()
            .map(|p| p.as_str().map(|p| (!p.is_empty()).then_some(p)).ok_or(()))
            .collect(),
        Some(_) => Err(()),
    }
}

/// The events of one tool use (CP8, CP9), given its status and what its end says. `tool` is
/// already the use's [`ToolRef`]; `cwd` resolves relative paths (CP10).
pub(crate) fn map(
    name: &str,
    args: &Value,
    status: &ToolStatus,
    done: &Done,
    tool: &ToolRef,
    cwd: Option<&str>,
) -> Mapping {
    if !matches!(name, "view" | "create" | "edit" | "grep" | "glob" | "bash") {
        return Mapping::UnknownTool;
    }
    let Some(args) = args.as_object() else {
        return Mapping::Malformed;
    };
    match mapped(name, args, status, done, tool, cwd) {
        Ok(bodies) => Mapping::Events(bodies),
        Err(()) => Mapping::Malformed,
    }
}

fn mapped(
    name: &str,
    args: &Map<String, Value>,
    status: &ToolStatus,
    done: &Done,
    tool: &ToolRef,
    cwd: Option<&str>,
) -> Result<Vec<EventBody>, ()> {
    let (status, tool) = (status.clone(), tool.clone());
    let body = match name {
        "view" if done.directory => EventBody::List {
            path: Some(resolve(required(args, "path")?, cwd)),
            command: None,
            status,
            tool,
        },
        "view" => EventBody::Read {
            path: resolve(required(args, "path")?, cwd),
            range: range(args)?,
            command: None,
            status,
            tool,
        },
        "create" | "edit" => EventBody::Write {
            path: resolve(required(args, "path")?, cwd),
            change: None,
            status,
            tool,
        },
        "grep" | "glob" => {
            let pattern = required(args, "pattern")?;
            let bodies = paths(args)?
                .into_iter()
                .map(|path| EventBody::Search {
                    query: Some(pattern.to_string()),
                    path: path.map(|p| resolve(p, cwd)),
                    command: None,
                    status: status.clone(),
                    tool: tool.clone(),
                })
                .collect();
            return Ok(bodies);
        }
        _ => {
            let command = required(args, "command")?;
            let input = ShellInput::Script(command);
            let exit = done.exit_code.clone();
            return Ok(shell_events(input, command, exit, cwd, &status, &tool));
        }
    };
    Ok(vec![body])
}
