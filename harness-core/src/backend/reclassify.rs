//! Shell commands through the shared classifier (`harness-codex-shell`), for every backend
//! (C15, X4): the events a command gives once it ran, and the events a `started` event
//! expects (L1).
//!
//! A command whose every part is a read, a search or a listing gives one event per part, in
//! order, each carrying the whole command and the tool use's status, with paths resolved as
//! C14a says; any other command gives one `command` event.

use harness_agents_codex_shell::{Classified, ParsedCommand};
use serde_json::Number;

use super::paths::resolve;
use crate::event::{EventBody, Expected, Kind, ToolRef, ToolStatus};

/// A shell command as a backend has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellInput<'a> {
    /// A script, classified as Codex sees it: `["bash", "-lc", script]` (C15).
    Script(&'a str),
    /// An argv (X4); an empty one is a command without classification.
    Argv(&'a [String]),
}

impl ShellInput<'_> {
    fn classify(self) -> Vec<Classified> {
        match self {
            ShellInput::Script(script) => harness_agents_codex_shell::classify_script(script),
            ShellInput::Argv([]) => Vec::new(),
            ShellInput::Argv(argv) => harness_agents_codex_shell::classify(argv),
        }
    }
}

/// One part as a file operation (its kind, its path before resolution, its query), or `None`
/// for a part that is no file operation.
fn file_operation(part: Classified, cwd: Option<&str>) -> Option<Expected> {
    let Classified { parsed, event_path } = part;
    let (kind, path, query) = match parsed {
        ParsedCommand::Read { path, .. } => (Kind::Read, Some(path), None),
        ParsedCommand::Search { query, .. } => (Kind::Search, event_path, query),
        ParsedCommand::ListFiles { .. } => (Kind::List, event_path, None),
        ParsedCommand::Unknown { .. } => return None,
    };
    Some(Expected {
        path: path.map(|p| resolve(&p, cwd)),
        query,
        ..Expected::new(kind)
    })
}

/// The file operations of a command, paths resolved against `cwd`; `None` unless there is at
/// least one part and every part is a read, search or listing (C15).
fn file_operations(input: ShellInput<'_>, cwd: Option<&str>) -> Option<Vec<Expected>> {
    let parts = input
        .classify()
        .into_iter()
        .map(|part| file_operation(part, cwd))
        .collect::<Option<Vec<_>>>()?;
    (!parts.is_empty()).then_some(parts)
}

/// The events of a shell command that ran (C15, X4): read/search/list events when every part
/// is one of those, else one `command` event with `exit_code`. `command` is the text the events
/// carry (the whole command, or a wrapper's script).
///
/// ```
/// use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
/// use harness_agents_core::{EventBody, ToolRef, ToolStatus};
///
/// let ok = ToolStatus { success: true, error: None };
/// let tool = ToolRef::default();
/// let events = shell_events(ShellInput::Script("cd src && ls"), "cd src && ls", None, Some("/p"), &ok, &tool);
/// assert!(matches!(&events[..], [EventBody::List { path: Some(p), .. }] if p == "/p/src"));
/// let events = shell_events(ShellInput::Script("make"), "make", Some(2.into()), None, &ok, &tool);
/// assert!(matches!(&events[..], [EventBody::Command { exit_code: Some(code), .. }] if code.as_i64() == Some(2)));
/// ```
pub fn shell_events(
    input: ShellInput<'_>,
    command: &str,
    exit_code: Option<Number>,
    cwd: Option<&str>,
    status: &ToolStatus,
    tool: &ToolRef,
) -> Vec<EventBody> {
    let Some(parts) = file_operations(input, cwd) else {
        return vec![EventBody::Command {
            command: command.to_string(),
            exit_code,
            status: status.clone(),
            tool: tool.clone(),
        }];
    };
    let command = || Some(command.to_string());
    parts
        .into_iter()
        .map(
            |Expected {
                 kind, path, query, ..
             }| match kind {
                Kind::Read => EventBody::Read {
                    path: path.unwrap_or_default(),
                    range: None,
                    command: command(),
                    status: status.clone(),
                    tool: tool.clone(),
                },
                Kind::Search => EventBody::Search {
                    query,
                    path,
                    command: command(),
                    status: status.clone(),
                    tool: tool.clone(),
                },
                _ => EventBody::List {
                    path,
                    command: command(),
                    status: status.clone(),
                    tool: tool.clone(),
                },
            },
        )
        .collect()
}

/// What a shell command's `started` event expects (L1): the parts of its classification, or
/// one `command`.
///
/// ```
/// use harness_agents_core::backend::reclassify::{ShellInput, shell_expected};
/// use harness_agents_core::Kind;
///
/// let expected = shell_expected(ShellInput::Script("cat a.rs && rg foo"), Some("/p"));
/// assert_eq!(expected.iter().map(|e| e.kind).collect::<Vec<_>>(), [Kind::Read, Kind::Search]);
/// assert_eq!(expected[0].path.as_deref(), Some("/p/a.rs"));
/// assert_eq!(shell_expected(ShellInput::Script("cargo test"), None)[0].kind, Kind::Command);
/// ```
pub fn shell_expected(input: ShellInput<'_>, cwd: Option<&str>) -> Vec<Expected> {
    file_operations(input, cwd).unwrap_or_else(|| vec![Expected::new(Kind::Command)])
}
