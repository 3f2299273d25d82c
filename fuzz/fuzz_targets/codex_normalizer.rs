//! The Codex normalizer under libFuzzer: every check of `common.rs` (S8, O1, S9, S6, L1),
//! paths resolved against the project directory the Codex recordings were made in (X9).

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check(&harness_agents_codex::CodexHarness, "/home/dev2/project", data);
});
