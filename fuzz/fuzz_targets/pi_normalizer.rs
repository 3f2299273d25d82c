//! The Pi normalizer under libFuzzer: every check of `common.rs` (S8, O1, S9, S6, L1),
//! paths resolved against the project directory the Pi recordings were made in.

#![no_main]

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check(&harness_agents_pi::PiHarness, "/home/pi/project", data);
});
