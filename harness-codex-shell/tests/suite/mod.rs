//! Test modules.

mod conformance;
mod growth;
mod properties;
mod rules;
