//! `harness backends`: each backend, what it reports, and whether its agent is installed (its
//! path, its version and whether the recordings cover that version), as JSON Lines or, on a
//! terminal, a table. `harness --version`'s list of the recorded agent versions.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use harness_agents::detect::{Detection, Probe};
use harness_agents_core::{Backend, Registry};

use crate::format::safe::{Breaks, visible};
use crate::format::{Format, choose_format};
use crate::{Words, parse_agent, parse_timeout, unknown_backend};

/// The options of `harness backends`.
#[derive(Debug, Args)]
pub struct BackendsArgs {
    /// Only this backend.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
    /// Look at this binary instead of the backend's `$NAME_BIN` or its name on PATH, as `run
    /// --binary` would start it (with --backend).
    #[arg(long, value_name = "PATH", requires = "backend")]
    binary: Option<PathBuf>,
    /// For `acp`: look at this agent command instead of the known ACP agents (with --backend).
    #[arg(long, value_name = "CMD", value_parser = parse_agent, allow_hyphen_values = true, requires = "backend")]
    agent: Option<Words>,
    /// How long an agent may take to print its version before it is killed.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout, default_value = "5s")]
    timeout: Duration,
    /// Output format [default: human on a terminal, jsonl otherwise].
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,
}

/// Runs `harness backends`: one line per backend, exit status 0 whatever is installed.
pub fn run(registry: &Registry, args: BackendsArgs) -> ExitCode {
    let mut probe = Probe::default();
    probe.binary = args.binary;
    probe.agent = args.agent.map(|Words(words)| words);
    probe.timeout = args.timeout;
    let rows: Vec<(&dyn Backend, Detection)> = match &args.backend {
        Some(name) => match registry.get(name) {
            Some(backend) => vec![(backend, harness_agents::detect::detect(backend, &probe))],
            None => return unknown_backend(registry, name, false),
        },
        None => {
            let detections = registry.detect(&probe);
            registry
                .names()
                .filter_map(|n| registry.get(n))
                .zip(detections)
                .collect()
        }
    };
    let mut out = io::stdout().lock();
    let written = match choose_format(args.format) {
        Format::Jsonl => rows
            .iter()
            .try_for_each(|(backend, found)| writeln!(out, "{}", json_line(*backend, found))),
        Format::Human => out.write_all(table(&rows).as_bytes()),
    };
    crate::exit_code(written.and_then(|()| out.flush()))
}

/// A backend's JSON line: its name and what it reports, as before detection, then what was
/// found of its agent.
fn json_line(backend: &dyn Backend, found: &Detection) -> serde_json::Value {
    let caps = backend.capabilities();
    let mut line = serde_json::json!({
        "exit_codes": caps.exit_codes,
        "orchestration_source": caps.orchestration_source.as_str(),
    });
    if let (Some(line), Ok(serde_json::Value::Object(found))) =
        (line.as_object_mut(), serde_json::to_value(found))
    {
        line.extend(found);
    }
    line
}

/// The human table: a row per backend and one per known agent of a protocol backend.
fn table(rows: &[(&dyn Backend, Detection)]) -> String {
    let mut cells = vec![[
        "BACKEND".to_string(),
        "STATUS".to_string(),
        "VERSION".to_string(),
        "RECORDED".to_string(),
        "PATH OR PROBLEM".to_string(),
    ]];
    for (_, found) in rows {
        cells.push(row(&found.name, found));
        for agent in &found.agents {
            cells.push(row(&format!("  {}", agent.name), agent));
        }
    }
    let widths: Vec<usize> = (0..4)
        .map(|i| {
            cells
                .iter()
                .map(|c| c[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut text = String::new();
    for cell in cells {
        let mut line = String::new();
        for (i, width) in widths.iter().enumerate() {
            line.push_str(&format!("{:<width$}  ", cell[i]));
        }
        line.push_str(&cell[4]);
        text.push_str(line.trim_end());
        text.push('\n');
    }
    text
}

/// One row of the table, every cell safe to print on a terminal.
fn row(name: &str, found: &Detection) -> [String; 5] {
    let recorded = match (found.recorded, found.older_recorded) {
        (Some(recorded), []) => recorded.to_string(),
        (Some(recorded), older) => format!("{recorded} (and {})", older.join(", ")),
        (None, _) => "-".to_string(),
    };
    let version = match (&found.version, found.coverage) {
        (Some(version), Some(coverage)) if found.recorded.is_some() => {
            format!("{version} ({})", coverage.as_str().replace('_', " "))
        }
        (Some(version), _) => version.clone(),
        (None, _) => "-".to_string(),
    };
    let detail = match (&found.path, &found.problem) {
        (Some(path), None) => path.display().to_string(),
        (_, Some(problem)) => match found.install {
            Some(install) => format!("{problem}; install it with `{install}`"),
            None => problem.clone(),
        },
        (None, None) if !found.agents.is_empty() => "known agents:".to_string(),
        (None, None) => String::new(),
    };
    // A known agent's row names the command it would be run with.
    let detail = match &found.command {
        Some(command) if found.problem.is_none() => format!("{detail}  ({})", command.join(" ")),
        Some(command) => format!("{}: {detail}", command.join(" ")),
        None => detail,
    };
    [
        name.to_string(),
        found.status.as_str().replace('_', " "),
        version,
        recorded,
        detail,
    ]
    .map(|cell| visible(&cell, Breaks::Escape).into_owned())
}

/// `harness --version`'s text: the version, then the agent versions each backend's recordings
/// cover (and, for a protocol backend, those of its known agents).
pub fn long_version(registry: &Registry) -> String {
    let mut text = format!(
        "{}\nagent versions the recordings cover:",
        env!("CARGO_PKG_VERSION")
    );
    for backend in registry.names().filter_map(|n| registry.get(n)) {
        let mut covered: Vec<String> = Vec::new();
        if let Some(versions) = backend.versions() {
            covered.push(versions.all().collect::<Vec<_>>().join(", "));
        }
        for agent in backend.known_agents() {
            if let Some(versions) = agent.versions {
                let all: Vec<_> = versions.all().collect();
                covered.push(format!("{} {}", agent.name, all.join(", ")));
            }
        }
        if covered.is_empty() {
            covered.push("none recorded".to_string());
        }
        text.push_str(&format!("\n  {:<9} {}", backend.name(), covered.join("; ")));
    }
    text
}
