//! Normalizes a recorded Codex stream: `cargo run -p harness-agents-codex --example normalize --
//! [--cwd DIR] STDOUT_FILE [STDERR_FILE]`. Prints one event per line, then the outcome line,
//! as `harness normalize --backend codex` does (J9), so its output can be checked with the
//! conformance kit's `compare.py`.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use harness_agents_codex::CodexNormalizer;
use harness_agents_core::{Event, LineSplitter, Normalizer, NormalizerConfig, OutcomeLine};

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut config = NormalizerConfig::default();
    if args.first().map(String::as_str) == Some("--cwd") && args.len() >= 2 {
        config.cwd = Some(args.remove(1));
        args.remove(0);
    }
    let (stdout, stderr) = match args.as_slice() {
        [stdout] => (stdout.clone(), None),
        [stdout, stderr] => (stdout.clone(), Some(stderr.clone())),
        _ => {
            eprintln!("usage: normalize [--cwd DIR] STDOUT_FILE [STDERR_FILE]");
            return ExitCode::from(2);
        }
    };
    let mut normalizer = CodexNormalizer::new(config);
    let mut events: Vec<Event> = Vec::new();
    for (path, is_stderr) in [(Some(stdout), false), (stderr, true)] {
        let Some(path) = path else { continue };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                eprintln!("{path}: {e}");
                return ExitCode::FAILURE;
            }
        };
        let mut splitter = LineSplitter::new();
        let mut push = |line: &[u8]| {
            if is_stderr {
                normalizer.push_stderr(line, &mut events);
            } else {
                normalizer.push_line(line, &mut events);
            }
        };
        splitter.push(&bytes, &mut push);
        splitter.finish(&mut push);
    }
    let outcome = normalizer.finish(&mut events);
    let mut out = BufWriter::new(std::io::stdout().lock());
    let written = events
        .iter()
        .map(serde_json::to_string)
        .chain([serde_json::to_string(&OutcomeLine::new(&outcome))])
        .try_for_each(|line| match line {
            Ok(line) => writeln!(out, "{line}"),
            Err(e) => Err(std::io::Error::other(e)),
        })
        .and_then(|()| out.flush());
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
