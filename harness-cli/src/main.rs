//! The `harness` command: turns what coding-agent CLIs print into normalized events.
//!
//! `harness normalize` reads a recorded stream and prints one JSON event per line, then the
//! closing outcome line.

mod normalize;

use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use harness_core::{NormalizerConfig, Registry};

/// Normalized events from coding-agent CLIs.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Normalize a recorded stream: one JSON event per line, then the outcome line.
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
        /// The recorded standard output; `-` or nothing reads standard input.
        file: Option<PathBuf>,
    },
}

/// Every backend this binary knows.
fn registry() -> Registry {
    let mut registry = Registry::new();
    registry.register(Box::new(harness_claude::ClaudeHarness));
    registry
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Normalize {
            backend,
            stderr,
            workspace,
            cwd,
            file,
        } => {
            let registry = registry();
            let Some(harness) = registry.get(&backend) else {
                let known: Vec<_> = registry.names().collect();
                eprintln!(
                    "harness: unknown backend '{backend}' (known: {})",
                    known.join(", ")
                );
                return ExitCode::from(2);
            };
            let config = NormalizerConfig {
                cwd: cwd.map(|p| p.display().to_string()),
                workspace: workspace.map(|p| p.display().to_string()),
            };
            let mut normalizer = harness.normalizer(config);
            let stdout = normalize::Source::from_arg(file);
            let stderr = stderr.map(|p| normalize::Source::from_arg(Some(p)));
            let out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
            match normalize::run(normalizer.as_mut(), &stdout, stderr.as_ref(), out) {
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
    }
}
