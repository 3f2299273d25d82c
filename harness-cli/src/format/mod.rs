//! Output formats: JSON Lines for programs, one readable line per event for people.
//!
//! `jsonl` ([`jsonl`]) writes each event as one JSON object per line, then the outcome line
//! tagged `"kind": "outcome"` (J9). `human` ([`human`]) writes one line per event
//! (`read      src/app.py:4-9`, `$ cargo build  (exit 101)`), reasoning dimmed, warnings and
//! errors marked, and a closing summary of the outcome. Colour is hand-written ANSI, only when
//! asked for.
//!
//! The human format is safe to print on a terminal whatever the agent wrote ([`safe`]): every
//! control character of the input is shown as a visible escape, and only an event's first line
//! starts at the left margin. The only escape sequences written are the printer's own
//! (colours, and on a terminal the rewrite of a running tool's line).
//!
//! A `started` event (L1) is shown as a dimmed line ending in `…` (`read      src/app.py:4-9  …`,
//! `$ cargo test  …`). On a terminal ([`Printer::live`]) the line is written without its
//! newline and, when the next event is the tool's own, rewritten in place by it; otherwise the
//! final event follows on its own line.

mod human;
mod jsonl;
pub(crate) mod safe;

use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;
use harness_agents_core::{Event, Outcome};

/// How events are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON object per line, then the outcome line (the default when stdout is not a
    /// terminal).
    Jsonl,
    /// One readable line per event, then a summary (the default on a terminal).
    Human,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Color {
    /// When stdout is a terminal that supports colour (`TERM` is not `dumb`), unless
    /// `NO_COLOR` is set or `CLICOLOR=0`; always when `CLICOLOR_FORCE` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The format asked for, else the one that suits where stdout goes.
pub fn choose_format(asked: Option<Format>) -> Format {
    asked.unwrap_or(if io::stdout().is_terminal() {
        Format::Human
    } else {
        Format::Jsonl
    })
}

/// Whether to colour, per `--color` and the `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE` and
/// `TERM` conventions (as anstream reads them).
pub fn choose_color(asked: Color) -> bool {
    match asked {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => anstream::AutoStream::choice(&io::stdout()) != anstream::ColorChoice::Never,
    }
}

/// The width of the terminal on stdout when a running tool's line may be rewritten there: a
/// terminal whose `TERM` is set and not `dumb`, whose width is known.
pub fn live_width() -> Option<usize> {
    let stdout = io::stdout();
    if !stdout.is_terminal() {
        return None;
    }
    match std::env::var_os("TERM") {
        Some(term) if !term.is_empty() && term != "dumb" => {}
        _ => return None,
    }
    let size = rustix::termios::tcgetwinsize(&stdout).ok()?;
    Some(usize::from(size.ws_col)).filter(|&w| w >= 20)
}

/// Writes events and the outcome in one format.
pub struct Printer<W: Write> {
    out: W,
    format: Format,
    color: bool,
    /// Paths under this directory are shown relative to it (human format).
    pub base: Option<String>,
    /// The terminal's width when running tools' lines are rewritten in place (human format).
    live: Option<usize>,
    /// In live mode, a running tool's line written without its newline: its tool use id.
    open: Option<Option<String>>,
}

impl<W: Write> Printer<W> {
    /// A printer writing to `out`.
    pub fn new(out: W, format: Format, color: bool) -> Self {
        Printer {
            out,
            format,
            color,
            base: None,
            live: None,
            open: None,
        }
    }

    /// Rewrites a running tool's line in place when its final event comes next: for a
    /// terminal `width` columns wide that understands `\r` and erase-line (human format).
    #[must_use]
    pub fn live(mut self, width: Option<usize>) -> Self {
        self.live = width;
        self
    }

    /// Whether this printer writes the human format.
    pub fn is_human(&self) -> bool {
        self.format == Format::Human
    }

    /// Writes one event.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        match self.format {
            Format::Jsonl => jsonl::event(&mut self.out, event),
            Format::Human => self.human(event),
        }
    }

    /// Writes the closing outcome: the outcome line (J9) or the summary.
    pub fn outcome(&mut self, outcome: &Outcome) -> io::Result<()> {
        match self.format {
            Format::Jsonl => jsonl::outcome(&mut self.out, outcome),
            Format::Human => self.human_outcome(outcome),
        }
    }

    /// Flushes what was written.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
