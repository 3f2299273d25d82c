//! Repository automation.
fn main() {}
