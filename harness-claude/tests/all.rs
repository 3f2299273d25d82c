//! Unit tests per SPEC rule for the Claude Code normalizer, in one test binary.

mod suite;
