//! The tool map (G6-G8): what one resolved Gemini CLI tool use becomes. Pure functions of the
//! tool name, its `parameters` and its result's status.

use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::{EventBody, LineRange, PlanItem, ToolRef, ToolStatus};
use serde_json::{Map, Value};

/// What resolves relative paths and where skills live (G8).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    /// The `--cwd` given to the harness: Gemini CLI never prints its directory.
    pub cwd: Option<&'a str>,
    /// The `--workspace` given to the harness; `.gemini` by default.
    pub workspace: Option<&'a str>,
}

/// What a tool use maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mapping {
    /// Its events (G6).
    Events(Vec<EventBody>),
    /// `write_todos`: the plan it sets (G7).
    Plan(Vec<PlanItem>),
    /// A tool this harness does not map: `unknown` with reason `unknown_tool`.
    UnknownTool,
    /// A required field missing or of the wrong type: `unknown` with reason
    /// `malformed_tool_use` (G6).
    Malformed,
}

/// The tool uses that give a `plan`, which names no tool use (J3), or nothing.
pub(crate) const EVENTLESS: &[&str] = &["write_todos"];

/// A field of the parameters; `null` counts as absent.
fn field<'v>(params: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    params.get(key).filter(|v| !v.is_null())
}

/// A required non-empty string.
fn required<'v>(params: &'v Map<String, Value>, key: &str) -> Option<&'v str> {
    field(params, key)?.as_str().filter(|s| !s.is_empty())
}

/// An optional string: `Ok(None)` when absent or empty, `Err` when of another type.
fn optional<'v>(params: &'v Map<String, Value>, key: &str) -> Result<Option<&'v str>, ()> {
    match field(params, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok((!s.is_empty()).then_some(s.as_str())),
        Some(_) => Err(()),
    }
}

/// An optional line number: an integer from 0 to 2^32-1.
fn line_number(params: &Map<String, Value>, key: &str) -> Result<Option<u64>, ()> {
    match field(params, key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n)),
            _ => Err(()),
        },
    }
}

/// G6 `read_file`: `start_line` (0 counts as 1) to `end_line` (`null` without one); no range
/// when neither is given.
fn range(params: &Map<String, Value>) -> Result<Option<LineRange>, ()> {
    let start = line_number(params, "start_line")?;
    let end = line_number(params, "end_line")?;
    if start.is_none() && end.is_none() {
        return Ok(None);
    }
    Ok(Some(LineRange {
        start: start.unwrap_or(1).max(1),
        end,
    }))
}

/// G7: `write_todos` entries: the `description` as given (`null` when missing), and
/// `completed` = whether the `status` is `"completed"` (`null` when the status is not a
/// string). Entries that are not objects are skipped.
fn plan_items(todos: &[Value]) -> Vec<PlanItem> {
    todos
        .iter()
        .filter_map(Value::as_object)
        .map(|todo| PlanItem {
            text: todo.get("description").cloned().unwrap_or(Value::Null),
            completed: match todo.get("status") {
                Some(Value::String(status)) => Value::Bool(status == "completed"),
                _ => Value::Null,
            },
        })
        .collect()
}

/// The events of one tool use (G6-G8), given its status. `tool` is already the use's
/// [`ToolRef`].
pub(crate) fn map(
    name: &str,
    params: &Value,
    status: &ToolStatus,
    tool: &ToolRef,
    cx: Context<'_>,
) -> Mapping {
    let Some(params) = params.as_object() else {
        return Mapping::Malformed;
    };
    mapped(name, params, status, tool, cx).unwrap_or(Mapping::Malformed)
}

fn mapped(
    name: &str,
    params: &Map<String, Value>,
    status: &ToolStatus,
    tool: &ToolRef,
    cx: Context<'_>,
) -> Result<Mapping, ()> {
    let path = |p: &str| resolve(p, cx.cwd);
    let one = |body| Ok(Mapping::Events(vec![body]));
    let (status, tool) = (status.clone(), tool.clone());
    match name {
        "read_file" => {
            let file = required(params, "file_path").ok_or(())?;
            one(EventBody::Read {
                path: path(file),
                range: range(params)?,
                command: None,
                status,
                tool,
            })
        }
        "write_file" | "replace" => {
            let file = required(params, "file_path").ok_or(())?;
            one(EventBody::Write {
                path: path(file),
                change: None,
                status,
                tool,
            })
        }
        "grep_search" | "glob" => {
            let pattern = required(params, "pattern").ok_or(())?;
            let dir = optional(params, "dir_path")?;
            one(EventBody::Search {
                query: Some(pattern.to_string()),
                path: dir.map(path),
                command: None,
                status,
                tool,
            })
        }
        "list_directory" => {
            let dir = optional(params, "dir_path")?;
            one(EventBody::List {
                path: dir.map(path),
                command: None,
                status,
                tool,
            })
        }
        "run_shell_command" => {
            let command = required(params, "command").ok_or(())?;
            let dir = optional(params, "dir_path")?.map(path);
            let cwd = dir.as_deref().or(cx.cwd);
            let input = ShellInput::Script(command);
            let mut bodies = shell_events(input, command, None, cwd, &status, &tool);
            // `dir_path` is where the command runs, as a `cd` before it would be: a listing or
            // search that names no path covers that directory (C15).
            if let Some(dir) = dir {
                for body in &mut bodies {
                    if let EventBody::List { path, .. } | EventBody::Search { path, .. } = body
                        && path.is_none()
                    {
                        *path = Some(dir.clone());
                    }
                }
            }
            Ok(Mapping::Events(bodies))
        }
        "activate_skill" => {
            let skill = required(params, "name").ok_or(())?;
            let workspace = cx.workspace.unwrap_or(".gemini");
            one(EventBody::Skill {
                name: skill.to_string(),
                path: path(&format!("{workspace}/skills/{skill}/SKILL.md")),
                status,
                tool,
            })
        }
        "write_todos" => match field(params, "todos") {
            Some(Value::Array(todos)) => Ok(Mapping::Plan(plan_items(todos))),
            _ => Err(()),
        },
        _ => Ok(Mapping::UnknownTool),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn events(name: &str, params: Value) -> Mapping {
        let status = ToolStatus {
            success: true,
            error: None,
        };
        let cx = Context {
            cwd: Some("/p"),
            workspace: None,
        };
        map(name, &params, &status, &ToolRef::default(), cx)
    }

    fn read_range(params: Value) -> Option<LineRange> {
        match events("read_file", params) {
            Mapping::Events(bodies) => match &bodies[..] {
                [EventBody::Read { range, .. }] => *range,
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn g6_read_file_ranges() {
        let cases = [
            (json!({"file_path": "a"}), None),
            (
                json!({"file_path": "a", "start_line": 2, "end_line": 3}),
                Some((2, Some(3))),
            ),
            (json!({"file_path": "a", "start_line": 5}), Some((5, None))),
            (json!({"file_path": "a", "end_line": 4}), Some((1, Some(4)))),
            (json!({"file_path": "a", "start_line": 0}), Some((1, None))),
            (json!({"file_path": "a", "start_line": null}), None),
        ];
        for (params, expected) in cases {
            let got = read_range(params.clone()).map(|r| (r.start, r.end));
            assert_eq!(got, expected, "{params}");
        }
    }

    #[test]
    fn g6_wrong_types_are_malformed() {
        for (name, params) in [
            ("read_file", json!({})),
            ("read_file", json!({"file_path": ""})),
            ("read_file", json!({"file_path": "a", "start_line": -1})),
            ("read_file", json!({"file_path": "a", "end_line": "3"})),
            ("write_file", json!({"file_path": 3})),
            ("replace", json!({"old_string": "x"})),
            ("grep_search", json!({"pattern": "x", "dir_path": 1})),
            ("glob", json!({"dir_path": "src"})),
            ("list_directory", json!({"dir_path": []})),
            ("run_shell_command", json!({"command": ""})),
            ("activate_skill", json!({})),
            ("write_todos", json!({"todos": "x"})),
            ("read_file", json!("not an object")),
        ] {
            assert_eq!(
                events(name, params.clone()),
                Mapping::Malformed,
                "{name} {params}"
            );
        }
        assert_eq!(events("web_fetch", json!("x")), Mapping::Malformed);
        assert_eq!(events("web_fetch", json!({})), Mapping::UnknownTool);
    }

    #[test]
    fn g7_todos_become_plan_items() {
        let todos = json!({"todos": [
            {"description": "a", "status": "completed"},
            {"description": "b", "status": "in_progress"},
            {"status": 3},
            "skipped"
        ]});
        assert_eq!(
            events("write_todos", todos),
            Mapping::Plan(vec![
                PlanItem {
                    text: json!("a"),
                    completed: json!(true)
                },
                PlanItem {
                    text: json!("b"),
                    completed: json!(false)
                },
                PlanItem {
                    text: Value::Null,
                    completed: Value::Null
                },
            ])
        );
    }
}
