//! The tool map (PI8, PI9): what one finished Pi tool use becomes. Pure functions of the tool
//! name, its `args` and its status.

use harness_agents_core::backend::args::{count, optional, required};
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::{EventBody, LineRange, ToolRef, ToolStatus};
use serde_json::{Map, Number, Value};

/// What a tool use maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Mapping {
    /// Its events (PI8).
    Events(Vec<EventBody>),
    /// A tool this harness does not map: `unknown` with reason `unknown_tool`.
    UnknownTool,
    /// `args` not an object, or a field the mapping reads missing or of the wrong type:
    /// `unknown` with reason `malformed_tool_use` (PI8).
    Malformed,
}

/// PI8 `read`: `offset` is the first line, 1-based (absent or 0: line 1); `limit` the number
/// of lines (absent or 0: to the end of the file); no range when neither is given.
fn range(args: &Map<String, Value>) -> Result<Option<LineRange>, ()> {
    let offset = count(args, "offset")?;
    let limit = count(args, "limit")?.filter(|&n| n > 0);
    if offset.is_none() && limit.is_none() {
        return Ok(None);
    }
    let start = offset.unwrap_or(1).max(1);
    Ok(Some(LineRange {
        start,
        end: limit.map(|n| start + n - 1),
    }))
}

/// PI10: a path as Pi reads it, made absolute against the working directory. Pi drops one
/// leading `@` (models copy it from file mentions); a path under `~` is Pi's user's home,
/// which the stream never names, so it is kept as written (normalized, not joined).
pub(crate) fn path(raw: &str, cwd: Option<&str>) -> String {
    let raw = raw.strip_prefix('@').unwrap_or(raw);
    if raw == "~" || raw.starts_with("~/") {
        return resolve(raw, None);
    }
    resolve(raw, cwd)
}

/// PI9: the exit code a failed `bash` call reports: its result text ends with `Command
/// exited with code N` (after a blank line when the command printed anything).
pub(crate) fn exit_code(text: &str) -> Option<Number> {
    let last = text.rsplit_once("\n\n").map_or(text, |(_, last)| last);
    let code = last.strip_prefix("Command exited with code ")?;
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

/// The events of one tool use (PI8, PI9), given its status and, for a failed `bash`, its exit
/// code. `tool` is already the use's [`ToolRef`]; `cwd` resolves relative paths (PI10).
pub(crate) fn map(
    name: &str,
    args: &Value,
    status: &ToolStatus,
    exit: Option<Number>,
    tool: &ToolRef,
    cwd: Option<&str>,
) -> Mapping {
    if !matches!(
        name,
        "read" | "write" | "edit" | "grep" | "find" | "ls" | "bash"
    ) {
        return Mapping::UnknownTool;
    }
    let Some(args) = args.as_object() else {
        return Mapping::Malformed;
    };
    match mapped(name, args, status, exit, tool, cwd) {
        Ok(bodies) => Mapping::Events(bodies),
        Err(()) => Mapping::Malformed,
    }
}

fn mapped(
    name: &str,
    args: &Map<String, Value>,
    status: &ToolStatus,
    exit: Option<Number>,
    tool: &ToolRef,
    cwd: Option<&str>,
) -> Result<Vec<EventBody>, ()> {
    let (status, tool) = (status.clone(), tool.clone());
    let body = match name {
        "read" => EventBody::Read {
            path: path(required(args, "path")?, cwd),
            range: range(args)?,
            command: None,
            status,
            tool,
        },
        "write" | "edit" => EventBody::Write {
            path: path(required(args, "path")?, cwd),
            change: None,
            status,
            tool,
        },
        "grep" | "find" => {
            let pattern = required(args, "pattern")?;
            EventBody::Search {
                query: Some(pattern.to_string()),
                path: optional(args, "path")?.map(|p| path(p, cwd)),
                command: None,
                status,
                tool,
            }
        }
        "ls" => EventBody::List {
            path: optional(args, "path")?.map(|p| path(p, cwd)),
            command: None,
            status,
            tool,
        },
        _ => {
            let command = required(args, "command")?;
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
    use serde_json::json;

    fn events(name: &str, args: Value) -> Mapping {
        let status = ToolStatus {
            success: true,
            error: None,
        };
        map(name, &args, &status, None, &ToolRef::default(), Some("/p"))
    }

    fn one(name: &str, args: Value) -> EventBody {
        match events(name, args) {
            Mapping::Events(mut bodies) if bodies.len() == 1 => bodies.remove(0),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn pi8_read_ranges() {
        let cases = [
            (json!({"path": "a"}), None),
            (
                json!({"path": "a", "offset": 2, "limit": 3}),
                Some((2, Some(4))),
            ),
            (json!({"path": "a", "offset": 5}), Some((5, None))),
            (json!({"path": "a", "limit": 4}), Some((1, Some(4)))),
            (json!({"path": "a", "offset": 0}), Some((1, None))),
            (
                json!({"path": "a", "offset": 3, "limit": 0}),
                Some((3, None)),
            ),
            (json!({"path": "a", "offset": null, "limit": 0}), None),
        ];
        for (args, expected) in cases {
            let EventBody::Read { range, path, .. } = one("read", args.clone()) else {
                panic!("{args}")
            };
            assert_eq!(path, "/p/a");
            assert_eq!(range.map(|r| (r.start, r.end)), expected, "{args}");
        }
    }

    #[test]
    fn pi8_file_tools_map_to_their_kinds() {
        let EventBody::Write { path, .. } = one("edit", json!({"path": "src/../b", "edits": []}))
        else {
            panic!()
        };
        assert_eq!(path, "/p/b");
        let EventBody::Write { path, .. } = one("write", json!({"path": "/x/y", "content": ""}))
        else {
            panic!()
        };
        assert_eq!(path, "/x/y");
        let EventBody::Search { query, path, .. } =
            one("grep", json!({"pattern": "fn", "path": "src"}))
        else {
            panic!()
        };
        assert_eq!(
            (query.as_deref(), path.as_deref()),
            (Some("fn"), Some("/p/src"))
        );
        let EventBody::Search { query, path, .. } = one("find", json!({"pattern": "*.rs"})) else {
            panic!()
        };
        assert_eq!((query.as_deref(), path), (Some("*.rs"), None));
        let EventBody::List { path, .. } = one("ls", json!({})) else {
            panic!()
        };
        assert_eq!(path, None);
        let EventBody::List { path, .. } = one("ls", json!({"path": "@docs"})) else {
            panic!()
        };
        assert_eq!(path.as_deref(), Some("/p/docs"));
    }

    #[test]
    fn pi10_home_paths_are_kept_as_written() {
        assert_eq!(path("~/notes.txt", Some("/p")), "~/notes.txt");
        assert_eq!(path("~", Some("/p")), "~");
        assert_eq!(path("~x", Some("/p")), "/p/~x");
        assert_eq!(path("@/etc/hosts", Some("/p")), "/etc/hosts");
    }

    #[test]
    fn pi8_wrong_types_are_malformed_and_other_tools_unknown() {
        for (name, args) in [
            ("read", json!({})),
            ("read", json!({"path": ""})),
            ("read", json!({"path": "a", "offset": -1})),
            ("read", json!({"path": "a", "limit": 2.5})),
            ("write", json!({"path": 3})),
            ("edit", json!({"edits": []})),
            ("grep", json!({"pattern": "x", "path": 1})),
            ("find", json!({"path": "src"})),
            ("ls", json!({"path": []})),
            ("bash", json!({"command": ""})),
            ("bash", json!("ls")),
        ] {
            assert_eq!(
                events(name, args.clone()),
                Mapping::Malformed,
                "{name} {args}"
            );
        }
        assert_eq!(events("web_fetch", json!("x")), Mapping::UnknownTool);
        assert_eq!(events("subagent", json!({})), Mapping::UnknownTool);
    }

    #[test]
    fn pi9_bash_goes_through_the_classifier() {
        let Mapping::Events(bodies) =
            events("bash", json!({"command": "cat a.txt && rg -n x src"}))
        else {
            panic!()
        };
        assert!(matches!(&bodies[0], EventBody::Read { path, .. } if path == "/p/a.txt"));
        assert!(
            matches!(&bodies[1], EventBody::Search { query: Some(q), path: Some(p), .. } if q == "x" && p == "/p/src")
        );
        let EventBody::Command {
            command, exit_code, ..
        } = one("bash", json!({"command": "make"}))
        else {
            panic!()
        };
        assert_eq!((command.as_str(), exit_code), ("make", None));
    }

    #[test]
    fn pi9_the_exit_code_comes_from_the_failure_text() {
        let cases = [
            ("to-stderr\n\n\nCommand exited with code 1", Some(1)),
            ("(no output)\n\nCommand exited with code 3", Some(3)),
            ("Command exited with code 127", Some(127)),
            ("Command exited with code -1", Some(-1)),
            ("out\n\nCommand timed out after 5 seconds", None),
            ("out\n\nCommand aborted", None),
            ("Command exited with code 1\n\nmore", None),
            ("Command exited with code 1x", None),
            ("Command exited with code ", None),
            ("Command exited with code 99999999999999999999", None),
        ];
        for (text, expected) in cases {
            assert_eq!(exit_code(text), expected.map(Number::from), "{text:?}");
        }
    }
}
