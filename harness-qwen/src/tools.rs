//! The tool map (QW8, QW9): what one finished Qwen Code tool use becomes. Pure functions of the
//! tool name, its `input` and its status.

use harness_agents_core::backend::args::view::{count, optional, required};
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::backend::stream_json::InputView;
use harness_agents_core::{EventBody, LineRange, ToolRef, ToolStatus};
use serde_json::Number;

/// What a tool use maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mapping {
    /// Its events (QW8).
    Events(Vec<EventBody>),
    /// A tool this harness does not map: `unknown` with reason `unknown_tool`.
    UnknownTool,
    /// `input` not an object, or a field the mapping reads missing or of the wrong type:
    /// `unknown` with reason `malformed_tool_use` (QW8).
    Malformed,
}

/// QW8 `read_file`: `offset` is the first line counted from 0 (so line `offset + 1`), `limit`
/// the number of lines (absent or 0: to the end of the file); no range when neither is given.
fn range(input: &InputView<'_>) -> Result<Option<LineRange>, ()> {
    let offset = count(&input.offset)?;
    let limit = count(&input.limit)?.filter(|&n| n > 0);
    if offset.is_none() && limit.is_none() {
        return Ok(None);
    }
    let start = offset.unwrap_or(0) + 1;
    Ok(Some(LineRange {
        start,
        end: limit.map(|n| start + n - 1),
    }))
}

/// QW9: the exit code a failed `run_shell_command` reports: a line `Exit Code: N` of its
/// result text (Qwen's display of a failed command: `Command: ...`, `Directory: ...`,
/// `Output: ...`, `Error: ...`, `Exit Code: N`, `Signal: ...`, `Process Group PGID: ...`).
/// The last such line counts: Qwen writes it after the command's output.
pub(crate) fn exit_code(text: &str) -> Option<Number> {
    let code = text
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("Exit Code: "))?;
    if code.is_empty()
        || !code
            .bytes()
            .enumerate()
            .all(|(i, b)| b.is_ascii_digit() || (i == 0 && b == b'-'))
    {
        return None;
    }
    code.parse::<i64>().ok().map(Number::from)
}

/// The events of one tool use (QW8, QW9), given its status and, for a failed shell command,
/// its exit code. `input` is `None` when it is not an object; `cwd` resolves relative paths
/// (C14a).
pub(crate) fn map(
    name: &str,
    input: Option<&InputView<'_>>,
    status: &ToolStatus,
    exit: Option<Number>,
    tool: &ToolRef,
    cwd: Option<&str>,
) -> Mapping {
    if !matches!(
        name,
        "read_file"
            | "write_file"
            | "edit"
            | "notebook_edit"
            | "grep_search"
            | "glob"
            | "list_directory"
            | "run_shell_command"
    ) {
        return Mapping::UnknownTool;
    }
    let Some(input) = input else {
        return Mapping::Malformed;
    };
    match mapped(name, input, status, exit, tool, cwd) {
        Ok(bodies) => Mapping::Events(bodies),
        Err(()) => Mapping::Malformed,
    }
}

fn mapped(
    name: &str,
    input: &InputView<'_>,
    status: &ToolStatus,
    exit: Option<Number>,
    tool: &ToolRef,
    cwd: Option<&str>,
) -> Result<Vec<EventBody>, ()> {
    let (status, tool) = (status.clone(), tool.clone());
    let path = |p: &str| resolve(p, cwd);
    let body = match name {
        "read_file" => EventBody::Read {
            path: path(required(&input.file_path)?),
            range: range(input)?,
            command: None,
            status,
            tool,
        },
        "write_file" | "edit" => EventBody::Write {
            path: path(required(&input.file_path)?),
            change: None,
            status,
            tool,
        },
        "notebook_edit" => EventBody::Write {
            path: path(required(&input.notebook_path)?),
            change: None,
            status,
            tool,
        },
        "grep_search" | "glob" => EventBody::Search {
            query: Some(required(&input.pattern)?.to_string()),
            path: optional(&input.path)?.map(path),
            command: None,
            status,
            tool,
        },
        "list_directory" => EventBody::List {
            path: optional(&input.path)?.map(path),
            command: None,
            status,
            tool,
        },
        _ => {
            let command = required(&input.command)?;
            // QW9: `directory` runs the command elsewhere than the project; its relative paths
            // are that directory's.
            let dir = optional(&input.directory)?.map(path);
            let cwd = dir.as_deref().or(cwd);
            let input = ShellInput::Script(command);
            return Ok(shell_events(input, command, exit, cwd, &status, &tool));
        }
    };
    Ok(vec![body])
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use harness_agents_core::backend::stream_json::tool_input;
    use serde_json::{Value, json};

    /// `input` as the decoder reads it: from its tool use block's text.
    fn mapping(name: &str, input: &Value, cwd: Option<&str>) -> Mapping {
        let status = ToolStatus {
            success: true,
            error: None,
        };
        let block = json!({ "input": input }).to_string();
        let view = tool_input(&block);
        map(name, view.as_ref(), &status, None, &ToolRef::default(), cwd)
    }

    fn one(name: &str, input: Value) -> EventBody {
        match mapping(name, &input, Some("/p")) {
            Mapping::Events(mut bodies) if bodies.len() == 1 => bodies.remove(0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn qw8_read_ranges_count_lines_from_zero() {
        let cases = [
            (json!({"file_path": "a"}), None),
            (
                json!({"file_path": "a", "offset": 1, "limit": 2}),
                Some((2, Some(3))),
            ),
            (json!({"file_path": "a", "offset": 4}), Some((5, None))),
            (json!({"file_path": "a", "limit": 4}), Some((1, Some(4)))),
            (json!({"file_path": "a", "limit": 0}), None),
        ];
        for (input, want) in cases {
            let EventBody::Read { path, range, .. } = one("read_file", input.clone()) else {
                panic!()
            };
            assert_eq!(path, "/p/a");
            assert_eq!(range.map(|r| (r.start, r.end)), want, "{input}");
        }
    }

    #[test]
    fn qw8_malformed_and_unknown() {
        let map = |name, input| mapping(name, &input, None);
        assert_eq!(map("read_file", json!({})), Mapping::Malformed);
        assert_eq!(
            map("read_file", json!({"file_path": null})),
            Mapping::Malformed
        );
        assert_eq!(map("glob", json!({"pattern": 3})), Mapping::Malformed);
        assert_eq!(map("edit", json!("x")), Mapping::Malformed);
        assert_eq!(map("web_fetch", json!({})), Mapping::UnknownTool);
    }

    #[test]
    fn qw9_exit_codes_from_the_display_text() {
        let text = "Command: exit 3\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 3\nSignal: (none)\nProcess Group PGID: 18674";
        assert_eq!(exit_code(text), Some(Number::from(3)));
        assert_eq!(exit_code("Exit Code: x"), None);
        assert_eq!(exit_code("no code"), None);
        let EventBody::Command { exit_code, .. } = one(
            "run_shell_command",
            json!({"command": "make", "directory": "sub"}),
        ) else {
            panic!()
        };
        assert_eq!(exit_code, None);
        let EventBody::List { path, .. } = one(
            "run_shell_command",
            json!({"command": "ls x", "directory": "sub"}),
        ) else {
            panic!()
        };
        assert_eq!(path.as_deref(), Some("/p/sub/x"));
    }
}
