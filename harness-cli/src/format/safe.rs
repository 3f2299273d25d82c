//! Terminal safety: whatever the agent wrote cannot drive the terminal.
//!
//! *Invariant:* no text that comes from the agent (its messages, reasoning, commands, paths,
//! errors, stderr, lines that are not JSON) reaches a terminal with a control character that
//! acts. Every C0 character but the line breaks and tabs of multi-line text, DEL, the C1
//! characters (U+009B, the one-character CSI, among them) and the bidirectional controls are
//! shown as visible escapes by [`visible`], so an agent cannot retitle the window, clear the
//! screen, move the cursor or overwrite lines. The human printer passes every piece of agent
//! text through here, and indents every further line of multi-line text under its label, so
//! no text can pass for an event line either.

use std::borrow::Cow;
use std::fmt::Write as _;

/// How [`visible`] treats line breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breaks {
    /// Multi-line text: `\n` (and `\r\n`) stay line breaks and tabs stay tabs; the printer
    /// indents every further line under the label.
    Keep,
    /// A one-line field (a path, a query, a name): `\n` and tab are escaped like the rest.
    Escape,
}

/// `text` with every control character shown as a visible escape, so that nothing an agent
/// writes can move the cursor, retitle or clear the terminal, or start a line of its own:
/// `\n`, `\r`, `\t` and `\e` (ESC) by name, every other C0 character, DEL, the C1 characters
/// (U+0080 to U+009F, U+009B included) and the bidirectional controls (U+202A to U+202E,
/// U+2066 to U+2069) as `\u{..}`. Backslashes are not escaped: `\e` in the output may be an
/// escape or the agent's own two characters; neither can act on the terminal.
pub fn visible(text: &str, breaks: Breaks) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        matches!(c, '\0'..='\x1f' | '\x7f'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            && !(breaks == Breaks::Keep && (c == '\n' || c == '\t'))
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if breaks == Breaks::Keep && c == '\r' && chars.peek() == Some(&'\n') {
            // A CRLF line end is a line end.
            continue;
        }
        if !unsafe_char(c) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            _ => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

/// One-line text, made safe.
pub(super) fn one_line(text: &str) -> Cow<'_, str> {
    visible(text, Breaks::Escape)
}

/// Multi-line text, made safe; its line breaks are indented by the printer.
pub(super) fn multi_line(text: &str) -> Cow<'_, str> {
    visible(text, Breaks::Keep)
}

#[cfg(test)]
mod tests {
    use super::{Breaks, visible};

    #[test]
    fn visible_escapes_every_control_character() {
        let table = [
            ("plain text", Breaks::Escape, "plain text"),
            ("a\nb\tc", Breaks::Keep, "a\nb\tc"),
            ("a\nb\tc", Breaks::Escape, "a\\nb\\tc"),
            ("crlf\r\nline", Breaks::Keep, "crlf\nline"),
            ("crlf\r\nline", Breaks::Escape, "crlf\\r\\nline"),
            ("lone\rcr", Breaks::Keep, "lone\\rcr"),
            ("\x1b]0;title\x07", Breaks::Keep, "\\e]0;title\\u{7}"),
            ("\x1b[2J\x1b[H", Breaks::Keep, "\\e[2J\\e[H"),
            ("\u{9b}31m", Breaks::Keep, "\\u{9b}31m"),
            ("\u{85}\u{80}\u{9f}", Breaks::Keep, "\\u{85}\\u{80}\\u{9f}"),
            ("del\x7f", Breaks::Keep, "del\\u{7f}"),
            (
                "nul\0bs\x08vt\x0bff\x0c",
                Breaks::Keep,
                "nul\\u{0}bs\\u{8}vt\\u{b}ff\\u{c}",
            ),
            (
                "\u{202e}evil\u{2066}",
                Breaks::Keep,
                "\\u{202e}evil\\u{2066}",
            ),
            ("ünïcödé → 語 \\e", Breaks::Keep, "ünïcödé → 語 \\e"),
        ];
        for (input, breaks, expected) in table {
            assert_eq!(visible(input, breaks), expected, "{input:?}");
        }
    }
}
