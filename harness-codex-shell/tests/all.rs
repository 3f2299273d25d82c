//! The integration tests of `harness-codex-shell`, one binary.

// Test helpers outside #[test] functions may fail loudly on bad fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
