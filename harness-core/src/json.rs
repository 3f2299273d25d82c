//! Fast, exact JSON decoding helpers for backends.
//!
//! SPEC S2 defines a JSON line as one that `serde_json` parses into a `Value`. Parsing every line
//! into a `Value` is slow (every string and map is allocated), so backends deserialize borrowed,
//! typed views that skip what they never read. Skipping, however, checks less than building a
//! `Value` does: `serde_json` does not pair surrogate escapes, range-check numbers or count
//! nesting in values it skips (strings it borrows are checked). [`typed_view_is_exact`] makes up
//! the difference: when it returns `true`, a line that deserializes into a typed view also
//! parses into a `Value`, so the typed view may stand in for it. When it returns `false`, the
//! caller takes the slow, exact path (parse a `Value`), so the check may be conservative.
//!
//! [`Loose`] is a field type that accepts any JSON value and keeps the scalars, so that a field
//! of an unexpected type never fails a typed view (the SPEC maps such fields to events).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Number;

/// Nesting deeper than this is left to the exact path (`serde_json` rejects 128 levels).
const MAX_FAST_DEPTH: usize = 100;
/// Numbers longer than this (in characters) are left to the exact path: only very long numbers
/// can overflow an `f64`.
const MAX_FAST_NUMBER: usize = 20;

/// Whether a typed view of `text` can be trusted to agree with `serde_json::Value` parsing.
///
/// It returns `false` (take the exact path) when `text` has nesting deeper than 100 levels, a
/// number written with an exponent or longer than 20 characters, or a `\u` escape in the
/// surrogate range. Everything else `Value` parsing rejects (syntax errors, control characters
/// in strings, bad escapes) a typed view rejects too. Linear in the length of `text`.
///
/// ```
/// use harness_core::json::typed_view_is_exact;
///
/// assert!(typed_view_is_exact(r#"{"a":[1,2.5,"x\n"],"b":true}"#));
/// assert!(!typed_view_is_exact(r#"{"a":1e400}"#));
/// assert!(!typed_view_is_exact(r#"{"a":"\ud800"}"#));
/// ```
pub fn typed_view_is_exact(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                // Inside a string: jump from escape to escape.
                loop {
                    let Some(at) = memchr::memchr2(b'"', b'\\', &bytes[i..]) else {
                        return true; // Unterminated: the typed view fails on its own.
                    };
                    i += at;
                    if bytes[i] == b'"' {
                        i += 1;
                        break;
                    }
                    // A backslash: look at the escape.
                    match bytes.get(i + 1) {
                        Some(b'u') => {
                            let hi = bytes.get(i + 2).copied().unwrap_or(b'0');
                            let next = bytes.get(i + 3).copied().unwrap_or(b'0');
                            if matches!(hi, b'd' | b'D')
                                && matches!(next, b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
                            {
                                return false;
                            }
                            i += 2;
                        }
                        Some(_) => i += 2,
                        None => return true,
                    }
                }
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_FAST_DEPTH {
                    return false;
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'0'..=b'9' | b'.' | b'-' | b'+') {
                    i += 1;
                }
                if i < bytes.len() && matches!(bytes[i], b'e' | b'E') {
                    return false;
                }
                if i - start > MAX_FAST_NUMBER {
                    return false;
                }
            }
            _ => i += 1,
        }
    }
    true
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
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Loose::Array)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
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

    #[test]
    fn s2_exact_check_sends_what_skipping_misses_to_the_exact_path() {
        let deep = format!("{}{}", "[".repeat(128), "]".repeat(128));
        assert!(!typed_view_is_exact(&deep));
        assert!(!typed_view_is_exact(r#"{"a":1E5}"#));
        assert!(!typed_view_is_exact(r#"{"a":123456789012345678901234}"#));
        assert!(!typed_view_is_exact(r#"{"a":"x\uDC00"}"#));
        assert!(typed_view_is_exact(r#"{"a":"\u00e9 \\u d800"}"#));
        assert!(typed_view_is_exact(r#"{"a":"\"[[[["}"#));
        assert!(typed_view_is_exact(r#"{"true":false,"n":-12.5}"#));
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
