//! Shell commands reclassified into file operations (C15, X4), shared by every backend.
//!
//! A backend classifies a shell command (with `harness-codex-shell`), turns each part into a
//! [`ShellPart`] (or `None` for a part that is no file operation), and [`shell_events`] makes
//! the events: one per part, all carrying the whole command and the tool use's status, paths
//! resolved as C14a says. The core stays free of the classifier's types.

use crate::event::{EventBody, ToolRef, ToolStatus};
use crate::paths::resolve;

/// One file operation a shell command was found to be, with its path before resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellPart {
    /// A file read.
    Read {
        /// The file, joined onto any `cd` directory before it.
        path: String,
    },
    /// A search.
    Search {
        /// The pattern, when the command names one.
        query: Option<String>,
        /// Where it searched, when known.
        path: Option<String>,
    },
    /// A directory listing.
    List {
        /// The directory, when known.
        path: Option<String>,
    },
}

/// The events of a shell command when every part is a file operation: one per part, in order,
/// each with `command` (the whole command), the tool use's `status` and `tool`, and its path
/// resolved against `cwd` (C14a). `None` when there is no part or some part is `None`: the
/// caller then makes one `command` event.
///
/// ```
/// use harness_core::reclassify::{ShellPart, shell_events};
/// use harness_core::{EventBody, ToolRef, ToolStatus};
///
/// let parts = [Some(ShellPart::List { path: Some("src/../lib".into()) })];
/// let status = ToolStatus { success: true, error: None };
/// let events = shell_events("ls lib", parts, Some("/p"), &status, &ToolRef::default()).unwrap();
/// assert!(matches!(&events[0], EventBody::List { path: Some(p), .. } if p == "/p/lib"));
/// assert!(shell_events("x", [None], None, &status, &ToolRef::default()).is_none());
/// ```
pub fn shell_events(
    command: &str,
    parts: impl IntoIterator<Item = Option<ShellPart>>,
    cwd: Option<&str>,
    status: &ToolStatus,
    tool: &ToolRef,
) -> Option<Vec<EventBody>> {
    let resolved = |p: Option<String>| p.map(|p| resolve(&p, cwd));
    let events = parts
        .into_iter()
        .map(|part| {
            Some(match part? {
                ShellPart::Read { path } => EventBody::Read {
                    path: resolve(&path, cwd),
                    range: None,
                    command: Some(command.to_string()),
                    status: status.clone(),
                    tool: tool.clone(),
                },
                ShellPart::Search { query, path } => EventBody::Search {
                    query,
                    path: resolved(path),
                    command: Some(command.to_string()),
                    status: status.clone(),
                    tool: tool.clone(),
                },
                ShellPart::List { path } => EventBody::List {
                    path: resolved(path),
                    command: Some(command.to_string()),
                    status: status.clone(),
                    tool: tool.clone(),
                },
            })
        })
        .collect::<Option<Vec<_>>>()?;
    (!events.is_empty()).then_some(events)
}
