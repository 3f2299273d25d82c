//! The tests of the Gemini CLI backend, in one test binary: golden tests over its recordings,
//! the conformance kit, unit tests named after the G rule they prove, and live runs against a
//! fake `gemini`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
