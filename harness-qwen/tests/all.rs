//! The tests of the Qwen Code backend, in one test binary: golden tests over its recordings,
//! the conformance kit, and unit tests named after the QW rule they prove.

#![allow(clippy::unwrap_used, clippy::expect_used)] // Test helpers may fail loudly.

mod suite;
