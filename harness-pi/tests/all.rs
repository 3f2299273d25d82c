//! The tests of the Pi backend, in one test binary: golden tests over its recordings, the
//! conformance kit, unit tests named after the PI rule they prove, and live runs against a
//! fake `pi`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
