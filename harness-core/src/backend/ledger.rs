//! The bookkeeping behind [`super::Driver`]: line numbers (J2), event counts (O1), the fate of
//! each line ([`Disposition`]), standard-error and non-JSON warnings (S2, S4), terminal lines
//! and the end of input (S9).

use std::collections::BTreeMap;

use super::text::{is_blank, strip_cr, truncate_chars};
use crate::event::{Event, EventBody, Kind, Stream, WarningSource};
use crate::normalizer::Disposition;

/// The most characters of a non-JSON line a warning carries (S2).
pub const MAX_WARNING_TEXT: usize = 1_000;

/// Line numbers, counts and dispositions for one stream.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    line: u64,
    stderr_line: u64,
    finished: bool,
    terminals: u64,
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
    pub(crate) fn begin_line<'a>(&mut self, raw: &'a [u8]) -> Option<&'a [u8]> {
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
    pub(crate) fn end_line(&mut self) {
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
    pub(crate) fn line(&self) -> u64 {
        self.line
    }

    /// The current line emitted an event of its own.
    pub(crate) fn mark_emitted(&mut self) {
        self.emitted = true;
    }

    /// The current line fed pending state that produces events later.
    pub(crate) fn defer(&mut self) {
        self.deferred = true;
    }

    /// The current line is terminal: it fed the outcome.
    pub(crate) fn terminal(&mut self) {
        if !self.terminal {
            self.terminals += 1;
        }
        self.terminal = true;
    }

    /// How many terminal lines arrived.
    pub(crate) fn terminals(&self) -> u64 {
        self.terminals
    }

    /// Names the rule that consumes the current line when it yields nothing else.
    pub(crate) fn consumed_by(&mut self, rule: &'static str) {
        self.rule = rule;
    }

    /// What became of the last stdout line.
    pub(crate) fn disposition(&self) -> Disposition {
        self.disposition
    }

    /// Counts an event (O1); `started` events are never counted (L1).
    pub(crate) fn count(&mut self, event: &Event) {
        let kind = event.kind();
        if kind != Kind::Started {
            *self.counts.entry(kind).or_insert(0) += 1;
        }
    }

    /// S9: the one `error` event of a stream that ended without a terminal line, counted.
    pub(crate) fn ended_without_result(&mut self) -> Event {
        let message = "stream ended without a result".to_string();
        let event = Event::new(EventBody::Error { message });
        self.count(&event);
        event
    }

    /// S2: the current line is not JSON; the warning is the line's own event, counted.
    pub(crate) fn non_json(&mut self, line: &[u8]) -> Event {
        // Only the first MAX_WARNING_TEXT characters are kept, and each comes from at most four
        // bytes (an invalid byte is one U+FFFD): decoding that much of a huge line suffices,
        // and a cut in the middle of a character can only touch characters past the kept ones.
        let prefix = &line[..line.len().min(4 * MAX_WARNING_TEXT + 3)];
        let text = String::from_utf8_lossy(prefix);
        let body = EventBody::Warning {
            message: truncate_chars(&text, MAX_WARNING_TEXT).to_string(),
            source: WarningSource::NonJson,
        };
        self.emitted = true;
        let event = Event::new(body).at_line(self.line);
        self.count(&event);
        event
    }

    /// S4: one line of standard error, without its `\n`, as a counted warning; blank lines are
    /// counted (J2) and skipped.
    pub(crate) fn stderr(&mut self, raw: &[u8]) -> Option<Event> {
        if self.finished {
            return None;
        }
        self.stderr_line += 1;
        let line = strip_cr(raw);
        if is_blank(line) {
            return None;
        }
        let mut event = Event::new(EventBody::Warning {
            message: String::from_utf8_lossy(line).into_owned(),
            source: WarningSource::Stderr,
        })
        .at_line(self.stderr_line);
        event.stream = Some(Stream::Stderr);
        self.count(&event);
        Some(event)
    }

    /// Ends the input: `true` the first time, when the end-of-input events are to be made.
    pub(crate) fn finish(&mut self) -> bool {
        !std::mem::replace(&mut self.finished, true)
    }

    /// How many events of each kind were emitted.
    pub(crate) fn counts(&self) -> &BTreeMap<Kind, u64> {
        &self.counts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_count_and_a_non_json_line_is_its_own_event() {
        let mut ledger = Ledger::default();
        assert!(ledger.begin_line(b"  \r").is_none());
        assert_eq!(ledger.disposition(), Disposition::Blank);
        let line = ledger.begin_line(b"not json\r").unwrap_or_default();
        assert_eq!(line, b"not json");
        let event = ledger.non_json(line);
        ledger.end_line();
        assert_eq!(ledger.disposition(), Disposition::Emitted);
        assert_eq!(event.line, Some(2));
        assert_eq!(ledger.counts().get(&Kind::Warning), Some(&1));
    }
}
