//! Small text helpers shared by backends.

use std::sync::Arc;

/// A message's texts, joined as they arrive: the text of an `agent` event assembled from
/// parts (Claude's blocks and opencode's parts with a blank line between them, Gemini's and
/// ACP's streamed chunks with nothing between them).
///
/// The text of a single part, the usual case, is held as the event will hold it (an
/// [`Arc<str>`]), so a huge text is copied once from its line and never again: not when the
/// event is made, not when the outcome's `final_output` shares it (S7). The texts of several
/// parts are joined into one string, copied once more when the event is made.
///
/// ```
/// use harness_agents_core::backend::text::Joined;
///
/// let mut said = Joined::default();
/// assert!(said.is_empty());
/// said.push("Reading.");
/// let one = said.text();
/// assert!(std::sync::Arc::ptr_eq(&one, &said.text())); // one part: shared, not copied
/// said.push("Done.");
/// said.push_str(" Bye.");
/// assert_eq!(&*said.into_text(), "Reading.\n\nDone. Bye.");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Joined(Parts);

#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum Parts {
    #[default]
    Nothing,
    One(Arc<str>),
    Many(String),
}

impl Joined {
    /// Adds a part's text after a blank line (the first one as it is).
    pub fn push(&mut self, text: &str) {
        self.add("\n\n", text);
    }

    /// Adds a chunk of text right after the text so far (streamed chunks, which join with
    /// nothing between them).
    pub fn push_str(&mut self, text: &str) {
        self.add("", text);
    }

    fn add(&mut self, between: &str, text: &str) {
        self.0 = match std::mem::take(&mut self.0) {
            Parts::Nothing => Parts::One(Arc::from(text)),
            Parts::One(first) => {
                let mut joined = String::with_capacity(first.len() + between.len() + text.len());
                joined.push_str(&first);
                joined.push_str(between);
                joined.push_str(text);
                Parts::Many(joined)
            }
            Parts::Many(mut joined) => {
                joined.push_str(between);
                joined.push_str(text);
                Parts::Many(joined)
            }
        };
    }

    /// Whether no part was added.
    pub fn is_empty(&self) -> bool {
        self.0 == Parts::Nothing
    }

    /// The text so far: shared when it is one part's, else a copy of the joined parts.
    pub fn text(&self) -> Arc<str> {
        match &self.0 {
            Parts::Nothing => Arc::from(""),
            Parts::One(text) => Arc::clone(text),
            Parts::Many(text) => Arc::from(text.as_str()),
        }
    }

    /// The text: shared when it is one part's.
    pub fn into_text(self) -> Arc<str> {
        match self.0 {
            Parts::Many(text) => Arc::from(text),
            _ => self.text(),
        }
    }
}

/// The first `max` characters of `s` (characters, not bytes).
pub fn truncate_chars(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Whether a line holds only JSON whitespace (space, tab, CR, LF), and so is skipped (S1).
pub fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// Drops one trailing `\r` (S1, S4).
pub fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_counts_characters() {
        assert_eq!(truncate_chars("héllo", 2), "hé");
        assert_eq!(truncate_chars("hi", 5), "hi");
        assert_eq!(truncate_chars("", 0), "");
    }

    #[test]
    fn s1_blank_is_json_whitespace_only() {
        assert!(is_blank(b" \t\r"));
        assert!(is_blank(b""));
        assert!(!is_blank(b"\x0c"));
        assert!(!is_blank("\u{a0}".as_bytes()));
    }
}
