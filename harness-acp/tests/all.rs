//! The tests of the ACP backend, in one test binary: golden tests over its recordings, the
//! conformance kit, rules named after the A rule they prove, and live runs against the fake
//! ACP agent.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
