//! The `harness` binary.
fn main() {}
