//! Test modules.

mod conformance;
