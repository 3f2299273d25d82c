//! One module per part of the core under test.

mod process;
mod tree;
