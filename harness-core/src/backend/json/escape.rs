//! A JSON string's text decoded straight into the shared buffer an event holds (S7).
//!
//! An `agent` event's text is an `Arc<str>`. Decoding an escaped string the usual way (into a
//! `String`, then copied into the `Arc`) holds the line, the decoded text and its copy at once:
//! three times a 200 MB message. [`shared_text`] measures the decoded length first, then
//! decodes into the `Arc`'s own allocation, so the line and one text are all it holds.

use std::sync::Arc;

/// The text of a JSON string, given the part of the line between its quotes, decoded into one
/// shared allocation of exactly its length; `None` when that part is not the inside of a JSON
/// string that decodes to valid text (a raw control character, a bad or unfinished escape, an
/// unpaired surrogate: serde_json rejects those too, so a caller falls back to its exact path).
///
/// ```
/// use harness_agents_core::backend::json::escape::shared_text;
///
/// assert_eq!(shared_text(r#"a \"b\"\n\u00e9\ud83d\ude00"#).as_deref(), Some("a \"b\"\né😀"));
/// assert_eq!(shared_text("plain").as_deref(), Some("plain"));
/// assert_eq!(shared_text(r"\ud83d"), None);
/// assert_eq!(shared_text("tab\there"), None);
/// ```
pub fn shared_text(inside: &str) -> Option<Arc<str>> {
    let len = decoded_len(inside.as_bytes())?;
    // `repeat_n` has an exact length, so the `Arc` is allocated once, at its final size.
    let mut bytes: Arc<[u8]> = std::iter::repeat_n(0u8, len).collect();
    let out = Arc::get_mut(&mut bytes)?;
    let written = decode_into(inside.as_bytes(), out)?;
    if written != len {
        return None;
    }
    into_str(bytes)
}

/// The text of a JSON string, as [`shared_text`] decodes it, into a `String` of exactly its
/// length (decoding into a `String` of the escaped length, as usual, holds more than the text
/// whenever it has escapes: S7).
///
/// ```
/// use harness_agents_core::backend::json::escape::exact_string;
///
/// let text = exact_string(r#"a \"b\"\n"#).unwrap();
/// assert_eq!((text.as_str(), text.capacity()), ("a \"b\"\n", 6));
/// assert_eq!(exact_string(r"\ud83d"), None);
/// ```
pub fn exact_string(inside: &str) -> Option<String> {
    let len = decoded_len(inside.as_bytes())?;
    let mut bytes = vec![0u8; len];
    if decode_into(inside.as_bytes(), &mut bytes)? != len {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The decoded length in bytes, checking every escape; `None` when the text is not a valid
/// JSON string's inside.
fn decoded_len(s: &[u8]) -> Option<usize> {
    let mut len = 0;
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' => {
                let (c, used) = escape(s, i)?;
                len += c.len_utf8();
                i += used;
            }
            b'"' | 0x00..=0x1f => return None,
            _ => {
                len += 1;
                i += 1;
            }
        }
    }
    Some(len)
}

/// Decodes `s` into `out`; the number of bytes written, `None` on a bad escape or when `out`
/// is too short.
fn decode_into(s: &[u8], out: &mut [u8]) -> Option<usize> {
    let mut at = 0;
    let mut i = 0;
    while i < s.len() {
        // Copies the run up to the next escape whole.
        let run = memchr::memchr(b'\\', &s[i..]).unwrap_or(s.len() - i);
        out.get_mut(at..at + run)?.copy_from_slice(&s[i..i + run]);
        at += run;
        i += run;
        if i < s.len() {
            let (c, used) = escape(s, i)?;
            let n = c.len_utf8();
            c.encode_utf8(out.get_mut(at..at + n)?);
            at += n;
            i += used;
        }
    }
    Some(at)
}

/// The character of the escape at `s[i]` (a backslash) and how many bytes it takes; `None`
/// when it is no valid JSON escape (an unpaired surrogate included). The one decoder of
/// escapes: [`unescape`] and the fast reader's strings use it too.
#[inline]
pub(super) fn escape(s: &[u8], i: usize) -> Option<(char, usize)> {
    let c = match *s.get(i + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let first = u32::from(hex_unit(s, i)?);
            return match first {
                0xd800..=0xdbff => {
                    // A leading surrogate needs its trailing one right after it.
                    let second = u32::from(hex_unit(s, i + 6)?);
                    if !(0xdc00..=0xdfff).contains(&second) {
                        return None;
                    }
                    let code = 0x10000 + ((first - 0xd800) << 10) + (second - 0xdc00);
                    Some((char::from_u32(code)?, 12))
                }
                _ => Some((char::from_u32(first)?, 6)),
            };
        }
        _ => return None,
    };
    Some((c, 2))
}

/// The text of a JSON string, given the part between its quotes as [`Scan`](super::Scan)
/// read it (checked), with its escapes decoded; `None` on a bad escape.
pub(super) fn unescape(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut text = String::with_capacity(raw.len());
    let mut pos = 0;
    while let Some(at) = memchr::memchr(b'\\', &bytes[pos..]) {
        text.push_str(raw.get(pos..pos + at)?);
        pos += at;
        let (decoded, used) = escape(bytes, pos)?;
        text.push(decoded);
        pos += used;
    }
    text.push_str(raw.get(pos..)?);
    Some(text)
}

/// The bytes that follow a backslash in a one-character escape.
pub(super) const SIMPLE_ESCAPES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let escapes = *b"\"\\/bfnrt";
    while i < escapes.len() {
        table[escapes[i] as usize] = true;
        i += 1;
    }
    table
};

/// The position after the escape whose backslash is at `at`, checked; `None` when it is not
/// valid.
#[inline]
pub(super) fn escape_end(bytes: &[u8], at: usize) -> Option<usize> {
    let after = *bytes.get(at + 1)?;
    // A table rather than a `match`: one well-predicted branch for the common escapes.
    if SIMPLE_ESCAPES[usize::from(after)] {
        Some(at + 2)
    } else if after == b'u' {
        unicode_escape_end(bytes, at)
    } else {
        None
    }
}

/// The position after the `\uXXXX` escape at `at`, and after its trailing surrogate when it
/// is a leading one; `None` when the escape is not valid or a surrogate is unpaired.
pub(super) fn unicode_escape_end(bytes: &[u8], at: usize) -> Option<usize> {
    match hex_unit(bytes, at)? {
        0xDC00..=0xDFFF => None,
        0xD800..=0xDBFF => {
            let next = hex_unit(bytes, at + 6)?;
            (0xDC00..=0xDFFF).contains(&next).then_some(at + 12)
        }
        _ => Some(at + 6),
    }
}

/// The code unit of the `\uXXXX` escape at `at` in `bytes`.
fn hex_unit(bytes: &[u8], at: usize) -> Option<u16> {
    let escape = bytes.get(at..at + 6)?;
    if escape[..2] != *b"\\u" {
        return None;
    }
    escape[2..].iter().try_fold(0u16, |unit, &b| {
        let digit = (b as char).to_digit(16)?;
        Some(unit << 4 | digit as u16)
    })
}

/// The bytes as a shared `str`, without copying them; `None` when they are not UTF-8.
#[allow(unsafe_code)]
fn into_str(bytes: Arc<[u8]>) -> Option<Arc<str>> {
    std::str::from_utf8(&bytes).ok()?;
    let raw = Arc::into_raw(bytes) as *const str;
    // SAFETY: `raw` comes from `Arc::into_raw` of an `Arc<[u8]>`, and `str` has the same
    // layout as `[u8]` (the cast keeps the length), so `Arc::from_raw` takes back the same
    // allocation with the same reference count; the bytes were checked to be UTF-8 just
    // above, which is `str`'s only extra invariant. This is the inverse of the standard
    // library's safe `From<Arc<str>> for Arc<[u8]>`.
    Some(unsafe { Arc::from_raw(raw) })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The inside of `text`'s JSON string, as serde_json writes it.
    fn inside(text: &str) -> String {
        let quoted = serde_json::to_string(text).unwrap();
        quoted[1..quoted.len() - 1].to_string()
    }

    #[test]
    fn every_escape_decodes_as_serde_json_reads_it() {
        for literal in [
            r#"\"\\\/\b\f\n\r\t"#,
            r"\u0041\u00e9\u20ac\uFFFF\u0000",
            r"\ud83d\ude00 and \uD83D\uDE00",
            "é😀 plain",
            "",
        ] {
            let expected: String = serde_json::from_str(&format!("\"{literal}\"")).unwrap();
            assert_eq!(
                shared_text(literal).as_deref(),
                Some(expected.as_str()),
                "{literal}"
            );
        }
    }

    #[test]
    fn s2_what_serde_json_rejects_is_none() {
        for literal in [
            r"\ud83d",
            r"\ud83dx",
            r"\ud83d\u0041",
            r"\ude00",
            r"\x",
            r"\u12",
            r"\u12g4",
            "\\",
            "a\"b",
            "new\nline",
            "\u{1f}",
        ] {
            assert!(
                serde_json::from_str::<String>(&format!("\"{literal}\"")).is_err(),
                "{literal}"
            );
            assert_eq!(shared_text(literal), None, "{literal}");
        }
    }

    proptest! {
        /// Any text, written by serde_json, decodes back to itself.
        #[test]
        fn any_text_round_trips(text in any::<String>()) {
            let ours = shared_text(&inside(&text));
            prop_assert_eq!(ours.as_deref(), Some(text.as_str()));
        }

        /// Any bytes: decoded exactly where serde_json decodes them, to the same text.
        #[test]
        fn any_inside_agrees_with_serde_json(inside in "(\\\\(u[0-9a-fA-FdD]{0,4}|[\"\\\\/bfnrtx])|[a\u{e9}\"\n]){0,12}") {
            let serde: Option<String> = serde_json::from_str(&format!("\"{inside}\"")).ok();
            let ours = shared_text(&inside);
            prop_assert_eq!(ours.as_deref(), serde.as_deref());
        }
    }
}
