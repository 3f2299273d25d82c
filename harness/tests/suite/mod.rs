//! The parts of the facade's integration tests.

mod dispositions;
mod sessions;
mod versions;
