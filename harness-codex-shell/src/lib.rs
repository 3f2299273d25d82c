//! Classifies shell commands into reads, searches and listings exactly as Codex does.
//!
//! Codex summarizes every command it runs as an ordered list of parts: `read {cmd, name, path}`,
//! `list_files {cmd, path}`, `search {cmd, query, path}` or `unknown {cmd}` (its
//! `parse_command`). This crate gives the same answer for the same argv ([`parse_command`]),
//! and, for the Claude harness (SPEC C15), the path each part's event should carry
//! ([`classify`], [`Classified::event_path`]).
//!
//! ```
//! use harness_agents_codex_shell::{classify_script, parse_command, ParsedCommand};
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
//! target; the hybrid classifies about 1.5 million commands per second of CPU time (about
//! 10,000 instructions a command), the lexer deciding 184 of the corpus's 196 scripts; no
//! difference from the grammar on 3.7 million fuzzed scripts. A 10 MB plain script classifies
//! in about 40 ms. The cost: tree-sitter's C sources add about 18 s to a clean release build,
//! and a doubtful script over [`GRAMMAR_LIMIT`] is answered without the grammar
//! (tree-sitter's error recovery is not linear on some huge inputs).
//!
//! # Linear time and memory (B3)
//!
//! Every step is linear in the command: a word written as one piece is a slice of the script,
//! not a copy (a command of ten million one-letter words costs about 24 bytes a word, not an
//! allocation a word); a `cd` extends the directory in effect in place; Codex's removals of
//! harmless parts (RULES §9) are found in one walk, not by rescanning the list after each; and
//! the re-reading of a `cmd` or the script as shell words (`shlex`) looks at one word at a time
//! instead of collecting them. The one thing that can grow faster than the input is the
//! answer itself: each read after `cd a && cd a && ...` carries the whole directory, as
//! Codex's does.

/// This crate's README, whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

mod grammar;
mod lexer;
mod programs;

use std::borrow::Cow;
use std::path::Path;

use serde::Serialize;

use programs::Word;
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
    if let Some(script) = shell_script(argv) {
        return classify_script(script);
    }
    if let Some(script) = powershell_script(argv) {
        return merge(vec![unknown_part(String::new())], || script.to_string());
    }
    merge(classify_words(argv), || programs::join_words(argv))
}

/// Classifies a script as Codex sees it: `["bash", "-lc", script]`.
pub fn classify_script(script: &str) -> Vec<Classified> {
    merge(classify_shell(script), || script.to_string())
}

/// The last step of [`classify`]: equal neighbours merged, and any unknown left makes the
/// whole answer one unknown whose `cmd` is the whole command.
fn merge(mut parts: Vec<Classified>, whole: impl FnOnce() -> String) -> Vec<Classified> {
    // Keeps the first of each run of equal parts (`dedup_by` compares with the last kept).
    parts.dedup_by(|next, kept| next.parsed == kept.parsed);
    if parts
        .iter()
        .any(|part| matches!(part.parsed, ParsedCommand::Unknown { .. }))
    {
        return vec![unknown_part(whole())];
    }
    parts
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
        commands.push(words.into_iter().map(Cow::into_owned).collect());
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
fn classify_one(words: &[Word<'_>], cwd: Option<&str>) -> Pending {
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
fn classify_commands<'a, 's: 'a>(
    commands: impl IntoIterator<Item = &'a [Word<'s>]>,
) -> Vec<Pending> {
    let mut parts = Vec::new();
    let mut cwd: Option<String> = None;
    for words in commands {
        if let Some((program, args)) = words.split_first()
            && program == "cd"
        {
            if let Some(target) = programs::cd_target(args) {
                change_directory(&mut cwd, target);
            }
            continue;
        }
        parts.push(classify_one(words, cwd.as_deref()));
    }
    parts
}

/// `cd TARGET`: the directory in effect becomes TARGET joined onto it, in place (a chain of
/// `cd`s costs its length, not its length squared).
fn change_directory(cwd: &mut Option<String>, target: &str) {
    match cwd {
        Some(base) => programs::push_path(base, target),
        None => *cwd = Some(target.to_string()),
    }
}

/// What Codex's simplifications (RULES §9) see in a part: an unknown part's `cmd` re-read as
/// shell words (`shlex::split`), and whether it is exactly `true`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// An unknown whose first word is `echo`: dropped when it comes first.
    Echo,
    /// An unknown whose first word is `cd`: dropped unless it comes last.
    Cd,
    /// An unknown whose `cmd` is exactly `true`: dropped.
    True,
    /// An unknown `nl` with flags only: dropped.
    BareNl,
    /// Anything else: a known part, or an unknown no simplification removes.
    Other,
}

impl Shape {
    fn of(part: &Pending) -> Shape {
        let ParsedCommand::Unknown { cmd } = &part.parsed else {
            return Shape::Other;
        };
        if cmd == "true" {
            return Shape::True;
        }
        // One pass over the words without collecting them: a `cmd` of a million words costs
        // one word at a time. `shlex::split` gives no words at all when it fails.
        let mut words = shlex::Shlex::new(cmd);
        let first = words.next();
        let only_flags_follow = words.by_ref().all(|word| word.starts_with('-'));
        // `all` may stop early; finish the pass to learn whether the split fails.
        words.by_ref().for_each(drop);
        if words.had_error {
            return Shape::Other;
        }
        match first.as_deref() {
            Some("echo") => Shape::Echo,
            Some("cd") => Shape::Cd,
            Some("nl") if only_flags_follow => Shape::BareNl,
            _ => Shape::Other,
        }
    }
}

fn is_unknown_true(part: &Pending) -> bool {
    matches!(&part.parsed, ParsedCommand::Unknown { cmd } if cmd == "true")
}

/// Removes harmless unknowns from a sequence of two or more parts (RULES §9).
fn simplify(parts: &mut Vec<Pending>) {
    if parts.len() < 2 {
        return;
    }
    let shapes: Vec<Shape> = parts.iter().map(Shape::of).collect();
    let mut keep = survivors(&shapes).into_iter();
    parts.retain(|_| keep.next().unwrap_or(true));
}

/// Which parts of these shapes survive Codex's simplifications, which remove one part at a
/// time until none applies: while two or more parts are left, the first of
///
/// 1. the first part, when it is an `echo`;
/// 2. the first `cd`, unless it is the last part;
/// 3. the first `true`;
/// 4. the first bare `nl`.
///
/// Done one removal at a time on a list, that costs the number of parts squared; here each
/// step is found in constant time (amortized). Each kind of part is only ever removed by its
/// own rule and always the first of its kind, so each rule walks its kind's positions once,
/// and the first and last parts left are found by pointers that only move inwards.
fn survivors(shapes: &[Shape]) -> Vec<bool> {
    let mut alive = vec![true; shapes.len()];
    let mut left = shapes.len();
    let positions = |wanted: Shape| {
        shapes
            .iter()
            .enumerate()
            .filter(move |(_, shape)| **shape == wanted)
            .map(|(index, _)| index)
            .peekable()
    };
    let (mut cds, mut trues, mut nls) = (
        positions(Shape::Cd),
        positions(Shape::True),
        positions(Shape::BareNl),
    );
    let (mut first, mut last) = (0, shapes.len().saturating_sub(1));
    while left > 1 {
        while !alive[first] {
            first += 1;
        }
        while !alive[last] {
            last -= 1;
        }
        let removed = if shapes[first] == Shape::Echo {
            Some(first)
        } else if let Some(cd) = cds.next_if(|&cd| cd != last) {
            Some(cd)
        } else {
            trues.next().or_else(|| nls.next())
        };
        let Some(index) = removed else {
            break;
        };
        alive[index] = false;
        left -= 1;
    }
    alive
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
    let argv: Vec<Word<'_>> = argv
        .iter()
        .map(|word| Cow::Borrowed(word.as_str()))
        .collect();
    let words = match argv.as_slice() {
        [first, pipe, rest @ ..] if matches!(&**first, "yes" | "y" | "no" | "n") && pipe == "|" => {
            rest
        }
        all => all,
    };
    let mut segments: Vec<&[Word<'_>]> = Vec::new();
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
struct ShellParts<'s> {
    /// Commands seen, formatting helpers included.
    commands: usize,
    /// Commands kept after dropping formatting helpers (`cd` included).
    kept: usize,
    cwd: Option<String>,
    parts: Vec<Pending>,
    /// The last kept command when it was not `cd`, and how many times in a row it came.
    last: Option<(Vec<Word<'s>>, usize)>,
}

impl<'s> ShellParts<'s> {
    /// Takes one command; `false` once the answer is certainly one unknown for the script.
    fn push(&mut self, words: Vec<Word<'s>>) -> bool {
        self.commands += 1;
        if programs::is_formatting_helper(&words) {
            return true;
        }
        self.kept += 1;
        if let Some((program, args)) = words.split_first()
            && program == "cd"
        {
            if let Some(target) = programs::cd_target(args) {
                change_directory(&mut self.cwd, target);
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
        // The last command's words (a slice each) are not needed any more: free them before
        // the script is re-read below.
        self.last = None;
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
    matches!(part.parsed, ParsedCommand::Unknown { .. }) && Shape::of(part) == Shape::Other
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
                if !parts.push(words.into_iter().map(Cow::Owned).collect()) {
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
    let is_read = matches!(part.parsed, ParsedCommand::Read { .. });
    let cmd = match &mut part.parsed {
        ParsedCommand::Read { cmd, .. }
        | ParsedCommand::ListFiles { cmd, .. }
        | ParsedCommand::Search { cmd, .. } => cmd,
        ParsedCommand::Unknown { .. } => return,
    };
    let tokens = ScriptTokens::of(script);
    if !(several_commands || tokens.connector) {
        *cmd = if tokens.split {
            programs::join_words(shlex::Shlex::new(script))
        } else {
            programs::join_words([script])
        };
        return;
    }
    if is_read && tokens.pipe && tokens.sed_n {
        *cmd = script.to_string();
    }
}

/// What [`attribute_script`] asks of the script's shlex words (`shlex::split`, or the script
/// as one word when that fails), found in one pass without collecting the words.
struct ScriptTokens {
    /// Whether `shlex::split` succeeds.
    split: bool,
    /// Some word is a connector (`|`, `&&`, `||`, `;`).
    connector: bool,
    /// Some word is `|`.
    pipe: bool,
    /// `sed` is directly followed by `-n` somewhere.
    sed_n: bool,
}

impl ScriptTokens {
    fn of(script: &str) -> ScriptTokens {
        let mut words = shlex::Shlex::new(script);
        let mut tokens = ScriptTokens {
            split: true,
            connector: false,
            pipe: false,
            sed_n: false,
        };
        let mut after_sed = false;
        for word in words.by_ref() {
            tokens.connector |= programs::is_connector(&word);
            tokens.pipe |= word == "|";
            tokens.sed_n |= after_sed && word == "-n";
            after_sed = word == "sed";
        }
        if words.had_error {
            return ScriptTokens {
                split: false,
                connector: programs::is_connector(script),
                pipe: script == "|",
                sed_n: false,
            };
        }
        tokens
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::{Shape, survivors};

    /// RULES §9 as Codex runs it: one removal at a time on a list, rescanning from the start
    /// after each (the definition `survivors` must match).
    fn survivors_one_at_a_time(shapes: &[Shape]) -> Vec<bool> {
        let mut parts: Vec<(usize, Shape)> = shapes.iter().copied().enumerate().collect();
        while parts.len() > 1 {
            if parts[0].1 == Shape::Echo {
                parts.remove(0);
                continue;
            }
            if let Some(index) = parts.iter().position(|part| part.1 == Shape::Cd)
                && index + 1 < parts.len()
            {
                parts.remove(index);
                continue;
            }
            if let Some(index) = parts.iter().position(|part| part.1 == Shape::True) {
                parts.remove(index);
                continue;
            }
            if let Some(index) = parts.iter().position(|part| part.1 == Shape::BareNl) {
                parts.remove(index);
                continue;
            }
            break;
        }
        let mut alive = vec![false; shapes.len()];
        for (index, _) in parts {
            alive[index] = true;
        }
        alive
    }

    fn shape() -> impl Strategy<Value = Shape> {
        prop::sample::select(vec![
            Shape::Echo,
            Shape::Cd,
            Shape::True,
            Shape::BareNl,
            Shape::Other,
        ])
    }

    #[test]
    fn survivors_follow_the_rules_in_order() {
        use Shape::{BareNl, Cd, Echo, Other, True};
        // A leading echo goes, a later one stays.
        assert_eq!(survivors(&[Echo, Other, Echo]), [false, true, true]);
        // A cd goes unless it is last; once the others are gone, the last one stays.
        assert_eq!(survivors(&[Cd, Other, Cd]), [false, true, true]);
        assert_eq!(survivors(&[Cd, Cd]), [false, true]);
        // Removing a leading cd can bring an echo to the front, which then goes too.
        assert_eq!(
            survivors(&[Cd, Echo, True, Other]),
            [false, false, false, true]
        );
        // Something always stays.
        assert_eq!(survivors(&[BareNl, True, Echo]), [false, false, true]);
        assert_eq!(survivors(&[Echo]), [true]);
        assert_eq!(survivors(&[]), Vec::<bool>::new());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// The linear walk gives exactly what one removal at a time gives.
        #[test]
        fn survivors_match_one_removal_at_a_time(shapes in prop::collection::vec(shape(), 0..16)) {
            prop_assert_eq!(survivors(&shapes), survivors_one_at_a_time(&shapes));
        }
    }
}
