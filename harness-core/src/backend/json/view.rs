//! The views: [`JsonView`], a borrowed view of some fields of an object, declared once with
//! [`crate::json_view!`] and read member by member on both paths (the checked one through
//! `serde_json`, the fast one through [`Scan`]); [`Member`], how one field is read on both;
//! [`Text`], a string kept for an event.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess};

use super::de::{Checked, Key, Loose, ObjectReader, OnlyObjects};
use super::escape;
use super::read::Scan;

/// A borrowed view of some fields of a JSON object, declared with [`crate::json_view!`]: it
/// reads its fields member by member, on the checked path (through `serde_json`) and on the
/// fast path ([`Scan`]), from the same declaration.
///
/// Fields marked `if costly` in the declaration are read only when `costly` is set (for values
/// few lines need and that cost much to keep); otherwise they are skipped like unknown members.
pub trait JsonView<'de>: Default {
    /// Whether the view has a fast path worth trying ([`JsonView::scan_member`] can be sure
    /// of a member): a view read by the checked path alone says `false`, and the entry point
    /// ([`super::read_line`]) then goes straight to it.
    const SCANS: bool = true;

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
            Some(inside) => escape::exact_string(inside)
                .or_else(|| escape::unescape(inside))
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
            Some(inside) => escape::shared_text(inside)
                .or_else(|| escape::unescape(inside).map(std::sync::Arc::from)),
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
                escape::unescape(inside).map_or(Loose::Absent, |text| Loose::Str(Cow::Owned(text)))
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
        let read = deserializer.deserialize_any(OnlyObjects(InPlace { slot: self, costly }))?;
        if read.is_none() {
            *self = None;
        }
        Ok(())
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
/// than reading most of them), for [`OnlyObjects`]: the slot is `Some` when the value is an
/// object, set to `None` by the caller otherwise.
struct InPlace<'v, T> {
    slot: &'v mut Option<T>,
    costly: bool,
}

impl<'de, T: JsonView<'de>> ObjectReader<'de> for InPlace<'_, T> {
    type Value = ();

    fn read<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
