//! The `jsonl` format: each event as one JSON object on its own line, then the outcome line
//! tagged `"kind": "outcome"` (J9), exactly as the serde types write them (`harness schema`
//! describes both). It carries the agent's text exactly, control characters included: it is
//! for programs, which the terminal-safety escapes of the human format would only mislead.

use std::io::{self, Write};

use harness_agents_core::{Event, Outcome, OutcomeLine};

/// Writes one event as a JSON line.
pub(super) fn event(out: &mut impl Write, event: &Event) -> io::Result<()> {
    serde_json::to_writer(&mut *out, event).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Writes the closing outcome line (J9).
pub(super) fn outcome(out: &mut impl Write, outcome: &Outcome) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &OutcomeLine::new(outcome)).map_err(io::Error::from)?;
    out.write_all(b"\n")
}
