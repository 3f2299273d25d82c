//! The byte-level reader: [`Scan`], a lexer of the JSON subset `serde_json` surely accepts,
//! with the bit tricks that find quotes, backslashes and control characters a word or a block
//! at a time; and the byte-level checks before any reading ([`object_text`], [`max_depth`]).

use std::borrow::Cow;

use super::de::Loose;
use super::escape::{self, SIMPLE_ESCAPES, escape_end, unicode_escape_end};

/// A line as text when it may be a JSON object: UTF-8 whose first byte after JSON's
/// whitespace is `{`. A backend's fast view reads only such lines; any other line (not UTF-8,
/// not an object) takes the exact `Value` path, which decides whether it is JSON at all (S2, S3).
///
/// ```
/// use harness_agents_core::backend::json::object_text;
///
/// assert_eq!(object_text(b" {\"a\":1}"), Some(" {\"a\":1}"));
/// assert_eq!(object_text(b"[1]"), None);
/// assert_eq!(object_text(b"{\xff}"), None);
/// ```
pub fn object_text(line: &[u8]) -> Option<&str> {
    std::str::from_utf8(line)
        .ok()
        .filter(|text| text.trim_ascii_start().starts_with('{'))
}

/// Whether arrays and objects in `text` nest deeper than `limit` (see [`max_depth`]); fast
/// when `text` holds few brackets at all.
pub fn depth_exceeds(text: &str, limit: usize) -> bool {
    memchr::memchr2_iter(b'[', b'{', text.as_bytes()).count() > limit && max_depth(text) > limit
}

/// The deepest nesting of arrays and objects in `text` (brackets inside strings do not count).
/// Linear; it assumes nothing about validity.
///
/// ```
/// use harness_agents_core::backend::json::max_depth;
///
/// assert_eq!(max_depth(r#"{"a":[1,{"b":"[[["}]}"#), 3);
/// assert_eq!(max_depth("7"), 0);
/// ```
pub fn max_depth(text: &str) -> usize {
    let bytes = text.as_bytes();
    let (mut depth, mut max) = (0usize, 0usize);
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                loop {
                    let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                        return max;
                    };
                    i += at;
                    if bytes[i] == b'"' {
                        break;
                    }
                    i += 2; // A backslash and the character it escapes.
                    if i >= bytes.len() {
                        return max;
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    max
}

/// The deepest nesting [`Scan`] reads; deeper text is left to `serde_json` (whose own limit
/// is 127 levels).
const SCAN_MAX_DEPTH: usize = 100;

/// The most significant digits of a number [`Scan`] reads: fewer than 19 with an exponent of
/// at most two digits is always finite, so `serde_json` surely accepts it.
const SCAN_MAX_DIGITS: usize = 18;

/// A fast reader of JSON text that accepts only text `serde_json` surely parses into a `Value`
/// (S2), without building one. Every method returns `None` as soon as the text leaves the
/// subset it reads exactly: any syntax error, a control character anywhere in the text, an
/// escaped key, a number with many digits or a long exponent, nesting deeper than 100 levels.
/// `None` means *unsure*, not *invalid*: the caller then reads the text the checked way
/// ([`Checked`](super::Checked), a [`JsonView`](super::JsonView)), which decides. Strings are checked in full: escape syntax and
/// surrogate pairing, which `serde_json`'s own skipping does not check.
///
/// ```
/// use harness_agents_core::backend::json::{Loose, Scan};
///
/// let text = r#"{"id":"a","out":"line\n\ud83d\ude00","n":[1,2.5e3,{"x":null}],"id":"b"}"#;
/// let mut scan = Scan::new(text).unwrap();
/// let mut id = Loose::Absent;
/// scan.members(|scan, key| {
///     match key {
///         "id" => id = scan.loose()?,
///         _ => scan.skip()?,
///     }
///     Some(())
/// })
/// .unwrap();
/// scan.end().unwrap();
/// assert_eq!(id.as_str(), Some("b"));
///
/// // Not surely JSON: a lone surrogate, a number out of range, a control character.
/// for text in [r#"["\ud800"]"#, "[1e400]", "[\"a\u{1}\"]"] {
///     assert!(Scan::new(text).and_then(|mut s| s.skip()).is_none());
/// }
/// ```
#[derive(Debug, Clone)]
pub struct Scan<'a> {
    text: &'a str,
    pos: usize,
    depth: usize,
}

impl<'a> Scan<'a> {
    /// A reader at the start of `text`; `None` when the text holds a control character (below
    /// U+0020), which a JSON string may not and which is whitespace only in rare layouts.
    pub fn new(text: &'a str) -> Option<Self> {
        (!has_control(text.as_bytes())).then_some(Scan {
            text,
            pos: 0,
            depth: 0,
        })
    }

    #[inline]
    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// Skips spaces (the only whitespace left, as [`Scan::new`] refuses control characters)
    /// and returns the next byte, which tells the type of the next value (`[` for an array);
    /// `None` at the end.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while bytes.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
        bytes.get(self.pos).copied()
    }

    #[inline]
    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// Checks that nothing but whitespace is left.
    #[inline]
    pub fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// Reads a string; returns its text between the quotes, as written, and whether it holds
    /// an escape.
    #[inline]
    pub(super) fn string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let bytes = self.bytes();
        let start = self.pos;
        let mut pos = start;
        let mut escaped = false;
        // Most strings (keys, short values) end before any escape, or after a few: one search
        // for each. A string with more escapes is read by blocks.
        for _ in 0..4 {
            pos = quote_or_backslash(bytes, pos)?;
            if bytes[pos] == b'"' {
                self.pos = pos + 1;
                return Some((&self.text[start..pos], escaped));
            }
            escaped = true;
            pos = escape_end(bytes, pos)?;
        }
        let end = escaped_string_end(bytes, pos)?;
        self.pos = end + 1;
        Some((&self.text[start..end], true))
    }

    /// Reads a number that is surely finite.
    #[inline]
    fn number(&mut self) -> Option<()> {
        let bytes = self.bytes();
        let digits = |pos: &mut usize| {
            let start = *pos;
            while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos - start
        };
        let mut pos = self.pos;
        if bytes.get(pos) == Some(&b'-') {
            pos += 1;
        }
        let whole = digits(&mut pos);
        if whole == 0 || (whole > 1 && bytes[pos - whole] == b'0') {
            return None;
        }
        let mut significant = whole;
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            let fraction = digits(&mut pos);
            if fraction == 0 {
                return None;
            }
            significant += fraction;
        }
        if matches!(bytes.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(bytes.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            let exponent = digits(&mut pos);
            if exponent == 0 || exponent > 2 {
                return None;
            }
        }
        if significant > SCAN_MAX_DIGITS {
            return None;
        }
        self.pos = pos;
        Some(())
    }

    #[inline]
    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let found = self.bytes().get(self.pos..self.pos + word.len())? == word;
        found.then(|| self.pos += word.len())
    }

    /// Skips one value.
    #[inline]
    pub fn skip(&mut self) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(drop),
            b'{' => self.members(|scan, _| scan.skip()),
            b'[' => self.elements(|scan| scan.skip()),
            b'n' => self.literal(b"null"),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// Reads one value with `read`; returns what it read and the value as written.
    #[inline]
    pub fn with_text<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<(T, &'a str)> {
        let start = self.peek().map(|_| self.pos)?;
        let value = read(self)?;
        Some((value, &self.text[start..self.pos]))
    }

    /// Skips one value and returns it as written.
    #[inline]
    pub fn raw(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.pos;
        self.skip()?;
        Some(&self.text[start..self.pos])
    }

    /// Reads one value as a [`Loose`], as `serde_json` would.
    #[inline]
    pub fn loose(&mut self) -> Option<Loose<'a>> {
        match self.peek()? {
            b'"' => match self.string()? {
                (text, false) => Some(Loose::Str(Cow::Borrowed(text))),
                (text, true) => Some(Loose::Str(Cow::Owned(escape::unescape(text)?))),
            },
            b'{' => self.members(|scan, _| scan.skip()).map(|()| Loose::Object),
            b'[' => self.elements(|scan| scan.skip()).map(|()| Loose::Array),
            b'n' => self.literal(b"null").map(|()| Loose::Null),
            b't' => self.literal(b"true").map(|()| Loose::Bool(true)),
            b'f' => self.literal(b"false").map(|()| Loose::Bool(false)),
            _ => {
                let start = self.pos;
                self.number()?;
                let number = &self.text[start..self.pos];
                // A plain unsigned integer is a `u64`, as `serde_json` reads it (at most 18
                // digits, so it fits); others are read by `serde_json` itself.
                match number.bytes().all(|b| b.is_ascii_digit()) {
                    true => number.parse::<u64>().ok().map(|n| Loose::Number(n.into())),
                    false => serde_json::from_str(number).ok(),
                }
            }
        }
    }

    /// Reads an object, calling `member` with each key (as written; an escaped key is
    /// refused) with the reader at its value, which `member` must read.
    pub fn members(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.eat(b'{')?;
        self.enter()?;
        if self.eat(b'}').is_none() {
            loop {
                let (key, false) = self.string()? else {
                    return None;
                };
                self.eat(b':')?;
                member(self, key)?;
                match self.peek()? {
                    b',' => self.pos += 1,
                    b'}' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    /// Reads an array, calling `element` with the reader at each element, which `element`
    /// must read.
    pub fn elements(&mut self, mut element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'[')?;
        self.enter()?;
        if self.eat(b']').is_none() {
            loop {
                element(self)?;
                match self.peek()? {
                    b',' => self.pos += 1,
                    b']' => {
                        self.pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        self.depth -= 1;
        Some(())
    }

    #[inline]
    fn enter(&mut self) -> Option<()> {
        self.depth += 1;
        (self.depth <= SCAN_MAX_DEPTH).then_some(())
    }

    /// The named fields of one value, as [`FieldsSeed`](super::FieldsSeed) reads them: `Some(None)` when the value
    /// is not an object.
    pub fn fields<const N: usize>(&mut self, names: &[&str; N]) -> Option<Option<[Loose<'a>; N]>> {
        self.fields_and_text(names).map(|(fields, _)| fields)
    }

    /// [`Scan::fields`], and the value as written.
    pub fn fields_and_text<const N: usize>(
        &mut self,
        names: &[&str; N],
    ) -> Option<(Option<[Loose<'a>; N]>, &'a str)> {
        let start = self.peek().map(|_| self.pos)?;
        let fields = self.fields_at(names)?;
        Some((fields, &self.text[start..self.pos]))
    }

    fn fields_at<const N: usize>(&mut self, names: &[&str; N]) -> Option<Option<[Loose<'a>; N]>> {
        if self.peek()? != b'{' {
            self.skip()?;
            return Some(None);
        }
        let mut fields: [Loose<'a>; N] = std::array::from_fn(|_| Loose::Absent);
        self.members(|scan, key| {
            match names.iter().position(|name| *name == key) {
                Some(i) => fields[i] = scan.loose()?,
                None => scan.skip()?,
            }
            Some(())
        })?;
        Some(Some(fields))
    }
}

/// Whether `bytes` hold a byte below 0x20; eight bytes at a time, in a loop that vectorizes,
/// and the last few as the last eight (read again), not one by one.
fn has_control(bytes: &[u8]) -> bool {
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACES: u64 = u64::from_ne_bytes([0x20; 8]);
    let mut words = bytes.chunks_exact(8);
    let mut below = 0;
    for word in &mut words {
        let mut chunk = [0; 8];
        chunk.copy_from_slice(word);
        let word = u64::from_le_bytes(chunk);
        // Some byte of `word` is below 0x20 exactly when this is not zero.
        below |= word.wrapping_sub(SPACES) & !word;
    }
    // The last few bytes as the last eight, read again: no loop over them.
    let rest = words.remainder().len();
    if rest > 0 {
        let Some(last) = bytes.len().checked_sub(8) else {
            return bytes.iter().any(|&b| b < 0x20);
        };
        let mut chunk = [0; 8];
        chunk.copy_from_slice(&bytes[last..]);
        let word = u64::from_le_bytes(chunk);
        below |= word.wrapping_sub(SPACES) & !word;
    }
    below & HIGH != 0
}

/// The position of the closing quote of a string read from `from` (inside the string, not
/// within an escape), every escape checked (escape syntax, surrogate pairing); `None` when the
/// string is not valid or has no end.
///
/// Text with many escapes (a command's output: one every 15 bytes in the Codex recordings)
/// is read 64 bytes at a time, without a branch per escape: the block's quotes and backslashes
/// as bit masks, the escaped characters from the runs of backslashes (an odd run escapes the
/// character after it, carried into the next block), the string's end at the first quote not
/// escaped, and only then a look at each escaped character.
fn escaped_string_end(bytes: &[u8], from: usize) -> Option<usize> {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    let mut pos = from;
    // 1 when the first byte of the block is escaped by a backslash that ends the last one.
    let mut carry = 0u64;
    // Escapes before this position were read as the second half of a surrogate pair.
    let mut read_to = 0usize;
    loop {
        let rest = bytes.get(pos..)?;
        let mut padded = [0u8; 64];
        let block: &[u8; 64] = match rest.get(..64).and_then(|full| full.try_into().ok()) {
            Some(full) => full,
            None => {
                // Past the end, zeros: neither quotes nor backslashes.
                padded[..rest.len()].copy_from_slice(rest);
                &padded
            }
        };
        let (quotes, backslashes) = marks(block);
        let backslashes = backslashes & !carry;
        let follows = (backslashes << 1) | carry;
        // Runs of backslashes that start on an odd bit, then the sum that flips runs starting
        // on an even bit: the characters after odd runs are escaped.
        let odd_starts = backslashes & !EVEN & !follows;
        let (even_starts, overflow) = odd_starts.overflowing_add(backslashes);
        carry = u64::from(overflow);
        let escaped = (EVEN ^ (even_starts << 1)) & follows;
        let ends = quotes & !escaped;
        let inside = match ends {
            0 => u64::MAX,
            _ => (1u64 << ends.trailing_zeros()) - 1,
        };
        let mut check = escaped & inside;
        while check != 0 {
            let at = check.trailing_zeros() as usize;
            check &= check - 1;
            let after = block[at];
            if SIMPLE_ESCAPES[usize::from(after)] {
                continue;
            }
            let escape = pos + at - 1;
            if escape < read_to {
                continue;
            }
            if after != b'u' {
                return None;
            }
            read_to = unicode_escape_end(bytes, escape)?;
        }
        if ends != 0 {
            return Some(pos + ends.trailing_zeros() as usize);
        }
        if rest.len() <= 64 {
            return None;
        }
        pos += 64;
    }
}

/// The quotes and the backslashes of `block`, as bit masks (bit `i` for byte `i`).
#[inline(always)]
fn marks(block: &[u8; 64]) -> (u64, u64) {
    const LOW: u64 = u64::from_ne_bytes([0x7F; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of each byte of `word` that equals the byte of `pattern`: exact, as no
    // carry crosses a byte.
    let equal = |word: u64, pattern: u64| {
        let x = word ^ pattern;
        !(((x & LOW).wrapping_add(LOW)) | x) & HIGH
    };
    // The eight high bits of `flags` as the low eight bits.
    let gather = |flags: u64| ((flags >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56;
    let (mut quotes, mut backslashes) = (0u64, 0u64);
    for (i, word) in block.chunks_exact(8).enumerate() {
        let mut chunk = [0; 8];
        chunk.copy_from_slice(word);
        let word = u64::from_le_bytes(chunk);
        quotes |= gather(equal(word, u64::from_ne_bytes([b'"'; 8]))) << (8 * i);
        backslashes |= gather(equal(word, u64::from_ne_bytes([b'\\'; 8]))) << (8 * i);
    }
    (quotes, backslashes)
}

/// The position of the first `"` or `\` in `bytes` from `from`: eight bytes at a time for
/// the short runs between escapes, then `memchr` for long ones.
#[inline(always)]
fn quote_or_backslash(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    let mut pos = from;
    for _ in 0..8 {
        let Some(word) = bytes.get(pos..pos + 8) else {
            break;
        };
        let mut chunk = [0; 8];
        chunk.copy_from_slice(word);
        let word = u64::from_le_bytes(chunk);
        // A byte is zero in `x` exactly where it matches; the lowest flagged byte is exact.
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
        let found = zero(word ^ QUOTES) | zero(word ^ BACKSLASHES);
        if found != 0 {
            return Some(pos + (found.trailing_zeros() / 8) as usize);
        }
        pos += 8;
    }
    memchr::memchr2(b'"', b'\\', bytes.get(pos..)?).map(|at| pos + at)
}

#[cfg(test)]
mod scan_tests {
    use serde::de;
    use serde_json::Value;

    use super::super::FieldsSeed;
    use super::*;

    fn scans(text: &str) -> bool {
        Scan::new(text)
            .and_then(|mut scan| {
                scan.skip()?;
                scan.end()
            })
            .is_some()
    }

    /// S2: whatever `Scan` accepts, `Value` accepts; what it refuses the checked path decides.
    #[test]
    fn s2_scan_accepts_only_what_value_accepts() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        let cases: [(&str, bool); 34] = [
            (
                r#"{"a":[1,-2,3.5,-0.25e-7,1E+99,true,false,null,"x"]}"#,
                true,
            ),
            (r#" { "a" : [ ] , "b" : { } } "#, true),
            (r#"["\ud83d\ude00","\u00e9\n\t\"\\\/\b\f\r"]"#, true),
            (r#"["\uD83D\uDE00", "\uffff"]"#, true),
            (r#"["\ud800"]"#, false),
            (r#"["\ud800x"]"#, false),
            (r#"["\ud800\n"]"#, false),
            (r#"["\ud800\u0041"]"#, false),
            (r#"["\ud800\ud800"]"#, false),
            (r#"["\udc00"]"#, false),
            (r#"["\ude00\ud83d"]"#, false),
            (r#"["\u12"]"#, false),
            (r#"["\u12g4"]"#, false),
            (r#"["\x"]"#, false),
            ("[\"a\u{1f}\"]", false),
            ("[1,\t2]", false),
            ("[1e400]", false),
            ("[1e99]", true),
            ("[1e100]", false),
            ("[123456789012345678]", true),
            ("[1234567890123456789]", false),
            ("[01]", false),
            ("[1.]", false),
            ("[.5]", false),
            ("[-]", false),
            ("[1,]", false),
            (r#"{"a":1,}"#, false),
            (r#"{"a" 1}"#, false),
            (r#"{"\u0061":1}"#, false),
            ("[nul]", false),
            ("[1] x", false),
            (&deep(100), true),
            (&deep(101), false),
            (&deep(128), false),
        ];
        for (text, scanned) in cases {
            assert_eq!(scans(text), scanned, "{text}");
            if scanned {
                assert!(serde_json::from_str::<Value>(text).is_ok(), "{text}");
            }
        }
    }

    #[test]
    fn has_control_finds_any_byte_below_0x20() {
        for len in 0..40usize {
            for at in 0..len {
                for byte in [0u8, 0x09, 0x1f, 0x20, 0x7f, 0x80, 0xff] {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = byte;
                    assert_eq!(has_control(&bytes), byte < 0x20, "{len} {at} {byte}");
                }
            }
            assert!(!has_control(&vec![0xa0; len]));
        }
    }

    #[test]
    fn strings_decode_as_serde_decodes() {
        let long = format!("{}\\n{}\\\"", "a".repeat(70), "é".repeat(40));
        for inner in [
            "",
            "plain",
            r#"a\nb\tc\\d\/e\"f\b\f\r"#,
            r"\u00e9\u0041\uffff\u0000",
            r"x\ud83d\ude00y\uD834\uDD1E",
            r"\\u0041",
            "日本\\n語",
            "1234567\\\"",
            "12345678\\\"",
            &long,
        ] {
            let text = format!("\"{inner}\"");
            let expected: String = serde_json::from_str(&text).unwrap();
            let mut scan = Scan::new(&text).unwrap();
            assert_eq!(
                scan.loose().unwrap().as_str(),
                Some(expected.as_str()),
                "{text}"
            );
            scan.end().unwrap();
        }
    }

    /// The end of a string read one escape at a time (as `Scan` read strings before reading
    /// escaped ones by blocks): the reference [`escaped_string_end`] must agree with.
    fn stepwise_string_end(bytes: &[u8], from: usize) -> Option<usize> {
        let mut pos = from;
        loop {
            pos += bytes
                .get(pos..)?
                .iter()
                .position(|&b| b == b'"' || b == b'\\')?;
            if bytes[pos] == b'"' {
                return Some(pos);
            }
            match *bytes.get(pos + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => pos += 2,
                b'u' => pos = unicode_escape_end(bytes, pos)?,
                _ => return None,
            }
        }
    }

    /// Strings full of escapes, at every offset from a 64-byte block's start: the block reader
    /// finds the end exactly where reading one escape at a time does, or fails where it fails.
    #[test]
    fn escaped_strings_end_where_read_one_escape_at_a_time() {
        let pieces: [&[u8]; 16] = [
            b"\\",
            b"\"",
            b"a",
            b"u",
            b"\\u",
            b"d800",
            b"dc00",
            b"D83D",
            b"DE00",
            b"00e9",
            b"n",
            b"\\\\",
            b"\\\"",
            b"x",
            b"\\n",
            b"\\ud83d\\ude00",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut ends = 0;
        for _ in 0..20_000 {
            let pad = 1 + (next() % 70) as usize;
            let mut text = vec![b'a'; pad - 1];
            text.push(b'"');
            text.extend_from_slice(b"\\n");
            for _ in 0..next() % 60 {
                text.extend_from_slice(pieces[(next() % 16) as usize]);
            }
            let expected = stepwise_string_end(&text, pad);
            ends += usize::from(expected.is_some());
            assert_eq!(
                escaped_string_end(&text, pad),
                expected,
                "{}",
                String::from_utf8_lossy(&text)
            );
            // Through `Scan`, which reads the first escapes one at a time, then by blocks.
            let Ok(quoted) = std::str::from_utf8(&text[pad - 1..]) else {
                continue;
            };
            let mut scan = Scan::new(quoted).unwrap();
            let read = scan.string().map(|(inside, _)| inside.len() + pad);
            assert_eq!(read, expected, "{quoted}");
        }
        // Both outcomes are exercised.
        assert!(ends > 1_000 && ends < 19_000, "{ends}");
    }

    #[test]
    fn quote_or_backslash_finds_the_first() {
        for len in 0..90usize {
            for (mark, at) in [(b'"', len / 2), (b'\\', len.saturating_sub(1)), (b'x', 0)] {
                let mut bytes = vec![b'a'; len];
                if len > 0 && mark != b'x' {
                    bytes[at] = mark;
                    // A later mark, and bytes just either side of the ones sought.
                    bytes.extend_from_slice(b"!#[]\"");
                }
                let naive = bytes.iter().position(|&b| b == b'"' || b == b'\\');
                assert_eq!(quote_or_backslash(&bytes, 0), naive, "{len} {at}");
            }
        }
    }

    #[test]
    fn depth_exceeds_counts_nesting_not_brackets() {
        assert!(!depth_exceeds("[[]]", 2));
        assert!(depth_exceeds("[[[]]]", 2));
        assert!(!depth_exceeds(r#"["[[[[", [], []]"#, 2));
    }

    #[test]
    fn max_depth_skips_strings() {
        assert_eq!(max_depth(r#"["\"[", {"x": [[]]}]"#), 4);
        assert_eq!(max_depth(r#""unterminated [[["#), 0);
    }

    #[test]
    fn loose_and_fields_read_as_serde_does() {
        let text = r#"{"s":"a\u00e9","n":-3,"f":2.5e2,"u":9007199254740993,"o":{"x":[1]},"s":"b","z":-0,"i":0,"e":1e2}"#;
        const NAMES: [&str; 9] = ["s", "n", "f", "u", "o", "absent", "z", "i", "e"];
        let mut scan = Scan::new(text).unwrap();
        let fields = scan.fields(&NAMES).unwrap();
        scan.end().unwrap();
        let mut reader = serde_json::Deserializer::from_str(text);
        let seed = FieldsSeed(&NAMES);
        let expected = de::DeserializeSeed::deserialize(seed, &mut reader).unwrap();
        assert_eq!(fields, expected);
        let mut scan = Scan::new(r#""x\n""#).unwrap();
        assert_eq!(scan.loose(), Some(Loose::Str(Cow::Owned("x\n".into()))));
        let mut scan = Scan::new("[1]").unwrap();
        assert_eq!(scan.fields(&["a"]), Some(None));
        let mut scan = Scan::new(r#"{"a":1 ,"b":[2]} "#).unwrap();
        let (fields, text) = scan.fields_and_text(&["b"]).unwrap();
        assert_eq!(
            (fields, text),
            (Some([Loose::Array]), r#"{"a":1 ,"b":[2]}"#)
        );
        assert_eq!(
            Scan::new(r#"{"a":[1, 2]}"#).unwrap().raw(),
            Some(r#"{"a":[1, 2]}"#)
        );
    }
}
