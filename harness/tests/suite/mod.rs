//! The parts of the facade's integration tests.

mod detection;
mod dispositions;
mod sessions;
mod versions;
