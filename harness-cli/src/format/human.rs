//! The `human` format: one readable line per event, then a summary of the outcome.
//!
//! Labels take a column of their own (`read      src/app.py:4-9`), paths under the working
//! directory are shown relative to it, events from inside a sub-agent start with `│ `, and
//! every piece of agent text goes through [`super::safe`] first. Colour is hand-written ANSI,
//! only when asked for.

use std::fmt::Write as _;
use std::io::{self, Write};

use harness_agents_core::{
    Event, EventBody, Expected, Kind, LineRange, Outcome, Status, ToolRef, ToolStatus,
};
use serde_json::{Number, Value};

use super::Printer;
use super::safe::{multi_line, one_line};

impl<W: Write> Printer<W> {
    /// Writes one event in the human format, ending or rewriting a running tool's line first.
    pub(super) fn human(&mut self, event: &Event) -> io::Result<()> {
        let id = final_tool_use_id(&event.body);
        if let Some(open) = self.open.take() {
            if id.is_some() && open.as_deref() == id {
                // The running tool's own event takes its line.
                self.out.write_all(b"\r\x1b[K")?;
            } else {
                self.out.write_all(b"\n")?;
            }
        }
        if let (EventBody::Started { tool, .. }, Some(width)) = (&event.body, self.live) {
            let line = render(event, self.base.as_deref(), self.color, Some(width - 1));
            if !line.contains('\n') {
                self.out.write_all(line.as_bytes())?;
                self.open = Some(tool.tool_use_id.clone());
                return Ok(());
            }
        }
        if !write_said(&mut self.out, event, self.color)? {
            let line = human_event(event, self.base.as_deref(), self.color);
            self.out.write_all(line.as_bytes())?;
        }
        self.out.write_all(b"\n")
    }

    /// Writes the summary of the outcome, ending a running tool's line first.
    pub(super) fn human_outcome(&mut self, outcome: &Outcome) -> io::Result<()> {
        if self.open.take().is_some() {
            self.out.write_all(b"\n")?;
        }
        let line = human_summary(outcome, self.color);
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")
    }
}

/// The tool use a tool's final event (not a `started` one) belongs to.
fn final_tool_use_id(body: &EventBody) -> Option<&str> {
    if matches!(body, EventBody::Started { .. }) {
        return None;
    }
    body.tool()?.tool_use_id.as_deref()
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

/// The width of the label column: the text of every event starts in the column after it, in
/// sub-agents too (their `│ ` mark takes two of its columns).
const LABEL: usize = 10;

/// The mark in front of every line of an event produced inside a sub-agent (J4).
const SUB_AGENT: &str = "│ ";

/// A path relative to `base` when it lies under it, made safe.
fn show_path(path: &str, base: Option<&str>) -> String {
    if let Some(base) = base.filter(|b| !b.is_empty()) {
        if path == base {
            return ".".to_string();
        }
        let base = base.strip_suffix('/').unwrap_or(base);
        if let Some(rest) = path.strip_prefix(base).and_then(|r| r.strip_prefix('/')) {
            if !rest.is_empty() {
                return one_line(rest).into_owned();
            }
        }
    }
    one_line(path).into_owned()
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
        Some(first) if !first.trim().is_empty() => {
            format!("(failed: {})", one_line(&cut(first.trim(), 200)))
        }
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

/// The columns a character may take: one when ASCII, two otherwise (an upper bound for wide
/// characters).
fn char_columns(c: char) -> usize {
    if c.is_ascii() { 1 } else { 2 }
}

/// `text` cut so that it takes at most `max` columns (by [`char_columns`]), `…` marking a cut
/// (counted as two columns: it is twice as wide on some terminals).
fn fit(text: &str, max: usize) -> String {
    if text.chars().map(char_columns).sum::<usize>() <= max {
        return text.to_string();
    }
    let mut used = 0;
    let mut out = String::new();
    for c in text.chars() {
        let w = char_columns(c);
        if used + w + 2 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

/// What every line of one event is drawn with.
struct Style<'a> {
    base: Option<&'a str>,
    color: bool,
    /// The label column's width after the sub-agent mark, if any.
    label: usize,
}

impl Style<'_> {
    /// A label padded to the label column (one space at least after it).
    fn label(&self, code: &str, name: &str) -> String {
        paint(self.color, code, &self.plain_label(name))
    }

    /// A label never coloured on its own (the whole line is).
    fn plain_label(&self, name: &str) -> String {
        let width = self.label.max(name.len() + 1);
        format!("{name:<width$}")
    }

    fn path(&self, path: &str) -> String {
        paint(self.color, BOLD, &show_path(path, self.base))
    }
}

/// An `agent` or `reasoning` event written piece by piece, byte for byte as [`human_event`]
/// draws it, without building the line: its text may be hundreds of MB, and is not copied
/// (S7) unless it holds control characters to show. `false`, having written nothing, for any
/// other event.
fn write_said(out: &mut impl Write, event: &Event, color: bool) -> io::Result<bool> {
    let (text, reasoning) = match &event.body {
        EventBody::Agent { text } => (&**text, false),
        EventBody::Reasoning { text } => (text.as_str(), true),
        _ => return Ok(false),
    };
    let prefix = if event.parent_tool_use_id.is_some() {
        SUB_AGENT
    } else {
        ""
    };
    let style = Style {
        base: None,
        color,
        label: LABEL - prefix.chars().count(),
    };
    // As `render` does: every further line indented to the text column.
    let further = format!("\n{prefix}{:width$}", "", width = style.label);
    out.write_all(prefix.as_bytes())?;
    // A reasoning line is dimmed whole (its label is never empty), an agent's label coloured.
    let dim = reasoning && color;
    if reasoning {
        if dim {
            out.write_all(DIM.as_bytes())?;
        }
        out.write_all(style.plain_label("reasoning").as_bytes())?;
    } else {
        out.write_all(style.label(CYAN, "agent").as_bytes())?;
    }
    for (i, piece) in multi_line(text).split('\n').enumerate() {
        if i > 0 {
            out.write_all(further.as_bytes())?;
        }
        out.write_all(piece.as_bytes())?;
    }
    if dim {
        out.write_all(RESET.as_bytes())?;
    }
    Ok(true)
}

/// One event as a readable line (several for multi-line text), without the final newline.
pub fn human_event(event: &Event, base: Option<&str>, color: bool) -> String {
    render(event, base, color, None)
}

/// One event as [`human_event`] draws it; a `started` line is cut to `width` columns when
/// one is given.
fn render(event: &Event, base: Option<&str>, color: bool, width: Option<usize>) -> String {
    let prefix = if event.parent_tool_use_id.is_some() {
        SUB_AGENT
    } else {
        ""
    };
    let style = Style {
        base,
        color,
        label: LABEL - prefix.chars().count(),
    };
    let body = match (&event.body, width) {
        (
            EventBody::Started {
                command,
                expect,
                tool,
            },
            Some(width),
        ) => {
            let text = started_text(command.as_deref(), expect, tool, &style);
            // The closing `  …` takes four columns at most.
            let prefix_columns: usize = prefix.chars().map(char_columns).sum();
            let text = fit(&text, width.saturating_sub(prefix_columns + 4));
            paint(color, DIM, &format!("{text}  …"))
        }
        (body, _) => body_text(body, &style),
    };
    // Only an event's first line starts at the left margin: every further line is indented
    // to the text column, so no text can pass for an event line.
    let further = format!("\n{prefix}{:width$}", "", width = style.label);
    format!("{prefix}{}", body.replace('\n', &further))
}

fn body_text(body: &EventBody, style: &Style<'_>) -> String {
    let color = style.color;
    match body {
        EventBody::Agent { text } => format!("{}{}", style.label(CYAN, "agent"), multi_line(text)),
        EventBody::Reasoning { text } => paint(
            color,
            DIM,
            &format!("{}{}", style.plain_label("reasoning"), multi_line(text)),
        ),
        EventBody::Read {
            path,
            range,
            status,
            ..
        } => format!(
            "{}{}{}{}",
            style.label(BLUE, "read"),
            style.path(path),
            show_range(*range),
            show_status(status, color)
        ),
        EventBody::Write {
            path,
            change,
            status,
            ..
        } => {
            let change = change
                .as_deref()
                .map(|c| format!("  ({})", one_line(c)))
                .unwrap_or_default();
            format!(
                "{}{}{change}{}",
                style.label(MAGENTA, "write"),
                style.path(path),
                show_status(status, color)
            )
        }
        EventBody::Search {
            query,
            path,
            status,
            ..
        } => format!(
            "{}{}{}",
            style.label(BLUE, "search"),
            search_text(query.as_deref(), path.as_deref(), |p| style.path(p)),
            show_status(status, color)
        ),
        EventBody::List { path, status, .. } => format!(
            "{}{}{}",
            style.label(BLUE, "list"),
            path.as_deref()
                .map(|p| style.path(p))
                .unwrap_or_else(|| ".".to_string()),
            show_status(status, color)
        ),
        EventBody::Command {
            command,
            exit_code,
            status,
            ..
        } => {
            let mut text = format!("{} {}", paint(color, GREEN, "$"), multi_line(command));
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
            name, path, status, ..
        } => format!(
            "{}{}  {}{}",
            style.label(MAGENTA, "skill"),
            one_line(name),
            paint(color, DIM, &show_path(path, style.base)),
            show_status(status, color)
        ),
        EventBody::Plan { items } => {
            let mut text = style.label(YELLOW, "plan");
            for (i, item) in items.iter().enumerate() {
                let mark = if item.completed == Value::Bool(true) {
                    "[x]"
                } else {
                    "[ ]"
                };
                let item_text = match &item.text {
                    Value::String(s) => one_line(s).into_owned(),
                    other => one_line(&other.to_string()).into_owned(),
                };
                if i > 0 {
                    text.push('\n');
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
                style.label(YELLOW, "warning"),
                multi_line(message),
                paint(color, DIM, &format!("({source})"))
            )
        }
        EventBody::Error { message } => format!(
            "{}{}",
            style.label(&format!("{BOLD}{RED}"), "error"),
            paint(color, RED, &multi_line(message))
        ),
        EventBody::Started {
            command,
            expect,
            tool,
        } => {
            let text = started_text(command.as_deref(), expect, tool, style);
            paint(color, DIM, &format!("{text}  …"))
        }
        EventBody::Unknown { reason, raw, tool } => {
            let reason = serde_json::to_value(reason)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default();
            let mut text = format!("{}{reason}", style.plain_label("unknown"));
            if let Some(name) = &tool.tool {
                let _ = write!(text, " {}", one_line(name));
            }
            if let Some(what) = unknown_subject(raw) {
                let _ = write!(text, "  {}", one_line(&cut(&what, SUBJECT)));
            }
            paint(color, DIM, &text)
        }
        EventBody::Permission {
            id,
            options,
            path,
            command,
            expect,
            tool,
            ..
        } => {
            // What the tool would do, as a running tool shows it; a file tool the backend does
            // not classify shows its path beside its name.
            let mut what = if command.is_some() || !expect.is_empty() {
                started_text(command.as_deref(), expect, tool, style)
            } else {
                tool.tool
                    .as_deref()
                    .map(|t| one_line(t).into_owned())
                    .unwrap_or_default()
            };
            if let (Some(path), None, true) = (path, command, expect.is_empty()) {
                let _ = write!(what, "  {}", show_path(path, style.base));
            }
            let offered: Vec<&str> = options.iter().map(|d| d.as_str()).collect();
            format!(
                "{}{what}  {}",
                style.label(&format!("{BOLD}{YELLOW}"), "permission"),
                paint(
                    color,
                    DIM,
                    &format!("[{}] id {}", offered.join(" / "), one_line(id))
                )
            )
        }
        // A kind newer than this printer (the list may grow, J10): its name alone.
        other => style.label(DIM, other.kind().as_str()),
    }
}

/// `"query" in path`, either part optional.
fn search_text(query: Option<&str>, path: Option<&str>, show: impl Fn(&str) -> String) -> String {
    let mut text = String::new();
    if let Some(query) = query {
        let _ = write!(text, "\"{}\"", one_line(query));
    }
    if let Some(path) = path {
        text.push_str(if query.is_some() { " in " } else { "in " });
        text.push_str(&show(path));
    }
    text
}

/// A running tool, uncoloured and without its closing `…`: its shell command, else the first
/// event it is expected to give (and how many more), else its name.
fn started_text(
    command: Option<&str>,
    expect: &[Expected],
    tool: &ToolRef,
    style: &Style<'_>,
) -> String {
    if let Some(command) = command {
        return format!("$ {}", multi_line(command));
    }
    let name = tool.tool.as_deref().map(one_line).unwrap_or_default();
    let Some(first) = expect.first() else {
        return format!("{}{name}", style.plain_label("running"));
    };
    let path = |p: &Option<String>| p.as_deref().map(|p| show_path(p, style.base));
    let mut text = match first.kind {
        Kind::Read => format!(
            "{}{}{}",
            style.plain_label("read"),
            path(&first.path).unwrap_or_default(),
            show_range(first.range)
        ),
        Kind::Write => format!(
            "{}{}",
            style.plain_label("write"),
            path(&first.path).unwrap_or_default()
        ),
        Kind::Search => format!(
            "{}{}",
            style.plain_label("search"),
            search_text(first.query.as_deref(), first.path.as_deref(), |p| {
                show_path(p, style.base)
            })
        ),
        Kind::List => format!(
            "{}{}",
            style.plain_label("list"),
            path(&first.path).unwrap_or_else(|| ".".to_string())
        ),
        Kind::Skill => format!(
            "{}{}",
            style.plain_label("skill"),
            first.name.as_deref().map(one_line).unwrap_or_default()
        ),
        // A command's own text is shown above when known; any other kind by its name.
        other => format!("{}{name}", style.plain_label(other.as_str())),
    };
    if expect.len() > 1 {
        let _ = write!(text, "  (+{} more)", expect.len() - 1);
    }
    text
}

/// What an `unknown` event was about, from its `raw` (J8): a Claude tool use's most telling
/// input (its URL, query, command, path, pattern, description or prompt) or the id its result
/// answers; a Codex item's `type` and most telling field; a line's `type` and `subtype`; a
/// block's `type`; for a value that is not an object, its JSON.
fn unknown_subject(raw: &Value) -> Option<String> {
    const TELLING: [&str; 9] = [
        "url",
        "query",
        "command",
        "file_path",
        "path",
        "pattern",
        "description",
        "subject",
        "prompt",
    ];
    let Value::Object(map) = raw else {
        return Some(json_start(raw, SUBJECT));
    };
    let telling = |input: &Value| {
        TELLING
            .iter()
            .find_map(|key| {
                input
                    .get(key)
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
            })
            .map(|s| cut(s, SUBJECT))
    };
    if let (Some(tool_use), Some(tool_result)) = (map.get("tool_use"), map.get("tool_result")) {
        let tool_use = match tool_use {
            Value::Array(uses) => uses.first(),
            other => Some(other),
        };
        return tool_use
            .and_then(|u| u.get("input"))
            .and_then(telling)
            .or_else(|| {
                tool_result
                    .get("tool_use_id")
                    .and_then(Value::as_str)
                    .map(|id| format!("result of {id}"))
            });
    }
    let kind = map.get("type").and_then(Value::as_str);
    if let Some(found) = telling(raw) {
        return Some(match kind {
            Some(kind) => format!("{kind}: {found}"),
            None => found,
        });
    }
    let kind = kind?;
    Some(match map.get("subtype").and_then(Value::as_str) {
        Some(subtype) => format!("{kind}/{subtype}"),
        None => kind.to_string(),
    })
}

/// The most characters of an `unknown` event's subject shown.
const SUBJECT: usize = 120;

/// The start of `value`'s compact JSON, at most about `max` characters, without writing out
/// the whole of a large value.
fn json_start(value: &Value, max: usize) -> String {
    /// Takes bytes until it holds `limit`, then refuses more (which stops serde_json).
    struct Bounded {
        bytes: Vec<u8>,
        limit: usize,
    }
    impl Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = self.limit - self.bytes.len();
            if room == 0 {
                return Err(io::Error::other("enough"));
            }
            let n = buf.len().min(room);
            self.bytes.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    // Four bytes per character at most, one more to know that there was more.
    let mut out = Bounded {
        bytes: Vec::new(),
        limit: max * 4 + 1,
    };
    let _ = serde_json::to_writer(&mut out, value);
    cut(&String::from_utf8_lossy(&out.bytes), max)
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

/// The outcome as one summary line: status, turns, tokens, cost (as the agent reported it),
/// duration, counts, exit code.
pub fn human_summary(outcome: &Outcome, color: bool) -> String {
    let (name, code) = match outcome.status {
        Status::Success => ("success", GREEN),
        Status::Error => ("error", RED),
        Status::Incomplete => ("incomplete", YELLOW),
        Status::Interrupted => ("interrupted", YELLOW),
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
    // Exactly the number the agent wrote (serde_json's `float_roundtrip`), not rounded.
    if let Some(cost) = &m.total_cost_usd {
        parts.push(format!("${cost}"));
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
        parts.push(paint(color, DIM, &format!("session {}", one_line(session))));
    }
    format!("{} {}", paint(color, DIM, "──"), parts.join(" · "))
}

#[cfg(test)]
mod tests {
    //! The human printer on hand-made events: running tools (L1), unknown subjects and
    //! messages written in pieces. The binary's tests cover the rest through real streams.

    use harness_agents_core::{
        Decision, Event, EventBody, Expected, Kind, LineRange, Outcome, ToolRef, ToolStatus,
    };

    use super::super::{Format, Printer};
    use super::{human_event, write_said};

    fn tool(name: &str, id: &str) -> ToolRef {
        ToolRef {
            tool: Some(name.to_string()),
            tool_use_id: Some(id.to_string()),
        }
    }

    fn started_read(id: &str, path: &str) -> Event {
        let mut read = Expected::new(Kind::Read);
        read.path = Some(path.to_string());
        read.range = Some(LineRange {
            start: 4,
            end: Some(9),
        });
        Event::new(EventBody::Started {
            command: None,
            expect: vec![read],
            tool: tool("Read", id),
        })
    }

    fn read(id: &str, path: &str) -> Event {
        Event::new(EventBody::Read {
            path: path.to_string(),
            range: Some(LineRange {
                start: 4,
                end: Some(9),
            }),
            command: None,
            status: ToolStatus {
                success: true,
                error: None,
            },
            tool: tool("Read", id),
        })
    }

    fn started_command(id: &str, command: &str) -> Event {
        Event::new(EventBody::Started {
            command: Some(command.to_string()),
            expect: vec![Expected::new(Kind::Command)],
            tool: tool("Bash", id),
        })
    }

    fn command(id: &str, command: &str, exit: i64) -> Event {
        Event::new(EventBody::Command {
            command: command.to_string(),
            exit_code: Some(exit.into()),
            status: ToolStatus {
                success: exit == 0,
                error: None,
            },
            tool: tool("Bash", id),
        })
    }

    fn agent(text: &str) -> Event {
        Event::new(EventBody::Agent { text: text.into() })
    }

    /// What a human printer writes for `events` then an empty outcome, on a terminal
    /// `width` columns wide (`None`: not a terminal).
    fn print(events: &[Event], width: Option<usize>, color: bool) -> String {
        let mut out = Vec::new();
        let mut printer = Printer::new(&mut out, Format::Human, color).live(width);
        printer.base = Some("/repo".to_string());
        for event in events {
            printer.event(event).unwrap();
        }
        printer.outcome(&Outcome::empty()).unwrap();
        String::from_utf8(out).unwrap()
    }

    const SUMMARY: &str = "── incomplete\n";

    fn permission(command: Option<&str>, expect: Vec<Expected>, path: Option<&str>) -> Event {
        Event::new(EventBody::Permission {
            id: "req-1".to_string(),
            options: vec![Decision::Allow, Decision::AllowAlways, Decision::Deny],
            path: path.map(String::from),
            command: command.map(String::from),
            expect,
            input: None,
            tool: tool("Bash", "t9"),
        })
    }

    #[test]
    fn i4_a_permission_request_shows_what_the_tool_would_do_and_the_choices() {
        assert_eq!(
            human_event(
                &permission(
                    Some("rm -rf build"),
                    vec![Expected::new(Kind::Command)],
                    None
                ),
                None,
                false
            ),
            "permission $ rm -rf build  [allow / allow_always / deny] id req-1"
        );
        let mut read = Expected::new(Kind::Read);
        read.path = Some("/repo/a.txt".to_string());
        assert_eq!(
            human_event(
                &permission(None, vec![read], Some("/repo/a.txt")),
                Some("/repo"),
                false
            ),
            "permission read      a.txt  [allow / allow_always / deny] id req-1"
        );
        assert_eq!(
            human_event(
                &permission(None, vec![], Some("/repo/b.txt")),
                Some("/repo"),
                false
            ),
            "permission Bash  b.txt  [allow / allow_always / deny] id req-1"
        );
    }

    #[test]
    fn i3_an_interrupted_turn_says_so() {
        let mut outcome = Outcome::empty();
        outcome.status = harness_agents_core::Status::Interrupted;
        assert_eq!(super::human_summary(&outcome, false), "── interrupted");
    }

    #[test]
    fn l1_off_a_terminal_the_final_event_follows_the_running_line() {
        let events = [
            started_read("t1", "/repo/src/app.py"),
            agent("reading"),
            read("t1", "/repo/src/app.py"),
            started_command("t2", "cargo test"),
            command("t2", "cargo test", 101),
        ];
        assert_eq!(
            print(&events, None, false),
            [
                "read      src/app.py:4-9  …\n",
                "agent     reading\n",
                "read      src/app.py:4-9\n",
                "$ cargo test  …\n",
                "$ cargo test  (exit 101)\n",
                SUMMARY,
            ]
            .concat()
        );
    }

    #[test]
    fn l1_on_a_terminal_the_final_event_rewrites_the_running_line() {
        let events = [
            started_command("t2", "cargo test"),
            command("t2", "cargo test", 0),
        ];
        assert_eq!(
            print(&events, Some(80), false),
            ["$ cargo test  …", "\r\x1b[K", "$ cargo test\n", SUMMARY].concat()
        );
    }

    #[test]
    fn l1_on_a_terminal_other_events_follow_the_running_line() {
        // Two tools run at once: each final event follows; only the last running line could
        // have been rewritten, and its tool is not the next to finish.
        let events = [
            started_read("a", "/repo/a.rs"),
            started_read("b", "/repo/b.rs"),
            read("a", "/repo/a.rs"),
            read("b", "/repo/b.rs"),
            started_command("c", "sleep 9"),
        ];
        assert_eq!(
            print(&events, Some(80), false),
            [
                "read      a.rs:4-9  …",
                "\n",
                "read      b.rs:4-9  …",
                "\n",
                "read      a.rs:4-9\n",
                "read      b.rs:4-9\n",
                "$ sleep 9  …",
                // The stream ended with the tool still running: its line is kept.
                "\n",
                SUMMARY,
            ]
            .concat()
        );
    }

    #[test]
    fn l1_on_a_terminal_a_running_line_fits_in_one_row() {
        let long = format!("cargo test {}", "x".repeat(200));
        let shown = print(&[started_command("t", &long)], Some(40), false);
        let line = shown.lines().next().unwrap();
        // Less than 40 columns, even where `…` is two columns wide, so the cursor never
        // wraps to a second row.
        assert_eq!(line, format!("$ cargo test {}…  …", "x".repeat(20)));
        assert_eq!(line.chars().count() + 2, 39);
        // Wide characters count double.
        let wide = print(&[started_command("t", &"語".repeat(40))], Some(40), false);
        assert_eq!(
            wide.lines().next().unwrap(),
            format!("$ {}…  …", "語".repeat(15))
        );
    }

    #[test]
    fn l1_a_multi_line_running_command_is_never_rewritten() {
        let events = [
            started_command("t", "cat <<EOF\nhi\nEOF"),
            command("t", "cat <<EOF\nhi\nEOF", 0),
        ];
        let expected = [
            "$ cat <<EOF\n          hi\n          EOF  …\n",
            "$ cat <<EOF\n          hi\n          EOF\n",
            SUMMARY,
        ]
        .concat();
        assert_eq!(print(&events, Some(80), false), expected);
        assert_eq!(print(&events, None, false), expected);
    }

    #[test]
    fn l1_running_lines_say_what_is_known() {
        let mut search = Expected::new(Kind::Search);
        search.query = Some("fn main".to_string());
        search.path = Some("/repo/src".to_string());
        let mut second = Expected::new(Kind::Read);
        second.path = Some("/repo/b".to_string());
        let mut skill = Expected::new(Kind::Skill);
        skill.name = Some("pdf".to_string());
        let events = [
            Event::new(EventBody::Started {
                command: None,
                expect: vec![search, second],
                tool: tool("Grep", "g"),
            }),
            Event::new(EventBody::Started {
                command: None,
                expect: Vec::new(),
                tool: tool("WebFetch", "w"),
            }),
            Event::new(EventBody::Started {
                command: None,
                expect: vec![skill],
                tool: tool("Skill", "s"),
            }),
            Event::new(EventBody::Started {
                command: None,
                expect: vec![Expected::new(Kind::List)],
                tool: tool("LS", "l"),
            }),
            started_read("r", "/repo/x.rs").with_parent(Some("task".to_string())),
        ];
        assert_eq!(
            print(&events, None, false),
            [
                "search    \"fn main\" in src  (+1 more)  …\n",
                "running   WebFetch  …\n",
                "skill     pdf  …\n",
                "list      .  …\n",
                "│ read    x.rs:4-9  …\n",
                SUMMARY,
            ]
            .concat()
        );
    }

    #[test]
    fn l1_running_lines_are_dim() {
        let shown = print(&[started_command("t", "make")], None, true);
        assert!(shown.starts_with("\x1b[2m$ make  …\x1b[0m\n"), "{shown:?}");
    }

    #[test]
    fn l1_a_running_line_is_made_safe_too() {
        let shown = print(
            &[started_command("t", "echo \x1b]0;x\x07\rok")],
            Some(80),
            false,
        );
        assert!(
            shown.starts_with("$ echo \\e]0;x\\u{7}\\rok  …\n"),
            "{shown:?}"
        );
    }

    #[test]
    fn an_unknown_subject_is_short_whatever_the_raw_size() {
        let big = serde_json::Value::Array(vec![serde_json::Value::from("x".repeat(1 << 20))]);
        let subject = super::unknown_subject(&big).unwrap();
        assert_eq!(subject, format!("[\"{}…", "x".repeat(118)));
        let small = serde_json::json!(["a list"]);
        assert_eq!(super::unknown_subject(&small).unwrap(), r#"["a list"]"#);
        let command = serde_json::json!({"tool_use": {"input": {"command": "y".repeat(500)}}, "tool_result": null});
        assert_eq!(
            super::unknown_subject(&command).unwrap(),
            format!("{}…", "y".repeat(120))
        );
    }

    #[test]
    fn s7_a_message_is_written_piece_by_piece_exactly_as_its_line_is_drawn() {
        // The human view built a 200 MB message's line three times over
        // (label and text, indented lines, prefix); it now writes the pieces.
        let texts = [
            "one line",
            "two\nlines",
            "crlf\r\nand \x1b[2J escapes\n\nand a blank line",
            "",
        ];
        for text in texts {
            for parent in [None, Some("task_1".to_string())] {
                for color in [false, true] {
                    for body in [
                        EventBody::Agent { text: text.into() },
                        EventBody::Reasoning {
                            text: text.to_string(),
                        },
                    ] {
                        let event = Event::new(body).with_parent(parent.clone());
                        let mut written = Vec::new();
                        assert!(write_said(&mut written, &event, color).unwrap());
                        let drawn = human_event(&event, None, color);
                        assert_eq!(String::from_utf8(written).unwrap(), drawn, "{event:?}");
                    }
                }
            }
        }
        let other = Event::new(EventBody::Error {
            message: "x".into(),
        });
        let mut written = Vec::new();
        assert!(!write_said(&mut written, &other, true).unwrap());
        assert!(written.is_empty());
    }
}
