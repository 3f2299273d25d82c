//! The tests of the Codex backend, in one test binary: golden tests over the shared
//! recordings and unit tests named after the SPEC rule they prove.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
