//! `cargo xtask record --backend gemini`: the Gemini CLI corpus, recorded from the real
//! `gemini` binary against the Gemini API stand-in ([`super::gemini_api`]).
//!
//! Scenarios live in `fixtures/gemini/scenarios/NAME.json`: the prompt (written to stdin, as
//! `harness run` does), the arguments after `gemini` (by default those of a live run with
//! `--approval-mode=yolo`), settings merged over the offline defaults, extra environment, the
//! project's files, files under HOME, and the model turns. Each runs in a fresh
//! `/home/gemini/project` with `HOME=/home/gemini` and `TMPDIR=/home/gemini/tmp`, created for
//! the run and removed after it (the command refuses to touch a `/home/gemini` it did not
//! make). Only loopback traffic: `GOOGLE_GEMINI_BASE_URL` names the stand-in, the settings
//! select API-key auth and turn off telemetry, usage statistics and update checks, and a dead
//! loopback proxy takes anything else.
//!
//! Without `--check`, recordings (`NAME.jsonl`, `NAME.stderr`, `NAME.cmd`) go to
//! `fixtures/gemini/` (or `--out DIR`) and are compared with `NAME.expected.jsonl`, normalized
//! with `--cwd /home/gemini/project`; new ones have no expected file until one is written and
//! reviewed by hand. `--check` records into a temporary folder and reports drift against the
//! committed recordings and expected events: new or vanished line types and tool names, and
//! any difference in the normalized events (ids, timestamps and durations neutralized).
//! `--gemini PATH` names a `gemini` binary; otherwise `@google/gemini-cli@VERSION` (default
//! [`GEMINI_VERSION`], or `--version`) is installed with npm into `target/record-cache/`.
//! With `RECORD_DUMP_REQUESTS=1`, each run's request bodies go to `NAME.requests.jsonl`.
//!
//! A scenario with `resume_from` records a resumed run (G14): a first run with that prompt
//! creates the session, against the same stand-in (which picks each answer by the model turns
//! the request's history holds, so the first run plays the first turn); then the recorded run
//! gives the scenario's prompt with `--resume=ID`, the id the first run's `init` line gave,
//! on the command line `harness run --resume ID` builds. The first run's output is not kept;
//! its command line and session id go into `NAME.cmd` as `pre_run`.
//!
//! Every scenario then runs a second time, live, the way `harness run --backend gemini` runs
//! it: through `GeminiHarness::run` (the prompt on stdin, the command line it builds from the
//! scenario's model and approval mode) against a fresh stand-in, the real binary behind a
//! wrapper that clears the environment. Its events must be the recording's (stderr warnings
//! aside, ids numbered on each side) and its exit status the recorded one.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harness_agents_core::{Backend, NormalizerConfig, RunRequest};
use harness_agents_gemini::{GeminiHarness, GeminiNormalizer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::gemini_api::{GeminiApi, Turn};
use super::server::Server;
use super::{Options, drift, read, scenario_names, shared};

/// The Gemini CLI version the corpus was recorded with.
pub const GEMINI_VERSION: &str = harness_agents_gemini::VERSIONS.recorded;
pub(super) const HOME: &str = "/home/gemini";
pub(super) const PROJECT: &str = "/home/gemini/project";
const TMP: &str = "/home/gemini/tmp";
pub(super) const RUN_LIMIT: Duration = Duration::from_secs(120);

/// The arguments of a live run with `--approval-mode=yolo` (`harness run --backend gemini
/// --permission-mode yolo`).
const DEFAULT_ARGS: [&str; 3] = [
    "--output-format=stream-json",
    "--skip-trust",
    "--approval-mode=yolo",
];

/// One scripted `gemini` run.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The prompt, written to standard input.
    pub prompt: String,
    /// The arguments after `gemini`; [`DEFAULT_ARGS`] when absent.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Top-level keys merged over the default `settings.json`.
    #[serde(default)]
    pub settings: BTreeMap<String, Value>,
    /// Variables added to the standard environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// Files under HOME, by relative path.
    #[serde(default)]
    pub home_files: BTreeMap<String, String>,
    /// The prompt of a first run, with the same arguments, whose session the recorded run
    /// resumes (`--resume=ID`); its output is not kept.
    #[serde(default)]
    pub resume_from: Option<String>,
    /// The model's turns, in order (a resumed scenario's first run plays the first).
    pub turns: Vec<Turn>,
}

impl Scenario {
    pub(super) fn load(path: &Path) -> Result<Scenario> {
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

    fn args(&self) -> Vec<String> {
        match &self.args {
            Some(args) => args.clone(),
            None => DEFAULT_ARGS.map(String::from).into(),
        }
    }

    /// `~/.gemini/settings.json`: API-key auth (otherwise headless mode refuses to start, exit
    /// status 41), nothing sent anywhere, then the scenario's own keys.
    fn settings(&self) -> Value {
        let mut settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false}
        });
        for (key, value) in &self.settings {
            settings[key] = value.clone();
        }
        settings
    }
}

/// The npm package.
pub const PACKAGE: &str = "@google/gemini-cli";

/// Installs `@google/gemini-cli@version` into `cache/gemini-VERSION/` (once) and returns its
/// `gemini`.
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(format!("gemini-{version}"));
    let binary = cache.join("node_modules/.bin/gemini");
    super::npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)
}

/// Entry point of `cargo xtask record --backend gemini`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("gemini");
    let names = scenario_names(&options.names, &dir.join("scenarios"))?;
    let gemini = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(GEMINI_VERSION),
        )?,
    };
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&dir.join("scenarios").join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let mut problems = run(name, &scenario, &gemini, out, options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let events = normalize(&raw, &read(&out.join(format!("{name}.stderr"))));
        // The same scenario through `harness run --backend gemini`'s code path.
        let (live, exit, notes) =
            run_live(&scenario, &gemini).with_context(|| format!("running {name} live"))?;
        problems.extend(notes.into_iter().map(|n| format!("live: {n}")));
        let recorded_exit = recorded_exit_code(&out.join(format!("{name}.cmd")));
        problems.extend(live_drift(&events, recorded_exit, &live, exit));
        if options.check {
            if old_raw.is_empty() {
                problems.push(format!(
                    "no committed recording fixtures/gemini/{name}.jsonl"
                ));
            }
            problems.extend(drift::shape_drift(
                &drift::shape(&old_raw),
                &drift::shape(&raw),
            ));
        }
        problems.extend(shared::against_expected(
            &dir,
            out,
            name,
            options.check,
            &old_raw,
            (&events, &raw),
            &mut report.unreviewed,
        )?);
        report.add(name, &scenario.about, problems);
    }
    report.finish("Gemini CLI", out)
}

/// The `exit_code` on the last line of a `.cmd` file (0 when there is none).
fn recorded_exit_code(path: &Path) -> i64 {
    read(path)
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|l| l.get("exit_code").and_then(Value::as_i64))
        .unwrap_or(0)
}

/// The events `harness normalize --backend gemini --cwd /home/gemini/project` prints.
fn normalize(raw: &str, stderr: &str) -> String {
    shared::normalize_in(GeminiNormalizer::new, PROJECT, raw, stderr)
}

/// A fresh project, HOME and stand-in for one run of a scenario.
pub(super) struct Setup {
    pub(super) server: Server,
    pub(super) api: Arc<Mutex<GeminiApi>>,
    pub(super) env: BTreeMap<String, String>,
    pub(super) settings: Value,
}

/// Makes `/home/gemini` anew with the scenario's files and settings, and starts its stand-in;
/// `dump` names the file the request bodies go to, if any.
pub(super) fn prepare(scenario: &Scenario, dump: Option<PathBuf>) -> Result<Setup> {
    shared::fresh_home(HOME, PROJECT)?;
    std::fs::create_dir_all(TMP)?;
    shared::write_files(Path::new(PROJECT), &scenario.files)?;
    shared::write_files(Path::new(HOME), &scenario.home_files)?;
    let settings = scenario.settings();
    let settings_dir = Path::new(HOME).join(".gemini");
    std::fs::create_dir_all(&settings_dir)?;
    std::fs::write(
        settings_dir.join("settings.json"),
        serde_json::to_string_pretty(&settings)?,
    )?;

    let api = Arc::new(Mutex::new(GeminiApi::new(&scenario.turns)));
    let server = shared::serve(0, &api, dump)?;
    let base_url = format!("http://127.0.0.1:{}", server.port());
    let mut env = shared::offline_env([
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME", HOME.to_string()),
        ("TMPDIR", TMP.to_string()),
        ("GEMINI_API_KEY", "loopback-only".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", base_url),
    ]);
    env.extend(scenario.env.clone());
    Ok(Setup {
        server,
        api,
        env,
        settings,
    })
}

fn run(
    name: &str,
    scenario: &Scenario,
    gemini: &Path,
    out: &Path,
    sessions: bool,
) -> Result<Vec<String>> {
    let dump = std::env::var_os("RECORD_DUMP_REQUESTS")
        .map(|_| out.join(format!("{name}.requests.jsonl")));
    let Setup {
        server,
        api,
        mut env,
        settings,
    } = prepare(scenario, dump)?;
    let (args, pre_run) = match &scenario.resume_from {
        Some(first) => {
            let id = first_run(gemini, scenario, &env, first)?;
            let mut argv = vec!["gemini".to_string()];
            argv.extend(scenario.args());
            let pre_run = json!({"argv": argv, "stdin": first, "session_id": id});
            (resumed_args(scenario, &id), Some(pre_run))
        }
        None => (scenario.args(), None),
    };
    let started = Instant::now();
    let mut child = Command::new(gemini)
        .args(&args)
        .env_clear()
        .envs(&env)
        .current_dir(PROJECT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", gemini.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(scenario.prompt.as_bytes())?;
    }
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let run = super::Watched::start(child, started, RUN_LIMIT)?;
    let stdout_bytes = shared::read_lines(stdout, |_| {})?;
    let (status, timed_out, stderr_bytes) = run.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let api_notes = shared::stop(server, &api);
    if sessions {
        // The chats of every project: `tmp/<project>/chats/session-*.jsonl`.
        let stored = Path::new(HOME).join(".gemini/tmp");
        super::keep_sessions(&stored, &out.join(name).join("tmp"))?;
    }
    shared::clean(HOME)?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut argv = vec!["gemini".to_string()];
    argv.extend(args);
    env.insert(
        "GOOGLE_GEMINI_BASE_URL".into(),
        "http://127.0.0.1:PORT".into(),
    );
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": argv, "stdin": scenario.prompt,
                         "settings": settings});
    if let Some(pre_run) = pre_run {
        cmd["pre_run"] = pre_run;
    }
    let tail = shared::cmd_tail(shared::exit_code(status), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;

    Ok(shared::run_notes(timed_out, RUN_LIMIT, api_notes))
}

/// The first run of a resume scenario: its `first` prompt with the scenario's arguments, in
/// the prepared HOME and project; returns the session id its `init` line gave.
fn first_run(
    gemini: &Path,
    scenario: &Scenario,
    env: &BTreeMap<String, String>,
    first: &str,
) -> Result<String> {
    shared::session_run(
        gemini,
        &scenario.args(),
        env,
        (PROJECT, Some(first)),
        RUN_LIMIT,
        GeminiNormalizer::new(NormalizerConfig::default()),
    )
}

/// The arguments `harness run --backend gemini --resume ID` gives for the scenario.
fn resumed_args(scenario: &Scenario, id: &str) -> Vec<String> {
    let mut request = live_request(scenario, PathBuf::from("gemini"));
    request.resume = Some(id.to_string());
    GeminiHarness.args(&request, Path::new(PROJECT))
}

/// The request `harness run --backend gemini` would make for a scenario's arguments: its
/// `--model` and `--approval-mode` as the request's model and permission mode, the other
/// arguments (beyond the two every live run gives) as extra arguments.
fn live_request(scenario: &Scenario, binary: PathBuf) -> RunRequest {
    let mut request = RunRequest::new(scenario.prompt.clone());
    request.cwd = Some(PathBuf::from(PROJECT));
    request.binary = Some(binary);
    request.timeout = Some(RUN_LIMIT);
    request.normalizer.cwd = Some(PROJECT.to_string());
    for arg in scenario.args() {
        if let Some(model) = arg.strip_prefix("--model=") {
            request.model = Some(model.to_string());
        } else if let Some(mode) = arg.strip_prefix("--approval-mode=") {
            request.permission_mode = Some(mode.to_string());
        } else if !["--output-format=stream-json", "--skip-trust"].contains(&arg.as_str()) {
            request.extra_args.push(arg);
        }
    }
    request
}

/// The scenario once more, live, as `harness run --backend gemini` runs it: through
/// `GeminiHarness::run` (the prompt on stdin, the arguments it builds) against a fresh stand-in.
/// The real binary is started through a wrapper that clears the environment, so only the
/// scenario's variables reach it. Returns the events and the outcome line as
/// `harness run --format jsonl` prints them, and the exit status.
fn run_live(scenario: &Scenario, gemini: &Path) -> Result<(String, Option<i32>, Vec<String>)> {
    let Setup {
        server, api, env, ..
    } = prepare(scenario, None)?;
    let wrapper = Path::new(HOME).join("gemini-clean-env");
    shared::clean_env_wrapper(&wrapper, gemini, &env, None)?;
    let mut request = live_request(scenario, wrapper);
    if let Some(first) = &scenario.resume_from {
        request.resume = Some(first_run(gemini, scenario, &env, first)?);
    }
    let (text, exit) = shared::run_live(&GeminiHarness, request)?;
    let notes = shared::stop(server, &api);
    shared::clean(HOME)?;
    Ok((text, exit, notes))
}

/// The differences between a live run and the recording's events: stdout's events in order
/// (stderr's warnings interleave by timing and vary, see [`shared::without_stderr`]), ids numbered by
/// first appearance on each side, and the exit status.
fn live_drift(recorded: &str, recorded_exit: i64, live: &str, exit: Option<i32>) -> Vec<String> {
    let (recorded, live) = (
        shared::without_stderr(recorded),
        shared::without_stderr(live),
    );
    let mut problems: Vec<String> = drift::event_drift(&recorded, &recorded, &live, &live)
        .into_iter()
        .map(|p| format!("live: {p}"))
        .collect();
    if exit.map(i64::from) != Some(recorded_exit) {
        problems.push(format!(
            "live: exit status {exit:?}, the recording's {recorded_exit}"
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use harness_agents_core::Backend;

    #[test]
    fn every_committed_gemini_scenario_loads_and_has_a_recording_and_expected_events() {
        let dir = fixtures::root().join("gemini");
        let names = super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        for name in &names {
            let scenario = Scenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            assert!(!scenario.turns.is_empty(), "{name}");
            for file in ["jsonl", "expected.jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
        assert!(names.len() >= 25, "{} scenarios", names.len());
    }

    #[test]
    fn stderr_warnings_are_left_out_of_the_comparison_and_of_the_counts() {
        let events = concat!(
            r#"{"kind":"warning","line":3,"message":"w","source":"stream"}"#,
            "\n",
            r#"{"kind":"warning","message":"x","source":"stderr","line":1,"stream":"stderr"}"#,
            "\n",
            r#"{"kind":"outcome","status":"success","metrics":{},"counts":{"warning":2}}"#,
            "\n",
        );
        assert_eq!(
            shared::without_stderr(events),
            concat!(
                r#"{"kind":"warning","line":3,"message":"w","source":"stream"}"#,
                "\n",
                r#"{"counts":{"warning":1},"kind":"outcome","metrics":{},"status":"success"}"#,
                "\n"
            )
        );
    }

    #[test]
    fn a_live_run_must_give_the_recordings_events_and_exit_status() {
        let recorded = concat!(
            r#"{"kind":"read","path":"/p/a","success":true,"tool":"read_file","tool_use_id":"read_file_111","line":4}"#,
            "\n",
            r#"{"kind":"warning","message":"x","source":"stderr","line":1,"stream":"stderr"}"#,
            "\n",
            r#"{"kind":"outcome","session_id":"aaaaaaaa","status":"success","metrics":{"duration_ms":5},"counts":{"read":1,"warning":1}}"#,
            "\n",
        );
        let live = concat!(
            r#"{"kind":"warning","message":"y","source":"stderr","line":1,"stream":"stderr"}"#,
            "\n",
            r#"{"kind":"read","path":"/p/a","success":true,"tool":"read_file","tool_use_id":"read_file_222","line":4}"#,
            "\n",
            r#"{"kind":"outcome","session_id":"bbbbbbbb","status":"success","metrics":{"duration_ms":9},"counts":{"read":1,"warning":1},"exit_code":0}"#,
            "\n",
        );
        assert_eq!(live_drift(recorded, 0, live, Some(0)), Vec::<String>::new());
        assert_eq!(
            live_drift(recorded, 144, live, Some(0)),
            ["live: exit status Some(0), the recording's 144"]
        );
        let other = live.replace("/p/a", "/p/b");
        assert_eq!(live_drift(recorded, 0, &other, Some(0)).len(), 1);
    }

    #[test]
    fn the_live_request_carries_the_scenarios_model_and_approval_mode() {
        let scenario = Scenario {
            prompt: "-p x".into(),
            args: Some(
                [
                    "--output-format=stream-json",
                    "--skip-trust",
                    "--approval-mode=yolo",
                    "--model=gemini-2.5-flash",
                    "--debug",
                ]
                .map(String::from)
                .into(),
            ),
            ..Scenario::default()
        };
        let request = live_request(&scenario, PathBuf::from("/bin/gemini"));
        assert_eq!(request.prompt, "-p x");
        assert_eq!(request.model.as_deref(), Some("gemini-2.5-flash"));
        assert_eq!(request.permission_mode.as_deref(), Some("yolo"));
        assert_eq!(request.extra_args, ["--debug"]);
        assert_eq!(
            GeminiHarness.args(&request, Path::new(PROJECT)),
            [
                "--output-format=stream-json",
                "--skip-trust",
                "--model=gemini-2.5-flash",
                "--approval-mode=yolo",
                "--debug"
            ]
        );
    }

    #[test]
    fn the_settings_select_api_key_auth_and_keep_scenario_keys() {
        let mut scenario = Scenario::default();
        scenario
            .settings
            .insert("model".into(), json!({"name": "gemini-2.5-flash"}));
        let settings = scenario.settings();
        assert_eq!(
            settings["security"]["auth"]["selectedType"],
            "gemini-api-key"
        );
        assert_eq!(settings["model"]["name"], "gemini-2.5-flash");
        assert_eq!(scenario.args(), DEFAULT_ARGS);
    }

    #[test]
    fn a_resumed_run_has_the_live_command_line_with_the_first_runs_session() {
        let scenario = Scenario::default();
        assert_eq!(
            resumed_args(&scenario, "9f3c"),
            [
                "--output-format=stream-json",
                "--skip-trust",
                "--resume=9f3c",
                "--approval-mode=yolo"
            ]
        );
    }
}
