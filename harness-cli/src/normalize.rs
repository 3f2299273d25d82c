//! `harness normalize`: a recorded stream in, one event per line out (JSON Lines or the human
//! format), then the outcome.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use harness_core::{Event, Normalizer};

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

/// Feeds every line of `source` to `push`, writing events as they come.
fn feed<W: Write>(
    source: &Source,
    input: Box<dyn Read>,
    writer: &mut EventWriter<W>,
    normalizer: &mut dyn Normalizer,
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
            normalizer.push_stderr(content, &mut writer.buf);
        } else {
            normalizer.push_line(content, &mut writer.buf);
        }
        writer.follow_cwd(normalizer);
        writer.write_events()?;
    }
}

/// Normalizes `stdout` (then `stderr`, S10) and writes the events and the outcome to `out`.
pub fn run<W: Write>(
    normalizer: &mut dyn Normalizer,
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
    feed(stdout, stdout_input, &mut writer, normalizer, false)?;
    if let Some((source, input)) = stderr_input {
        feed(source, input, &mut writer, normalizer, true)?;
    }
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
