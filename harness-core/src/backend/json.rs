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

/// A borrowed view of some fields of a JSON object, declared with [`crate::json_view!`]: it
/// reads its fields member by member, on the checked path (through `serde_json`) and on the
/// fast path ([`Scan`]), from the same declaration.
///
/// Fields marked `if costly` in the declaration are read only when `costly` is set (for values
/// few lines need and that cost much to keep); otherwise they are skipped like unknown members.
pub trait JsonView<'de>: Default {
    /// Reads the value of `key` from `map` into its field when `key` names one (a later value
    /// of the same key replaces it); `false` leaves the value unread, for the caller to skip.
    fn read_member<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        costly: bool,
    ) -> Result<bool, A::Error>;

    /// [`JsonView::read_member`] on the fast path: `Some(false)` leaves the value unread;
    /// `None` when unsure.
    fn scan_member(&mut self, key: &str, scan: &mut Scan<'de>, costly: bool) -> Option<bool>;

    /// Reads the members of the object `scan` is at into the view (fields it does not name
    /// are skipped); `None` when unsure or when the value is not an object.
    fn scan_members(&mut self, scan: &mut Scan<'de>, costly: bool) -> Option<()> {
        scan.members(|scan, key| {
            if !self.scan_member(key, scan, costly)? {
                scan.skip()?;
            }
            Some(())
        })
    }

    /// Reads the view from one JSON value in one checked pass; `None` when it is not an
    /// object.
    fn view<D: Deserializer<'de>>(deserializer: D) -> Result<Option<Self>, D::Error> {
        let mut view = None;
        Member::read(&mut view, deserializer, false)?;
        Ok(view)
    }
}

/// The type of a field of a [`JsonView`]: how one member's value is read into the field, in
/// place, on the checked path and on the fast path. Both must read the same value, and the
/// checked one must fail exactly where a `serde_json::Value` would (S2).
///
/// [`Loose`] keeps any value's scalars; `Option<T>` of a view `T` is `Some` when the value is
/// an object (read in place, a repeated key's last object replacing the view) and `None`
/// otherwise; `Option<serde_json::Value>` keeps the value whole.
pub trait Member<'de>: Default {
    /// Reads the value from `deserializer`; `costly` is passed on to nested views.
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, costly: bool)
    -> Result<(), D::Error>;

    /// Reads the value with the fast reader; `None` when unsure.
    fn scan(&mut self, scan: &mut Scan<'de>, costly: bool) -> Option<()>;
}

impl<'de> Member<'de> for Loose<'de> {
    #[inline]
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        *self = Loose::deserialize(deserializer)?;
        Ok(())
    }

    #[inline]
    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        *self = scan.loose()?;
        Some(())
    }
}

/// A string member an event keeps whole, such as an agent message's text (S7). The fast reader
/// keeps an escaped string as written, so that [`Text::shared`] decodes it once, straight into
/// the `Arc<str>` the event holds (a decoded `String` copied into the `Arc` would hold the text
/// twice beside its line); any other value is a [`Loose`].
#[derive(Clone, Default)]
pub struct Text<'a> {
    loose: Loose<'a>,
    /// The inside of an escaped string, as written: the fast reader checked it.
    escaped: Option<&'a str>,
}

impl<'a> Text<'a> {
    /// The string, decoded (an escaped one into a `String` of exactly its length), when it is
    /// one and not empty.
    pub fn non_empty_str(&self) -> Option<Cow<'a, str>> {
        match self.escaped {
            Some(inside) => crate::backend::unescape::exact_string(inside)
                .or_else(|| Scan::unescape(inside))
                .map(Cow::Owned),
            None => match &self.loose {
                Loose::Str(text) if !text.is_empty() => Some(text.clone()),
                _ => None,
            },
        }
    }

    /// The string as the `Arc<str>` an event holds, when it is one and not empty: an escaped
    /// one is decoded into it directly, a plain one copied once.
    pub fn shared(&self) -> Option<std::sync::Arc<str>> {
        match self.escaped {
            // An escape decodes to a character, so the text is not empty.
            Some(inside) => crate::backend::unescape::shared_text(inside)
                .or_else(|| Scan::unescape(inside).map(std::sync::Arc::from)),
            None => self.loose.non_empty_str().map(std::sync::Arc::from),
        }
    }
}

/// Shown as its value (a [`Loose`]), however it was read.
impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value().fmt(f)
    }
}

/// Equal when they hold the same value, however it was read.
impl PartialEq for Text<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}

impl<'a> Text<'a> {
    /// The value as a [`Loose`], an escaped string decoded.
    pub fn value(&self) -> Loose<'a> {
        match self.escaped {
            Some(inside) => {
                Scan::unescape(inside).map_or(Loose::Absent, |text| Loose::Str(Cow::Owned(text)))
            }
            None => self.loose.clone(),
        }
    }
}

impl<'de> Member<'de> for Text<'de> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        *self = Text {
            loose: Loose::deserialize(deserializer)?,
            escaped: None,
        };
        Ok(())
    }

    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        *self = match scan.peek()? {
            b'"' => match scan.string()? {
                (inside, true) => Text {
                    loose: Loose::Absent,
                    escaped: Some(inside),
                },
                (text, false) => Text {
                    loose: Loose::Str(Cow::Borrowed(text)),
                    escaped: None,
                },
            },
            _ => Text {
                loose: scan.loose()?,
                escaped: None,
            },
        };
        Some(())
    }
}

impl<'de> Member<'de> for Option<serde_json::Value> {
    fn read<D: Deserializer<'de>>(&mut self, deserializer: D, _: bool) -> Result<(), D::Error> {
        *self = Some(serde_json::Value::deserialize(deserializer)?);
        Ok(())
    }

    /// The value's text, which [`Scan`] found surely JSON, parsed on its own.
    fn scan(&mut self, scan: &mut Scan<'de>, _: bool) -> Option<()> {
        *self = Some(serde_json::from_str(scan.raw()?).ok()?);
        Some(())
    }
}

impl<'de, T: JsonView<'de>> Member<'de> for Option<T> {
    fn read<D: Deserializer<'de>>(
        &mut self,
        deserializer: D,
        costly: bool,
    ) -> Result<(), D::Error> {
        deserializer.deserialize_any(ObjectVisitor { slot: self, costly })
    }

    fn scan(&mut self, scan: &mut Scan<'de>, costly: bool) -> Option<()> {
        if scan.peek()? != b'{' {
            scan.skip()?;
            *self = None;
            return Some(());
        }
        // A repeated key: its last value replaces the whole view.
        self.insert(T::default()).scan_members(scan, costly)
    }
}

/// Reads a view `T` into its slot, in place (views can be large, and moving them costs more
/// than reading most of them): `Some` when the value is an object, `None` (checked and
/// skipped) otherwise.
struct ObjectVisitor<'v, T> {
    slot: &'v mut Option<T>,
    costly: bool,
}

impl<'v, T> ObjectVisitor<'v, T> {
    fn other<E>(self) -> Result<(), E> {
        *self.slot = None;
        Ok(())
    }
}

impl<'de, T: JsonView<'de>> Visitor<'de> for ObjectVisitor<'_, T> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        self.other()
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        self.other()
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        self.other()
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        self.other()
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        self.other()
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.other()
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.other()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        self.other()
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A repeated key: its last value replaces the whole view.
        let view = self.slot.insert(T::default());
        while let Some(Key(key)) = map.next_key()? {
            if !view.read_member(&key, &mut map, self.costly)? {
                map.next_value::<Checked>()?;
            }
        }
        Ok(())
    }
}

/// A [`Member`] read in place as a `DeserializeSeed` (for `next_value_seed`).
#[doc(hidden)]
pub struct MemberSeed<'v, M>(pub &'v mut M, pub bool);

impl<'de, M: Member<'de>> de::DeserializeSeed<'de> for MemberSeed<'_, M> {
    type Value = ();

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.0.read(deserializer, self.1)
    }
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

/// Reads JSON text that holds an object into `view` with the fast reader ([`Scan`]); `None`
/// when unsure (`view` then partly read), and the caller reads the text the checked way
/// ([`view_of`], [`JsonView::view`]), which decides.
pub fn scan_into<'de, T: JsonView<'de>>(text: &'de str, view: &mut T, costly: bool) -> Option<()> {
    let mut scan = Scan::new(text)?;
    view.scan_members(&mut scan, costly)?;
    scan.end()
}

#[doc(hidden)]
pub use serde as __serde;

/// Declares a borrowed view of some fields of a JSON object: a struct with a field per entry,
/// each read from the key given, and its [`JsonView`] impl, which reads them in one pass, on
/// the checked path (a repeated key keeps its last value, other members are skipped with
/// [`Checked`], so the view fails exactly where a `serde_json::Value` would) and on the fast
/// path ([`Scan`]), which reads the same.
///
/// An entry is `field: "key"`, a [`Loose`] field, then optionally `if costly` (the field is
/// read only when the view is read with `costly` set, see [`JsonView`]), then at most one of:
/// - `. "name"`: the member `name` of the value, when that is an object ([`Loose`]);
/// - `[NAMES]`: the members named in the constant array `NAMES`, in its order, when the value
///   is an object (`Option<[Loose; N]>`);
/// - `=> Type`: any [`Member`] type, such as `Option<View>` of another view.
///
/// ```
/// use harness_agents_core::backend::json::{JsonView, Loose, scan_into, view_of};
///
/// const USAGE: [&str; 2] = ["input", "output"];
///
/// harness_agents_core::json_view! {
///     /// A tool call.
///     pub struct Call<'a> {
///         /// `name`.
///         name: "name",
///         /// `id`.
///         id: "call_id",
///         /// `error.message`.
///         error: "error"."message",
///         /// `usage`.
///         usage: "usage"[USAGE],
///         /// `input`, when an object.
///         input: "input" => Option<Input<'a>>,
///         /// `output`, read only when costly fields are asked for.
///         output: "output" if costly,
///     }
/// }
///
/// harness_agents_core::json_view! {
///     /// A call's input.
///     pub struct Input<'a> {
///         /// `path`.
///         path: "path",
///     }
/// }
///
/// let text = r#"{"name":"read","call_id":"c1","input":{"path":"a"},"error":{"message":"m"},"usage":{"output":2},"output":"x"}"#;
/// let call: Call<'_> = view_of(text).unwrap();
/// assert_eq!(call.name.as_str(), Some("read"));
/// assert_eq!(call.id.as_str(), Some("c1"));
/// assert_eq!(call.error.as_str(), Some("m"));
/// assert_eq!(call.usage, Some([Loose::Absent, Loose::Number(2.into())]));
/// assert_eq!(call.input.unwrap().path.as_str(), Some("a"));
/// assert_eq!(call.output, Loose::Absent);
/// assert!(view_of::<Call<'_>>("[1]").is_none());
///
/// let mut fast = Call::default();
/// scan_into(text, &mut fast, true).unwrap();
/// assert_eq!(fast.output.as_str(), Some("x"));
/// assert_eq!(fast.input.unwrap().path.as_str(), Some("a"));
/// ```
#[macro_export]
macro_rules! json_view {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident<$lt:lifetime> {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $key:literal
                $(if $costly:ident)?
                $(. $sub:literal)?
                $([$names:ident])?
                $(=> $ty:ty)?
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        $vis struct $name<$lt> {
            $(
                $(#[$fmeta])*
                pub $field: $crate::json_view!(@type $lt [$($sub)?] [$($names)?] [$($ty)?]),
            )*
        }

        impl<$lt> $crate::backend::json::JsonView<$lt> for $name<$lt> {
            #[inline]
            fn read_member<A: $crate::backend::json::__serde::de::MapAccess<$lt>>(
                &mut self,
                key: &str,
                map: &mut A,
                costly: bool,
            ) -> ::core::result::Result<bool, A::Error> {
                match key {
                    $(
                        $key $(if $crate::json_view!(@costly costly $costly))? => {
                            $crate::json_view!(
                                @read map, costly, self.$field, [$($sub)?] [$($names)?]
                            )
                        }
                    )*
                    _ => return ::core::result::Result::Ok(false),
                }
                ::core::result::Result::Ok(true)
            }

            #[inline]
            fn scan_member(
                &mut self,
                key: &str,
                scan: &mut $crate::backend::json::Scan<$lt>,
                costly: bool,
            ) -> ::core::option::Option<bool> {
                match key {
                    $(
                        $key $(if $crate::json_view!(@costly costly $costly))? => {
                            $crate::json_view!(
                                @scan scan, costly, self.$field, [$($sub)?] [$($names)?]
                            )
                        }
                    )*
                    _ => return ::core::option::Option::Some(false),
                }
                ::core::option::Option::Some(true)
            }
        }
    };
    (@type $lt:lifetime [] [] []) => { $crate::backend::json::Loose<$lt> };
    (@type $lt:lifetime [$sub:literal] [] []) => { $crate::backend::json::Loose<$lt> };
    (@type $lt:lifetime [] [$names:ident] []) => {
        ::core::option::Option<[$crate::backend::json::Loose<$lt>; $names.len()]>
    };
    (@type $lt:lifetime [] [] [$ty:ty]) => { $ty };
    // The marker is the word `costly` itself: any other word after `if` matches no arm.
    (@costly $costly:ident costly) => { $costly };
    (@read $map:ident, $costly:ident, $slot:expr, [] []) => {
        $map.next_value_seed($crate::backend::json::MemberSeed(&mut $slot, $costly))?
    };
    (@read $map:ident, $costly:ident, $slot:expr, [$sub:literal] []) => {
        $slot = $map
            .next_value_seed($crate::backend::json::FieldsSeed(&[$sub]))?
            .map(|[value]| value)
            .unwrap_or_default()
    };
    (@read $map:ident, $costly:ident, $slot:expr, [] [$names:ident]) => {
        $slot = $map.next_value_seed($crate::backend::json::FieldsSeed(&$names))?
    };
    (@scan $scan:ident, $costly:ident, $slot:expr, [] []) => {
        $crate::backend::json::Member::scan(&mut $slot, $scan, $costly)?
    };
    (@scan $scan:ident, $costly:ident, $slot:expr, [$sub:literal] []) => {
        $slot = $scan.fields(&[$sub])?.map(|[value]| value).unwrap_or_default()
    };
    (@scan $scan:ident, $costly:ident, $slot:expr, [] [$names:ident]) => {
        $slot = $scan.fields(&$names)?
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

    /// The text of a string [`Scan::string`] read, with its escapes decoded.
    fn unescape(raw: &str) -> Option<String> {
        let bytes = raw.as_bytes();
        let mut text = String::with_capacity(raw.len());
        let mut pos = 0;
        while let Some(at) = memchr::memchr(b'\\', &bytes[pos..]) {
            text.push_str(raw.get(pos..pos + at)?);
            pos += at;
            let (decoded, used) = super::unescape::escape(bytes, pos)?;
            text.push(decoded);
            pos += used;
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

/// The position after the escape whose backslash is at `at`, checked; `None` when it is not
/// valid.
#[inline]
fn escape_end(bytes: &[u8], at: usize) -> Option<usize> {
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

/// The position after the `\uXXXX` escape at `at`, and after its trailing surrogate when it
/// is a leading one; `None` when the escape is not valid or a surrogate is unpaired.
fn unicode_escape_end(bytes: &[u8], at: usize) -> Option<usize> {
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
pub(super) fn hex_unit(bytes: &[u8], at: usize) -> Option<u16> {
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

    const PAIR: [&str; 2] = ["a", "b"];

    crate::json_view! {
        /// Every kind of entry.
        #[derive(PartialEq)]
        struct Every<'a> {
            /// `k`.
            plain: "k",
            /// `e.m`.
            picked: "e"."m",
            /// `p.a`, `p.b`.
            named: "p"[PAIR],
            /// `v`, whole.
            whole: "v" => Option<serde_json::Value>,
            /// `n`, a view.
            nested: "n" => Option<Inner<'a>>,
            /// `c`, only when costly.
            costly: "c" if costly,
        }
    }

    crate::json_view! {
        /// A nested view.
        #[derive(PartialEq)]
        struct Inner<'a> {
            /// `k`.
            plain: "k",
            /// `c`, only when costly.
            costly: "c" if costly,
        }
    }

    crate::json_view! {
        /// A view with a kept text.
        #[derive(PartialEq)]
        struct Said<'a> {
            /// `t`.
            text: "t" => Text<'a>,
        }
    }

    /// S7: the fast reader keeps an escaped text as written, which decodes as the checked
    /// reader's; `shared` gives it, and nothing for an empty string or another value.
    #[test]
    fn a_kept_text_decodes_as_the_checked_reader_reads_it() {
        for (text, said) in [
            (
                r#"{"t":"a \"b\"\n\u00e9\ud83d\ude00"}"#,
                Some("a \"b\"\n\u{e9}\u{1f600}"),
            ),
            (r#"{"t":"plain"}"#, Some("plain")),
            (r#"{"t":""}"#, None),
            (r#"{"t":7}"#, None),
            (r#"{"u":"x"}"#, None),
        ] {
            let mut fast = Said::default();
            scan_into(text, &mut fast, false).unwrap();
            let mut checked: Option<Said<'_>> = None;
            let mut reader = serde_json::Deserializer::from_str(text);
            Member::read(&mut checked, &mut reader, false).unwrap();
            let checked = checked.unwrap();
            assert_eq!(fast, checked, "{text}");
            for view in [&fast, &checked] {
                assert_eq!(view.text.shared().as_deref(), said, "{text}");
                assert_eq!(view.text.non_empty_str().as_deref(), said, "{text}");
            }
        }
    }

    /// Both readers of a declared view read the same fields, where the fast one is sure.
    #[test]
    fn a_declared_view_reads_alike_on_both_paths() {
        let lines = [
            r#"{"k":1,"e":{"m":"x\n","z":[1]},"p":{"b":true,"a":null},"v":{"q":[1,{"r":2}]},"c":"y"}"#,
            r#"{"k":"a","k":"b","e":"not an object","p":[1],"v":null,"n":{"k":"in","c":"deep"}}"#,
            r#"{"n":{"k":1},"n":7,"e":{"m":1},"e":{"x":2}}"#,
            r#"{"n":7,"n":{"k":2,"c":"z"},"c":{"o":[]}}"#,
        ];
        for text in lines {
            for costly in [false, true] {
                let mut checked = None;
                let mut reader = serde_json::Deserializer::from_str(text);
                Member::read(&mut checked, &mut reader, costly).unwrap();
                let mut fast = Every::default();
                scan_into(text, &mut fast, costly).unwrap();
                assert_eq!(checked.as_ref(), Some(&fast), "{text} {costly}");
            }
        }
        let every: Every<'_> = view_of(lines[0]).unwrap();
        assert_eq!(every.plain, Loose::Number(1.into()));
        assert_eq!(every.picked.as_str(), Some("x\n"));
        assert_eq!(every.named, Some([Loose::Null, Loose::Bool(true)]));
        assert_eq!(every.whole, Some(serde_json::json!({"q": [1, {"r": 2}]})));
        assert_eq!(every.costly, Loose::Absent);
        let mut costly = Every::default();
        scan_into(lines[0], &mut costly, true).unwrap();
        assert_eq!(costly.costly.as_str(), Some("y"));
        let second: Every<'_> = view_of(lines[1]).unwrap();
        assert_eq!(second.plain.as_str(), Some("b"));
        assert_eq!((second.picked, second.named), (Loose::Absent, None));
        let nested = second.nested.unwrap();
        assert_eq!(nested.plain.as_str(), Some("in"));
        assert_eq!(nested.costly, Loose::Absent);
        // A repeated key's last value decides: an object, or none.
        let third: Every<'_> = view_of(lines[2]).unwrap();
        assert!(third.nested.is_none());
        assert_eq!(third.picked, Loose::Absent);
        let fourth: Every<'_> = view_of(lines[3]).unwrap();
        assert_eq!(fourth.nested.unwrap().plain, Loose::Number(2.into()));
        // What a `Value` refuses, both refuse.
        for text in [
            r#"{"v":[1e400]}"#,
            r#"{"n":{"x":"\ud800"}}"#,
            r#"{"e":{"m":1,}}"#,
        ] {
            assert!(view_of::<Every<'_>>(text).is_none(), "{text}");
            assert!(
                scan_into(text, &mut Every::default(), false).is_none(),
                "{text}"
            );
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
