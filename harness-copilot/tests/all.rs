//! The tests of the Copilot backend, in one test binary: the conformance kit and unit tests
//! named after the CP rule they prove.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
