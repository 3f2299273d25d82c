//! Classifies shell commands into reads, searches and listings exactly as Codex does.
//!
//! Codex summarizes every command it runs as an ordered list of parts: `read {cmd, name, path}`,
//! `list_files {cmd, path}`, `search {cmd, query, path}` or `unknown {cmd}` (its
//! `parse_command`). This crate gives the same answer for the same argv ([`parse_command`]),
//! and, for the Claude harness (SPEC C15), the path each part's event should carry
//! ([`classify`], [`Classified::event_path`]).
//!
//! ```
//! use harness_codex_shell::{classify_script, parse_command, ParsedCommand};
//!
//! let argv = ["bash", "-lc", "cd web && rg -n useState src | head -n 20"].map(String::from);
//! assert_eq!(
//!     parse_command(&argv),
//!     [ParsedCommand::Search {
//!         cmd: "rg -n useState src".to_string(),
//!         query: Some("useState".to_string()),
//!         path: Some("src".to_string()),
//!     }]
//! );
//!
//! // The event path keeps the operand before display shortening, joined onto the `cd`.
//! let parts = classify_script("cd web && rg -n useState src/hooks");
//! assert_eq!(parts[0].event_path.as_deref(), Some("web/src/hooks"));
//! ```
//!
//! # How a command is classified
//!
//! 1. A shell wrapper `[bash|zsh|sh, -c|-lc, SCRIPT]` has its script parsed as shell (below);
//!    a PowerShell wrapper is always unknown; any other argv is split on the words `|`, `&&`,
//!    `||`, `;` and classified word by word.
//! 2. A script is accepted only when it is a sequence of plain commands (words and quotes)
//!    joined by `&&`, `||`, `;`, `|` or newlines; anything else (redirections, `$`,
//!    substitutions, assignments, subshells, comments, syntax errors...) makes the whole
//!    command unknown.
//! 3. Small formatting helpers (`head -n 5`, `wc -l`, `sort`...) are dropped, `cd` moves the
//!    directory later reads are joined onto, each remaining command is classified by its
//!    program, a few harmless unknowns (`true`, a leading `echo`, `nl -ba`) are dropped, equal
//!    neighbours merged, and any unknown left makes the whole answer one unknown.
//!
//! # Parser choice: a fast lexer in front of the real grammar
//!
//! Codex decides step 2 with the tree-sitter-bash 0.25.1 grammar. This crate uses that same
//! grammar (the `tree-sitter` and `tree-sitter-bash` crates), so agreement on what is accepted
//! is exact by construction, but only as a fallback: a one-pass lexer first handles the
//! scripts it is sure about (plain words, simple quotes, connectors; and certain rejections
//! such as redirections, `$NAME`, backticks, parentheses and comments) and defers everything
//! doubtful (backslashes, braces, brackets, `!`, non-ASCII words, `\r`, keywords...) to the
//! grammar. A property test checks that the hybrid and the grammar agree.
//!
//! Why, measured (release, one thread, this 2-core machine; `README.md` has the details and
//! the command): every conformance row agrees; tree-sitter alone parses only 120,000-190,000
//! of the corpus's scripts per second, before any classification, below the 300,000 commands/s
//! target; the hybrid classifies 0.9-1.06 million commands/s, the lexer deciding 184 of the
//! corpus's 196 scripts; no difference from the grammar on 3.7 million fuzzed scripts. A 10 MB
//! plain script classifies in about 45 ms. The cost: tree-sitter's C sources add about 18 s
//! to a clean release build, and a doubtful script over [`GRAMMAR_LIMIT`] is answered without
//! the grammar (tree-sitter's error recovery is not linear on some huge inputs).

mod grammar;
mod lexer;
mod programs;

use std::path::Path;

use serde::Serialize;

pub use programs::{join_path, short_display_path};

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
    let parts = match shell_script(argv) {
        Some(script) => classify_shell(script),
        None if powershell_script(argv).is_some() => vec![unknown_part(String::new())],
        None => classify_words(argv),
    };
    let mut merged: Vec<Classified> = Vec::with_capacity(parts.len());
    for part in parts {
        if merged.last().is_some_and(|prev| prev.parsed == part.parsed) {
            continue;
        }
        merged.push(part);
    }
    if merged
        .iter()
        .any(|part| matches!(part.parsed, ParsedCommand::Unknown { .. }))
    {
        let cmd = match shell_script(argv).or_else(|| powershell_script(argv)) {
            Some(script) => script.to_string(),
            None => programs::join_words(argv),
        };
        return vec![unknown_part(cmd)];
    }
    merged
}

/// Classifies a script as Codex sees it: `["bash", "-lc", script]`.
pub fn classify_script(script: &str) -> Vec<Classified> {
    classify(&["bash".to_string(), "-lc".to_string(), script.to_string()])
}

/// The longest script handed to the grammar: 256 KiB.
///
/// The lexer decides most scripts of any length in linear time. A longer script it cannot
/// decide is treated as not a plain command sequence, without parsing: tree-sitter's error
/// recovery takes seconds and gigabytes on some megabyte-long inputs (10 MB of `(` or `"`),
/// and B3 wants every input answered in linear time. This is the one place where the crate
/// may knowingly differ from Codex, which would parse (slowly).
pub const GRAMMAR_LIMIT: usize = 256 * 1024;

/// Splits a script into commands of words the way Codex's shell parser does, or `None` when
/// the script is not a plain command sequence (step 2 above). Words keep their source text:
/// quotes are removed, backslashes are not.
pub fn plain_commands(script: &str) -> Option<Vec<Vec<String>>> {
    let mut commands = Vec::new();
    match lexer::lex(script, &mut |words| {
        commands.push(words);
        true
    }) {
        lexer::Lexed::Words => Some(commands),
        lexer::Lexed::Reject | lexer::Lexed::Stopped => None,
        lexer::Lexed::Unsure if script.len() > GRAMMAR_LIMIT => None,
        lexer::Lexed::Unsure => grammar::parse(script),
    }
}

/// The same as [`plain_commands`], always through the tree-sitter grammar (no fast path).
/// Slower; useful to check or measure the fast path.
pub fn plain_commands_by_grammar(script: &str) -> Option<Vec<Vec<String>>> {
    grammar::parse(script)
}

fn unknown_part(cmd: String) -> Classified {
    Classified {
        parsed: ParsedCommand::Unknown { cmd },
        event_path: None,
    }
}

/// Which shell a program path names, following Codex: the exact names `bash`, `zsh`, `sh`,
/// `pwsh`, `powershell`, `cmd`, else the file stem tried again while it changes the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interpreter {
    Posix,
    PowerShell,
    Cmd,
}

fn shell_kind(program: &Path) -> Option<Interpreter> {
    match program.to_str()? {
        "bash" | "zsh" | "sh" => Some(Interpreter::Posix),
        "pwsh" | "powershell" => Some(Interpreter::PowerShell),
        "cmd" => Some(Interpreter::Cmd),
        _ => {
            let stem = Path::new(program.file_stem()?);
            if stem == program {
                None
            } else {
                shell_kind(stem)
            }
        }
    }
}

/// The script of a `[bash|zsh|sh (any path), -c|-lc, SCRIPT]` argv.
fn shell_script(argv: &[String]) -> Option<&str> {
    let [program, flag, script] = argv else {
        return None;
    };
    let posix = shell_kind(Path::new(program)) == Some(Interpreter::Posix);
    (posix && (flag == "-c" || flag == "-lc")).then_some(script.as_str())
}

/// The script of a PowerShell argv: only `-NoLogo`, `-NoProfile` before `-Command`/`-c`
/// (any case), and the script after it.
fn powershell_script(argv: &[String]) -> Option<&str> {
    if argv.len() < 3 || shell_kind(Path::new(&argv[0])) != Some(Interpreter::PowerShell) {
        return None;
    }
    for (index, flag) in argv.iter().enumerate().take(argv.len() - 1).skip(1) {
        let lower = flag.to_ascii_lowercase();
        match lower.as_str() {
            "-command" | "-c" => return argv.get(index + 1).map(String::as_str),
            "-nologo" | "-noprofile" => {}
            _ => return None,
        }
    }
    None
}

/// A part on its way out, with the `cd` directory in effect when it ran.
struct Pending {
    parsed: ParsedCommand,
    event_path: Option<String>,
}

/// Classifies one command (not `cd`) with the directory in effect.
fn classify_one(words: &[String], cwd: Option<&str>) -> Pending {
    let summary = programs::summarize(words);
    let mut parsed = summary.parsed;
    let event_path = match &mut parsed {
        ParsedCommand::Read { path, .. } => {
            if let Some(base) = cwd {
                *path = join_path(base, path);
            }
            Some(path.clone())
        }
        ParsedCommand::ListFiles { .. } | ParsedCommand::Search { .. } => {
            match (cwd, summary.operand) {
                (Some(base), Some(operand)) => Some(join_path(base, &operand)),
                (Some(base), None) => Some(base.to_string()),
                (None, operand) => operand,
            }
        }
        ParsedCommand::Unknown { .. } => None,
    };
    Pending { parsed, event_path }
}

/// Classifies commands in order, consuming `cd` commands into the directory in effect.
fn classify_commands<'a>(commands: impl IntoIterator<Item = &'a [String]>) -> Vec<Pending> {
    let mut parts = Vec::new();
    let mut cwd: Option<String> = None;
    for words in commands {
        if let Some((program, args)) = words.split_first()
            && program == "cd"
        {
            if let Some(target) = programs::cd_target(args) {
                cwd = Some(match &cwd {
                    Some(base) => join_path(base, target),
                    None => target.clone(),
                });
            }
            continue;
        }
        parts.push(classify_one(words, cwd.as_deref()));
    }
    parts
}

/// The words of an unknown part's `cmd`, as Codex re-reads them for its simplifications.
fn unknown_words(part: &Pending) -> Option<Vec<String>> {
    match &part.parsed {
        ParsedCommand::Unknown { cmd } => shlex::split(cmd),
        _ => None,
    }
}

fn is_unknown_true(part: &Pending) -> bool {
    matches!(&part.parsed, ParsedCommand::Unknown { cmd } if cmd == "true")
}

/// Removes harmless unknowns from a sequence of two or more parts, one at a time, until none
/// applies (RULES §9).
fn simplify(parts: &mut Vec<Pending>) {
    while parts.len() > 1 {
        let first_words = unknown_words(&parts[0]);
        if first_words.is_some_and(|words| words.first().is_some_and(|w| w == "echo")) {
            parts.remove(0);
            continue;
        }
        let starts_with = |part: &Pending, program: &str| {
            unknown_words(part).is_some_and(|words| words.first().is_some_and(|w| w == program))
        };
        if let Some(index) = parts.iter().position(|part| starts_with(part, "cd"))
            && index + 1 < parts.len()
        {
            parts.remove(index);
            continue;
        }
        if let Some(index) = parts.iter().position(is_unknown_true) {
            parts.remove(index);
            continue;
        }
        let bare_nl = |part: &Pending| {
            unknown_words(part).is_some_and(|words| {
                words.first().is_some_and(|w| w == "nl")
                    && words.iter().skip(1).all(|w| w.starts_with('-'))
            })
        };
        if let Some(index) = parts.iter().position(bare_nl) {
            parts.remove(index);
            continue;
        }
        break;
    }
}

fn finish(parts: Vec<Pending>) -> Vec<Classified> {
    parts
        .into_iter()
        .map(|part| Classified {
            parsed: part.parsed,
            event_path: part.event_path,
        })
        .collect()
}

/// The plain-argv path (RULES §11): no shell parsing, split on connector words.
fn classify_words(argv: &[String]) -> Vec<Classified> {
    let words = match argv {
        [first, pipe, rest @ ..]
            if matches!(first.as_str(), "yes" | "y" | "no" | "n") && pipe == "|" =>
        {
            rest
        }
        _ => argv,
    };
    let mut segments: Vec<&[String]> = Vec::new();
    if words.iter().any(|word| programs::is_connector(word)) {
        segments.extend(
            words
                .split(|word| programs::is_connector(word))
                .filter(|segment| !segment.is_empty()),
        );
    } else {
        segments.push(words);
    }
    let mut parts = classify_commands(segments);
    simplify(&mut parts);
    finish(parts)
}

/// The shell path (RULES §4-§10), fed one command at a time.
#[derive(Default)]
struct ShellParts {
    /// Commands seen, formatting helpers included.
    commands: usize,
    /// Commands kept after dropping formatting helpers (`cd` included).
    kept: usize,
    cwd: Option<String>,
    parts: Vec<Pending>,
    /// The last kept command when it was not `cd`, and how many times in a row it came.
    last: Option<(Vec<String>, usize)>,
}

impl ShellParts {
    /// Takes one command; `false` once the answer is certainly one unknown for the script.
    fn push(&mut self, words: Vec<String>) -> bool {
        self.commands += 1;
        if programs::is_formatting_helper(&words) {
            return true;
        }
        self.kept += 1;
        if let Some((program, args)) = words.split_first()
            && program == "cd"
        {
            if let Some(target) = programs::cd_target(args) {
                self.cwd = Some(match &self.cwd {
                    Some(base) => join_path(base, target),
                    None => target.clone(),
                });
            }
            self.last = None;
            return true;
        }
        // The same command three times in a row, with the same directory, gives the same part
        // three times; two are enough to keep every later decision (count, merging) the same.
        let repeated = match &mut self.last {
            Some((last, run)) if *last == words => {
                *run += 1;
                *run > 2
            }
            _ => false,
        };
        if repeated {
            return true;
        }
        let part = classify_one(&words, self.cwd.as_deref());
        if is_fatal_unknown(&part) {
            return false;
        }
        self.parts.push(part);
        if !matches!(&self.last, Some((last, _)) if *last == words) {
            self.last = Some((words, 1));
        }
        true
    }

    fn finish(mut self, script: &str) -> Vec<Classified> {
        if self.kept == 0 {
            return vec![unknown_part(script.to_string())];
        }
        if self.parts.len() > 1 {
            self.parts.retain(|part| !is_unknown_true(part));
            simplify(&mut self.parts);
        }
        if let [only] = self.parts.as_mut_slice() {
            attribute_script(only, script, self.commands > 1);
        }
        finish(self.parts)
    }
}

/// Whether an unknown part can never be simplified away (RULES §9), so the whole answer is
/// already known to be one unknown: anything but `true`, `echo ...`, `cd ...`, bare `nl`.
fn is_fatal_unknown(part: &Pending) -> bool {
    if !matches!(part.parsed, ParsedCommand::Unknown { .. }) || is_unknown_true(part) {
        return false;
    }
    let words = unknown_words(part).unwrap_or_default();
    match words.split_first() {
        Some((program, _)) if program == "echo" || program == "cd" => false,
        Some((program, args)) if program == "nl" => !args.iter().all(|w| w.starts_with('-')),
        _ => true,
    }
}

fn classify_shell(script: &str) -> Vec<Classified> {
    let unknown = || vec![unknown_part(script.to_string())];
    let mut parts = ShellParts::default();
    match lexer::lex(script, &mut |words| parts.push(words)) {
        lexer::Lexed::Words => {}
        lexer::Lexed::Reject | lexer::Lexed::Stopped => return unknown(),
        lexer::Lexed::Unsure => {
            if script.len() > GRAMMAR_LIMIT {
                return unknown();
            }
            let Some(commands) = grammar::parse(script) else {
                return unknown();
            };
            parts = ShellParts::default();
            for words in commands {
                if !parts.push(words) {
                    return unknown();
                }
            }
        }
    }
    parts.finish(script)
}

/// Which `cmd` a lone remaining part reports (RULES §10): its own, the raw script, or the
/// script re-quoted from its shlex words.
fn attribute_script(part: &mut Pending, script: &str, several_commands: bool) {
    let cmd = match &mut part.parsed {
        ParsedCommand::Read { cmd, .. }
        | ParsedCommand::ListFiles { cmd, .. }
        | ParsedCommand::Search { cmd, .. } => cmd,
        ParsedCommand::Unknown { .. } => return,
    };
    let tokens = shlex::split(script).unwrap_or_else(|| vec![script.to_string()]);
    let connectors = several_commands || tokens.iter().any(|token| programs::is_connector(token));
    if !connectors {
        *cmd = programs::join_words(&tokens);
        return;
    }
    if matches!(part.parsed, ParsedCommand::Read { .. }) {
        let pipe = tokens.iter().any(|token| token == "|");
        let sed_n = tokens
            .windows(2)
            .any(|pair| pair[0] == "sed" && pair[1] == "-n");
        if pipe && sed_n {
            if let ParsedCommand::Read { cmd, .. } = &mut part.parsed {
                *cmd = script.to_string();
            }
        }
    }
}
