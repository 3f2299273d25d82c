//! `cargo xtask record --backend codex`: the Codex corpus, re-recorded from `codex exec` against
//! the Responses API stand-in ([`super::openai`]).
//!
//! Scenarios live in `fixtures/codex/scenarios/NAME.json`: the arguments after `codex` (the
//! prompt included, exactly as the shared `.cmd` files show them), the `config.toml` with
//! `{base_url}` where the stand-in's URL goes, extra environment, the project's files and
//! files under HOME (an MCP server script), an optional stdin text, an optional signal once a
//! command starts, and the turns. Each runs in a fresh `/home/dev2/project` with
//! `HOME=/home/dev2` and `CODEX_HOME=/home/dev2/.codex`, the shared recordings' paths. Output
//! goes to `fixtures/codex/` (or `--out DIR`), and each fresh recording is checked
//! against `fixtures/codex/NAME.expected.jsonl`, normalized with `--cwd /home/dev2/project`.
//! With `RECORD_DUMP_REQUESTS=1` in the environment, the request bodies of each run go to
//! `NAME.requests.jsonl` beside its recording: what tools the binary offers (MCP tools, for
//! one, come through `tool_search` in the `mcp__SERVER` namespace), what it sends back.
//!
//! A scenario with `pre_args` runs them first, against the same stand-in (which plays its
//! turns in order), and records the run after it: `{session_id}` in `args` stands for the
//! thread id the first run's `thread.started` gave, so a scenario can resume that session by
//! id (X10) on the command line `harness run --resume ID` builds.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness_agents_codex::CodexNormalizer;
use harness_agents_core::NormalizerConfig;
use serde::Deserialize;
use serde_json::json;

use super::openai::{Responses, Turn};
use super::{Options, drift, read, scenario_names, shared};

/// The Codex CLI version `fixtures/codex/` is recorded with.
pub const CODEX_VERSION: &str = harness_agents_codex::VERSIONS.recorded;
const HOME: &str = "/home/dev2";
const PROJECT: &str = "/home/dev2/project";
const RUN_LIMIT: Duration = Duration::from_secs(120);

/// One scripted `codex` run.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The arguments after `codex`, the prompt included.
    pub args: Vec<String>,
    /// `CODEX_HOME/config.toml`, with `{base_url}` for the stand-in's URL.
    pub config_toml: String,
    /// Variables added to the standard environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Files under HOME, by relative path.
    #[serde(default)]
    pub home_files: BTreeMap<String, String>,
    /// Text for stdin (otherwise stdin is `/dev/null`).
    #[serde(default)]
    pub stdin: Option<String>,
    /// `"int"`, `"term"`, or `"int-group"` (SIGINT to the binary's whole process group, as
    /// Ctrl-C would): sent once a stdout line says `item.started`, or `signal_after_ms` after
    /// the start when that is set.
    #[serde(default)]
    pub signal: Option<String>,
    /// Send `signal` this long after the start instead of on `item.started`.
    #[serde(default)]
    pub signal_after_ms: Option<u64>,
    /// A run before the recorded one (e.g. the session `resume --last` continues): its
    /// arguments after `codex`. It plays the first turns; its output is not kept, but its
    /// thread id replaces `{session_id}` in `args`.
    #[serde(default)]
    pub pre_args: Option<Vec<String>>,
    /// The stand-in's answers, in order.
    pub turns: Vec<Turn>,
}

impl Scenario {
    fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: Scenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        shared::check_files(
            path,
            scenario.files.keys().chain(scenario.home_files.keys()),
        )?;
        Ok(scenario)
    }
}

/// The Codex package on npm.
pub const PACKAGE: &str = "@openai/codex";

/// Installs `@openai/codex@version` into `cache/codex-VERSION/` (once) and returns the
/// platform binary.
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(format!("codex-{version}"));
    let (package, triple) = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => ("linux-x64", "x86_64-unknown-linux-musl"),
        ("linux", "aarch64") => ("linux-arm64", "aarch64-unknown-linux-musl"),
        (os, arch) => bail!("no Codex binary package for {os}/{arch} known here"),
    };
    let binary = cache.join(format!(
        "node_modules/@openai/codex-{package}/vendor/{triple}/bin/codex"
    ));
    super::npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)
}

/// Entry point of `cargo xtask record --backend codex`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("codex");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let codex = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(CODEX_VERSION),
        )?,
    };
    let out = super::Output::new(options, &dir)?;
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let old_stderr = read(&dir.join(format!("{name}.stderr")));
        let mut problems = run(name, &scenario, &codex, out.path(), options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.path().join(format!("{name}.jsonl")));
        let stderr = read(&out.path().join(format!("{name}.stderr")));
        problems.extend(shared::recording_drift(
            options.check,
            (&dir, name),
            (&old_raw, &old_stderr),
            (&raw, &stderr),
            normalize,
            |old, new| drift::shape_drift(&drift::shape(old), &drift::shape(new)),
        ));
        report.add(name, &scenario.about, problems);
    }
    report.finish("Codex", out.path())
}

fn normalize(raw: &str, stderr: &str) -> String {
    shared::normalize_in(CodexNormalizer::new, PROJECT, raw, stderr)
}

/// Sends `int`, `term` or `int-group` to the process (group) `pid`, which we started.
fn send_signal(pid: u32, which: &str) {
    let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
        return;
    };
    let _ = match which {
        "term" => rustix::process::kill_process(pid, rustix::process::Signal::TERM),
        "int-group" => rustix::process::kill_process_group(pid, rustix::process::Signal::INT),
        _ => rustix::process::kill_process(pid, rustix::process::Signal::INT),
    };
}

/// The standard command PATH of a run.
const PATH: &str = "/usr/local/bin:/usr/bin:/bin";
/// Where the bundled `rg` is linked for a run.
const BIN: &str = "/home/dev2/bin";

/// The PATH of a run. Codex ships `rg` in `codex-path/` beside its binary and means its
/// commands to find it, but 0.171.0 does not always put that folder on their PATH: a command
/// then fails with `rg: command not found` in one run and not the next. Its commands run in a
/// login shell (`bash -lc`), where `/etc/profile` resets the PATH. So when the binary has a
/// bundled `rg`, it is linked into `/home/dev2/bin` (a path of the recordings, not of this
/// machine), which leads the PATH of the run, and `/home/dev2/.profile` puts it back in front
/// after `/etc/profile`.
fn command_path(codex: &Path) -> Result<&'static str> {
    let bundled = codex
        .parent()
        .and_then(Path::parent)
        .map(|triple| triple.join("codex-path").join("rg"));
    match bundled {
        Some(rg) if rg.exists() => {
            std::fs::create_dir_all(BIN)?;
            std::os::unix::fs::symlink(&rg, Path::new(BIN).join("rg"))
                .with_context(|| format!("linking {}", rg.display()))?;
            std::fs::write(
                Path::new(HOME).join(".profile"),
                format!("PATH=\"{BIN}:$PATH\"\n"),
            )?;
            Ok("/home/dev2/bin:/usr/local/bin:/usr/bin:/bin")
        }
        _ => Ok(PATH),
    }
}

fn run(
    name: &str,
    scenario: &Scenario,
    codex: &Path,
    out: &Path,
    sessions: bool,
) -> Result<Vec<String>> {
    shared::fresh_home(HOME, PROJECT)?;
    shared::write_files(Path::new(PROJECT), &scenario.files)?;
    shared::write_files(Path::new(HOME), &scenario.home_files)?;
    let path = command_path(codex)?;
    let api = Arc::new(Mutex::new(Responses::new(&scenario.turns)));
    // With RECORD_DUMP_REQUESTS set, every request body goes to NAME.requests.jsonl (for
    // writing scenarios: what tools the binary offers, what it sends back).
    let server = shared::serve(0, &api, shared::dump_path(out, name))?;
    let config = scenario.config_toml.replace(
        "{base_url}",
        &format!("http://127.0.0.1:{}/v1", server.port()),
    );
    let codex_home = Path::new(HOME).join(".codex");
    std::fs::create_dir_all(&codex_home)?;
    std::fs::write(codex_home.join("config.toml"), &config)?;
    let mut env = shared::offline_env([
        ("PATH", path.to_string()),
        ("MOCK_OPENAI_API_KEY", "sk-mock-loopback-only".to_string()),
        ("HOME", HOME.to_string()),
        ("CODEX_HOME", "/home/dev2/.codex".to_string()),
    ]);
    env.extend(scenario.env.clone());

    let pre_session = match &scenario.pre_args {
        Some(pre) => Some(shared::session_run(
            codex,
            pre,
            &env,
            (PROJECT, None),
            RUN_LIMIT,
            CodexNormalizer::new(NormalizerConfig::default()),
        )?),
        None => None,
    };
    let args: Vec<String> = scenario
        .args
        .iter()
        .map(|arg| match &pre_session {
            Some(id) => arg.replace("{session_id}", id),
            None => arg.clone(),
        })
        .collect();
    let started = Instant::now();
    let mut command = Command::new(codex);
    // For a group signal, a process group of its own, so the signal reaches codex and its
    // commands but never us. Only then: in its own group, codex's read-only sandbox reports a
    // refused command as a failed command item, where the shared i6 recording shows none.
    if scenario.signal.as_deref() == Some("int-group") {
        command.process_group(0);
    }
    let mut child = command
        .args(&args)
        .env_clear()
        .envs(&env)
        .current_dir(PROJECT)
        .stdin(if scenario.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", codex.display()))?;
    if let (Some(mut stdin), Some(text)) = (child.stdin.take(), &scenario.stdin) {
        stdin.write_all(text.as_bytes())?;
    }
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let pid = child.id();
    let run = super::Watched::start(child, started, RUN_LIMIT)?;
    let mut signal = scenario.signal.clone();
    if let Some(after) = scenario.signal_after_ms
        && let Some(which) = signal.take()
    {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(after));
            send_signal(pid, &which);
        });
    }
    let stdout_bytes = shared::read_lines(stdout, |line| {
        if let Some(which) = &signal
            && String::from_utf8_lossy(line).contains("\"type\":\"item.started\"")
        {
            std::thread::sleep(Duration::from_millis(1500));
            send_signal(pid, which);
            signal = None;
        }
    })?;
    let (status, timed_out, stderr_bytes) = run.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let api_notes = shared::stop(server, &api);
    if sessions {
        let stored = Path::new(HOME).join(".codex/sessions");
        super::keep_sessions(&stored, &out.join(name).join("sessions"))?;
    }
    shared::clean(HOME)?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut argv = vec!["codex".to_string()];
    argv.extend(args);
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": argv, "config_toml": config});
    if let (Some(pre), Some(id)) = (&scenario.pre_args, &pre_session) {
        let mut pre_argv = vec!["codex".to_string()];
        pre_argv.extend(pre.iter().cloned());
        cmd["pre_run"] = json!({"argv": pre_argv, "session_id": id});
    }
    let tail = shared::cmd_tail(shared::exit_code(status), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;

    Ok(shared::run_notes(timed_out, RUN_LIMIT, api_notes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_codex_scenario_loads() {
        let dir = fixtures::root().join("codex/scenarios");
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let scenario = Scenario::load(&path).unwrap();
                let placeholder = scenario.config_toml.contains("{base_url}");
                assert!(placeholder, "{}", path.display());
                count += 1;
            }
        }
        assert_eq!(count, 51, "one scenario per recording in fixtures/codex");
    }

    #[test]
    fn the_resumed_run_by_id_is_recorded_on_the_live_runners_command_line() {
        use harness_agents_core::{Backend, RunRequest};

        let path = fixtures::root().join("codex/scenarios/l4_resume_by_id.json");
        let scenario = Scenario::load(&path).unwrap();
        let mut request = RunRequest::new(scenario.stdin.clone().unwrap());
        request.resume = Some("{session_id}".into());
        request.permission_mode = Some("bypassPermissions".into());
        let live = harness_agents_codex::CodexHarness.args(&request, Path::new(PROJECT));
        assert_eq!(scenario.args, live);
        request.resume = None;
        let mut first = harness_agents_codex::CodexHarness.args(&request, Path::new(PROJECT));
        // The first run takes its prompt as an argument in place of the final `-`.
        first.pop();
        let pre = scenario.pre_args.unwrap();
        assert_eq!(pre[..pre.len() - 1], first);
    }
}
