//! `harness normalize`: a recorded stream in, one event per line out (JSON Lines or the human
//! format), then the outcome.
//!
//! Without `--backend` the stream's backend is detected ([`Detector`]): the first JSON line
//! that exactly one backend recognizes ([`Backend::recognizes`]) decides it, and the lines read
//! before it are then replayed into that backend's normalizer, so line numbers are as if the
//! backend had been named. At most [`Detector::MAX_LINES`] lines or [`Detector::MAX_BYTES`]
//! bytes are held back; past that, and at the end of a stream no line decided, the default
//! backend (Claude) is taken.
//!
//! A transcript of a live run (`run --transcript FILE`, `docs/transcript.md`) is recognized by
//! its first line, its header (TR2): its backend and its normalizer's settings are the header's
//! (options given on the command line win), and its records are fed in the order the live run
//! read them, standard error included (TR4), so the events are the live run's.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use harness_agents_core::transcript::{Header, Record};
use harness_agents_core::{Backend, Event, Normalizer, NormalizerConfig};

use crate::format::Printer;

/// Where a stream comes from: a named file, or standard input.
pub enum Source {
    /// Standard input (`-` or no FILE).
    Stdin,
    /// A file.
    File(PathBuf),
}

impl Source {
    /// `-` means standard input.
    pub fn from_arg(arg: Option<PathBuf>) -> Self {
        match arg {
            Some(p) if p != Path::new("-") => Source::File(p),
            _ => Source::Stdin,
        }
    }

    fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::File(p) => p.display().to_string(),
        }
    }

    fn open(&self) -> Result<Box<dyn Read>, Failure> {
        match self {
            Source::Stdin => Ok(Box::new(io::stdin().lock())),
            Source::File(path) => match File::open(path) {
                Ok(f) => Ok(Box::new(f)),
                Err(e) => Err(Failure::Input(self.name(), e)),
            },
        }
    }
}

/// Which backend decodes the stream.
pub enum Choice<'a> {
    /// The one named with `--backend`.
    Named(&'a dyn Backend),
    /// Detected from the stream among `candidates`; `default` when no line decides.
    Auto {
        /// Every backend that may be detected.
        candidates: Vec<&'a dyn Backend>,
        /// The backend taken when no line decides.
        default: &'a dyn Backend,
    },
}

/// Picks a stream's backend from its first lines: the first JSON line that exactly one
/// candidate recognizes decides; lines that decide nothing (not JSON, blank, recognized by no
/// candidate or by several) are held back, within bounds, to be replayed.
pub struct Detector<'a> {
    candidates: Vec<&'a dyn Backend>,
    default: &'a dyn Backend,
    held: Vec<Vec<u8>>,
    held_bytes: usize,
}

/// What a [`Detector`] made of one more line.
pub enum Detection<'a> {
    /// Not decided yet: the line is held back.
    Undecided,
    /// Decided: the backend, whether the default was taken for want of a deciding line, and
    /// the lines held back before this one, in order, to replay; then this line, which is not
    /// copied (it may be hundreds of MB, S7), from the caller's buffer.
    Decided {
        /// The backend.
        backend: &'a dyn Backend,
        /// The line number that decided, or `None` when the bounds were reached first.
        line: Option<u64>,
        /// The lines held back before this one, to push into the backend's normalizer.
        lines: Vec<Vec<u8>>,
    },
}

impl<'a> Detector<'a> {
    /// At most this many lines are held back before the default is taken.
    pub const MAX_LINES: usize = 100;
    /// At most this many bytes are held back (a longer line is not parsed for detection).
    pub const MAX_BYTES: usize = 1 << 20;

    /// A detector choosing among `candidates`, else `default`.
    pub fn new(candidates: Vec<&'a dyn Backend>, default: &'a dyn Backend) -> Self {
        Detector {
            candidates,
            default,
            held: Vec::new(),
            held_bytes: 0,
        }
    }

    /// The backend one line decides, if any: the only candidate that recognizes it.
    pub fn decides(&self, line: &[u8]) -> Option<&'a dyn Backend> {
        let value: serde_json::Value = serde_json::from_slice(line).ok()?;
        let mut found = self.candidates.iter().filter(|h| h.recognizes(&value));
        match (found.next(), found.next()) {
            (Some(only), None) => Some(*only),
            _ => None,
        }
    }

    /// Takes one more line (without its `\n`).
    pub fn push(&mut self, line: &[u8]) -> Detection<'a> {
        let fits = self.held_bytes + line.len() <= Self::MAX_BYTES;
        let decided = if fits { self.decides(line) } else { None };
        match decided {
            Some(backend) => Detection::Decided {
                backend,
                line: Some(self.held.len() as u64 + 1),
                lines: std::mem::take(&mut self.held),
            },
            None if !fits || self.held.len() + 1 >= Self::MAX_LINES => Detection::Decided {
                backend: self.default,
                line: None,
                lines: std::mem::take(&mut self.held),
            },
            None => {
                self.held.push(line.to_vec());
                self.held_bytes += line.len();
                Detection::Undecided
            }
        }
    }

    /// The candidate (or the default) called `name`.
    pub fn named(&self, name: &str) -> Option<&'a dyn Backend> {
        self.candidates
            .iter()
            .copied()
            .chain([self.default])
            .find(|h| h.name() == name)
    }

    /// The end of the stream: the default, with the lines held back.
    pub fn finish(&mut self) -> (&'a dyn Backend, Vec<Vec<u8>>) {
        (self.default, std::mem::take(&mut self.held))
    }
}

/// Why normalizing stopped early.
#[derive(Debug)]
pub enum Failure {
    /// An input could not be opened or read: its name and the reason.
    Input(String, io::Error),
    /// Standard output is gone (a closed pipe): stop quietly.
    OutputClosed,
    /// Writing the output failed.
    Output(io::Error),
}

/// Writes events, flushing whenever the input has nothing more buffered, so a live pipe sees
/// each event as soon as its line is read.
struct EventWriter<W: Write> {
    out: Printer<W>,
    buf: Vec<Event>,
}

impl<W: Write> EventWriter<W> {
    fn write_events(&mut self) -> Result<(), Failure> {
        for event in self.buf.drain(..) {
            self.out.event(&event).map_err(output_error)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Failure> {
        self.out.flush().map_err(output_error)
    }

    /// Human output shows paths relative to the working directory in effect.
    fn follow_cwd(&mut self, normalizer: &dyn Normalizer) {
        if self.out.is_human() && self.out.base.as_deref() != normalizer.cwd() {
            self.out.base = normalizer.cwd().map(String::from);
        }
    }
}

fn output_error(e: io::Error) -> Failure {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Failure::OutputClosed
    } else {
        Failure::Output(e)
    }
}

/// The normalizer, and the detector while the backend is not known yet.
struct Decoder<'a> {
    /// The chosen backend's normalizer (the default's while detecting; nothing is pushed to it
    /// until the backend is known).
    normalizer: Box<dyn Normalizer>,
    /// Holds lines back until the backend is known.
    detecting: Option<Detector<'a>>,
    config: NormalizerConfig,
    /// The backend named with `--backend`, if one was.
    named: Option<&'a dyn Backend>,
    /// Whether the stream's first line is still to come (a transcript's header, TR2).
    first: bool,
    /// Whether the stream is a transcript: its lines are records (TR3).
    transcript: bool,
}

impl Decoder<'_> {
    /// Pushes one stdout line, detecting the backend first if need be.
    fn push_line<W: Write>(
        &mut self,
        line: &[u8],
        writer: &mut EventWriter<W>,
    ) -> Result<(), Failure> {
        let Some(detector) = &mut self.detecting else {
            self.normalizer.push_line(line, &mut writer.buf);
            writer.follow_cwd(self.normalizer.as_ref());
            return writer.write_events();
        };
        match detector.push(line) {
            Detection::Undecided => Ok(()),
            Detection::Decided {
                backend,
                line: number,
                lines,
            } => {
                if let Some(number) = number.filter(|_| backend.name() != "claude") {
                    let name = backend.name();
                    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
                        "an"
                    } else {
                        "a"
                    };
                    eprintln!(
                        "harness: detected {article} {name} stream (line {number}); --backend \
                         NAME chooses another"
                    );
                }
                self.start(backend, lines, writer)?;
                self.push_line(line, writer)
            }
        }
    }

    /// Reads the stream as the transcript `header` announces: its settings under those given
    /// on the command line, its backend unless one was named (TR4). Nothing was pushed yet.
    fn transcript(&mut self, header: &Header, source: &Source) -> Result<(), Failure> {
        self.transcript = true;
        let mut config = header.config();
        config.cwd = self.config.cwd.take().or(config.cwd);
        config.workspace = self.config.workspace.take().or(config.workspace);
        config.started |= self.config.started;
        self.config = config;
        let backend = match (self.named, &header.backend, &self.detecting) {
            (Some(named), _, _) => Some(named),
            (None, Some(name), Some(detector)) => match detector.named(name) {
                Some(backend) => Some(backend),
                None => {
                    let e = io::Error::other(format!(
                        "the transcript's backend '{name}' is not one this harness knows"
                    ));
                    return Err(Failure::Input(source.name(), e));
                }
            },
            // No backend in the header: detected from its records, as for a plain stream.
            _ => None,
        };
        if let Some(backend) = backend {
            self.detecting = None;
            self.normalizer = backend.normalizer(self.config.clone());
        }
        Ok(())
    }

    /// Pushes one stderr line (S4), deciding the backend first if need be.
    fn push_stderr<W: Write>(
        &mut self,
        line: &[u8],
        writer: &mut EventWriter<W>,
    ) -> Result<(), Failure> {
        let normalizer = self.ready(writer)?;
        normalizer.push_stderr(line, &mut writer.buf);
        writer.follow_cwd(normalizer);
        writer.write_events()
    }

    /// Decodes with `backend` from now on, replaying `lines` into it.
    fn start<W: Write>(
        &mut self,
        backend: &dyn Backend,
        lines: Vec<Vec<u8>>,
        writer: &mut EventWriter<W>,
    ) -> Result<(), Failure> {
        self.detecting = None;
        self.normalizer = backend.normalizer(self.config.clone());
        for line in lines {
            self.push_line(&line, writer)?;
        }
        Ok(())
    }

    /// The normalizer, deciding for the default backend if no line decided.
    fn ready<W: Write>(
        &mut self,
        writer: &mut EventWriter<W>,
    ) -> Result<&mut dyn Normalizer, Failure> {
        if let Some(mut detector) = self.detecting.take() {
            let (backend, lines) = detector.finish();
            self.start(backend, lines, writer)?;
        }
        Ok(self.normalizer.as_mut())
    }
}

/// Feeds every line of `source` to the decoder, writing events as they come.
fn feed<W: Write>(
    source: &Source,
    input: Box<dyn Read>,
    writer: &mut EventWriter<W>,
    decoder: &mut Decoder<'_>,
    stderr: bool,
) -> Result<(), Failure> {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        if reader.buffer().is_empty() {
            writer.flush()?;
        }
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Failure::Input(source.name(), e))?;
        if n == 0 {
            return Ok(());
        }
        let content = line.strip_suffix(b"\n").unwrap_or(&line);
        if stderr {
            decoder.push_stderr(content, writer)?;
            continue;
        }
        if std::mem::take(&mut decoder.first) {
            match Header::parse(content) {
                Some(Ok(header)) => {
                    decoder.transcript(&header, source)?;
                    continue;
                }
                Some(Err(e)) => return Err(Failure::Input(source.name(), io::Error::other(e))),
                None => {}
            }
        }
        if !decoder.transcript {
            decoder.push_line(content, writer)?;
            continue;
        }
        match Record::parse(content) {
            Record::Stdout(line) => decoder.push_line(line, writer)?,
            Record::Stderr(line) => decoder.push_stderr(line, writer)?,
            // A kind of record this version does not know (TR5).
            Record::Other(_) => {}
        }
    }
}

/// Normalizes `stdout` (then `stderr`, S10) with `backend` and writes the events and the
/// outcome to `out`.
pub fn run<W: Write>(
    backend: Choice<'_>,
    config: NormalizerConfig,
    stdout: &Source,
    stderr: Option<&Source>,
    out: Printer<W>,
) -> Result<(), Failure> {
    // Open both inputs before writing anything, so a bad path fails cleanly.
    let stdout_input = stdout.open()?;
    let stderr_input = stderr.map(|s| s.open().map(|i| (s, i))).transpose()?;
    let mut writer = EventWriter {
        out,
        buf: Vec::new(),
    };
    let mut decoder = match backend {
        Choice::Named(harness) => Decoder {
            normalizer: harness.normalizer(config.clone()),
            detecting: None,
            config,
            named: Some(harness),
            first: true,
            transcript: false,
        },
        Choice::Auto {
            candidates,
            default,
        } => Decoder {
            normalizer: default.normalizer(config.clone()),
            detecting: Some(Detector::new(candidates, default)),
            config,
            named: None,
            first: true,
            transcript: false,
        },
    };
    feed(stdout, stdout_input, &mut writer, &mut decoder, false)?;
    if let Some((source, input)) = stderr_input {
        feed(source, input, &mut writer, &mut decoder, true)?;
    }
    let normalizer = decoder.ready(&mut writer)?;
    // End-of-input events are written as they are made: a stream that ends with a million
    // pending tool uses never holds all their events at once.
    let mut failure = None;
    let outcome = normalizer.finish_each(&mut |event| {
        if failure.is_none() {
            writer.buf.push(event);
            failure = writer.write_events().err();
        }
    });
    if let Some(failure) = failure {
        return Err(failure);
    }
    writer.out.outcome(&outcome).map_err(output_error)?;
    writer.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s7_the_line_that_decides_is_not_copied_to_be_replayed() {
        // A stream that starts with a 200 MB line held a copy of it.
        let registry = harness_agents::registry();
        let candidates = || registry.names().filter_map(|n| registry.get(n)).collect();
        let claude = registry.get("claude").unwrap();
        let mut detector = Detector::new(candidates(), claude);
        assert!(matches!(detector.push(b"not json"), Detection::Undecided));
        let codex = br#"{"type":"thread.started","thread_id":"t"}"#;
        let Detection::Decided {
            backend,
            line,
            lines,
        } = detector.push(codex)
        else {
            panic!("undecided");
        };
        assert_eq!((backend.name(), line), ("codex", Some(2)));
        assert_eq!(lines, [b"not json".to_vec()]);

        // Too long to parse for detection: the default, without a copy either.
        let mut detector = Detector::new(candidates(), claude);
        let long = vec![b'x'; Detector::MAX_BYTES + 1];
        let Detection::Decided {
            backend,
            line,
            lines,
        } = detector.push(&long)
        else {
            panic!("undecided");
        };
        assert_eq!((backend.name(), line), ("claude", None));
        assert!(lines.is_empty());
    }
}
