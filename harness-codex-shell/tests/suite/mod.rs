//! Test modules.

mod conformance;
mod properties;
mod rules;
