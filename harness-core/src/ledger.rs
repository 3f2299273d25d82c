//! The bookkeeping every normalizer shares: line numbers (J2), event counts (O1), the fate of
//! each line ([`Disposition`]), standard-error and non-JSON warnings (S2, S4), and the end of
//! input.

use std::collections::BTreeMap;

use crate::event::{Event, EventBody, Kind, Stream, WarningSource};
use crate::harness::Disposition;
use crate::text::{is_blank, strip_cr, truncate_chars};

/// The most characters of a non-JSON line a warning carries (S2).
pub const MAX_WARNING_TEXT: usize = 1_000;

/// Line numbers, counts and dispositions for one stream.
///
/// A normalizer calls [`Ledger::begin_line`] for each stdout line, emits the line's events with
/// [`Ledger::emit_here`] (or others with [`Ledger::emit`]), says what else the line did
/// ([`Ledger::defer`], [`Ledger::terminal`], [`Ledger::consumed_by`]) and calls
/// [`Ledger::end_line`].
///
/// ```
/// use harness_core::{Disposition, Ledger};
///
/// let mut ledger = Ledger::default();
/// let mut out = Vec::new();
/// assert!(ledger.begin_line(b"  \r").is_none());
/// assert_eq!(ledger.disposition(), Disposition::Blank);
/// let line = ledger.begin_line(b"not json\r").unwrap();
/// ledger.non_json(line, &mut out);
/// ledger.end_line();
/// assert_eq!(ledger.disposition(), Disposition::Emitted);
/// assert_eq!(out[0].line, Some(2));
/// ```
#[derive(Debug, Default)]
pub struct Ledger {
    line: u64,
    stderr_line: u64,
    finished: bool,
    counts: BTreeMap<Kind, u64>,
    disposition: Disposition,
    emitted: bool,
    deferred: bool,
    terminal: bool,
    rule: &'static str,
}

impl Ledger {
    /// Starts a stdout line: counts it (blank lines count, J2) and drops one trailing `\r`
    /// (S1). `None` when the line is blank (skipped, S1) or the input has ended.
    pub fn begin_line<'a>(&mut self, raw: &'a [u8]) -> Option<&'a [u8]> {
        if self.finished {
            return None;
        }
        self.line += 1;
        let line = strip_cr(raw);
        if is_blank(line) {
            self.disposition = Disposition::Blank;
            return None;
        }
        self.emitted = false;
        self.deferred = false;
        self.terminal = false;
        self.rule = "S3";
        Some(line)
    }

    /// Ends the current stdout line and settles its [`Disposition`].
    pub fn end_line(&mut self) {
        self.disposition = if self.emitted {
            Disposition::Emitted
        } else if self.deferred {
            Disposition::Deferred
        } else if self.terminal {
            Disposition::Outcome
        } else {
            Disposition::Consumed(self.rule)
        };
    }

    /// The current stdout line's number (1-based).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The current line fed pending state that produces events later.
    pub fn defer(&mut self) {
        self.deferred = true;
    }

    /// The current line is terminal: it fed the outcome.
    pub fn terminal(&mut self) {
        self.terminal = true;
    }

    /// Names the rule that consumes the current line when it yields nothing else.
    pub fn consumed_by(&mut self, rule: &'static str) {
        self.rule = rule;
    }

    /// What became of the last stdout line.
    pub fn disposition(&self) -> Disposition {
        self.disposition
    }

    /// Emits an event, counting it (O1).
    pub fn emit(&mut self, out: &mut Vec<Event>, event: Event) {
        self.count(&event);
        out.push(event);
    }

    /// Counts an event the caller hands out itself (O1); `started` events are never counted
    /// (L1).
    pub fn count(&mut self, event: &Event) {
        let kind = event.kind();
        if kind != Kind::Started {
            *self.counts.entry(kind).or_insert(0) += 1;
        }
    }

    /// Hands an end-of-input event to `emit`, counting it (O1).
    pub fn emit_each(&mut self, emit: &mut dyn FnMut(Event), event: Event) {
        self.count(&event);
        emit(event);
    }

    /// S9: the one `error` event of a stream that ended without a terminal line.
    pub fn ended_without_result(&mut self, emit: &mut dyn FnMut(Event)) {
        let message = "stream ended without a result".to_string();
        self.emit_each(emit, Event::new(EventBody::Error { message }));
    }

    /// Emits an event of the current line itself, with its `line` and `parent_tool_use_id`.
    pub fn emit_here(&mut self, out: &mut Vec<Event>, body: EventBody, parent: Option<String>) {
        self.emitted = true;
        let event = Event::new(body).at_line(self.line).with_parent(parent);
        self.emit(out, event);
    }

    /// S2: the current line is not JSON.
    pub fn non_json(&mut self, line: &[u8], out: &mut Vec<Event>) {
        let text = String::from_utf8_lossy(line);
        let body = EventBody::Warning {
            message: truncate_chars(&text, MAX_WARNING_TEXT).to_string(),
            source: WarningSource::NonJson,
        };
        self.emit_here(out, body, None);
    }

    /// S4: one line of standard error, without its `\n`; blank lines are counted and skipped.
    pub fn push_stderr(&mut self, raw: &[u8], out: &mut Vec<Event>) {
        if self.finished {
            return;
        }
        self.stderr_line += 1;
        let line = strip_cr(raw);
        if is_blank(line) {
            return;
        }
        let mut event = Event::new(EventBody::Warning {
            message: String::from_utf8_lossy(line).into_owned(),
            source: WarningSource::Stderr,
        })
        .at_line(self.stderr_line);
        event.stream = Some(Stream::Stderr);
        self.emit(out, event);
    }

    /// Ends the input: `true` the first time, when the end-of-input events are to be made.
    pub fn finish(&mut self) -> bool {
        !std::mem::replace(&mut self.finished, true)
    }

    /// How many events of each kind were emitted.
    pub fn counts(&self) -> &BTreeMap<Kind, u64> {
        &self.counts
    }
}
