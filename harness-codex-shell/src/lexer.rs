//! The fast path: a one-pass lexer for the plain command sequences agents write most.
//!
//! It answers only when it is sure the grammar would answer the same: [`Lexed::Words`] for a
//! script made of plain words, simple quotes and connectors; [`Lexed::Reject`] for a script
//! that certainly holds a construct the grammar rejects (a redirection, a substitution or
//! expansion, a comment, background `&`, `|&`); [`Lexed::Unsure`] for everything else, which
//! then goes to the grammar. Each step looks at one byte at most a fixed number of times, so
//! the lexer is linear in the script's length. A word written as one piece is a slice of the
//! script, not a copy: a command of many short words costs a slice per word, not an
//! allocation per word.

use std::borrow::Cow;

/// What the lexer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lexed {
    /// The script is a plain command sequence; every command went to the sink.
    Words,
    /// The sink asked to stop (its answer no longer depends on the rest of the script).
    Stopped,
    /// The grammar certainly rejects the script.
    Reject,
    /// Only the grammar can tell (commands may have gone to the sink already).
    Unsure,
}

/// Words that start something other than a plain command when they come first.
const RESERVED: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "declare", "typeset", "export", "readonly",
    "local", "unset", "unsetenv",
];

/// Bytes that stand for themselves in an unquoted word, for sure.
fn is_plain(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(
            byte,
            b'_' | b'-'
                | b'.'
                | b'/'
                | b','
                | b':'
                | b'+'
                | b'%'
                | b'@'
                | b'~'
                | b'*'
                | b'?'
                | b'='
                | b'^'
        )
}

/// Whether a command name is certainly a plain `word` to the grammar: a letter, `_`, `.` or
/// `/` first, then letters, digits and `_ . / -` (no glob, `=`, `%`, `@`, `+`...).
fn is_plain_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || matches!(first, b'_' | b'.' | b'/'))
        && bytes
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'.' | b'/' | b'-'))
}

/// Whether a `$` followed by `next` certainly starts an expansion or substitution.
fn starts_expansion(next: Option<&u8>) -> bool {
    next.is_some_and(|byte| {
        byte.is_ascii_alphanumeric()
            || matches!(
                byte,
                b'_' | b'{' | b'(' | b'\'' | b'"' | b'@' | b'*' | b'#' | b'?' | b'$' | b'!'
            )
    })
}

/// One word being read: its text and how it was written.
struct Word<'s> {
    text: Cow<'s, str>,
    parts: usize,
    quoted: bool,
}

impl<'s> Word<'s> {
    /// Adds a piece of `script` to the word: the word stays a borrowed slice while it is one
    /// piece, and becomes an owned string when a second piece is glued on (`a'b'`).
    fn push(&mut self, piece: &'s str) {
        match &mut self.text {
            Cow::Borrowed("") => self.text = Cow::Borrowed(piece),
            text => text.to_mut().push_str(piece),
        }
    }
}

/// Lexes `script`, giving each command's words to `sink` as soon as the command ends; the
/// sink returns `false` to stop. See [`Lexed`] for the answer.
///
/// A command is only handed over once it is complete, and a plain command cannot change
/// meaning because of what follows it: either the whole script is a plain sequence and the
/// command is one of its commands, or the grammar rejects the script.
pub(crate) fn lex<'s>(script: &'s str, sink: &mut dyn FnMut(Vec<Cow<'s, str>>) -> bool) -> Lexed {
    let bytes = script.as_bytes();
    if bytes.contains(&0) {
        // tree-sitter reads a NUL byte as the end of input, wherever it is: nothing about the
        // rest of the script can be trusted.
        return Lexed::Unsure;
    }
    let mut current: Vec<Cow<'s, str>> = Vec::new();
    // After `&&`, `||` or `|`, a command must follow on the same line.
    let mut need_command = false;
    let mut pos = 0;
    loop {
        while matches!(bytes.get(pos), Some(b' ' | b'\t')) {
            pos += 1;
        }
        let Some(&byte) = bytes.get(pos) else {
            if need_command {
                // `a &&`, `a |` at the end: a command is missing.
                return Lexed::Reject;
            }
            break;
        };
        match byte {
            b'\n' | b';' | b'&' | b'|' => {
                let next = bytes.get(pos + 1).copied();
                let width = match (byte, next) {
                    (b'&', Some(b'&')) | (b'|', Some(b'|')) => 2,
                    (b'|', Some(b'&')) | (b'&', _) => return Lexed::Reject,
                    _ => 1,
                };
                if current.is_empty() {
                    if byte != b'\n' {
                        // An operator with no command before it (`; a`, `a && ;`, `a ;;`).
                        return Lexed::Reject;
                    }
                    if !need_command {
                        // A blank line.
                        pos += 1;
                        continue;
                    }
                    // A newline after `&&`, `||`, `|`: the grammar's business.
                    return reject_scan(bytes);
                }
                if !sink(std::mem::take(&mut current)) {
                    return Lexed::Stopped;
                }
                need_command = !matches!(byte, b'\n' | b';');
                pos += width;
            }
            b'#' | b'>' | b'<' | b'`' => return Lexed::Reject,
            _ => {
                let word = match read_word(script, &mut pos) {
                    Ok(word) => word,
                    Err(Lexed::Unsure) => return reject_scan(bytes),
                    Err(decided) => return decided,
                };
                if current.is_empty() {
                    let name: &str = &word.text;
                    if word.quoted || !is_plain_name(name) || RESERVED.contains(&name) {
                        return reject_scan(bytes);
                    }
                }
                if word.parts > 1 && word.text.is_empty() {
                    // Codex refuses a concatenation that glues to nothing (`''""`).
                    return Lexed::Reject;
                }
                current.push(word.text);
                need_command = false;
            }
        }
    }
    if !current.is_empty() && !sink(current) {
        return Lexed::Stopped;
    }
    Lexed::Words
}

/// Reads one word starting at `pos`, leaving `pos` just after it; `Err` carries the decision
/// when the word is beyond the fast path.
fn read_word<'s>(script: &'s str, pos: &mut usize) -> Result<Word<'s>, Lexed> {
    let bytes = script.as_bytes();
    let mut word = Word {
        text: Cow::Borrowed(""),
        parts: 0,
        quoted: false,
    };
    // `==` and `=~` standing alone at a word's start are the grammar's test operators.
    if matches!(bytes.get(*pos..*pos + 2), Some(b"==" | b"=~"))
        && !bytes.get(*pos + 2).is_some_and(|&next| is_plain(next))
    {
        return Err(Lexed::Unsure);
    }
    // Where the plain run being read started, while in one.
    let mut plain_run: Option<usize> = None;
    while let Some(&byte) = bytes.get(*pos) {
        match byte {
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' => break,
            b'>' | b'<' | b'`' => return Err(Lexed::Reject),
            b'$' if starts_expansion(bytes.get(*pos + 1)) => return Err(Lexed::Reject),
            b'\'' | b'"' => {
                let start = *pos + 1;
                let Some(len) = bytes[start..].iter().position(|&b| b == byte) else {
                    return Err(Lexed::Unsure);
                };
                let inner = &bytes[start..start + len];
                if byte == b'"' && inner.iter().any(|b| matches!(b, b'$' | b'`' | b'\\')) {
                    return Err(Lexed::Unsure);
                }
                if let Some(run) = plain_run.take() {
                    word.push(plain_piece(script, run, *pos)?);
                }
                // Quotes sit on ASCII bytes, so the slice is whole UTF-8.
                word.push(script.get(start..start + len).ok_or(Lexed::Unsure)?);
                word.parts += 1;
                word.quoted = true;
                *pos = start + len + 1;
            }
            _ if is_plain(byte) => {
                if plain_run.is_none() {
                    word.parts += 1;
                    plain_run = Some(*pos);
                }
                *pos += 1;
            }
            _ => return Err(Lexed::Unsure),
        }
    }
    if let Some(run) = plain_run {
        word.push(plain_piece(script, run, *pos)?);
    }
    Ok(word)
}

/// The plain run `start..end` of `script` (ASCII bytes, so always a whole slice).
fn plain_piece(script: &str, start: usize, end: usize) -> Result<&str, Lexed> {
    script.get(start..end).ok_or(Lexed::Unsure)
}

/// The second chance of a script the fast path cannot lex: one more pass that tracks only
/// quoting and escapes, looking for a construct the grammar certainly rejects anywhere in the
/// script. `Reject` when it finds one, `Unsure` otherwise.
///
/// Outside quotes: a redirection or heredoc (`<`, `>`), a backtick, `(` or `)` (never part of
/// a word: subshells, functions, extglobs, arithmetic), an expansion (`$` then a name, digit,
/// `{`, `(`, a quote or a special parameter), a lone `&` or `|&`, `;;`, a comment (`#`
/// starting a word), or an unterminated quote. Inside double quotes: an expansion or a
/// backtick. A backslash escapes the next byte outside single quotes.
fn reject_scan(bytes: &[u8]) -> Lexed {
    let mut pos = 0;
    // Whether a word could start here (start, or after a blank or an operator byte).
    let mut word_start = true;
    while let Some(&byte) = bytes.get(pos) {
        let next = bytes.get(pos + 1);
        let mut starts_word = false;
        match byte {
            b'\\' => pos += 1,
            b'\'' => match bytes[pos + 1..].iter().position(|&b| b == b'\'') {
                Some(len) => pos += len + 1,
                None => return Lexed::Reject,
            },
            b'"' => {
                pos += 1;
                loop {
                    match bytes.get(pos) {
                        None => return Lexed::Reject,
                        Some(b'"') => break,
                        Some(b'\\') => pos += 2,
                        Some(b'`') => return Lexed::Reject,
                        Some(b'$') if starts_expansion(bytes.get(pos + 1)) => return Lexed::Reject,
                        Some(_) => pos += 1,
                    }
                }
            }
            b'<' | b'>' | b'`' | b'(' | b')' => return Lexed::Reject,
            b'$' if starts_expansion(next) => return Lexed::Reject,
            b'#' if word_start => return Lexed::Reject,
            b'&' if next != Some(&b'&') => return Lexed::Reject,
            b'|' if next == Some(&b'&') => return Lexed::Reject,
            b';' if next == Some(&b';') => return Lexed::Reject,
            b'&' | b'|' if next == Some(&byte) => {
                pos += 1;
                starts_word = true;
            }
            b' ' | b'\t' | b'\n' | b';' | b'|' => starts_word = true,
            _ => {}
        }
        word_start = starts_word;
        pos += 1;
    }
    Lexed::Unsure
}
