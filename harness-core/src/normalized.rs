//! The consumer's loop, written once: a reader of a backend's output in, events out.

use std::collections::VecDeque;
use std::io::{self, Read};

use crate::event::Event;
use crate::lines::LineSplitter;
use crate::normalizer::Normalizer;
use crate::outcome::Outcome;

/// How many bytes are read at a time.
const CHUNK: usize = 64 * 1024;

/// An iterator of the events of a recorded or piped stream, read as they are needed: lines are
/// split as bytes arrive (S1), each line's events come out before the next line is read (S6),
/// and the end-of-input events (S9) follow the last line. The outcome is there once the
/// iterator has ended.
///
/// ```
/// use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson};
/// use harness_agents_core::{EventBody, Normalized, NormalizerConfig, Status};
///
/// # #[derive(Default)]
/// # struct Echo;
/// # impl Decoder for Echo {
/// #     fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
/// #         let text = String::from_utf8_lossy(line).into();
/// #         out.emit(EventBody::Agent { text });
/// #         out.terminal();
/// #         Ok(())
/// #     }
/// # }
/// let input: &[u8] = b"one\ntwo\n";
/// let normalizer = Box::new(Driver::<Echo>::new(NormalizerConfig::default()));
/// let mut events = Normalized::new(input, normalizer);
/// assert_eq!(events.by_ref().count(), 2);
/// assert_eq!(events.outcome().map(|o| o.status), Some(Status::Success));
/// assert!(events.error().is_none());
/// ```
pub struct Normalized<R> {
    reader: R,
    normalizer: Box<dyn Normalizer>,
    splitter: LineSplitter,
    buffer: Vec<u8>,
    queue: VecDeque<Event>,
    outcome: Option<Outcome>,
    error: Option<io::Error>,
}

impl<R: Read> Normalized<R> {
    /// Events of `reader` through `normalizer` (a fresh one).
    pub fn new(reader: R, normalizer: Box<dyn Normalizer>) -> Self {
        Normalized {
            reader,
            normalizer,
            splitter: LineSplitter::new(),
            buffer: vec![0; CHUNK],
            queue: VecDeque::new(),
            outcome: None,
            error: None,
        }
    }

    /// The outcome, once the iterator has returned `None`.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The read error that ended the input early, if one did. The events read before it, and
    /// the end-of-input events, were still handed out.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }

    /// The normalizer, for the O4 queries while the stream goes on (session id, pending uses).
    pub fn normalizer(&self) -> &dyn Normalizer {
        self.normalizer.as_ref()
    }

    /// The last line without its `\n`, then the end-of-input events and the outcome.
    fn finish(&mut self) {
        let mut events = Vec::new();
        let normalizer = &mut self.normalizer;
        self.splitter
            .finish(|line| normalizer.push_line(line, &mut events));
        self.outcome = Some(self.normalizer.finish(&mut events));
        self.queue.extend(events);
    }
}

impl<R: Read> Iterator for Normalized<R> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if self.outcome.is_some() {
                return None;
            }
            match self.reader.read(&mut self.buffer) {
                Ok(0) => self.finish(),
                Ok(n) => {
                    let mut events = Vec::new();
                    let normalizer = &mut self.normalizer;
                    self.splitter.push(&self.buffer[..n], |line| {
                        normalizer.push_line(line, &mut events)
                    });
                    self.queue.extend(events);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.error = Some(e);
                    self.finish();
                }
            }
        }
    }
}
