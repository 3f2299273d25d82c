//! The tests of the opencode backend, in one test binary: golden tests over the recordings,
//! the conformance kit, unit tests named after the P rule they prove, live runs against a fake
//! `opencode`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
