//! The exact path: the tree-sitter-bash grammar Codex itself parses scripts with.
//!
//! A script is accepted when its tree has no error, every named node is one of the word-level
//! kinds below, and every anonymous token is a connector, a quote, or whitespace. Each
//! `command` node then gives its words, taken from the source text without shell unescaping.

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
        let tree = parser.parse(script, None);
        // A parser is reusable after any parse; reset anyway so no state leaks between calls.
        parser.reset();
        words_of_tree(tree?.root_node(), script)
    })
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
