//! `harness classify`: prints how Codex classifies shell commands (SPEC B1a).
//!
//! Three modes, each printing one JSON array per input (the parts, tagged `"type"`, absent
//! values as `null`, exactly as Codex serializes them):
//!
//! - `harness classify SCRIPT` classifies `["bash", "-lc", SCRIPT]`;
//! - `harness classify --argv ARG...` classifies that argv;
//! - `harness classify` reads standard input, one input per non-blank line: a JSON array of
//!   strings is an argv, a JSON string is a script. Any other line prints
//!   `{"error": "..."}` in its place, and the next line is read.

use std::io::{self, BufRead, Write};

use harness_agents_codex_shell::{ParsedCommand, parse_command};
use serde_json::Value;

/// Runs `harness classify`: `script` and `argv` are the command-line inputs (at most one of
/// them), `input` is read only when both are absent. Only I/O fails (and giving both inputs).
pub fn run(
    script: Option<String>,
    argv: Option<Vec<String>>,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> io::Result<()> {
    match (script, argv) {
        (Some(_), Some(_)) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "give either a SCRIPT or --argv, not both",
        )),
        (Some(script), None) => write_parts(out, &parse_command(&wrap(script))),
        (None, Some(argv)) => write_parts(out, &parse_command(&argv)),
        (None, None) => run_lines(input, out),
    }
}

/// The argv Codex records for a script.
fn wrap(script: String) -> Vec<String> {
    vec!["bash".to_string(), "-lc".to_string(), script]
}

fn write_parts(out: &mut dyn Write, parts: &[ParsedCommand]) -> io::Result<()> {
    serde_json::to_writer(&mut *out, parts)?;
    out.write_all(b"\n")
}

/// What one input line asks for.
enum Request {
    Argv(Vec<String>),
    Error(String),
}

fn request(line: &[u8]) -> Request {
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(err) => return Request::Error(format!("not JSON: {err}")),
    };
    match value {
        Value::String(script) => Request::Argv(wrap(script)),
        Value::Array(items) => {
            let words: Option<Vec<String>> = items
                .into_iter()
                .map(|item| match item {
                    Value::String(word) => Some(word),
                    _ => None,
                })
                .collect();
            match words {
                Some(words) => Request::Argv(words),
                None => Request::Error("an argv array must hold only strings".to_string()),
            }
        }
        _ => Request::Error(
            "expected a JSON array of strings (argv) or a JSON string (a script)".to_string(),
        ),
    }
}

/// Classifies each non-blank line of `input`, printing one line for it, as it comes.
fn run_lines(input: &mut dyn BufRead, out: &mut dyn Write) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match request(text) {
            Request::Argv(argv) => write_parts(out, &parse_command(&argv))?,
            Request::Error(message) => {
                serde_json::to_writer(&mut *out, &serde_json::json!({ "error": message }))?;
                out.write_all(b"\n")?;
            }
        }
        // A caller may feed one line and wait for its answer.
        out.flush()?;
    }
}
