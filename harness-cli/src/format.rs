//! Output formats: JSON Lines for programs, one readable line per event for people.
//!
//! `jsonl` writes each event as one JSON object per line, then the outcome line tagged
//! `"kind": "outcome"` (J9). `human` writes one line per event (`read      src/app.py:4-9`,
//! `$ cargo build  (failed)`), reasoning dimmed, warnings and errors marked, and a closing
//! summary of the outcome. Colour is hand-written ANSI, only when asked for.

use std::fmt::Write as _;
use std::io::{self, IsTerminal, Write};

use clap::ValueEnum;
use harness_core::{Event, EventBody, Kind, LineRange, Outcome, OutcomeLine, Status, ToolStatus};
use serde_json::Number;

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
    /// When stdout is a terminal and `NO_COLOR` is unset or empty.
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

/// Whether to colour, per `--color` and the `NO_COLOR` convention.
pub fn choose_color(asked: Color) -> bool {
    match asked {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => {
            io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Writes events and the outcome in one format.
pub struct Printer<W: Write> {
    out: W,
    format: Format,
    color: bool,
    /// Paths under this directory are shown relative to it (human format).
    pub base: Option<String>,
}

impl<W: Write> Printer<W> {
    /// A printer writing to `out`.
    pub fn new(out: W, format: Format, color: bool) -> Self {
        Printer {
            out,
            format,
            color,
            base: None,
        }
    }

    /// Whether this printer writes the human format.
    pub fn is_human(&self) -> bool {
        self.format == Format::Human
    }

    /// Writes one event.
    pub fn event(&mut self, event: &Event) -> io::Result<()> {
        match self.format {
            Format::Jsonl => {
                serde_json::to_writer(&mut self.out, event).map_err(io::Error::from)?
            }
            Format::Human => {
                let line = human_event(event, self.base.as_deref(), self.color);
                self.out.write_all(line.as_bytes())?;
            }
        }
        self.out.write_all(b"\n")
    }

    /// Writes the closing outcome: the outcome line (J9) or the summary.
    pub fn outcome(&mut self, outcome: &Outcome) -> io::Result<()> {
        match self.format {
            Format::Jsonl => serde_json::to_writer(&mut self.out, &OutcomeLine::new(outcome))
                .map_err(io::Error::from)?,
            Format::Human => {
                let line = human_summary(outcome, self.color);
                self.out.write_all(line.as_bytes())?;
            }
        }
        self.out.write_all(b"\n")
    }

    /// Flushes what was written.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const BLUE: &str = "\x1b[34m";
const MAGENTA: &str = "\x1b[35m";
const CYAN: &str = "\x1b[36m";

fn paint(color: bool, code: &str, text: &str) -> String {
    if color && !text.is_empty() {
        format!("{code}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// The width of the label column.
const LABEL: usize = 10;

/// Indents every line after the first so that text lines up after the label.
fn indent(text: &str) -> String {
    text.replace('\n', &format!("\n{:LABEL$}", ""))
}

/// A path relative to `base` when it lies under it.
fn show_path(path: &str, base: Option<&str>) -> String {
    if let Some(base) = base.filter(|b| !b.is_empty()) {
        if path == base {
            return ".".to_string();
        }
        let base = base.strip_suffix('/').unwrap_or(base);
        if let Some(rest) = path.strip_prefix(base).and_then(|r| r.strip_prefix('/')) {
            if !rest.is_empty() {
                return rest.to_string();
            }
        }
    }
    path.to_string()
}

fn show_range(range: Option<LineRange>) -> String {
    match range {
        Some(LineRange {
            start,
            end: Some(end),
        }) => format!(":{start}-{end}"),
        Some(LineRange { start, end: None }) => format!(":{start}-"),
        None => String::new(),
    }
}

/// `  (failed: first line of the error)` for a failed tool use, else nothing.
fn show_status(status: &ToolStatus, color: bool) -> String {
    if status.success {
        return String::new();
    }
    let text = match status.error.as_deref().and_then(|e| e.lines().next()) {
        Some(first) if !first.trim().is_empty() => format!("(failed: {})", cut(first.trim(), 200)),
        _ => "(failed)".to_string(),
    };
    format!("  {}", paint(color, RED, &text))
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

fn label(color: bool, code: &str, name: &str) -> String {
    paint(color, code, &format!("{name:<LABEL$}"))
}

/// One event as a readable line (several for multi-line text), without the final newline.
pub fn human_event(event: &Event, base: Option<&str>, color: bool) -> String {
    let path = |p: &str| paint(color, BOLD, &show_path(p, base));
    let mut line = match &event.body {
        EventBody::Agent { text } => format!("{}{}", label(color, CYAN, "agent"), indent(text)),
        EventBody::Reasoning { text } => paint(
            color,
            DIM,
            &format!("{}{}", label(false, "", "reasoning"), indent(text)),
        ),
        EventBody::Read {
            path: p,
            range,
            status,
            ..
        } => format!(
            "{}{}{}{}",
            label(color, BLUE, "read"),
            path(p),
            show_range(*range),
            show_status(status, color)
        ),
        EventBody::Write {
            path: p,
            change,
            status,
            ..
        } => {
            let change = change
                .as_deref()
                .map(|c| format!("  ({c})"))
                .unwrap_or_default();
            format!(
                "{}{}{change}{}",
                label(color, MAGENTA, "write"),
                path(p),
                show_status(status, color)
            )
        }
        EventBody::Search {
            query,
            path: p,
            status,
            ..
        } => {
            let mut text = label(color, BLUE, "search");
            if let Some(query) = query {
                text.push_str(&serde_json::to_string(query).unwrap_or_default());
            }
            if let Some(p) = p {
                let sep = if query.is_some() { " in " } else { "in " };
                text.push_str(sep);
                text.push_str(&path(p));
            }
            text + &show_status(status, color)
        }
        EventBody::List {
            path: p, status, ..
        } => format!(
            "{}{}{}",
            label(color, BLUE, "list"),
            p.as_deref().map(path).unwrap_or_else(|| ".".to_string()),
            show_status(status, color)
        ),
        EventBody::Command {
            command,
            exit_code,
            status,
            ..
        } => {
            let mut text = format!("{} {}", paint(color, GREEN, "$"), indent(command));
            match exit_code {
                Some(code) if code.as_i64() != Some(0) || !status.success => {
                    let note = format!("(exit {code})");
                    let _ = write!(text, "  {}", paint(color, RED, &note));
                }
                _ => text.push_str(&show_status(status, color)),
            }
            text
        }
        EventBody::Skill {
            name,
            path: p,
            status,
            ..
        } => format!(
            "{}{name}  {}{}",
            label(color, MAGENTA, "skill"),
            paint(color, DIM, &show_path(p, base)),
            show_status(status, color)
        ),
        EventBody::Plan { items } => {
            let mut text = label(color, YELLOW, "plan");
            for (i, item) in items.iter().enumerate() {
                let mark = if item.completed == serde_json::Value::Bool(true) {
                    "[x]"
                } else {
                    "[ ]"
                };
                let item_text = match &item.text {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                if i > 0 {
                    let _ = write!(text, "\n{:LABEL$}", "");
                }
                let _ = write!(text, "{mark} {item_text}");
            }
            text
        }
        EventBody::Warning { message, source } => {
            let source = serde_json::to_value(source)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            format!(
                "{}{}  {}",
                label(color, YELLOW, "warning"),
                indent(message),
                paint(color, DIM, &format!("({source})"))
            )
        }
        EventBody::Error { message } => format!(
            "{}{}",
            label(color, &format!("{BOLD}{RED}"), "error"),
            paint(color, RED, &indent(message))
        ),
        EventBody::Started { command, tool, .. } => {
            let what = command
                .as_deref()
                .map(|c| format!("$ {}", indent(c)))
                .or_else(|| tool.tool.clone())
                .unwrap_or_default();
            paint(
                color,
                DIM,
                &format!("{}{what}", label(false, "", "started")),
            )
        }
        EventBody::Unknown { reason, tool, .. } => {
            let reason = serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let tool = tool
                .tool
                .as_deref()
                .map(|t| format!(" {t}"))
                .unwrap_or_default();
            paint(
                color,
                DIM,
                &format!("{}{reason}{tool}", label(false, "", "unknown")),
            )
        }
        // A kind newer than this printer (the list may grow, J10): its name alone.
        other => label(color, DIM, other.kind().as_str()),
    };
    if event.parent_tool_use_id.is_some() {
        line = format!("{} {line}", paint(color, DIM, "│"));
    }
    line
}

fn number(n: &Number) -> String {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => thousands(&u.to_string()),
        (None, Some(i)) => i.to_string(),
        _ => n.to_string(),
    }
}

fn thousands(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The outcome as one summary line: status, turns, tokens, cost, duration, counts, exit code.
pub fn human_summary(outcome: &Outcome, color: bool) -> String {
    let (name, code) = match outcome.status {
        Status::Success => ("success", GREEN),
        Status::Error => ("error", RED),
        Status::Incomplete => ("incomplete", YELLOW),
        _ => ("ended", YELLOW),
    };
    let mut parts = vec![paint(color, &format!("{BOLD}{code}"), name)];
    let m = &outcome.metrics;
    if let Some(turns) = &m.num_turns {
        let plural = if turns.as_u64() == Some(1) { "" } else { "s" };
        parts.push(format!("{} turn{plural}", number(turns)));
    }
    let mut tokens = Vec::new();
    if let Some(n) = &m.input_tokens {
        tokens.push(format!("{} in", number(n)));
    }
    if let Some(n) = &m.output_tokens {
        tokens.push(format!("{} out", number(n)));
    }
    // Cache and reasoning figures only matter when there are some.
    let nonzero = |n: &&Number| n.as_f64().is_some_and(|f| f != 0.0);
    if let Some(n) = m.cache_read_input_tokens.as_ref().filter(nonzero) {
        tokens.push(format!("{} cache read", number(n)));
    }
    if let Some(n) = m.cache_creation_input_tokens.as_ref().filter(nonzero) {
        tokens.push(format!("{} cache written", number(n)));
    }
    if let Some(n) = m.reasoning_output_tokens.as_ref().filter(nonzero) {
        tokens.push(format!("{} reasoning", number(n)));
    }
    if !tokens.is_empty() {
        parts.push(format!("tokens {}", tokens.join(", ")));
    }
    if let Some(cost) = m.total_cost_usd.as_ref().and_then(Number::as_f64) {
        parts.push(format!("${cost:.4}"));
    }
    if let Some(ms) = m.duration_ms.as_ref().and_then(Number::as_f64) {
        parts.push(format!("{:.1}s", ms / 1000.0));
    }
    let counts: Vec<String> = Kind::ALL
        .iter()
        .filter_map(|k| outcome.counts.get(k).map(|n| format!("{n} {}", k.as_str())))
        .collect();
    if !counts.is_empty() {
        parts.push(counts.join(", "));
    }
    match outcome.exit_code {
        Some(Some(code)) => parts.push(format!("exit {code}")),
        Some(None) => parts.push("killed by a signal".to_string()),
        None => {}
    }
    if let Some(session) = &outcome.session_id {
        parts.push(paint(color, DIM, &format!("session {session}")));
    }
    format!("{} {}", paint(color, DIM, "──"), parts.join(" · "))
}
