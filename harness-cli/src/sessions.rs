//! `harness sessions`: the sessions coding agents stored on disk (every agent with a stored
//! history: `harness_agents::sessions::histories`).
//!
//! `list` prints one row per session, `show ID` a session's events then its outcome, `stats
//! --by agent|day|week|model|project|tool` a usage report. Rows are JSON Lines (one object per line,
//! what DuckDB's `read_json_auto` and Spark's `spark.read.json` load as is) unless standard
//! output is a terminal, where they are a table.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use harness_agents::prices::PriceTable;
use harness_agents::sessions::{self, GroupBy, Locations, Session, SessionFiles, StatsRow};

use crate::Output;

/// Where to look and which sessions to keep (shared by the three commands).
#[derive(Debug, Args)]
pub struct Filters {
    /// Claude Code's configuration folder (repeatable) [default: each of $CLAUDE_CONFIG_DIR,
    /// comma-separated, else ~/.config/claude and ~/.claude]; its `projects/` is read.
    #[arg(long, value_name = "DIR")]
    claude_dir: Vec<PathBuf>,
    /// Codex's home (repeatable) [default: $CODEX_HOME, else ~/.codex]; its `sessions/` and
    /// `archived_sessions/` are read.
    #[arg(long, value_name = "DIR")]
    codex_home: Vec<PathBuf>,
    /// An agent's folder, as `AGENT=DIR` (repeatable): read instead of that agent's default
    /// folders (`claude=~/.claude`, `codex=~/.codex`, `opencode=~/.local/share/opencode` or a
    /// database, `gemini=~/.gemini`, `pi=~/.pi/agent`, `qwen=~/.qwen`, `copilot=~/.copilot`;
    /// see `docs/sessions.md`).
    #[arg(long, value_name = "AGENT=DIR", value_parser = agent_dir)]
    dir: Vec<(&'static str, PathBuf)>,
    /// Only these agents' sessions (repeatable, or comma-separated) [default: every agent
    /// with a stored history].
    #[arg(long, value_delimiter = ',', value_parser = agent_name)]
    backend: Vec<&'static str>,
    /// Only sessions that started on or after this date or time (RFC 3339 prefix, UTC:
    /// `2026-01-31`, `2026-01-31T12`).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// Only sessions that started before the end of this date or time (same form).
    #[arg(long, value_name = "WHEN")]
    until: Option<String>,
    /// Only sessions whose project contains this text.
    #[arg(long, value_name = "TEXT")]
    project: Option<String>,
    /// A JSON file of prices that replace or add to the bundled table
    /// (`{"model-prefix": {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write":
    /// 3.75}}`, US dollars per million tokens).
    #[arg(long, value_name = "FILE")]
    prices: Option<PathBuf>,
    /// Keep each session's row in this file, and read a session again only when one of its
    /// files changed (path, size, modification time) or the prices did.
    #[arg(long, value_name = "FILE")]
    cache: Option<PathBuf>,
    /// Threads that read sessions [default: one per core, at least 8: a cold read waits on
    /// the disk, which serves several reads at once faster].
    #[arg(long, value_name = "N", default_value = "0")]
    threads: usize,
}

/// `--backend`: an agent with a stored history.
fn agent_name(name: &str) -> Result<&'static str, String> {
    match sessions::history(name) {
        Some(history) => Ok(history.name()),
        None => {
            let known: Vec<&str> = sessions::histories().iter().map(|h| h.name()).collect();
            Err(format!(
                "no stored history for {name:?} (known: {})",
                known.join(", ")
            ))
        }
    }
}

/// `--dir AGENT=DIR`.
fn agent_dir(value: &str) -> Result<(&'static str, PathBuf), String> {
    let (name, dir) = value
        .split_once('=')
        .ok_or_else(|| format!("{value:?} is not AGENT=DIR"))?;
    Ok((agent_name(name)?, PathBuf::from(dir)))
}

/// `--by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    Agent,
    Day,
    Week,
    Model,
    Project,
    Tool,
}

/// `sessions schema`'s argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaOf {
    /// The rows of `list`.
    List,
    /// The rows of `stats`.
    Stats,
}

/// How rows are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RowFormat {
    /// A readable table (also `human`, the name `run` and `normalize` give their readable
    /// format).
    #[value(alias = "human")]
    Table,
    /// JSON Lines: one object per row (also `jsonl`, as `run` and `normalize` call it).
    #[value(alias = "jsonl")]
    Json,
}

/// `harness sessions ...`.
#[derive(Debug, Subcommand)]
pub enum SessionsCommand {
    /// One row per session: backend, project, start, duration, turns, tokens, cost, first
    /// prompt.
    List {
        #[command(flatten)]
        filters: Filters,
        /// Row format [default: table on a terminal, json otherwise].
        #[arg(long, value_enum)]
        format: Option<RowFormat>,
    },
    /// A session's events (its sub-agents' after its own), then its main file's outcome.
    Show {
        /// The session's id (or a unique prefix of it).
        id: String,
        #[command(flatten)]
        filters: Filters,
        #[command(flatten)]
        output: Output,
    },
    /// Print the JSON Schema (draft 2020-12) of the lines `list` or `stats` write with
    /// `--format json` (`show` writes the lines of `harness schema`).
    Schema {
        /// Which command's lines.
        #[arg(value_enum)]
        of: SchemaOf,
    },
    /// A usage report: sessions, tokens and cost by agent, day, week, model, project or tool.
    Stats {
        /// How to group.
        #[arg(long, value_enum, default_value = "day")]
        by: By,
        #[command(flatten)]
        filters: Filters,
        /// Row format [default: table on a terminal, json otherwise].
        #[arg(long, value_enum)]
        format: Option<RowFormat>,
    },
}

impl Filters {
    fn locations(&self) -> Locations {
        let mut locations = Locations::from_env();
        let mut named: Vec<(&'static str, Vec<PathBuf>)> = Vec::new();
        let given = [("claude", &self.claude_dir), ("codex", &self.codex_home)];
        let pairs = given
            .iter()
            .flat_map(|(name, dirs)| dirs.iter().map(move |d| (*name, d.clone())))
            .chain(self.dir.iter().cloned());
        for (name, dir) in pairs {
            match named.iter_mut().find(|(n, _)| *n == name) {
                Some((_, dirs)) => dirs.push(dir),
                None => named.push((name, vec![dir])),
            }
        }
        for (name, dirs) in &named {
            locations.set(name, dirs);
        }
        if !self.backend.is_empty() {
            locations.keep_only(&self.backend);
        }
        locations
    }

    fn prices(&self) -> Result<PriceTable, String> {
        let mut table = PriceTable::bundled();
        if let Some(path) = &self.prices {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            table
                .merge_json(&text)
                .map_err(|e| format!("{}: not a price table: {e}", path.display()))?;
        }
        Ok(table)
    }

    fn keeps(&self, session: &Session) -> bool {
        let start = session.start.as_deref().unwrap_or("");
        if let Some(since) = &self.since {
            if start < since.as_str() {
                return false;
            }
        }
        if let Some(until) = &self.until {
            // Up to the end of the given prefix: "2026-01-31" keeps all of that day.
            if start.get(..until.len().min(start.len())).unwrap_or(start) > until.as_str() {
                return false;
            }
        }
        if let Some(project) = &self.project {
            if !session
                .project
                .as_deref()
                .unwrap_or("")
                .contains(project.as_str())
            {
                return false;
            }
        }
        true
    }

    /// Every session kept by the filters, summed up.
    fn sessions(&self) -> Result<Vec<Session>, String> {
        let prices = self.prices()?;
        let files = sessions::discover(&self.locations());
        let scanned = match &self.cache {
            Some(cache) => sessions::scan_cached(files.clone(), &prices, self.threads, cache)
                .map_err(|e| format!("cache {}: {e}", cache.display()))?,
            None => sessions::scan(files.clone(), &prices, self.threads),
        };
        let mut kept = Vec::new();
        for (session, files) in scanned.into_iter().zip(&files) {
            match session {
                Ok(session) if self.keeps(&session) => kept.push(session),
                Ok(_) => {}
                Err(e) => eprintln!("harness: {}: {e}", files.main.display()),
            }
        }
        kept.sort_by(|a, b| a.start.cmp(&b.start));
        Ok(kept)
    }
}

fn row_format(asked: Option<RowFormat>) -> RowFormat {
    asked.unwrap_or(if io::stdout().is_terminal() {
        RowFormat::Table
    } else {
        RowFormat::Json
    })
}

fn money(cost: Option<f64>) -> String {
    cost.map_or_else(|| "-".to_string(), |c| format!("{c:.4}"))
}

fn clip(text: &str, width: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= width {
        one_line
    } else {
        one_line
            .chars()
            .take(width.saturating_sub(1))
            .collect::<String>()
            + "…"
    }
}

fn print_json<T: serde::Serialize>(rows: &[T], out: &mut impl Write) -> io::Result<()> {
    for row in rows {
        serde_json::to_writer(&mut *out, row)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn print_list(rows: &[Session], format: RowFormat, out: &mut impl Write) -> io::Result<()> {
    if format == RowFormat::Json {
        return print_json(rows, out);
    }
    writeln!(
        out,
        "{:<6} {:<36} {:<20} {:>8} {:>5} {:>10} {:>10} {:>9}  {:<24} prompt",
        "agent", "id", "start", "minutes", "turns", "input", "output", "cost $", "project"
    )?;
    for s in rows {
        let minutes = s.duration_ms.map_or_else(
            || "-".to_string(),
            |ms| format!("{:.1}", ms as f64 / 60_000.0),
        );
        writeln!(
            out,
            "{:<6} {:<36} {:<20} {:>8} {:>5} {:>10} {:>10} {:>9}  {:<24} {}",
            s.backend.to_string(),
            clip(&s.id, 36),
            // To the second, UTC: `2026-12-01 03:32:24`.
            clip(
                &s.start.as_deref().map_or_else(
                    || "-".to_string(),
                    |t| t.get(..19).unwrap_or(t).replacen('T', " ", 1)
                ),
                19
            ),
            minutes,
            s.turns,
            s.input_tokens + s.cache_read_input_tokens + s.cache_creation_input_tokens,
            s.output_tokens,
            money(s.cost_usd),
            clip(s.project.as_deref().unwrap_or("-"), 24),
            clip(s.first_prompt.as_deref().unwrap_or(""), 60),
        )?;
    }
    Ok(())
}

fn print_stats(rows: &[StatsRow], format: RowFormat, out: &mut impl Write) -> io::Result<()> {
    if format == RowFormat::Json {
        return print_json(rows, out);
    }
    writeln!(
        out,
        "{:<40} {:>8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>10}",
        "key", "sessions", "uses", "input", "output", "cache read", "cache write", "cost $"
    )?;
    for r in rows {
        writeln!(
            out,
            "{:<40} {:>8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>10}",
            clip(&r.key, 40),
            r.sessions,
            r.uses,
            r.usage.input_tokens,
            r.usage.output_tokens,
            r.usage.cache_read_input_tokens,
            r.usage.cache_creation_input_tokens,
            money(r.usage.cost_usd),
        )?;
    }
    Ok(())
}

/// Runs `harness sessions ...`.
pub fn run(command: SessionsCommand) -> ExitCode {
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    match command {
        SessionsCommand::List { filters, format } => match filters.sessions() {
            Ok(rows) => crate::exit_code(
                print_list(&rows, row_format(format), &mut out).and_then(|()| out.flush()),
            ),
            Err(e) => usage(&e),
        },
        SessionsCommand::Stats {
            by,
            filters,
            format,
        } => match filters.sessions() {
            Ok(rows) => {
                let by = match by {
                    By::Agent => GroupBy::Agent,
                    By::Day => GroupBy::Day,
                    By::Week => GroupBy::Week,
                    By::Model => GroupBy::Model,
                    By::Project => GroupBy::Project,
                    By::Tool => GroupBy::Tool,
                };
                let rows = sessions::stats(&rows, by);
                crate::exit_code(
                    print_stats(&rows, row_format(format), &mut out).and_then(|()| out.flush()),
                )
            }
            Err(e) => usage(&e),
        },
        SessionsCommand::Schema { of } => {
            let schema = match of {
                SchemaOf::List => sessions::session_schema(),
                SchemaOf::Stats => sessions::stats_schema(),
            };
            let text = serde_json::to_string_pretty(&schema).unwrap_or_default();
            crate::exit_code(writeln!(out, "{text}").and_then(|()| out.flush()))
        }
        SessionsCommand::Show {
            id,
            filters,
            output,
        } => {
            let all = sessions::discover(&filters.locations());
            let chosen: Vec<&SessionFiles> = all.iter().filter(|f| f.id.starts_with(&id)).collect();
            let files = match chosen.as_slice() {
                [one] => *one,
                [] => return usage(&format!("no stored session {id}")),
                many => {
                    let ids: Vec<&str> = many.iter().map(|f| f.id.as_str()).collect();
                    return usage(&format!("{id} is ambiguous: {}", ids.join(", ")));
                }
            };
            let mut printer = output.printer(out);
            let mut failed = None;
            let outcomes = sessions::events(files, &mut |event| {
                if failed.is_none() {
                    failed = printer.event(&event).err();
                }
            });
            let result = match (outcomes, failed) {
                (_, Some(e)) => Err(e),
                (Err(e), None) => Err(e),
                (Ok(outcomes), None) => match outcomes.first() {
                    Some(outcome) => printer.outcome(outcome).and_then(|()| printer.flush()),
                    None => printer.flush(),
                },
            };
            crate::exit_code(result)
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("harness: {message}");
    ExitCode::from(2)
}
