//! The crate of the `harness` command. The command is the `harness` binary (`src/main.rs`);
//! this library target has no API. It exists so that `cargo test` compiles the README's
//! library examples as doc tests: this is the one crate that depends on the core and on every
//! backend, as those examples do.

/// The workspace README, whose Rust examples are doc tests.
#[doc = include_str!("../../README.md")]
#[doc(hidden)]
pub struct Readme;
