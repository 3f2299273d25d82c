//! The `harness` command: turns what coding-agent CLIs print into normalized events.
//!
//! - `harness run PROMPT` drives a live agent and prints its events as they happen, then the
//!   outcome;
//! - `harness normalize [FILE]` reads a recorded stream and prints its events, then the outcome;
//! - `harness acp` serves any backend as an Agent Client Protocol agent on stdio;
//! - `harness classify` prints how Codex classifies shell commands;
//! - `harness sessions list|show|stats` reads the sessions the agents stored on disk (Claude
//!   Code, Codex, opencode, Gemini CLI);
//! - `harness backends` lists the backends this binary knows and whether each one's agent is
//!   installed (path, version, whether the recordings cover that version);
//! - `harness schema` prints the JSON Schema (draft 2020-12) of the event and outcome lines.
//!
//! Events are written as JSON Lines (`--format jsonl`, the default when stdout is not a
//! terminal) or one readable line each (`--format human`, the default on a terminal).

mod acp;
mod backends;
mod classify;
mod format;
mod normalize;
mod run;
mod session;
mod sessions;

use std::collections::BTreeMap;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use harness_agents_core::{NormalizerConfig, Registry, RunRequest};

use crate::format::{Color, Format, Printer, choose_color, choose_format, live_width};

/// Normalized events from coding-agent CLIs.
#[derive(Debug, Parser)]
#[command(name = "harness", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// How to print events (shared by `run` and `normalize`).
#[derive(Debug, Args)]
pub struct Output {
    /// Output format [default: human on a terminal, jsonl otherwise].
    #[arg(long, value_enum, value_name = "FORMAT")]
    format: Option<Format>,
    /// When to colour human output (`auto` honours NO_COLOR, CLICOLOR, CLICOLOR_FORCE and
    /// TERM=dumb).
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    color: Color,
    /// Also write a `started` event as soon as a tool use is recorded (SPEC L1); its final
    /// event follows with the result. `run --format human` always shows running tools.
    #[arg(long)]
    started: bool,
}

impl Output {
    fn format(&self) -> Format {
        choose_format(self.format)
    }

    fn printer<W: Write>(&self, out: W) -> Printer<W> {
        let format = self.format();
        let live = if format == Format::Human {
            live_width()
        } else {
            None
        };
        Printer::new(out, format, choose_color(self.color)).live(live)
    }
}

/// What starts the agent: shared by `run` and `session`.
#[derive(Debug, Args)]
pub struct AgentOptions {
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
    /// `--sandbox`; for opencode, its `--agent` or `--auto`; for Gemini CLI, its
    /// `--approval-mode` (Claude's `plan`, `acceptEdits`, `bypassPermissions` are
    /// translated); for acp, how the agent's permission requests are answered
    /// (`bypassPermissions` allows all, `acceptEdits` allows edits, any other rejects).
    #[arg(long, value_name = "MODE")]
    permission_mode: Option<String>,
    /// Stop the agent (its whole process group) after this long: seconds (`90`, `1.5`) or
    /// a duration with units (`90s`, `10m`, `1h30m`).
    #[arg(
        long,
        value_name = "DURATION",
        value_parser = parse_timeout,
        allow_hyphen_values = true
    )]
    timeout: Option<Duration>,
    #[arg(long, value_name = "PATH", help = binary_help())]
    binary: Option<PathBuf>,
    /// The agent's command line, for the `acp` backend: any Agent Client Protocol agent
    /// (`'gemini --acp'`, `'opencode acp'`), split as a POSIX shell would, without running
    /// one.
    #[arg(long, value_name = "CMD", value_parser = parse_agent, allow_hyphen_values = true)]
    agent: Option<Words>,
    /// Save the run's transcript to FILE, a complete record of the run: a header line (the
    /// backend, the working directory and the other settings the normalizer used), then
    /// every line the agent wrote to standard output and standard error, byte for byte, in
    /// the order they arrived (for acp, the JSON-RPC messages of both directions instead
    /// of standard output). `harness normalize FILE`, with no option, gives the run's
    /// events again, in the same order; only the errors the harness adds itself (a
    /// timeout, a stop) and the exit code are not in it. Format: docs/transcript.md.
    #[arg(long, value_name = "FILE")]
    transcript: Option<PathBuf>,
    /// An extra argument for the agent's command line (repeatable).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    args: Vec<String>,
    /// An environment variable for the agent (repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = parse_env)]
    env: Vec<(String, String)>,
    /// Continue the stored session ID through the agent's own resume (SPEC I5): Claude Code
    /// `--resume`, Codex `exec resume`, opencode `--session`, Gemini CLI `--resume`; refused
    /// (exit 2) by a backend whose agent cannot resume.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
}

impl AgentOptions {
    /// The request these options make, with `prompt`.
    fn request(self, prompt: String) -> RunRequest {
        let mut request = RunRequest::new(prompt);
        request.cwd = self.cwd;
        request.binary = self.binary;
        request.agent = self.agent.map(|Words(words)| words);
        request.transcript = self.transcript;
        request.model = self.model;
        request.permission_mode = self.permission_mode;
        request.extra_args = self.args;
        request.env = self.env.into_iter().collect::<BTreeMap<_, _>>();
        request.timeout = self.timeout;
        request.resume = self.resume;
        request
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run an agent live and print its events as they happen, then the outcome.
    ///
    /// The prompt is written to the agent's standard input (for opencode, the last argument
    /// after `--`; for acp, in the `session/prompt` request), never where it could be read as
    /// an option. Exit status: 0 success, 1 error
    /// or incomplete, 2 usage error, 126 agent not executable, 127 agent not found, 128+N
    /// stopped by signal N (129 SIGHUP, 130 Ctrl-C, 143 SIGTERM).
    #[command(after_help = "Examples:\n  \
        harness run 'Fix the failing test'\n  \
        harness run --cwd ~/project --timeout 10m --arg --max-turns --arg 5 'Add a README'\n  \
        harness run --backend codex --cwd ~/project --permission-mode workspace-write 'Add a README'\n  \
        harness run --backend acp --agent 'gemini --acp' --transcript run.jsonl 'Add a README'\n  \
        echo 'Summarize the repo' | harness run -\n  \
        harness run -- '--a prompt that starts with a dash'")]
    Run {
        #[command(flatten)]
        agent: AgentOptions,
        #[command(flatten)]
        output: Output,
        /// The prompt; `-` reads it from standard input. Put it after `--` when it starts
        /// with `-`.
        prompt: String,
    },
    /// Hold a conversation with an agent: follow-up prompts, permission requests answered by
    /// the caller, interrupts, resume (SPEC section 8).
    ///
    /// Commands come on standard input, one JSON object a line (I2): {"type":"prompt",
    /// "text":T}, {"type":"interrupt"}, {"type":"permission","id":ID,"decision":
    /// "allow"|"allow_always"|"deny","message"?:M}, {"type":"close"}; a bad line is a
    /// `warning` with source `input`. Events are written as `run` writes them, and each turn
    /// ends with an outcome line with its `turn` (I3). End of input ends the session after the
    /// queued prompts. On a terminal it is a chat instead: a line is a prompt, a permission
    /// request asks `allow? [y]es / [a]lways / [n]o`, Ctrl-C interrupts the turn (twice
    /// within 2 seconds closes the session), Ctrl-D ends it. `--timeout` bounds each turn.
    /// Exit status: 0 ended by its input or `close`, 1 the agent failed or died or a turn
    /// timed out, 2 usage error (or a backend without sessions, or one that cannot resume),
    /// 126/127 agent not executable/not found, 128+N stopped by signal N.
    #[command(after_help = "Examples:\n  \
        harness session --cwd ~/project\n  \
        echo '{\"type\":\"prompt\",\"text\":\"Add a test\"}' | harness session --permission-mode bypassPermissions\n  \
        harness session --resume 0b5c8a4e-2f6d-4c1e-9a7b-1d2e3f4a5b6c --transcript s.jsonl")]
    Session {
        #[command(flatten)]
        agent: AgentOptions,
        /// Close the session when a turn is silent this long (no line from the agent):
        /// seconds or a duration with units, as `--timeout`.
        #[arg(
            long,
            value_name = "DURATION",
            value_parser = parse_timeout,
            allow_hyphen_values = true
        )]
        idle_timeout: Option<Duration>,
        #[command(flatten)]
        output: Output,
    },
    /// Serve the backend as an Agent Client Protocol agent (protocol version 1: JSON-RPC 2.0
    /// on standard input and output, one message a line), for an ACP client such as an
    /// editor: each ACP session is one of the backend's sessions, its events come as
    /// `session/update`s (each carrying the normalized event in `_meta` under
    /// `"harness/event"`), its permission requests as `session/request_permission`. The end of
    /// standard input closes every session; exit status 0. Every registered backend has
    /// sessions; one without them would be refused with exit status 2. Rules:
    /// docs/acp-agent.md.
    #[command(after_help = "Examples:\n  \
        harness acp\n  \
        harness acp --backend claude --permission-mode acceptEdits --model sonnet")]
    Acp {
        #[command(flatten)]
        agent: AgentOptions,
        /// Close a backend session when a turn is silent this long: seconds or a duration
        /// with units, as `--timeout`.
        #[arg(
            long,
            value_name = "DURATION",
            value_parser = parse_timeout,
            allow_hyphen_values = true
        )]
        idle_timeout: Option<Duration>,
    },
    /// Normalize a recorded stream or a transcript: its events, then the outcome.
    Normalize {
        /// The backend that produced the stream; `auto` takes a transcript's own (`run
        /// --transcript`), else detects it from the first line only one backend prints
        /// (Claude when none does).
        #[arg(long, default_value = "auto")]
        backend: String,
        /// The recorded standard error of the same run, read after the stream (S10).
        #[arg(long, value_name = "FILE")]
        stderr: Option<PathBuf>,
        /// Where skills live (default: `.claude` under the working directory).
        #[arg(long, value_name = "DIR")]
        workspace: Option<PathBuf>,
        /// The working directory to resolve relative paths against when the stream names none
        /// [default: a transcript's own].
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        #[command(flatten)]
        output: Output,
        /// The recorded standard output, or a transcript of `harness run --transcript` (its
        /// header, its backend and settings, and its standard error are read from it); `-`
        /// or nothing reads standard input.
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
    /// The sessions the agents stored on disk (Claude Code, Codex, opencode, Gemini CLI): list
    /// them, show one's events, or report usage and cost.
    #[command(
        subcommand,
        after_help = "Examples:\n  \
        harness sessions list --since 2026-01-01\n  \
        harness sessions show 3ccf1dc8\n  \
        harness sessions stats --by model --format json"
    )]
    Sessions(sessions::SessionsCommand),
    /// List the backends this binary knows, with what each reports and whether its agent is
    /// installed: found (then its path and version, and whether the recordings cover that
    /// version), missing or broken. For acp, the known ACP agents, each with its command.
    #[command(after_help = "Examples:\n  \
        harness backends\n  \
        harness backends --format jsonl\n  \
        harness backends --backend codex --binary ~/bin/codex-nightly\n  \
        harness backends --backend acp --agent 'qwen --acp'")]
    Backends(backends::BackendsArgs),
    /// Print the JSON Schema (draft 2020-12) of the lines `run` and `normalize` write: each is
    /// an event or the closing outcome line (`oneOf`).
    Schema,
}

/// A `--timeout`: plain seconds (`90`, `1.5`) or a duration with units (`90s`, `10m`,
/// `1h 30m`), more than zero.
fn parse_timeout(text: &str) -> Result<Duration, String> {
    const HOW: &str = "give seconds (90) or a duration with units (90s, 10m, 1h30m)";
    let text = text.trim();
    let plain = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && text.bytes().filter(|&b| b == b'.').count() <= 1
        && text != ".";
    let duration = if plain {
        let secs: f64 = text
            .parse()
            .map_err(|_| format!("'{text}' is not a duration: {HOW}"))?;
        Duration::try_from_secs_f64(secs)
            .map_err(|_| format!("'{text}' seconds is too long a timeout"))?
    } else if text
        .strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    {
        return Err(format!(
            "'{text}' is negative: the timeout must be more than 0"
        ));
    } else {
        humantime::parse_duration(text).map_err(|e| match e {
            humantime::DurationError::NumberOverflow => format!("'{text}' is too long a timeout"),
            _ => format!("'{text}' is not a duration: {HOW}"),
        })?
    };
    if duration.is_zero() {
        return Err("the timeout must be more than 0".to_string());
    }
    Ok(duration)
}

/// What a command waits for on standard input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    /// `run -`: the prompt.
    Prompt,
    /// `normalize` without FILE: a recorded stream.
    Stream,
    /// `classify` without SCRIPT or --argv: commands, one per line.
    Commands,
}

impl Waiting {
    /// What to say on stderr when standard input is a terminal, so that the user does not
    /// stare at a blank screen.
    fn message(self) -> &'static str {
        match self {
            Waiting::Prompt => {
                "harness: reading the prompt from standard input; end it with Ctrl-D \
                 (or give it as an argument)"
            }
            Waiting::Stream => {
                "harness: reading a recorded stream from standard input, one JSON line at a \
                 time; end with Ctrl-D (or give a FILE, or pipe one in)"
            }
            Waiting::Commands => {
                "harness: reading commands from standard input, one JSON string (a script) or \
                 array (an argv) per line; end with Ctrl-D (or give a SCRIPT or --argv)"
            }
        }
    }
}

/// Says what standard input is read for, when it is a terminal.
fn waiting(what: Waiting) {
    if io::stdin().is_terminal() {
        eprintln!("{}", what.message());
    }
}

fn parse_env(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_string(), value.to_string())),
        _ => Err(format!("'{text}' is not KEY=VALUE")),
    }
}

/// Every backend this binary knows: those of the `harness` facade.
fn registry() -> Registry {
    harness_agents::registry()
}

/// The help of `run --binary`: each registered backend's default binary, as its launch names
/// it, so a new backend appears without an edit here.
fn binary_help() -> String {
    let registry = registry();
    let defaults: Vec<String> = registry
        .names()
        .filter_map(|name| registry.get(name)?.launch())
        .map(|launch| format!("${} or `{}` on PATH", launch.env_var, launch.program))
        .collect();
    format!(
        "The agent's binary [default: the backend's: {}]",
        defaults.join(", ")
    )
}

/// Says that `backend` is not known, naming those that are (`auto` first when `auto` may be
/// given); the exit status of a usage error.
fn unknown_backend(registry: &Registry, backend: &str, auto: bool) -> ExitCode {
    let known: Vec<_> = auto
        .then_some("auto")
        .into_iter()
        .chain(registry.names())
        .collect();
    eprintln!(
        "harness: unknown backend '{backend}' (known: {})",
        known.join(", ")
    );
    ExitCode::from(2)
}

/// The words of a command line (`--agent`).
#[derive(Debug, Clone)]
struct Words(Vec<String>);

/// `--agent CMD`: the words of a command line, split as a POSIX shell would (quotes and
/// backslashes), without expanding anything; at least one word.
fn parse_agent(text: &str) -> Result<Words, String> {
    match shlex::split(text) {
        Some(words) if !words.is_empty() => Ok(Words(words)),
        Some(_) => Err("the agent's command is empty".to_string()),
        None => Err(format!(
            "cannot split '{text}' into words (an unclosed quote?)"
        )),
    }
}

fn main() -> ExitCode {
    let registry = registry();
    // `--version` names the agent versions the recordings cover, read from the backends. clap
    // takes a `&'static str` without its `string` feature: the one text lives as long as the
    // process anyway.
    let long_version: &'static str = backends::long_version(&registry).leak();
    let command = Cli::command().long_version(long_version);
    let cli = match Cli::from_arg_matches(&command.get_matches()) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Run {
            agent,
            output,
            prompt,
        } => {
            let Some(harness) = registry.get(&agent.backend) else {
                return unknown_backend(&registry, &agent.backend, false);
            };
            let prompt = if prompt == "-" {
                waiting(Waiting::Prompt);
                let mut text = String::new();
                if let Err(e) = io::stdin().read_to_string(&mut text) {
                    eprintln!("harness: cannot read the prompt from standard input: {e}");
                    return ExitCode::from(1);
                }
                text
            } else {
                prompt
            };
            let mut request = agent.request(prompt);
            // The human view always shows running tools (L1); JSON Lines only when asked.
            request.normalizer.started = output.started || output.format() == Format::Human;
            // Not locked: `run` writes from a thread of its own.
            let out = BufWriter::with_capacity(64 * 1024, io::stdout());
            run::run(harness, request, output.printer(out))
        }
        Command::Session {
            agent,
            idle_timeout,
            output,
        } => {
            let Some(harness) = registry.get(&agent.backend) else {
                return unknown_backend(&registry, &agent.backend, false);
            };
            let mut request = agent.request(String::new());
            request.idle_timeout = idle_timeout;
            request.normalizer.started = output.started || output.format() == Format::Human;
            let out = BufWriter::with_capacity(64 * 1024, io::stdout());
            session::run(harness, request, output.printer(out))
        }
        Command::Acp {
            agent,
            idle_timeout,
        } => {
            let Some(harness) = registry.get(&agent.backend) else {
                return unknown_backend(&registry, &agent.backend, false);
            };
            let mut request = agent.request(String::new());
            request.idle_timeout = idle_timeout;
            acp::run(harness, request)
        }
        Command::Normalize {
            backend,
            stderr,
            workspace,
            cwd,
            output,
            file,
        } => {
            let backend = if backend == "auto" {
                let Some(default) = registry.get("claude") else {
                    return unknown_backend(&registry, "claude", false);
                };
                normalize::Choice::Auto {
                    candidates: registry.names().filter_map(|n| registry.get(n)).collect(),
                    default,
                }
            } else {
                match registry.get(&backend) {
                    Some(harness) => normalize::Choice::Named(harness),
                    None => return unknown_backend(&registry, &backend, true),
                }
            };
            let mut config = NormalizerConfig::default();
            config.cwd = cwd.map(|p| p.display().to_string());
            config.workspace = workspace.map(|p| p.display().to_string());
            config.started = output.started;
            let stdout = normalize::Source::from_arg(file);
            let stderr = stderr.map(|p| normalize::Source::from_arg(Some(p)));
            if matches!(stdout, normalize::Source::Stdin) {
                waiting(Waiting::Stream);
            }
            let out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
            let printer = output.printer(out);
            match normalize::run(backend, config, &stdout, stderr.as_ref(), printer) {
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
            if script.is_none() && argv.is_none() {
                waiting(Waiting::Commands);
            }
            let mut input = io::stdin().lock();
            let mut out = BufWriter::new(io::stdout().lock());
            exit_code(classify::run(script, argv, &mut input, &mut out).and_then(|()| out.flush()))
        }
        Command::Sessions(command) => sessions::run(command),
        Command::Backends(args) => backends::run(&registry, args),
        Command::Schema => {
            let schema = harness_agents_core::schema::lines();
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

/// The exit status of a command that reads and writes: 0 when it worked, or when its reader
/// closed the output early (a broken pipe, `| head`); else 1, after saying why on stderr.
fn exit_code(result: io::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("harness: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::parse_timeout;

    #[test]
    fn timeouts_in_seconds_or_with_units() {
        let table = [
            ("90", 90_000),
            ("1.5", 1_500),
            (".5", 500),
            ("90s", 90_000),
            ("10m", 600_000),
            ("1h30m", 5_400_000),
            ("1h 30m", 5_400_000),
            ("250ms", 250),
            (" 7 ", 7_000),
        ];
        for (text, millis) in table {
            assert_eq!(
                parse_timeout(text),
                Ok(Duration::from_millis(millis)),
                "{text}"
            );
        }
    }
}
