//! The core of `harness`: the normalized event model every backend speaks, the outcome of a
//! run, the [`Backend`] trait a backend implements, and the [`Registry`] that lets a caller
//! pick a backend by name at run time.
//!
//! This crate names no backend. A backend crate (such as `harness-agents-claude`) implements
//! [`Backend`], whose [`Normalizer`] is the core's [`backend::Driver`] around the backend's
//! [`backend::Decoder`]; callers feed it lines (or a reader, through [`Normalized`]) and get
//! [`Event`]s back, then an [`Outcome`] at the end. Orchestrators usually depend on the
//! `harness-agents` facade crate instead, which re-exports these types with every backend.
//!
//! ```
//! use harness_agents_core::{Event, EventBody, Expected, Kind, WarningSource};
//!
//! let json = r#"{"kind":"warning","message":"slow down","source":"rate_limit","line":7}"#;
//! let event: Event = serde_json::from_str(json).unwrap();
//! assert_eq!(event.kind(), Kind::Warning);
//! assert_eq!(event.line, Some(7));
//! assert!(matches!(event.body, EventBody::Warning { source: WarningSource::RateLimit, .. }));
//! ```
//!
//! # One plug-in point
//!
//! A backend is one trait, [`Backend`], as in ripgrep's `grep-matcher`: small to implement
//! (its [`Backend::name`] and its [`Backend::normalizer`], a [`backend::Driver`] of its
//! [`backend::Decoder`]) and rich to use (what it reports, how it recognizes its lines, how its
//! agent starts live and the live run itself, each with a default). The same trait is what
//! callers drive: the [`Registry`] holds `Box<dyn Backend>`, so the trait keeps no associated
//! type and no generic method. A backend's facts are the trait's methods, not a struct beside
//! it: one place says what a backend is, and the compiler checks each override against it.
//!
//! With the `process` feature, the [`process`] module drives a live agent process for any
//! backend: it spawns the command line the backend builds, writes the prompt to its standard
//! input, reads standard output and standard error concurrently through the backend's
//! normalizer, and enforces the timeout by killing the agent's whole process group. That
//! feature is the only one that pulls in `tokio`; without it this crate is the event model alone.
//!
//! The JSON form of events is documented rule by rule in `docs/contract.md` (J1-J10): one object
//! per event, tagged `"kind"`, optional fields omitted when absent. Consumers must ignore fields
//! they do not know: new ones may be added.

#![cfg_attr(docsrs, feature(doc_cfg))]

/// This crate's README, whose example runs as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExample;

pub mod backend;
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub mod detect;
mod error;
mod event;
mod lines;
mod normalized;
mod normalizer;
mod outcome;
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub mod process;
mod registry;
mod run;
#[cfg(feature = "schema")]
#[cfg_attr(docsrs, doc(cfg(feature = "schema")))]
pub mod schema;
pub mod session;
#[cfg(feature = "sessions")]
#[cfg_attr(docsrs, doc(cfg(feature = "sessions")))]
pub mod stored;
#[cfg(feature = "testkit")]
#[cfg_attr(docsrs, doc(cfg(feature = "testkit")))]
pub mod testkit;
pub mod transcript;
mod versions;

pub use error::RunError;
pub use event::{
    Decision, Event, EventBody, Expected, Kind, LineRange, PlanItem, Stream, ToolRef, ToolStatus,
    UnknownReason, WarningSource,
};
pub use lines::LineSplitter;
pub use normalized::Normalized;
pub use normalizer::{Disposition, Normalizer, NormalizerConfig, PendingToolUse};
pub use outcome::{Metrics, Outcome, OutcomeLine, Status};
#[cfg(feature = "process")]
#[cfg_attr(docsrs, doc(cfg(feature = "process")))]
pub use process::{Launch, PromptInput};
pub use registry::{Backend, Capabilities, OrchestrationSource, Registry};
pub use run::{RunItem, RunRequest, RunStream, StopSignal};
pub use versions::{Coverage, KnownAgent, Versions, parse_version};
