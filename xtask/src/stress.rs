//! `cargo xtask stress [--scale F]`: hostile sizes through the release `harness` binary, with
//! the peak RSS (`wait4`) and wall time of each run. Not part of CI.
//!
//! Every input is generated on the fly and piped into the child's standard input (the 1 GB
//! stream is never written to disk); the child's output is counted as it streams out. Each
//! scenario also runs at a tenth of its size, so a time ratio far above 10 shows quadratic
//! behaviour. `--scale F` multiplies every size (e.g. `--scale 0.1` for a quick look).
//!
//! | scenario | input | bound |
//! |---|---|---|
//! | `line-300mb` | one 300 MB `tool_result` line (file text with escaped newlines) | 2 × longest line + 32 MB |
//! | `stream-1gb` | the Claude recordings repeated with fresh ids to 1 GB | 2 × longest line + 32 MB |
//! | `codex-message-200mb` | one Codex turn whose `agent_message` is a 200 MB line of prose | 2 × longest line + 32 MB |
//! | `codex-escaped-message-200mb` | the same with JSON-escaped quotes and newlines | 2 × longest line + 32 MB |
//! | `codex-message-200mb-human` | `codex-message-200mb` through `--format human` | 2 × longest line + 32 MB |
//! | `auto-first-line-200mb` | that message as the first line of a stream whose backend is detected (`--backend auto`; too long to detect, so Claude reads it) | 2 × longest line + 32 MB |
//! | `pending-1m` | a million tool uses that never get a result (S9) | linear in the pending uses (S7) |
//! | `resolved-1m` | a million pending tool uses, then their results in reverse order | linear in the pending uses (S7) |
//! | `classify-10mb-chain`, `-quote` | `harness classify`: 10 MB shell scripts (a long `&&` chain, one unbalanced quote) | 16 × input + 32 MB, linear time (B3) |
//! | `classify-cd-chain` | 20 MB of `cd a && ` then `cat f` (the `cd` directory grows with the chain) | 16 × input + 32 MB, linear time (B3) |
//! | `classify-many-words` | one 20 MB command `ls a a a ...` (ten million words) | 16 × input + 32 MB, linear time (B3) |
//! | `classify-dropped-chain` | 10 MB of `echo N && `, then of `nl -N && `, then `cat f` (every part but the last dropped, RULES §9) | 16 × input + 32 MB, linear time (B3) |
//!
//! The binary is `target/release/harness` under `CARGO_TARGET_DIR` when that is set.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

const MB: u64 = 1024 * 1024;

/// What one run of the binary took.
struct Figures {
    input_bytes: u64,
    longest_line: u64,
    output_lines: u64,
    output_bytes: u64,
    last_line: String,
    peak_rss: u64,
    wall: Duration,
    /// User + system CPU time of the child: steadier than wall time on a busy machine.
    cpu: Duration,
}

/// Something that writes a generated input into a pipe and knows its longest line.
type Generator = Box<dyn FnOnce(&mut dyn Write) -> std::io::Result<(u64, u64)> + Send>;

/// Checks a run's output, given the size asked for.
type Check = Box<dyn Fn(&Figures, u64) -> Result<()>>;

/// Runs `harness ARGS` with the generated input on stdin; returns its figures.
fn run(harness: &Path, args: &[&str], input: Generator) -> Result<Figures> {
    let start = Instant::now();
    let mut child = Command::new(harness)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("running {}", harness.display()))?;
    let pid = child.id();
    let mut stdin = child.stdin.take().context("no stdin")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let writer = std::thread::spawn(move || -> std::io::Result<(u64, u64)> {
        let mut pipe = std::io::BufWriter::with_capacity(1 << 20, &mut stdin);
        let figures = input(&mut pipe)?;
        pipe.flush()?;
        Ok(figures)
    });
    let reader = std::thread::spawn(move || -> std::io::Result<(u64, u64, String)> {
        let mut out = BufReader::with_capacity(1 << 20, stdout);
        let (mut lines, mut bytes) = (0u64, 0u64);
        let mut line = Vec::new();
        let mut last = Vec::new();
        loop {
            line.clear();
            let n = out.read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            lines += 1;
            bytes += n as u64;
            // Keep the start of the last line (the outcome, or a classification).
            last.clear();
            last.extend_from_slice(&line[..line.len().min(64 * 1024)]);
        }
        Ok((
            lines,
            bytes,
            String::from_utf8_lossy(&last).trim_end().to_string(),
        ))
    });
    let written = writer
        .join()
        .map_err(|_| anyhow::anyhow!("writer panicked"))?;
    let (output_lines, output_bytes, last_line) = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reader panicked"))??;
    let usage = crate::rusage::wait_pid(pid)?;
    let wall = start.elapsed();
    if !usage.success {
        bail!(
            "harness {} failed (wait status {})",
            args.join(" "),
            usage.wait_status
        );
    }
    let (input_bytes, longest_line) = written.context("writing the input")?;
    Ok(Figures {
        input_bytes,
        longest_line,
        output_lines,
        output_bytes,
        last_line,
        peak_rss: usage.peak_rss,
        wall,
        cpu: usage.cpu,
    })
}

/// Counts what goes through: total bytes and the longest line.
struct Counting<'a> {
    out: &'a mut dyn Write,
    bytes: u64,
    line: u64,
    longest: u64,
}

impl<'a> Counting<'a> {
    fn new(out: &'a mut dyn Write) -> Self {
        Counting {
            out,
            bytes: 0,
            line: 0,
            longest: 0,
        }
    }

    fn put(&mut self, data: &[u8]) -> std::io::Result<()> {
        self.out.write_all(data)?;
        self.bytes += data.len() as u64;
        let mut rest = data;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.longest = self.longest.max(self.line + i as u64);
            self.line = 0;
            rest = &rest[i + 1..];
        }
        self.line += rest.len() as u64;
        Ok(())
    }

    /// Writes `head`, then `unit` repeated (in blocks of 16,384 units, then `x`s) until the
    /// line holds `size` bytes, then `tail`: one huge line of generated text.
    fn put_line_body(
        &mut self,
        head: &[u8],
        unit: &[u8],
        tail: &[u8],
        size: u64,
    ) -> std::io::Result<()> {
        self.put(head)?;
        let block: Vec<u8> = unit.repeat(16_384);
        let mut left = size.saturating_sub((head.len() + tail.len()) as u64);
        while left >= block.len() as u64 {
            self.put(&block)?;
            left -= block.len() as u64;
        }
        // Whole units to the end, so a small size (a smoke run) reads as the large one does.
        let units = usize::try_from(left / unit.len() as u64).unwrap_or(0);
        self.put(&unit.repeat(units))?;
        left -= (units * unit.len()) as u64;
        self.put(&vec![b'x'; usize::try_from(left).unwrap_or(0)])?;
        self.put(tail)
    }

    fn done(self) -> (u64, u64) {
        (self.bytes, self.longest.max(self.line))
    }
}

/// One Read tool use whose result is a `size`-byte line of file text.
fn long_line(size: u64) -> Generator {
    Box::new(move |out| {
        let mut w = Counting::new(out);
        w.put(br#"{"type":"system","subtype":"init","cwd":"/work","session_id":"stress"}"#)?;
        w.put(b"\n")?;
        w.put(br#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"big.txt"}}]},"parent_tool_use_id":null}"#)?;
        w.put(b"\n")?;
        let head = br#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":""#;
        let tail = br#""}]},"parent_tool_use_id":null}"#;
        // Source text as Claude Code prints it: JSON-escaped quotes and newlines.
        let unit: &[u8] = br#"    let s = format!(\"{x}\"); // some source text here\n"#;
        w.put_line_body(head, unit, tail, size)?;
        w.put(b"\n")?;
        w.put(br#"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#)?;
        w.put(b"\n")?;
        Ok(w.done())
    })
}

/// One Codex turn whose agent message is a `size`-byte line: its text held by the event and
/// the outcome's `final_output`. `escaped`: prose with JSON-escaped quotes and
/// newlines, decoded straight into the shared text. `first`: the
/// message is the stream's first line, read while the backend is being detected
/// (`--backend auto`).
fn codex_message(size: u64, escaped: bool, first: bool) -> Generator {
    Box::new(move |out| {
        let mut w = Counting::new(out);
        if !first {
            w.put(br#"{"type":"thread.started","thread_id":"stress"}"#)?;
            w.put(b"\n")?;
            w.put(br#"{"type":"turn.started"}"#)?;
            w.put(b"\n")?;
        }
        let head =
            br#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":""#;
        let tail = br#""}}"#;
        let unit: &[u8] = if escaped {
            br#"The agent says \"done\" and goes on about the code it read.\n"#
        } else {
            b"The agent goes on and on about the code it read, in one long paragraph. "
        };
        w.put_line_body(head, unit, tail, size)?;
        w.put(b"\n")?;
        w.put(br#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}"#)?;
        w.put(b"\n")?;
        Ok(w.done())
    })
}

/// Checks a [`codex_message`] run: the `agent` event, then the outcome with the message as its
/// `final_output` (only the outcome's first 64 KiB are kept, so it is not parsed).
fn check_codex_message(figures: &Figures, size: u64) -> Result<()> {
    let start =
        r#"{"kind":"outcome","session_id":"stress","status":"success","final_output":"The agent "#;
    if figures.output_lines != 2 || !figures.last_line.starts_with(start) {
        bail!(
            "expected an agent event and the outcome, got {} lines ending {}",
            figures.output_lines,
            &figures.last_line[..figures.last_line.len().min(200)]
        );
    }
    // The text twice (event and outcome), each about the size of its line.
    if figures.output_bytes < 2 * size - size / 5 {
        bail!(
            "{} bytes out for a {size}-byte message",
            figures.output_bytes
        );
    }
    Ok(())
}

/// The Claude recordings, repeated with fresh ids, up to `size` bytes.
fn long_stream(recordings: Vec<String>, size: u64) -> Generator {
    Box::new(move |out| {
        let mut w = Counting::new(out);
        let mut rep = 0u64;
        while w.bytes < size {
            for text in &recordings {
                let fresh = text
                    .replace("\"toolu_", &format!("\"toolu_{rep}_"))
                    .replace("\"msg_", &format!("\"msg_{rep}_"));
                w.put(fresh.as_bytes())?;
                if !fresh.ends_with('\n') {
                    w.put(b"\n")?;
                }
            }
            rep += 1;
        }
        Ok(w.done())
    })
}

/// `count` tool uses, each its own message; then, when `resolve`, their results in reverse.
fn pending(count: u64, resolve: bool) -> Generator {
    Box::new(move |out| {
        let mut w = Counting::new(out);
        for i in 0..count {
            let line = format!(
                r#"{{"type":"assistant","message":{{"id":"m{i}","content":[{{"type":"tool_use","id":"t{i}","name":"Read","input":{{"file_path":"src/f{i}.rs"}}}}]}},"parent_tool_use_id":null}}"#
            );
            w.put(line.as_bytes())?;
            w.put(b"\n")?;
        }
        if resolve {
            for i in (0..count).rev() {
                let line = format!(
                    r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"ok"}}]}},"parent_tool_use_id":null}}"#
                );
                w.put(line.as_bytes())?;
                w.put(b"\n")?;
            }
        }
        Ok(w.done())
    })
}

/// `harness classify` input: one JSON string line holding a `size`-byte script.
fn script(size: u64, kind: &'static str) -> Generator {
    Box::new(move |out| {
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        let repeat = |head: &str, unit: &str, end: &str| {
            format!("{head}{}{end}", unit.repeat(size / unit.len()))
        };
        let text = match kind {
            "chain" => repeat("", "cat src/a.rs && ", "ls"),
            "cd-chain" => repeat("", "cd a && ", "cat f"),
            "many-words" => repeat("ls", " a", ""),
            "dropped-chain" => {
                // Distinct commands, so none is merged with its neighbour before RULES §9.
                let mut text = String::with_capacity(size + 16);
                for (program, until) in [("echo ", size / 2), ("nl -", size)] {
                    let mut n = 0u64;
                    while text.len() < until {
                        text.push_str(&format!("{program}{n} && "));
                        n += 1;
                    }
                }
                text.push_str("cat f");
                text
            }
            _ => repeat("echo 'never closed ", "word ", ""),
        };
        let line = serde_json::to_string(&Value::from(text))?;
        let mut w = Counting::new(out);
        w.put(line.as_bytes())?;
        w.put(b"\n")?;
        Ok(w.done())
    })
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / MB as f64
}

/// The peak RSS a scenario must stay under.
#[derive(Clone, Copy)]
enum Bound {
    /// 2 × the longest line + 32 MB: the normalizer keeps one line at a time (S7).
    Line,
    /// FACTOR × the input + 32 MB: the classifier keeps one command's words (a slice each,
    /// 24 bytes) and a few copies of its text while it classifies it (B3).
    Input(u64),
    /// None: pending tool uses must be kept (S7); reported only.
    Pending,
}

impl Bound {
    /// The bound in bytes for these figures, if any.
    fn bytes(self, figures: &Figures) -> Option<u64> {
        match self {
            Bound::Line => Some(2 * figures.longest_line + 32 * MB),
            Bound::Input(factor) => Some(factor * figures.input_bytes + 32 * MB),
            Bound::Pending => None,
        }
    }

    fn describe(self) -> String {
        match self {
            Bound::Line => "2 × longest line + 32 MB".to_string(),
            Bound::Input(factor) => format!("{factor} × input + 32 MB"),
            Bound::Pending => "linear in pending (S7)".to_string(),
        }
    }
}

/// One scenario: a name, the command, a generator per size, the RSS bound and a check of the
/// output.
struct Scenario {
    name: &'static str,
    args: &'static [&'static str],
    make: Box<dyn Fn(u64) -> Generator>,
    size: u64,
    bound: Bound,
    check: Check,
}

/// A classify scenario: one script of `size` bytes whose answer starts with `expected`.
fn classify_scenario(
    name: &'static str,
    kind: &'static str,
    size: u64,
    expected: &'static str,
) -> Scenario {
    Scenario {
        name,
        args: &["classify"],
        make: Box::new(move |size| script(size, kind)),
        size,
        bound: Bound::Input(16),
        check: Box::new(move |f, _| {
            if f.output_lines != 1 || !f.last_line.starts_with(expected) {
                bail!("expected one line starting {expected}, got {}", f.last_line);
            }
            Ok(())
        }),
    }
}

fn outcome_counts(figures: &Figures) -> Result<Value> {
    let outcome: Value =
        serde_json::from_str(&figures.last_line).context("the last line is not JSON")?;
    if outcome.get("kind") != Some(&Value::from("outcome")) {
        bail!("the last line is not the outcome: {}", figures.last_line);
    }
    Ok(outcome["counts"].clone())
}

/// Runs every scenario (or only the one named), sizes scaled by `scale`, through the release
/// binary (the debug one with `debug`).
pub fn stress(scale: f64, only: Option<String>, debug: bool) -> Result<()> {
    let harness = crate::build(debug, &["-p", crate::packages::CLI])?.join("harness");
    let recordings = crate::claude_recordings()?;
    let scenarios = vec![
        Scenario {
            name: "line-300mb",
            args: &["normalize"],
            make: Box::new(long_line),
            size: 300 * MB,
            bound: Bound::Line,
            check: Box::new(|f, _| {
                let counts = outcome_counts(f)?;
                if counts != serde_json::json!({"read": 1}) || f.output_lines != 2 {
                    bail!("expected one read event, got {counts}");
                }
                Ok(())
            }),
        },
        Scenario {
            name: "stream-1gb",
            args: &["normalize"],
            make: Box::new(move |size| long_stream(recordings.clone(), size)),
            size: 1024 * MB,
            bound: Bound::Line,
            check: Box::new(|f, _| {
                let counts = outcome_counts(f)?;
                let events: u64 = counts
                    .as_object()
                    .map(|c| c.values().filter_map(Value::as_u64).sum())
                    .unwrap_or(0);
                if events + 1 != f.output_lines {
                    bail!("counts {events} != {} events written", f.output_lines - 1);
                }
                Ok(())
            }),
        },
        Scenario {
            name: "codex-message-200mb",
            args: &["normalize", "--backend", "codex"],
            make: Box::new(|size| codex_message(size, false, false)),
            size: 200 * MB,
            bound: Bound::Line,
            check: Box::new(check_codex_message),
        },
        Scenario {
            name: "codex-escaped-message-200mb",
            args: &["normalize", "--backend", "codex"],
            make: Box::new(|size| codex_message(size, true, false)),
            size: 200 * MB,
            bound: Bound::Line,
            check: Box::new(check_codex_message),
        },
        Scenario {
            name: "codex-message-200mb-human",
            args: &["normalize", "--backend", "codex", "--format", "human"],
            make: Box::new(|size| codex_message(size, false, false)),
            size: 200 * MB,
            bound: Bound::Line,
            check: Box::new(|f, size| {
                // The message's line, then the summary.
                if f.output_bytes < size - size / 5 || !f.last_line.contains("success") {
                    bail!("{} bytes out, ending {}", f.output_bytes, f.last_line);
                }
                Ok(())
            }),
        },
        Scenario {
            name: "auto-first-line-200mb",
            args: &["normalize"],
            // Past the detector's window (1 MiB) at any scale, or it is not this case.
            make: Box::new(|size| codex_message(size.max(2 * MB), false, true)),
            size: 200 * MB,
            bound: Bound::Line,
            check: Box::new(|f, _| {
                // Too long to be parsed for detection: the default (Claude) reads the stream,
                // and keeps both lines as `unknown`, then ends without a result (S9).
                let counts = outcome_counts(f)?;
                if counts != serde_json::json!({"unknown": 2, "error": 1}) {
                    bail!("expected two unknown events and an error, got {counts}");
                }
                Ok(())
            }),
        },
        Scenario {
            name: "pending-1m",
            args: &["normalize"],
            make: Box::new(|n| pending(n, false)),
            size: 1_000_000,
            bound: Bound::Pending,
            check: Box::new(|f, n| {
                let counts = outcome_counts(f)?;
                if counts["unknown"].as_u64() != Some(n) {
                    bail!("expected {n} unresolved uses, got {counts}");
                }
                Ok(())
            }),
        },
        Scenario {
            name: "resolved-1m",
            args: &["normalize"],
            make: Box::new(|n| pending(n, true)),
            size: 1_000_000,
            bound: Bound::Pending,
            check: Box::new(|f, n| {
                let counts = outcome_counts(f)?;
                if counts["read"].as_u64() != Some(n) {
                    bail!("expected {n} reads, got {counts}");
                }
                Ok(())
            }),
        },
        classify_scenario(
            "classify-10mb-chain",
            "chain",
            10 * MB,
            "[{\"type\":\"read\"",
        ),
        classify_scenario(
            "classify-10mb-quote",
            "quote",
            10 * MB,
            "[{\"type\":\"unknown\"",
        ),
        classify_scenario(
            "classify-cd-chain",
            "cd-chain",
            20 * MB,
            "[{\"type\":\"read\",\"cmd\":\"cat f\",\"name\":\"f\",\"path\":\"a/a/",
        ),
        classify_scenario(
            "classify-many-words",
            "many-words",
            20 * MB,
            "[{\"type\":\"list_files\",\"cmd\":\"ls a a a",
        ),
        classify_scenario(
            "classify-dropped-chain",
            "dropped-chain",
            10 * MB,
            "[{\"type\":\"read\",\"cmd\":\"cat f\",\"name\":\"f\",\"path\":\"f\"}]",
        ),
    ];
    println!();
    println!(
        "| scenario | input | longest line | peak RSS | bound | wall time | CPU time | CPU at 1/10 size | ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut failures = Vec::new();
    for s in &scenarios {
        if only.as_deref().is_some_and(|o| o != s.name) {
            continue;
        }
        let size = ((s.size as f64) * scale).max(1.0) as u64;
        let small = (size / 10).max(1);
        let tenth = run(&harness, s.args, (s.make)(small))?;
        (s.check)(&tenth, small).with_context(|| format!("{} at 1/10", s.name))?;
        let full = run(&harness, s.args, (s.make)(size))?;
        (s.check)(&full, size).with_context(|| s.name)?;
        let bound = s.bound.bytes(&full);
        let within = bound.is_none_or(|bound| full.peak_rss <= bound);
        // Below 10 ms, CPU time is mostly start-up and clock granularity: not a base to divide by.
        let ratio = full.cpu.as_secs_f64() / tenth.cpu.as_secs_f64().max(1e-2);
        let input = if s.name.contains("1m") {
            format!("{size} uses, {:.0} MB", mb(full.input_bytes))
        } else {
            format!("{:.0} MB", mb(full.input_bytes))
        };
        println!(
            "| `{}` | {input} | {:.2} MB | {:.1} MB | {} | {:.2} s | {:.2} s | {:.2} s | {ratio:.1} × |",
            s.name,
            mb(full.longest_line),
            mb(full.peak_rss),
            match bound {
                Some(bound) => format!(
                    "{} = {:.1} MB{}",
                    s.bound.describe(),
                    mb(bound),
                    if within { "" } else { " **missed**" }
                ),
                None => s.bound.describe(),
            },
            full.wall.as_secs_f64(),
            full.cpu.as_secs_f64(),
            tenth.cpu.as_secs_f64(),
        );
        eprintln!(
            "  {}: {} output lines, {:.1} MB out",
            s.name,
            full.output_lines,
            mb(full.output_bytes)
        );
        if !within {
            failures.push(format!("{}: peak RSS over {}", s.name, s.bound.describe()));
        }
        if ratio > 20.0 {
            failures.push(format!(
                "{}: 10× the input took {ratio:.1}× the time",
                s.name
            ));
        }
    }
    if !failures.is_empty() {
        bail!("{}", failures.join("; "));
    }
    Ok(())
}
