//! Fast, exact JSON decoding helpers for backends.
//!
//! SPEC S2 defines a JSON line as one that `serde_json` parses into a `Value`. Building a
//! `Value` for every line is slow (every string and map is allocated), so backends read
//! borrowed, typed views that keep only what their rules read. A view must still accept exactly
//! the lines `Value` accepts: `serde_json`'s own skipping (`IgnoredAny`) checks less than
//! building a `Value` does (it does not pair surrogate escapes, range-check numbers or count
//! nesting), so views skip with [`Checked`] instead, which goes through the very checks a
//! `Value` goes through, without allocating.
//!
//! [`Loose`] is a field type that accepts any JSON value and keeps the scalars, so that a field
//! of an unexpected type never fails a view (the SPEC maps such fields to events).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// Skips one JSON value, checking it exactly as parsing it into a `serde_json::Value` would:
/// strings (escapes, surrogate pairs), numbers (range) and nesting (the depth limit) are all
/// read through `serde_json`'s own code, but nothing is kept.
///
/// ```
/// use harness_agents_core::backend::json::Checked;
///
/// assert!(serde_json::from_str::<Checked>(r#"{"a":[1,"x\n",{"b":null}]}"#).is_ok());
/// assert!(serde_json::from_str::<serde::de::IgnoredAny>(r#"[1e400]"#).is_ok());
/// assert!(serde_json::from_str::<Checked>(r#"[1e400]"#).is_err());
/// assert!(serde_json::from_str::<Checked>(r#"["\ud800"]"#).is_err());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CheckedVisitor;

        impl<'de> Visitor<'de> for CheckedVisitor {
            type Value = Checked;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_unit<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_none<E>(self) -> Result<Checked, E> {
                Ok(Checked)
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Checked, D::Error> {
                Checked::deserialize(d)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Checked)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Checked)
            }
        }

        deserializer.deserialize_any(CheckedVisitor)
    }
}

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

/// Any JSON value, keeping scalars and only the shape of containers.
///
/// Strings are borrowed from the input when they hold no escape. Use it for fields whose type
/// the SPEC does not guarantee: a typed view with `Loose` fields fails only on syntax (and on a
/// repeated known key, which the exact path then resolves as `Value` does: the last one wins).
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Loose<'a> {
    /// The field is not there.
    #[default]
    Absent,
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    Str(Cow<'a, str>),
    /// A list (its items skipped).
    Array,
    /// An object (its members skipped).
    Object,
}

impl<'a> Loose<'a> {
    /// The string, when it is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The string when it is one and not empty.
    pub fn non_empty_str(&self) -> Option<&str> {
        self.as_str().filter(|s| !s.is_empty())
    }

    /// Whether it is exactly `true`.
    pub fn is_true(&self) -> bool {
        matches!(self, Loose::Bool(true))
    }

    /// Whether the field is absent or `null`.
    pub fn is_absent_or_null(&self) -> bool {
        matches!(self, Loose::Absent | Loose::Null)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LooseVisitor;

        impl<'de> Visitor<'de> for LooseVisitor {
            type Value = Loose<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }

            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(Loose::Bool(v))
            }

            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(Loose::Number(v.into()))
            }

            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(Loose::Number(v.into()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                Number::from_f64(v)
                    .map(Loose::Number)
                    .ok_or_else(|| E::custom("number out of range"))
            }

            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Loose::Str(Cow::Borrowed(v)))
            }

            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Loose::Str(Cow::Owned(v.to_string())))
            }

            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Loose::Str(Cow::Owned(v)))
            }

            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Loose::Null)
            }

            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Loose::Null)
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
                Loose::deserialize(d)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(Loose::Array)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                Ok(Loose::Object)
            }
        }

        deserializer.deserialize_any(LooseVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// S2: what `Value` rejects, a view with `Checked` and `Loose` fields rejects too.
    #[test]
    fn s2_checked_rejects_what_value_rejects() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        for text in [
            r#"[1e400]"#,
            r#"[-1e400]"#,
            r#"["\ud800"]"#,
            r#"["\udc00x"]"#,
            r#"{"a":"\ud800","a":"ok"}"#,
            r#"[1,]"#,
            "[\"\u{1}\"]",
            &deep(128),
            &deep(127),
            r#"[1e308, 123456789012345678901234567890, "\ud83d\ude00"]"#,
        ] {
            let value = serde_json::from_str::<Value>(text).is_ok();
            assert_eq!(
                serde_json::from_str::<Checked>(text).is_ok(),
                value,
                "{text}"
            );
            assert_eq!(
                serde_json::from_str::<Loose<'_>>(text).is_ok(),
                value,
                "{text}"
            );
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
    fn loose_keeps_scalars_and_skips_containers() {
        let v: Vec<Loose<'_>> =
            serde_json::from_str(r#"[null,true,3,-1.5,"a","b\n",[1,[2]],{"x":{}}]"#).unwrap();
        assert_eq!(
            v,
            [
                Loose::Null,
                Loose::Bool(true),
                Loose::Number(3.into()),
                Loose::Number(Number::from_f64(-1.5).unwrap()),
                Loose::Str(Cow::Borrowed("a")),
                Loose::Str(Cow::Owned("b\n".into())),
                Loose::Array,
                Loose::Object,
            ]
        );
        assert!(matches!(v[4], Loose::Str(Cow::Borrowed(_))));
        let value = Value::from("s");
        let from_value: Loose<'_> = Loose::deserialize(&value).unwrap();
        assert_eq!(from_value.as_str(), Some("s"));
    }
}

/// A map key, borrowed from the input when it holds no escape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key<'a>(pub Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The named fields of a JSON value, each [`Loose`], in the order of the names; `None` when
/// the value is not an object. A repeated key keeps its last value (as in a
/// `serde_json::Value`); other members are skipped, [`Checked`].
///
/// ```
/// use harness_agents_core::backend::json::{FieldsSeed, Loose};
/// use serde::de::DeserializeSeed;
///
/// let mut reader = serde_json::Deserializer::from_str(r#"{"a":1,"b":"x","a":true,"c":[]}"#);
/// let [a, b] = FieldsSeed(&["a", "b"]).deserialize(&mut reader).unwrap().unwrap();
/// assert_eq!((a, b.as_str()), (Loose::Bool(true), Some("x")));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FieldsSeed<const N: usize>(pub &'static [&'static str; N]);

impl<'de, const N: usize> de::DeserializeSeed<'de> for FieldsSeed<N> {
    type Value = Option<[Loose<'de>; N]>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        struct FieldsVisitor<const N: usize>(&'static [&'static str; N]);
        impl<'de, const N: usize> Visitor<'de> for FieldsVisitor<N> {
            type Value = Option<[Loose<'de>; N]>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields: [Loose<'de>; N] = std::array::from_fn(|_| Loose::Absent);
                while let Some(Key(key)) = map.next_key()? {
                    match self.0.iter().position(|name| *name == key) {
                        Some(i) => fields[i] = map.next_value()?,
                        None => {
                            map.next_value::<Checked>()?;
                        }
                    }
                }
                Ok(Some(fields))
            }
        }
        deserializer.deserialize_any(FieldsVisitor(self.0))
    }
}

/// A borrowed view of some fields of a JSON object, made by [`crate::json_view!`].
pub trait JsonView<'de>: Sized {
    /// Reads the view from one JSON value in one checked pass; `None` when it is not an
    /// object.
    fn view<D: Deserializer<'de>>(deserializer: D) -> Result<Option<Self>, D::Error>;
}

/// A [`JsonView`] as a `DeserializeSeed` (for `next_value_seed` and `next_element_seed`).
pub struct ViewSeed<T>(std::marker::PhantomData<T>);

impl<T> ViewSeed<T> {
    /// The seed of view `T`.
    pub fn new() -> Self {
        ViewSeed(std::marker::PhantomData)
    }
}

impl<T> Default for ViewSeed<T> {
    fn default() -> Self {
        ViewSeed::new()
    }
}

impl<'de, T: JsonView<'de>> de::DeserializeSeed<'de> for ViewSeed<T> {
    type Value = Option<T>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        T::view(deserializer)
    }
}

/// Reads the view from JSON text; `None` when the text is not JSON or not an object.
pub fn view_of<'de, T: JsonView<'de>>(text: &'de str) -> Option<T> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let view = T::view(&mut reader).ok()?;
    reader.end().ok()?;
    view
}

#[doc(hidden)]
pub const fn one(_: &str) -> usize {
    1
}

#[doc(hidden)]
pub use serde as __serde;

/// Declares a borrowed view of some fields of a JSON object: a struct of [`Loose`] fields, each
/// read from the key given, with a [`JsonView`] impl that reads them in one checked pass (a
/// repeated key keeps its last value, other members are skipped with [`Checked`], so the view
/// fails exactly where a `serde_json::Value` would).
///
/// ```
/// use harness_agents_core::backend::json::{JsonView, view_of};
///
/// harness_agents_core::json_view! {
///     /// A tool call.
///     pub struct Call<'a> {
///         /// `name`.
///         name: "name",
///         /// `id`.
///         id: "call_id",
///     }
/// }
///
/// let call: Call<'_> = view_of(r#"{"name":"read","call_id":"c1","input":{"x":[1]}}"#).unwrap();
/// assert_eq!(call.name.as_str(), Some("read"));
/// assert_eq!(call.id.as_str(), Some("c1"));
/// assert!(view_of::<Call<'_>>("[1]").is_none());
/// ```
#[macro_export]
macro_rules! json_view {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<$lt:lifetime> {
            $( $(#[$fmeta:meta])* $field:ident: $key:literal ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        $vis struct $name<$lt> {
            $( $(#[$fmeta])* pub $field: $crate::backend::json::Loose<$lt>, )*
        }

        impl<'de> $crate::backend::json::JsonView<'de> for $name<'de> {
            fn view<D: $crate::backend::json::__serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::core::result::Result<::core::option::Option<Self>, D::Error> {
                const KEYS: [&str; 0 $(+ $crate::backend::json::one($key))*] = [$($key),*];
                let fields = $crate::backend::json::__serde::de::DeserializeSeed::deserialize(
                    $crate::backend::json::FieldsSeed(&KEYS),
                    deserializer,
                )?;
                ::core::result::Result::Ok(fields.map(|[$($field),*]| $name { $($field),* }))
            }
        }
    };
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
/// ([`Checked`], a [`JsonView`]), which decides. Strings are checked in full: escape syntax and
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
    fn string(&mut self) -> Option<(&'a str, bool)> {
        self.eat(b'"')?;
        let bytes = self.bytes();
        let start = self.pos;
        let mut pos = start;
        let mut escaped = false;
        loop {
            pos = quote_or_backslash(bytes, pos)?;
            if bytes[pos] == b'"' {
                self.pos = pos + 1;
                return Some((&self.text[start..pos], escaped));
            }
            escaped = true;
            let after = *bytes.get(pos + 1)?;
            // A table rather than a `match`: one well-predicted branch for the common escapes.
            if SIMPLE_ESCAPES[usize::from(after)] {
                pos += 2;
                continue;
            }
            match after {
                b'u' => {
                    let unit = hex_unit(bytes, pos)?;
                    pos += 6;
                    match unit {
                        // A trailing surrogate must follow a leading one.
                        0xDC00..=0xDFFF => return None,
                        0xD800..=0xDBFF => {
                            let next = hex_unit(bytes, pos)?;
                            if !(0xDC00..=0xDFFF).contains(&next) {
                                return None;
                            }
                            pos += 6;
                        }
                        _ => {}
                    }
                }
                _ => return None,
            }
        }
    }

    /// The text of a string [`Scan::string`] read, with its escapes decoded.
    fn unescape(raw: &str) -> Option<String> {
        let bytes = raw.as_bytes();
        let mut text = String::with_capacity(raw.len());
        let mut pos = 0;
        while let Some(at) = memchr::memchr(b'\\', &bytes[pos..]) {
            text.push_str(raw.get(pos..pos + at)?);
            pos += at;
            let decoded = match *bytes.get(pos + 1)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let unit = u32::from(hex_unit(bytes, pos)?);
                    if (0xD800..=0xDBFF).contains(&unit) {
                        pos += 6;
                        let low = u32::from(hex_unit(bytes, pos)?);
                        char::from_u32(
                            0x10000 + ((unit - 0xD800) << 10) + (low.checked_sub(0xDC00)?),
                        )?
                    } else {
                        char::from_u32(unit)?
                    }
                }
                _ => return None,
            };
            pos += if bytes[pos + 1] == b'u' { 6 } else { 2 };
            text.push(decoded);
        }
        text.push_str(raw.get(pos..)?);
        Some(text)
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
                (text, true) => Some(Loose::Str(Cow::Owned(Self::unescape(text)?))),
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

    /// The named fields of one value, as [`FieldsSeed`] reads them: `Some(None)` when the value
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

/// The bytes that follow a backslash in a one-character escape.
const SIMPLE_ESCAPES: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let escapes = *b"\"\\/bfnrt";
    while i < escapes.len() {
        table[escapes[i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether `bytes` hold a byte below 0x20; eight bytes at a time, in a loop that vectorizes.
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
    below & HIGH != 0 || words.remainder().iter().any(|&b| b < 0x20)
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
    use super::*;
    use serde_json::Value;

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
