//! What a backend author needs, kept out of the consumer's way.
//!
//! A backend implements [`Decoder`] (its decoding and mapping, nothing else) and [`Backend`]
//! (its facts as a [`Spec`], and its own rules), for which the core implements
//! [`crate::Harness`] with a [`Driver`] of the decoder as its [`crate::Normalizer`]: the driver does the bookkeeping every backend
//! shares (line numbers, counts, dispositions, warnings, finish-once, S9). The modules hold the
//! shared pieces of the rules: [`json`] (exact, fast JSON views, S2), [`paths`] (C14a),
//! [`reclassify`] (shell commands through the shared classifier, C15, X4), [`text`].
//! The live side is declarative: see [`crate::Launch`].

mod driver;
pub mod json;
mod ledger;
pub mod paths;
pub mod reclassify;
mod recorded;
mod spec;
pub mod text;
/// The escape module's former place, kept for callers of its path: [`json::escape`].
pub use json::escape as unescape;

pub use driver::{Decoder, Driver, Emitter, ExactOnly, NotJson, Summary, parse_value};
pub use ledger::MAX_WARNING_TEXT;
pub use recorded::Recorded;
pub use spec::{Backend, Spec};
