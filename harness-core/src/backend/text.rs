//! Small text helpers shared by backends.

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
