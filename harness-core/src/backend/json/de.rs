//! The serde side: [`Checked`] skips a value through every check a `serde_json::Value` parse
//! makes, [`Loose`] keeps any value's scalars, [`FieldsSeed`] picks named members, all read by
//! `serde_json`'s own deserializer.

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
        deserializer.deserialize_any(OnlyObjects(self))
    }
}

impl<'de, const N: usize> ObjectReader<'de> for FieldsSeed<N> {
    type Value = [Loose<'de>; N];

    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields: [Loose<'de>; N] = std::array::from_fn(|_| Loose::Absent);
        while let Some(Key(key)) = map.next_key()? {
            match self.0.iter().position(|name| *name == key) {
                Some(i) => fields[i] = map.next_value()?,
                None => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(fields)
    }
}

/// What reads a JSON object's members, for [`OnlyObjects`].
pub trait ObjectReader<'de> {
    /// What the object is read into.
    type Value;

    /// Reads the object's members from `map`.
    fn read<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error>;
}

/// A visitor that reads an object with its [`ObjectReader`] and takes any other value as
/// `None`, checked as a `serde_json::Value` would be (an array's elements through
/// [`Checked`]): the one way a view reads a member that is an object or nothing.
pub struct OnlyObjects<R>(pub R);

impl<'de, R: ObjectReader<'de>> Visitor<'de> for OnlyObjects<R> {
    type Value = Option<R::Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
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

    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.0.read(map).map(Some)
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
