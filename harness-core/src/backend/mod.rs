//! What a backend author needs, kept out of the consumer's way.
//!
//! A backend implements [`Decoder`] (its decoding and mapping, nothing else) and
//! [`crate::Backend`] (its name, a [`Driver`] of the decoder as its [`crate::Normalizer`], and
//! the facts whose defaults do not fit it): the driver does the bookkeeping every backend
//! shares (line numbers, counts, dispositions, warnings, finish-once, S9). The modules hold the
//! shared pieces of the rules: [`json`] (exact, fast JSON views, S2), [`paths`] (C14a),
//! [`reclassify`] (shell commands through the shared classifier, C15, X4), [`text`],
//! [`pairing`] (tool uses waiting for their results, paired by id),
//! [`stream_json`] (the lines, blocks and tool-use pairing of the agents that print
//! `stream-json`).
//! The live side is declarative: see `Launch` (with the `process` feature).

pub mod args;
mod driver;
pub mod json;
mod ledger;
pub mod pairing;
pub mod paths;
pub mod reclassify;
mod recorded;
pub mod stream_json;
pub mod text;

pub use crate::outcome::add_numbers;
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use crate::process::launch::option;
/// The attribute on a `Backend` impl that overrides the async [`crate::Backend::run`], so a
/// backend crate needs no dependency of its own for it.
pub use async_trait::async_trait;
pub use driver::{
    Decoder, Driver, Emitter, ExactOnly, NotJson, PermissionRequest, Summary, add_figure, has_type,
    parse_value, reparse, tool_raw,
};
pub use ledger::MAX_WARNING_TEXT;
pub use recorded::Recorded;
