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
//!
//! [`read_line`] is the way a backend reads a line: the fast path first, the exact (checked)
//! path whenever the fast one is unsure, so a line is JSON exactly when a `Value` parse says
//! so, and its view is the one the checked path reads.
//!
//! The layers, each in a module of its own, each depending only on those before it:
//! - [`escape`]: every JSON escape, checked and decoded (S2, S7); it depends on no other layer.
//! - the byte-level reader: [`Scan`], the fast lexer, and its bit tricks.
//! - the serde side: [`Checked`], [`Loose`], [`FieldsSeed`], read by `serde_json` itself.
//! - the views: [`JsonView`], [`Member`], [`Text`] and [`crate::json_view!`], read on both
//!   paths from one declaration.

use super::NotJson;

mod de;
pub mod escape;
mod read;
mod view;

pub use de::{Checked, FieldsSeed, Key, Loose, ObjectReader, OnlyObjects};
pub use read::{Scan, depth_exceeds, max_depth, object_text};
#[doc(hidden)]
pub use view::MemberSeed;
pub use view::{JsonView, Member, Text, ViewSeed, scan_into, view_of};

#[doc(hidden)]
pub use serde as __serde;

/// Reads one line into the view `V`: THE way a backend reads a line. `Ok(Some(view))` when the
/// line is a JSON object, `Ok(None)` when it is JSON but no object (S3: the caller parses it
/// into a `Value` for the event that carries it, if any), `Err(NotJson)` exactly when
/// `serde_json` would not parse it into a `Value` (S2).
///
/// The fast path ([`Scan`]) reads the line when it is sure; when it is unsure (a control
/// character, an escaped key, a long number, deep nesting, or any error) the checked path,
/// which skips with [`Checked`], reads it again from the start and decides. Both read the same
/// view from one declaration ([`crate::json_view!`]), so the result is the checked path's by
/// construction: the fast path only answers when it agrees.
///
/// ```
/// use harness_agents_core::backend::NotJson;
/// use harness_agents_core::backend::json::read_line;
///
/// harness_agents_core::json_view! {
///     /// A line's type.
///     pub struct Typed<'a> {
///         /// `type`.
///         kind: "type",
///     }
/// }
///
/// let view = read_line::<Typed<'_>>(br#"{"type":"a","type":"b"}"#).unwrap().unwrap();
/// assert_eq!(view.kind.as_str(), Some("b"));
/// // An escaped key: the fast path is unsure, the checked path reads it.
/// let view = read_line::<Typed<'_>>(br#"{"\u0074ype":"c"}"#).unwrap().unwrap();
/// assert_eq!(view.kind.as_str(), Some("c"));
/// assert!(read_line::<Typed<'_>>(b"[1]").unwrap().is_none());
/// assert_eq!(read_line::<Typed<'_>>(br#"{"type":"\ud800"}"#).err(), Some(NotJson));
/// ```
pub fn read_line<'de, V: JsonView<'de>>(line: &'de [u8]) -> Result<Option<V>, NotJson> {
    let mut view = None;
    read_line_into(line, &mut view, false)?;
    Ok(view)
}

/// [`read_line`] into `view`, in place (a large view costs more to move than to read), with
/// `costly` passed on to the view ([`JsonView`]): `view` is `Some` when the line is an object,
/// `None` when it is JSON but no object; on `Err(NotJson)` it holds whatever was read.
pub fn read_line_into<'de, V: JsonView<'de>>(
    line: &'de [u8],
    view: &mut Option<V>,
    costly: bool,
) -> Result<(), NotJson> {
    let Some(text) = object_text(line) else {
        // Not UTF-8, or no object: rare, and always the checked path's to decide.
        return checked(
            &mut serde_json::Deserializer::from_slice(line),
            view,
            costly,
        );
    };
    read_object_into(text, view, costly)
}

/// [`read_line`] of a line already known to be UTF-8 text that starts, after any whitespace,
/// with `{` (as [`object_text`] gives it): the same result, without checking the text again.
pub fn read_object<'de, V: JsonView<'de>>(text: &'de str) -> Result<Option<V>, NotJson> {
    let mut view = None;
    read_object_into(text, &mut view, false)?;
    Ok(view)
}

/// [`read_object`] into `view`, in place, as [`read_line_into`].
pub fn read_object_into<'de, V: JsonView<'de>>(
    text: &'de str,
    view: &mut Option<V>,
    costly: bool,
) -> Result<(), NotJson> {
    if let Some(mut scan) = Scan::new(text).filter(|_| V::SCANS) {
        let fast = view.insert(V::default());
        if fast.scan_members(&mut scan, costly).is_some() && scan.end().is_some() {
            return Ok(());
        }
    }
    // The text is UTF-8 already: a `str` reader checks no string again.
    checked(&mut serde_json::Deserializer::from_str(text), view, costly)
}

/// The checked path: the view read through `serde_json`, every other member skipped with
/// [`Checked`], then nothing but whitespace after it; `NotJson` exactly where a `Value`
/// fails (S2).
#[inline(never)]
fn checked<'de, R: serde_json::de::Read<'de>, V: JsonView<'de>>(
    reader: &mut serde_json::Deserializer<R>,
    view: &mut Option<V>,
    costly: bool,
) -> Result<(), NotJson> {
    view.read(&mut *reader, costly).map_err(|_| NotJson)?;
    reader.end().map_err(|_| NotJson)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;

    crate::json_view! {
        /// A view with a nested view and a kept text.
        #[derive(PartialEq)]
        struct Outer<'a> {
            /// `k`.
            plain: "k",
            /// `t`.
            text: "t" => Text<'a>,
            /// `n`, a view.
            nested: "n" => Option<Inner<'a>>,
        }
    }

    crate::json_view! {
        /// A nested view.
        #[derive(PartialEq)]
        struct Inner<'a> {
            /// `k`.
            plain: "k",
        }
    }

    /// The exact twin: the line through the checked path alone.
    fn exact(line: &[u8]) -> Result<Option<Outer<'_>>, NotJson> {
        let mut view = None;
        checked(
            &mut serde_json::Deserializer::from_slice(line),
            &mut view,
            false,
        )?;
        Ok(view)
    }

    /// S2, S3: the entry point answers what the exact path answers, and is JSON (an object or
    /// not) exactly where a `Value` is.
    fn agrees(line: &[u8]) -> Result<(), TestCaseError> {
        let read = read_line::<Outer<'_>>(line);
        let value = serde_json::from_slice::<Value>(line);
        let shown = String::from_utf8_lossy(line);
        prop_assert_eq!(read.is_ok(), value.is_ok(), "{}", shown);
        if let Ok(value) = value {
            prop_assert_eq!(
                read.as_ref().is_ok_and(Option::is_some),
                value.is_object(),
                "{}",
                shown
            );
        }
        prop_assert_eq!(read, exact(line), "{}", shown);
        Ok(())
    }

    #[test]
    fn s2_s3_the_entry_point_reads_as_the_exact_path_does() {
        let deep = |n: usize| format!("{{\"n\":{}{}}}", "[".repeat(n), "]".repeat(n));
        let lines: Vec<Vec<u8>> = [
            r#"{"k":1,"t":"a\n\u00e9","n":{"k":"x"}}"#,
            r#" {"k":"a","k":"b","n":7,"n":{"k":2}} "#,
            r#"{"\u006b":2,"t":"\ud83d\ude00"}"#,
            "{\"k\":1}\t",
            "\t{\"k\":1}",
            "\u{c}{}",
            r#"{"k":1e400}"#,
            r#"{"t":"\ud800"}"#,
            r#"{"k":123456789012345678901234567890}"#,
            r#"{"k":1} x"#,
            r#"{"k":1,}"#,
            "{}",
            "[1]",
            r#""s""#,
            "null",
            "1e400",
            "",
            &deep(125),
            &deep(126),
            &deep(127),
        ]
        .iter()
        .map(|line| line.as_bytes().to_vec())
        .chain([b"{\"k\":\"\xff\"}".to_vec(), b"\xff".to_vec()])
        .collect();
        for line in &lines {
            agrees(line).unwrap();
        }
        let view = read_line::<Outer<'_>>(lines[0].as_slice())
            .unwrap()
            .unwrap();
        assert_eq!(view.text.shared().as_deref(), Some("a\n\u{e9}"));
        assert_eq!(view.nested.unwrap().plain.as_str(), Some("x"));
        let view = read_line::<Outer<'_>>(lines[2].as_slice())
            .unwrap()
            .unwrap();
        assert_eq!(view.plain, Loose::Number(2.into()));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        /// S2: any text made of JSON's pieces reads as the exact path reads it.
        #[test]
        fn s2_any_line_reads_as_the_exact_path_does(
            line in r#"[ \t]?\{("[kntx]":( ?(-?[0-9]{1,3}(\.[0-9])?(e[0-9]{1,3})?|"([a\\n\t]|\\u[0-9a-fA-Fd]{0,4}|\\[nx"])*"|true|null|\[|\]|\{|\}|,)){1,6},?)*\}[ x]?"#,
        ) {
            agrees(line.as_bytes())?;
        }
    }
}
