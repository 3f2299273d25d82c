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
//! The layers, each in a module of its own, each depending only on those before it:
//! - [`escape`]: every JSON escape, checked and decoded (S2, S7); it depends on no other layer.
//! - the byte-level reader: [`Scan`], the fast lexer, and its bit tricks.
//! - the serde side: [`Checked`], [`Loose`], [`FieldsSeed`], read by `serde_json` itself.
//! - the views: [`JsonView`], [`Member`], [`Text`] and [`crate::json_view!`], read on both
//!   paths from one declaration.

mod de;
pub mod escape;
mod read;
mod view;

pub use de::{Checked, FieldsSeed, Key, Loose};
pub use read::{Scan, depth_exceeds, max_depth, object_text};
#[doc(hidden)]
pub use view::MemberSeed;
pub use view::{JsonView, Member, Text, ViewSeed, scan_into, view_of};

#[doc(hidden)]
pub use serde as __serde;
