//! The core's integration tests, in one test binary (`tests/suite/`): the live-run driver and
//! what a run leaves behind.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
