//! The `harness` command: turns what coding-agent CLIs print into normalized events.
//!
//! - `harness run PROMPT` drives a live agent and prints its events as they happen, then the
//!   outcome;
//! - `harness normalize [FILE]` reads a recorded stream and prints its events, then the outcome;
//! - `harness classify` prints how Codex classifies shell commands;
//! - `harness backends` lists the backends this binary knows;
//! - `harness schema` prints the JSON Schema (draft 2020-12) of the event and outcome lines.
//!
//! Events are written as JSON Lines (`--format jsonl`, the default when stdout is not a
//! terminal) or one readable line each (`--format human`, the default on a terminal).

mod classify;
mod format;
mod normalize;
mod run;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use harness_core::{NormalizerConfig, OrchestrationSource, Registry, RunRequest};

use crate::format::{Color, Format, Printer, choose_color, choose_format};

/// Normalized events from coding-agent CLIs.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How to print events (shared by `run` and `normalize`).
#[derive(Debug, Args)]
struct Output {
    /// Output format [default: human on a terminal, jsonl otherwise].
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,
    /// When to colour human output (`auto` honours NO_COLOR).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    color: Color,
}

impl Output {
    fn printer<W: Write>(&self, out: W) -> Printer<W> {
        Printer::new(out, choose_format(self.format), choose_color(self.color))
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an agent live and print its events as they happen, then the outcome.
    ///
    /// The prompt is written to the agent's standard input, never its command line. Exit
    /// status: 0 success, 1 error or incomplete, 2 usage error, 126 agent not executable,
    /// 127 agent not found, 128+N stopped by signal N (129 SIGHUP, 130 Ctrl-C, 143 SIGTERM).
    #[command(after_help = "Examples:\n  \
        harness run 'Fix the failing test'\n  \
        harness run --cwd ~/project --timeout 600 --arg --max-turns --arg 5 'Add a README'\n  \
        harness run --backend codex --cwd ~/project --permission-mode workspace-write 'Add a README'\n  \
        echo 'Summarize the repo' | harness run -\n  \
        harness run -- '--a prompt that starts with a dash'")]
    Run {
        /// The backend to run.
        #[arg(long, default_value = "claude")]
        backend: String,
        /// The directory the agent works in [default: the current one].
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// The model to ask for.
        #[arg(long, value_name = "MODEL")]
        model: Option<String>,
        /// The permission mode to ask for: Claude Code's `--permission-mode`; for Codex, its
        /// `--sandbox` (Claude's `plan`, `acceptEdits`, `bypassPermissions` are translated).
        #[arg(long, value_name = "MODE")]
        permission_mode: Option<String>,
        /// Stop the agent (its whole process group) after this many seconds.
        #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
        timeout: Option<Duration>,
        /// The agent's binary [default: the backend's: $CLAUDE_BIN or `claude` on PATH,
        /// $CODEX_BIN or `codex` on PATH].
        #[arg(long, value_name = "PATH")]
        binary: Option<PathBuf>,
        /// An extra argument for the agent's command line (repeatable).
        #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
        args: Vec<String>,
        /// An environment variable for the agent (repeatable).
        #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
        env: Vec<(String, String)>,
        #[command(flatten)]
        output: Output,
        /// The prompt; `-` reads it from standard input. Put it after `--` when it starts
        /// with `-`.
        prompt: String,
    },
    /// Normalize a recorded stream: its events, then the outcome.
    Normalize {
        /// The backend that produced the stream.
        #[arg(long, default_value = "claude")]
        backend: String,
        /// The recorded standard error of the same run, read after the stream (S10).
        #[arg(long, value_name = "FILE")]
        stderr: Option<PathBuf>,
        /// Where skills live (default: `.claude` under the working directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// The working directory to resolve relative paths against when the stream names none.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
        /// The recorded standard output; `-` or nothing reads standard input.
        file: Option<PathBuf>,
    },
    /// Print how Codex classifies shell commands, as JSON (SPEC B1a).
    Classify {
        /// A script, classified as `bash -lc SCRIPT`; without it (and without --argv),
        /// standard input is read, one JSON string or array per line.
        script: Option<String>,
        /// Classify this argv instead (takes every remaining argument).
        #[arg(long, num_args = 1.., allow_hyphen_values = true, conflicts_with = "script")]
        argv: Option<Vec<String>>,
    },
    /// List the backends this binary knows, with what each reports.
    Backends,
    /// Print the JSON Schema (draft 2020-12) of the lines `run` and `normalize` write: each is
    /// an event or the closing outcome line (`oneOf`).
    Schema,
}

fn parse_timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if secs <= 0.0 {
        return Err("the timeout must be more than 0 seconds".to_string());
    }
    Duration::try_from_secs_f64(secs).map_err(|e| e.to_string())
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("'{text}' is not KEY=VALUE")),
    }
}

/// Every backend this binary knows.
fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(Box::new(harness_claude::ClaudeHarness));
    registry.register(Box::new(harness_codex::CodexHarness));
    registry
}

fn unknown_backend(registry: &Registry, backend: &str) -> ExitCode {
    let known: Vec<_> = registry.names().collect();
    eprintln!(
        "harness: unknown backend '{backend}' (known: {})",
        known.join(", ")
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let registry = registry();
    match cli.command {
        Command::Run {
            backend,
            cwd,
            model,
            permission_mode,
            timeout,
            binary,
            args,
            env,
            output,
            prompt,
        } => {
            let Some(harness) = registry.get(&backend) else {
                return unknown_backend(&registry, &backend);
            };
            let prompt = if prompt == "-" {
                let mut text = String::new();
                if let Err(e) = io::stdin().read_to_string(&mut text) {
                    eprintln!("harness: cannot read the prompt from standard input: {e}");
                    return ExitCode::from(1);
                }
                text
            } else {
                prompt
            };
            let request = RunRequest {
                prompt,
                cwd,
                binary,
                model,
                permission_mode,
                extra_args: args,
                env: env.into_iter().collect::<BTreeMap<_, _>>(),
                timeout,
                normalizer: NormalizerConfig::default(),
                stop: None,
            };
            // Not locked: `run` writes from a thread of its own.
            let out = BufWriter::with_capacity(64 * 1024, io::stdout());
            run::run(harness, request, output.printer(out))
        }
        Command::Normalize {
            backend,
            stderr,
            workspace,
            cwd,
            output,
            file,
        } => {
            let Some(harness) = registry.get(&backend) else {
                return unknown_backend(&registry, &backend);
            };
            let config = NormalizerConfig {
                cwd: cwd.map(|p| p.display().to_string()),
                workspace: workspace.map(|p| p.display().to_string()),
                started: false,
            };
            let mut normalizer = harness.normalizer(config);
            let stdout = normalize::Source::from_arg(file);
            let stderr = stderr.map(|p| normalize::Source::from_arg(Some(p)));
            let out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
            let printer = output.printer(out);
            match normalize::run(normalizer.as_mut(), &stdout, stderr.as_ref(), printer) {
                Ok(()) | Err(normalize::Failure::OutputClosed) => ExitCode::SUCCESS,
                Err(normalize::Failure::Input(name, e)) => {
                    eprintln!("harness: cannot read {name}: {e}");
                    ExitCode::from(1)
                }
                Err(normalize::Failure::Output(e)) => {
                    eprintln!("harness: cannot write output: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Classify { script, argv } => {
            let mut input = io::stdin().lock();
            let mut out = BufWriter::new(io::stdout().lock());
            let done = classify::run(script, argv, &mut input, &mut out).and_then(|()| out.flush());
            match done {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("harness: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Command::Backends => {
            let mut out = io::stdout().lock();
            for name in registry.names() {
                let Some(backend) = registry.get(name) else {
                    continue;
                };
                let caps = backend.capabilities();
                let plan = match caps.orchestration_source {
                    OrchestrationSource::None => "none",
                    OrchestrationSource::Plan => "plan",
                };
                let line = serde_json::json!({
                    "name": name,
                    "exit_codes": caps.exit_codes,
                    "orchestration_source": plan,
                });
                if writeln!(out, "{line}").is_err() {
                    break;
                }
            }
            ExitCode::SUCCESS
        }
        Command::Schema => {
            let schema = harness_core::Event::lines_schema();
            let mut out = io::stdout().lock();
            let written = serde_json::to_writer_pretty(&mut out, &schema)
                .map_err(io::Error::from)
                .and_then(|()| writeln!(out))
                .and_then(|()| out.flush());
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("harness: cannot write output: {e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}
