//! The transcript of a live run: everything its normalizer read, so that the run replays offline
//! to the same events (the rules TR1-TR7 of `docs/transcript.md`).
//!
//! A transcript is lines. The first is a [`Header`]: a JSON object that starts with the bytes
//! `{"harness_transcript":` (the format's version, [`VERSION`]), then names the backend and the
//! normalizer's settings (the working directory, the workspace, `started`). Each line after it
//! is one [`Record`]: `out ` and a line of the agent's standard output, or `err ` and a line of
//! its standard error, byte for byte, in the order the run read them. A record ends at the
//! first `\n`, and a line of the agent never holds one, so nothing is escaped: any bytes the
//! agent prints, invalid UTF-8 and control characters included, are kept exactly.
//!
//! ```
//! use harness_agents_core::transcript::{Header, Record};
//! use harness_agents_core::NormalizerConfig;
//!
//! let header = Header::new("opencode", &NormalizerConfig::with_cwd("/repo"));
//! let line = header.to_line();
//! assert_eq!(
//!     String::from_utf8_lossy(&line),
//!     r#"{"harness_transcript":1,"backend":"opencode","cwd":"/repo","started":false}"#
//! );
//! let back = Header::parse(&line).unwrap().unwrap();
//! assert_eq!(back.config().cwd.as_deref(), Some("/repo"));
//!
//! assert_eq!(Record::parse(b"out {\"type\":\"text\"}"), Record::Stdout(b"{\"type\":\"text\"}"));
//! assert_eq!(Record::parse(b"err API key invalid"), Record::Stderr(b"API key invalid"));
//! assert_eq!(Record::parse(b"out "), Record::Stdout(b""));
//! ```

use std::io::{self, BufRead, Write};

use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::normalizer::{Normalizer, NormalizerConfig};

/// The version of the format this crate writes and reads (TR2).
pub const VERSION: u64 = 1;

/// What every header line starts with, byte for byte (TR2): how a transcript is told from a
/// plain stream of an agent's lines.
pub const MAGIC: &[u8] = br#"{"harness_transcript":"#;

/// The tag of a standard output record (TR3).
const STDOUT: &[u8] = b"out";
/// The tag of a standard error record (TR3).
const STDERR: &[u8] = b"err";

/// The first line of a transcript (TR2): which backend's normalizer read the run, and with
/// what settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// The backend's name (`"opencode"`); `None` when the runner was not told (the lines then
    /// choose, as for a plain stream).
    pub backend: Option<String>,
    /// The normalizer's working directory (C14a, X9).
    pub cwd: Option<String>,
    /// The normalizer's workspace (C14a).
    pub workspace: Option<String>,
    /// Whether the normalizer emitted `started` events (L1).
    pub started: bool,
    /// Whether the stream is a session's (its control lines follow the session rules); written
    /// only when true.
    pub session: bool,
}

/// The header as written: the version first, then the rest, absent values left out.
#[derive(Serialize, Deserialize)]
struct Wire {
    harness_transcript: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    backend: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    workspace: Option<String>,
    #[serde(default)]
    started: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    session: bool,
}

/// A header of a version this crate cannot read (TR2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// A version other than [`VERSION`].
    #[error("transcript version {0} is not supported (this harness reads version 1)")]
    Version(u64),
    /// The line starts as a header but is not one.
    #[error("the transcript's header is not valid: {0}")]
    Invalid(String),
}

impl Header {
    /// The header of a run of `backend` normalized with `config`.
    pub fn new(backend: &str, config: &NormalizerConfig) -> Self {
        let mut header = Header::from_config(config);
        header.backend = Some(backend.to_string());
        header
    }

    /// The header of a run normalized with `config`, its backend not named.
    pub fn from_config(config: &NormalizerConfig) -> Self {
        Header {
            backend: None,
            cwd: config.cwd.clone(),
            workspace: config.workspace.clone(),
            started: config.started,
            session: config.session,
        }
    }

    /// The normalizer's settings it records.
    pub fn config(&self) -> NormalizerConfig {
        NormalizerConfig {
            cwd: self.cwd.clone(),
            workspace: self.workspace.clone(),
            started: self.started,
            session: self.session,
        }
    }

    /// The header line, without its `\n`.
    pub fn to_line(&self) -> Vec<u8> {
        let wire = Wire {
            harness_transcript: VERSION,
            backend: self.backend.clone(),
            cwd: self.cwd.clone(),
            workspace: self.workspace.clone(),
            started: self.started,
            session: self.session,
        };
        // Serializing strings and a number into a vector cannot fail.
        serde_json::to_vec(&wire).unwrap_or_default()
    }

    /// Reads `line` (without its `\n`) as a header: `None` when it is not one (it does not
    /// start with [`MAGIC`]: a plain stream's first line), else the header or why it cannot be
    /// read.
    pub fn parse(line: &[u8]) -> Option<Result<Header, HeaderError>> {
        if !line.starts_with(MAGIC) {
            return None;
        }
        let wire: Wire = match serde_json::from_slice(line) {
            Ok(wire) => wire,
            Err(e) => return Some(Err(HeaderError::Invalid(e.to_string()))),
        };
        if wire.harness_transcript != VERSION {
            return Some(Err(HeaderError::Version(wire.harness_transcript)));
        }
        Some(Ok(Header {
            backend: wire.backend,
            cwd: wire.cwd,
            workspace: wire.workspace,
            started: wire.started,
            session: wire.session,
        }))
    }
}

/// One line of a transcript after its header (TR3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    /// A line of the agent's standard output, as the normalizer read it (`push_line`).
    Stdout(&'a [u8]),
    /// A line of the agent's standard error (`push_stderr`).
    Stderr(&'a [u8]),
    /// A record of a kind this version does not know: skipped (TR5).
    Other(&'a [u8]),
}

impl<'a> Record<'a> {
    /// Reads one line of a transcript (without its `\n`): its tag, a space, its content. A
    /// tag alone is an empty line (a trailing space an editor removed).
    pub fn parse(line: &'a [u8]) -> Record<'a> {
        let (tag, content) = match memchr::memchr(b' ', line) {
            Some(space) => (&line[..space], &line[space + 1..]),
            None => (line, &line[line.len()..]),
        };
        match tag {
            STDOUT => Record::Stdout(content),
            STDERR => Record::Stderr(content),
            _ => Record::Other(line),
        }
    }

    /// Writes the record and its `\n` to `out`.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        let (tag, content) = match *self {
            Record::Stdout(content) => (STDOUT, content),
            Record::Stderr(content) => (STDERR, content),
            Record::Other(line) => return out.write_all(line).and_then(|()| out.write_all(b"\n")),
        };
        out.write_all(tag)?;
        out.write_all(b" ")?;
        out.write_all(content)?;
        out.write_all(b"\n")
    }
}

/// Feeds every record of `input`, a transcript whose header line has been read, to
/// `normalizer` in order (TR4): standard output lines with `push_line`, standard error lines
/// with `push_stderr`; records of other kinds are skipped. Events are appended to `out`; the
/// caller ends the input ([`Normalizer::finish`]).
///
/// ```
/// use harness_agents_core::transcript::{Header, replay};
/// # use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson};
/// # use harness_agents_core::{Backend, EventBody, NormalizerConfig};
/// # #[derive(Default)]
/// # struct Echo;
/// # impl Decoder for Echo {
/// #     fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
/// #         out.emit(EventBody::Agent { text: String::from_utf8_lossy(line).into() });
/// #         Ok(())
/// #     }
/// # }
/// use std::io::BufRead;
///
/// let file: &[u8] = b"{\"harness_transcript\":1,\"cwd\":\"/repo\"}\nout one\nerr careful\nout two\n";
/// let mut lines = std::io::BufReader::new(file);
/// let mut first = Vec::new();
/// lines.read_until(b'\n', &mut first)?;
/// let header = Header::parse(first.trim_ascii_end()).unwrap().unwrap();
/// let mut normalizer = Driver::<Echo>::new(header.config());
/// let mut events = Vec::new();
/// replay(lines, &mut normalizer, &mut events)?;
/// assert_eq!(events.len(), 3); // one, the warning, two
/// assert_eq!(events[2].line, Some(2));
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Errors
///
/// Reading `input` failed.
pub fn replay(
    mut input: impl BufRead,
    normalizer: &mut dyn Normalizer,
    out: &mut Vec<Event>,
) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let content = line.strip_suffix(b"\n").unwrap_or(&line);
        match Record::parse(content) {
            Record::Stdout(text) => normalizer.push_line(text, out),
            Record::Stderr(text) => normalizer.push_stderr(text, out),
            Record::Other(_) => {}
        }
    }
}

/// Writes a transcript as a run goes: the header first, then each line the normalizer reads.
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
}

impl<W: Write> Writer<W> {
    /// A transcript into `out`, its header written at once.
    ///
    /// # Errors
    ///
    /// Writing the header failed.
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        out.write_all(&header.to_line())?;
        out.write_all(b"\n")?;
        Ok(Writer { out })
    }

    /// Records one line of the agent's standard output.
    ///
    /// # Errors
    ///
    /// Writing failed.
    pub fn stdout(&mut self, line: &[u8]) -> io::Result<()> {
        Record::Stdout(line).write_to(&mut self.out)
    }

    /// Records one line of the agent's standard error.
    ///
    /// # Errors
    ///
    /// Writing failed.
    pub fn stderr(&mut self, line: &[u8]) -> io::Result<()> {
        Record::Stderr(line).write_to(&mut self.out)
    }

    /// Writes out what is buffered.
    ///
    /// # Errors
    ///
    /// Writing failed.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
