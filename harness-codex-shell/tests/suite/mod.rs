//! Test modules.

mod conformance;
mod properties;
