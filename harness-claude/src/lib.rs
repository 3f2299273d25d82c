//! Claude Code backend (being written).
