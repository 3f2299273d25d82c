//! Placeholder: the classifier is being written (issue 3).

use serde::Serialize;

/// One part of a classified command, as Codex serializes it (B1, B1a).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ParsedCommand {
    /// A file read.
    Read {
        /// The command this part came from.
        cmd: String,
        /// The short display name of the file.
        name: String,
        /// The file as written, joined onto preceding `cd` directories.
        path: String,
    },
    /// A directory listing.
    ListFiles {
        /// The command this part came from.
        cmd: String,
        /// The short display path.
        path: Option<String>,
    },
    /// A search.
    Search {
        /// The command this part came from.
        cmd: String,
        /// The pattern.
        query: Option<String>,
        /// The short display path.
        path: Option<String>,
    },
    /// Anything else.
    Unknown {
        /// The command.
        cmd: String,
    },
}

/// A part with the path the Claude harness puts on its event (C15).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// The part, exactly as Codex gives it.
    pub parsed: ParsedCommand,
    /// The path for the event before resolution: the operand before display shortening,
    /// joined onto the `cd` directory in effect, or that directory alone; `None` when neither.
    pub event_path: Option<String>,
}

/// Classifies argv exactly as Codex's `parse_command` does.
pub fn parse_command(argv: &[String]) -> Vec<ParsedCommand> {
    classify(argv).into_iter().map(|c| c.parsed).collect()
}

/// Classifies argv, keeping the event path of each part.
pub fn classify(argv: &[String]) -> Vec<Classified> {
    vec![Classified {
        parsed: ParsedCommand::Unknown {
            cmd: argv.join(" "),
        },
        event_path: None,
    }]
}

/// Classifies a script as Codex sees it: `["bash", "-lc", script]`.
pub fn classify_script(script: &str) -> Vec<Classified> {
    classify(&["bash".to_string(), "-lc".to_string(), script.to_string()])
}
