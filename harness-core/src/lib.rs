//! The core of `harness`: the normalized event model every backend speaks, the outcome of a
//! run, the [`Harness`] trait a backend implements, and the [`Registry`] that lets a caller
//! pick a backend by name at run time.
//!
//! This crate names no backend. A backend crate (such as `harness-claude`) implements
//! [`Harness`] and its pure, incremental [`Normalizer`]; callers feed it lines and get
//! [`Event`]s back, then an [`Outcome`] at the end.
//!
//! ```
//! use harness_core::{Event, EventBody, Kind, WarningSource};
//!
//! let json = r#"{"kind":"warning","message":"slow down","source":"rate_limit","line":7}"#;
//! let event: Event = serde_json::from_str(json).unwrap();
//! assert_eq!(event.kind(), Kind::Warning);
//! assert_eq!(event.line, Some(7));
//! assert!(matches!(event.body, EventBody::Warning { source: WarningSource::RateLimit, .. }));
//! ```
//!
//! The JSON form of events is documented rule by rule in `SPEC.md` (J1-J10): one object per
//! event, tagged `"kind"`, optional fields omitted when absent. Consumers must ignore fields
//! they do not know: new ones may be added.

mod error;
mod event;
mod harness;
mod lines;
mod outcome;
pub mod paths;
pub mod text;

pub use error::RunError;
pub use event::{
    Event, EventBody, Kind, LineRange, PlanItem, Stream, ToolRef, ToolStatus, UnknownReason,
    WarningSource,
};
pub use harness::{
    Capabilities, Harness, Normalizer, NormalizerConfig, OrchestrationSource, PendingToolUse,
    Registry, RunItem, RunRequest, RunStream,
};
pub use lines::LineSplitter;
pub use outcome::{Metrics, Outcome, OutcomeLine, Status, add_numbers};
