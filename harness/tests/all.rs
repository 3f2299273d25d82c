//! The facade's integration tests: one binary, its parts in `suite/`.

mod suite;
