//! The exact path: the tree-sitter-bash grammar Codex itself parses scripts with.
//!
//! A script is accepted when its tree has no error, every named node is one of the word-level
//! kinds below, and every anonymous token is a connector, a quote, or whitespace. Each
//! `command` node then gives its words, taken from the source text without shell unescaping.

use std::borrow::Cow;
use std::cell::RefCell;

use tree_sitter::{Node, Parser};

/// Named node kinds a plain command sequence may contain.
const NAMED_KINDS: &[&str] = &[
    "program",
    "list",
    "pipeline",
    "command",
    "command_name",
    "word",
    "string",
    "string_content",
    "raw_string",
    "number",
    "concatenation",
];

/// Anonymous tokens a plain command sequence may contain (besides whitespace).
const TOKENS: &[&str] = &["&&", "||", ";", "|", "\"", "'"];

thread_local! {
    /// One parser per thread: building one (and loading the grammar) costs more than a parse.
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The commands of `script` as lists of words, or `None` when the grammar finds anything but
/// plain commands joined by `&&`, `||`, `;`, `|` and newlines.
pub(crate) fn parse(script: &str) -> Option<Vec<Vec<String>>> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        let parser = slot.as_mut()?;
        let tree = parser.parse(&*guard_scanner(script), None);
        // A parser is reusable after any parse; reset anyway so no state leaks between calls.
        parser.reset();
        words_of_tree(tree?.root_node(), script)
    })
}

/// Works around an out-of-bounds read in the grammar's external scanner.
///
/// After `{` and any digits, tree-sitter-bash 0.25.1 tests the next character with C's
/// `isdigit`, which is only defined up to 255: a larger code point reads outside the table
/// and can crash the process (Codex's answer there is undefined). Such characters are
/// replaced, in the copy given to the parser, by as many ASCII bytes as they take (`x`, or
/// spaces for whitespace), so every node keeps its byte range and words are still taken from
/// the original script.
fn guard_scanner(script: &str) -> Cow<'_, str> {
    let risky = |after_brace: bool, ch: char| after_brace && u32::from(ch) > 255;
    let mut after_brace = false;
    let mut first_risk = None;
    for (index, ch) in script.char_indices() {
        if risky(after_brace, ch) {
            first_risk = Some(index);
            break;
        }
        after_brace = ch == '{' || (after_brace && (ch.is_ascii_digit() || ch == '.'));
    }
    let Some(start) = first_risk else {
        return Cow::Borrowed(script);
    };
    // One linear pass from the first risky character on.
    let mut guarded = String::with_capacity(script.len());
    guarded.push_str(&script[..start]);
    after_brace = true;
    for ch in script[start..].chars() {
        if risky(after_brace, ch) {
            let filler = if ch.is_whitespace() { ' ' } else { 'x' };
            guarded.extend(std::iter::repeat_n(filler, ch.len_utf8()));
        } else {
            guarded.push(ch);
        }
        after_brace = ch == '{' || (after_brace && (ch.is_ascii_digit() || ch == '.'));
    }
    Cow::Owned(guarded)
}

fn words_of_tree(root: Node<'_>, script: &str) -> Option<Vec<Vec<String>>> {
    if root.has_error() {
        return None;
    }
    let mut commands = Vec::new();
    let mut stack = vec![root];
    let mut cursor = root.walk();
    while let Some(node) = stack.pop() {
        let kind = node.kind();
        if node.is_named() {
            if !NAMED_KINDS.contains(&kind) {
                return None;
            }
            if kind == "command" {
                commands.push(node);
            }
        } else if !TOKENS.contains(&kind) && !kind.trim().is_empty() {
            return None;
        }
        stack.extend(node.children(&mut cursor));
    }
    commands.sort_by_key(Node::start_byte);
    commands
        .into_iter()
        .map(|command| command_words(command, script))
        .collect()
}

fn text<'s>(node: Node<'_>, script: &'s str) -> Option<&'s str> {
    script.get(node.start_byte()..node.end_byte())
}

fn command_words(command: Node<'_>, script: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut cursor = command.walk();
    for child in command.named_children(&mut cursor) {
        let word = match child.kind() {
            "command_name" => {
                let name = child.named_child(0)?;
                if name.kind() != "word" {
                    return None;
                }
                text(name, script)?.to_string()
            }
            "concatenation" => {
                let mut glued = String::new();
                let mut parts = child.walk();
                for part in child.named_children(&mut parts) {
                    glued.push_str(&part_text(part, script)?);
                }
                if glued.is_empty() {
                    return None;
                }
                glued
            }
            _ => part_text(child, script)?,
        };
        words.push(word);
    }
    Some(words)
}

/// The text of a word, number, double-quoted string without expansions, or raw string.
fn part_text(node: Node<'_>, script: &str) -> Option<String> {
    let raw = text(node, script)?;
    match node.kind() {
        "word" | "number" => Some(raw.to_string()),
        "string" => {
            let mut cursor = node.walk();
            let plain = node
                .named_children(&mut cursor)
                .all(|part| part.kind() == "string_content");
            if !plain {
                return None;
            }
            Some(raw.strip_prefix('"')?.strip_suffix('"')?.to_string())
        }
        "raw_string" => Some(raw.strip_prefix('\'')?.strip_suffix('\'')?.to_string()),
        _ => None,
    }
}
