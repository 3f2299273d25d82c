//! Readers of a tool use's arguments (a JSON object), for a backend's tool map: the checks
//! every map makes the same way, each failure `Err(())` for the map to report as
//! `malformed_tool_use`.
// `()` as the error: a map reports every failure of its arguments alike (one reason, no
// detail), so an error type would carry nothing.
#![allow(clippy::result_unit_err)]

use serde_json::{Map, Value};

/// A field of the arguments; `null` counts as absent.
pub fn field<'v>(args: &'v Map<String, Value>, key: &str) -> Option<&'v Value> {
    args.get(key).filter(|v| !v.is_null())
}

/// A required non-empty string.
pub fn required<'v>(args: &'v Map<String, Value>, key: &str) -> Result<&'v str, ()> {
    field(args, key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or(())
}

/// An optional string: `Ok(None)` when absent or empty, `Err` when of another type.
pub fn optional<'v>(args: &'v Map<String, Value>, key: &str) -> Result<Option<&'v str>, ()> {
    match field(args, key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok((!s.is_empty()).then_some(s.as_str())),
        Some(_) => Err(()),
    }
}

/// An optional line count or number: an integer from 0 to 2^32-1.
pub fn count(args: &Map<String, Value>, key: &str) -> Result<Option<u64>, ()> {
    match field(args, key) {
        None => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n)),
            _ => Err(()),
        },
    }
}

/// The same readers for the fields of a borrowed view (a [`crate::backend::json::Loose`] each, as
/// [`crate::json_view!`] declares them), for a map that reads a tool use's input without
/// building it.
pub mod view {
    use crate::backend::json::Loose;

    /// A field's value; `null` counts as absent.
    pub fn field<'v, 'a>(value: &'v Loose<'a>) -> Option<&'v Loose<'a>> {
        Some(value).filter(|v| !v.is_absent_or_null())
    }

    /// A required non-empty string.
    pub fn required<'v>(value: &'v Loose<'_>) -> Result<&'v str, ()> {
        value.non_empty_str().ok_or(())
    }

    /// An optional string: `Ok(None)` when absent or empty, `Err` when of another type.
    pub fn optional<'v>(value: &'v Loose<'_>) -> Result<Option<&'v str>, ()> {
        match field(value) {
            None => Ok(None),
            Some(Loose::Str(s)) => Ok(Some(s.as_ref()).filter(|s| !s.is_empty())),
            Some(_) => Err(()),
        }
    }

    /// An optional line count or number: an integer from 0 to 2^32-1.
    pub fn count(value: &Loose<'_>) -> Result<Option<u64>, ()> {
        match field(value) {
            None => Ok(None),
            Some(Loose::Number(n)) => match n.as_u64() {
                Some(n) if n <= u64::from(u32::MAX) => Ok(Some(n)),
                _ => Err(()),
            },
            Some(_) => Err(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_empty_and_wrong_types_are_told_apart() {
        let args = json!({"p": "x", "e": "", "n": null, "i": 7, "big": 5_000_000_000u64});
        let args = args.as_object().unwrap_or_else(|| unreachable!());
        assert_eq!(field(args, "n"), None);
        assert_eq!(required(args, "p"), Ok("x"));
        assert_eq!(required(args, "e"), Err(()));
        assert_eq!(required(args, "i"), Err(()));
        assert_eq!(optional(args, "e"), Ok(None));
        assert_eq!(optional(args, "missing"), Ok(None));
        assert_eq!(optional(args, "i"), Err(()));
        assert_eq!(count(args, "i"), Ok(Some(7)));
        assert_eq!(count(args, "big"), Err(()));
        assert_eq!(count(args, "p"), Err(()));
        assert_eq!(count(args, "n"), Ok(None));
    }

    #[test]
    fn the_view_readers_tell_them_apart_alike() {
        use crate::backend::json::Loose;
        let text = |s: &'static str| Loose::Str(s.into());
        let number = |n: u64| Loose::Number(n.into());
        assert_eq!(view::field(&Loose::Null), None);
        assert_eq!(view::required(&text("x")), Ok("x"));
        assert_eq!(view::required(&text("")), Err(()));
        assert_eq!(view::required(&number(7)), Err(()));
        assert_eq!(view::optional(&text("")), Ok(None));
        assert_eq!(view::optional(&Loose::Absent), Ok(None));
        assert_eq!(view::optional(&number(7)), Err(()));
        assert_eq!(view::count(&number(7)), Ok(Some(7)));
        assert_eq!(view::count(&number(5_000_000_000)), Err(()));
        assert_eq!(view::count(&text("x")), Err(()));
        assert_eq!(view::count(&Loose::Null), Ok(None));
    }
}
