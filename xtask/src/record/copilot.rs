//! `cargo xtask record --backend copilot`: the GitHub Copilot CLI corpus, recorded from the npm
//! package's `copilot` (`@github/copilot`) in its offline BYOK mode against the OpenAI
//! chat-completions stand-in ([`super::chat`]). Copilot makes one request per model call and
//! no side requests; each request carries every assistant message so far, so a request's step
//! is the number of assistant messages it carries.
//!
//! Scenarios live in `fixtures/copilot/scenarios/NAME.json` ([`Scenario`]). Each runs in a
//! fresh project at `/home/copilot/project` with `HOME=/home/copilot` and
//! `TMPDIR=/home/copilot/tmp`, made for the run and removed after it. Copilot unpacks its own
//! runtime (about 235 MB) into `~/.cache/copilot/pkg` on its first run in a HOME: the recorder
//! unpacks it once into the install's cache folder and links every run's
//! `~/.cache/copilot/pkg` to that copy, made read-only. The provider is the stand-in
//! (`COPILOT_PROVIDER_BASE_URL`, a key Copilot sends as a bearer token, `COPILOT_MODEL`),
//! `COPILOT_OFFLINE=true` keeps GitHub out of the run, and a dead loopback proxy takes
//! anything else. Copilot masks the key's text wherever it appears in its output, so the key
//! is a word no recording contains.
//!
//! The command line is the live runner's own (`CopilotHarness`'s `Backend::args` with the
//! permission mode's flags, then `--prompt=PROMPT`), then the scenario's arguments. Recordings
//! (`NAME.jsonl`, `NAME.stderr`, `NAME.cmd`) go to `fixtures/copilot/` (or `--out DIR`) and are
//! compared with the hand-reviewed `NAME.expected.jsonl`, normalized with `--cwd
//! /home/copilot/project`. `--check` records into a temporary folder and reports drift against
//! the committed recordings: new or vanished line types, tools with their status, and any
//! difference in the normalized events (ids, times neutralized; lines counted without the
//! lines whose number varies from run to run, [`VARYING`]). With `RECORD_DUMP_REQUESTS=1`,
//! each run's request bodies go to `NAME.requests.jsonl`.
//!
//! A scenario with `resume_from` records a resumed run: a first run with that prompt, then
//! the recorded one with `--resume=ID` (the first run's session, `pre_run` in the `.cmd`
//! file). `--sessions` keeps the session folders Copilot stored (`~/.copilot/session-state/`)
//! in `NAME/session-state/` beside the live stream, each folder's `events.jsonl` only, its
//! system prompt cut ([`trimmed`]).
//!
//! Every scenario then runs a second time, live, through `CopilotHarness::run` against a
//! fresh stand-in, the real binary behind a wrapper that clears the environment. Its events
//! must be the recording's and its exit status the recorded one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness_agents_copilot::{CopilotHarness, CopilotNormalizer};
use harness_agents_core::{Backend, NormalizerConfig, PromptInput, RunRequest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::chat::Chat;
use super::scenario::Turn;
use super::server::Server;
use super::{Options, drift, read, scenario_names, shared};

/// The Copilot version the corpus was recorded with.
pub const COPILOT_VERSION: &str = harness_agents_copilot::VERSIONS.recorded;
/// The npm package.
pub const PACKAGE: &str = "@github/copilot";
/// The HOME every run is given, made anew for each.
pub const HOME: &str = "/home/copilot";
/// The project every run works in.
pub const PROJECT: &str = "/home/copilot/project";
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The model every run asks for: one Copilot knows, which sets both its catalog entry and the
/// model named on the wire.
const MODEL: &str = "gpt-4.1";
/// The provider key: Copilot masks its text wherever it appears, so it is one no run prints.
const KEY: &str = "sk-copilot-mock-loopback-only";
/// The ephemeral line types whose number varies between runs of one scenario: how often
/// Copilot reports its background shells and a command's output depends on timing.
const VARYING: [&str; 3] = [
    "session.background_tasks_changed",
    "tool.shell_output",
    "tool.execution_partial_result",
];

/// One scripted `copilot -p` run.
///
/// ```json
/// {
///   "about": "read a file",
///   "prompt": "Read notes.txt",
///   "files": {"notes.txt": "alpha\n"},
///   "turns": [
///     {"blocks": [{"type": "tool_use", "id": "call_01", "name": "view",
///                  "input": {"path": "notes.txt"}}]},
///     {"blocks": [{"type": "text", "text": "It says alpha."}]}
///   ]
/// }
/// ```
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The prompt, given as `--prompt=PROMPT`.
    pub prompt: String,
    /// The request's permission mode: `bypassPermissions` (`--allow-all-tools`) unless given;
    /// `null` leaves Copilot's own rules.
    #[serde(default = "every_tool")]
    pub permission_mode: Option<String>,
    /// Arguments after the live runner's.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables added to the standard environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// A first run with this prompt, whose session the recorded run resumes (`--resume=ID`):
    /// its answer is the first of `turns`, as the resumed run's requests carry it.
    #[serde(default)]
    pub resume_from: Option<String>,
    /// The model's answers, each chosen by the assistant messages its request carries.
    pub turns: Vec<Turn>,
}

fn every_tool() -> Option<String> {
    Some("bypassPermissions".to_string())
}

impl Scenario {
    fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: Scenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        shared::check_files(path, scenario.files.keys())?;
        Ok(scenario)
    }

    fn stand_in(&self) -> Chat {
        let scenario = super::scenario::Scenario {
            turns: self.turns.clone(),
            ..super::scenario::Scenario::default()
        };
        Chat::new(&scenario)
    }

    /// The live request for this scenario, run in the project.
    fn request(&self, binary: PathBuf) -> RunRequest {
        self.request_for(&self.prompt, binary)
    }

    /// The live request for `prompt` with this scenario's settings.
    fn request_for(&self, prompt: &str, binary: PathBuf) -> RunRequest {
        let mut request = RunRequest::new(prompt.to_string());
        request.cwd = Some(PathBuf::from(PROJECT));
        request.binary = Some(binary);
        request.timeout = Some(RUN_LIMIT);
        request.permission_mode = self.permission_mode.clone();
        request.extra_args = self.args.clone();
        request.normalizer.cwd = Some(PROJECT.to_string());
        request
    }

    /// The arguments after `copilot` of a run of `prompt`, resuming session `resume` when
    /// given: the live runner's, the prompt last as it places it.
    fn argv_for(&self, prompt: &str, resume: Option<&str>) -> Vec<String> {
        let mut request = self.request_for(prompt, PathBuf::from("copilot"));
        request.resume = resume.map(str::to_string);
        let mut argv = CopilotHarness.args(&request, Path::new(PROJECT));
        if let Some(launch) = CopilotHarness.launch()
            && let PromptInput::Flag(flag) = launch.prompt
        {
            argv.push(format!("{flag}={prompt}"));
        }
        argv
    }

    /// A resume scenario's first run, in the prepared HOME and project: the session id it
    /// reported, `None` for any other scenario.
    fn first_run(&self, binary: &Path, env: &BTreeMap<String, String>) -> Result<Option<String>> {
        let Some(first) = &self.resume_from else {
            return Ok(None);
        };
        shared::session_run(
            binary,
            &self.argv_for(first, None),
            env,
            (PROJECT, None),
            RUN_LIMIT,
            CopilotNormalizer::new(NormalizerConfig::default()),
        )
        .map(Some)
    }
}

/// Installs `@github/copilot@version` into `cache/copilot-VERSION/` (once), unpacks its
/// runtime once into `cache/copilot-VERSION/home/.cache/copilot/pkg` (read-only), and returns
/// its `copilot`.
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(format!("copilot-{version}"));
    let binary = cache.join("node_modules/.bin/copilot");
    let binary = super::npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)?;
    let home = cache.join("home");
    if !runtime(&cache).is_dir() {
        std::fs::create_dir_all(&home)?;
        eprintln!("unpacking Copilot's runtime into {}", home.display());
        let status = Command::new(&binary)
            .arg("--version")
            .env_clear()
            .env("HOME", &home)
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("COPILOT_AUTO_UPDATE", "false")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .with_context(|| format!("starting {}", binary.display()))?;
        if !status.success() || !runtime(&cache).is_dir() {
            bail!(
                "`copilot --version` did not unpack its runtime into {}",
                home.display()
            );
        }
        Command::new("chmod")
            .args(["-R", "a-w"])
            .arg(runtime(&cache))
            .status()?;
    }
    Ok(binary)
}

/// The unpacked runtime of the install in `cache`.
fn runtime(cache: &Path) -> PathBuf {
    cache.join("home/.cache/copilot/pkg")
}

/// A fresh project, HOME and stand-in for one run of a scenario.
pub(super) struct Setup {
    pub(super) server: Server,
    pub(super) api: Arc<Mutex<Chat>>,
    pub(super) env: BTreeMap<String, String>,
}

/// Makes `/home/copilot` anew (the project, the link to the runtime) and starts the stand-in.
pub(super) fn prepare(scenario: &Scenario, binary: &Path, dump: Option<PathBuf>) -> Result<Setup> {
    shared::fresh_home(HOME, PROJECT)?;
    let home = Path::new(HOME);
    for sub in ["tmp", ".cache/copilot"] {
        std::fs::create_dir_all(home.join(sub))?;
    }
    // The install is `CACHE/node_modules/.bin/copilot`; its runtime is beside it.
    let cache = binary
        .ancestors()
        .nth(3)
        .context("the binary is not in an install's node_modules/.bin")?;
    let runtime = runtime(cache);
    if runtime.is_dir() {
        std::os::unix::fs::symlink(&runtime, home.join(".cache/copilot/pkg"))?;
    }
    shared::write_files(Path::new(PROJECT), &scenario.files)?;

    let api = Arc::new(Mutex::new(scenario.stand_in()));
    let server = shared::serve(0, &api, dump)?;
    let mut env = shared::offline_env([
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME", HOME.to_string()),
        ("TMPDIR", format!("{HOME}/tmp")),
        (
            "COPILOT_PROVIDER_BASE_URL",
            format!("http://127.0.0.1:{}/v1", server.port()),
        ),
        ("COPILOT_PROVIDER_API_KEY", KEY.to_string()),
        ("COPILOT_MODEL", MODEL.to_string()),
        ("COPILOT_OFFLINE", "true".to_string()),
        ("COPILOT_AUTO_UPDATE", "false".to_string()),
    ]);
    env.extend(scenario.env.clone());
    Ok(Setup { server, api, env })
}

/// Entry point of `cargo xtask record --backend copilot`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("copilot");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let binary = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(COPILOT_VERSION),
        )?,
    };
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let old_stderr = read(&dir.join(format!("{name}.stderr")));
        let mut problems = run(name, &scenario, &binary, out, options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let stderr = read(&out.join(format!("{name}.stderr")));
        let events = normalize(&raw, &stderr);
        // The same scenario through `harness run --backend copilot`'s code path.
        let (live, exit, notes) =
            run_live(&scenario, &binary).with_context(|| format!("running {name} live"))?;
        problems.extend(notes.into_iter().map(|n| format!("live: {n}")));
        let recorded_exit = recorded_exit_code(&out.join(format!("{name}.cmd")));
        problems.extend(live_drift(&events, &raw, recorded_exit, &live, exit));
        if options.check {
            if old_raw.is_empty() {
                problems.push(format!(
                    "no committed recording fixtures/copilot/{name}.jsonl"
                ));
            } else {
                problems.extend(shape_drift(&old_raw, &raw));
                let old = normalize(&old_raw, &old_stderr);
                problems.extend(
                    event_drift((&old, &old_raw), (&events, &raw))
                        .into_iter()
                        .map(|p| format!("drift: {p}")),
                );
            }
        }
        let expected = dir.join(format!("{name}.expected.jsonl"));
        if expected.exists() {
            let expected = read(&expected);
            problems.extend(
                event_drift((&expected, &old_raw), (&events, &raw))
                    .into_iter()
                    .map(|p| format!("expected: {p}")),
            );
        } else {
            problems.extend(shared::against_expected(
                &dir,
                out,
                name,
                options.check,
                &old_raw,
                (&events, &raw),
                &mut report.unreviewed,
            )?);
        }
        report.add(name, &scenario.about, problems);
    }
    report.finish("Copilot", out)
}

/// The events `harness normalize --backend copilot --cwd /home/copilot/project` prints.
pub fn normalize(raw: &str, stderr: &str) -> String {
    shared::normalize_in(CopilotNormalizer::new, PROJECT, raw, stderr)
}

/// `events` of the raw stream `raw` with each stdout `line` counted without the [`VARYING`]
/// lines before it: two runs of one scenario may differ in them, and in nothing else.
fn without_varying(events: &str, raw: &str) -> String {
    let mut before = Vec::new();
    let mut skipped = 0;
    for line in raw.split('\n') {
        before.push(skipped);
        let kind = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
        if kind.is_some_and(|k| VARYING.contains(&k.as_str())) {
            skipped += 1;
        }
    }
    let mut out = String::new();
    for line in events.lines() {
        let Ok(mut value) = serde_json::from_str::<Value>(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let stdout = value.get("stream").is_none();
        if let Some(map) = value.as_object_mut()
            && stdout
            && let Some(n) = map.get("line").and_then(Value::as_u64)
        {
            let index = usize::try_from(n.saturating_sub(1)).unwrap_or(usize::MAX);
            let before = before.get(index).copied().unwrap_or(skipped);
            map.insert("line".into(), json!(n - before));
        }
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// The differences between two runs' events, each with its raw stream: ids and times
/// neutralized ([`drift::event_drift`]), stderr's warnings left out, lines counted without the
/// [`VARYING`] lines.
fn event_drift((old, old_raw): (&str, &str), (new, new_raw): (&str, &str)) -> Vec<String> {
    let old = steady(&shared::without_stderr(&without_varying(old, old_raw)));
    let new = steady(&shared::without_stderr(&without_varying(new, new_raw)));
    drift::event_drift(&old, &steady_raw(old_raw), &new, &steady_raw(new_raw))
}

/// `raw` without the [`VARYING`] lines: ids are numbered in the order they appear in the raw
/// stream, and each of those lines has an id of its own.
fn steady_raw(raw: &str) -> String {
    raw.lines()
        .filter(|line| {
            let kind = serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
            !kind.is_some_and(|k| VARYING.contains(&k.as_str()))
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// Event lines with the two figures that differ between runs of one scenario made equal:
/// the `context_current_tokens` of a tool's telemetry (the prompt carries the time, whose
/// tokens vary) in a raw line an event carries, and the `total retry wait time: N seconds`
/// of Copilot's final API error (its retries wait a random time).
fn steady(events: &str) -> String {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, member) in map.iter_mut() {
                    if key == "context_current_tokens" {
                        *member = json!(0);
                    } else {
                        walk(member);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            Value::String(text) => {
                const WAIT: &str = "total retry wait time: ";
                if let Some(at) = text.find(WAIT) {
                    let start = at + WAIT.len();
                    let end = text[start..].find(' ').map_or(text.len(), |n| start + n);
                    text.replace_range(start..end, "N");
                }
            }
            _ => {}
        }
    }
    let mut out = String::new();
    for line in events.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut value) => {
                walk(&mut value);
                out.push_str(&value.to_string());
            }
            Err(_) => out.push_str(line),
        }
        out.push('\n');
    }
    out
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

/// What kinds of things a raw Copilot stream holds: line types, and tools with their status
/// (and whether a shell command exited non-zero).
fn shape(raw: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut names = BTreeMap::new();
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            out.insert("line: <not JSON>".to_string());
            continue;
        };
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("<none>").to_string();
        let kind = text(value.get("type"));
        out.insert(format!("type: {kind}"));
        let data = value.get("data");
        let id = text(data.and_then(|d| d.get("toolCallId")));
        if kind == "tool.execution_start" {
            names.insert(id.clone(), text(data.and_then(|d| d.get("toolName"))));
        }
        if kind == "tool.execution_complete" {
            let ok = data.and_then(|d| d.get("success")) == Some(&Value::Bool(true));
            let exit = data
                .and_then(|d| d.pointer("/shellExecution/exitCode"))
                .and_then(Value::as_i64);
            let outcome = match (ok, exit) {
                (true, Some(code)) if code != 0 => "exit non-zero",
                (true, _) => "ok",
                (false, _) => "error",
            };
            let name = names.get(&id).cloned().unwrap_or_else(|| "<none>".into());
            out.insert(format!("tool: {name} {outcome}"));
        }
    }
    out
}

fn shape_drift(old: &str, new: &str) -> Vec<String> {
    let (old, new) = (shape(old), shape(new));
    let mut out: Vec<String> = new.difference(&old).map(|s| format!("new {s}")).collect();
    out.extend(old.difference(&new).map(|s| format!("vanished {s}")));
    out
}

fn run(
    name: &str,
    scenario: &Scenario,
    binary: &Path,
    out: &Path,
    sessions: bool,
) -> Result<Vec<String>> {
    let Setup { server, api, env } = prepare(scenario, binary, shared::dump_path(out, name))?;
    let resumed = scenario.first_run(binary, &env)?;
    let argv = scenario.argv_for(&scenario.prompt, resumed.as_deref());
    let started = Instant::now();
    let mut child = Command::new(binary)
        .args(&argv)
        .env_clear()
        .envs(&env)
        .current_dir(PROJECT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let watched = super::Watched::start(child, started, RUN_LIMIT)?;
    let stdout_bytes = shared::read_lines(stdout, |_| {})?;
    let (status, timed_out, stderr_bytes) = watched.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let api_notes = shared::stop(server, &api);
    if sessions {
        // `--sessions`: each session's `events.jsonl`; the rest of its folder (workspace
        // notes, checkpoints, file backups) is not read.
        let stored = Path::new(HOME).join(".copilot/session-state");
        let to = out.join(name).join("session-state");
        if to.exists() {
            std::fs::remove_dir_all(&to)?;
        }
        for entry in std::fs::read_dir(&stored).into_iter().flatten().flatten() {
            let events = entry.path().join("events.jsonl");
            if events.is_file() {
                let folder = to.join(entry.file_name());
                std::fs::create_dir_all(&folder)?;
                std::fs::write(folder.join("events.jsonl"), trimmed(&read(&events)))?;
            }
        }
    }
    shared::clean(HOME)?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut full_argv = vec!["copilot".to_string()];
    full_argv.extend(argv);
    let mut env = env;
    env.insert(
        "COPILOT_PROVIDER_BASE_URL".into(),
        "http://127.0.0.1:PORT/v1".into(),
    );
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv});
    if let (Some(id), Some(first)) = (&resumed, &scenario.resume_from) {
        let mut argv = vec!["copilot".to_string()];
        argv.extend(scenario.argv_for(first, None));
        cmd["pre_run"] = json!({"argv": argv, "session_id": id});
    }
    let tail = shared::cmd_tail(shared::exit_code(status), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;
    Ok(shared::run_notes(timed_out, RUN_LIMIT, api_notes))
}

/// A stored `events.jsonl` with each `system.message`'s `content` (Copilot's system prompt,
/// some 20 KB that no rule reads, CH2) replaced by a note of its length; every other line
/// as it was written.
fn trimmed(events: &str) -> String {
    let mut out = String::new();
    for line in events.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut value) if value["type"] == "system.message" => {
                let cut = value["data"]["content"].as_str().map(|c| c.chars().count());
                if let Some(n) = cut {
                    value["data"]["content"] =
                        json!(format!("(cut by the recorder: {n} characters)"));
                }
                out.push_str(&value.to_string());
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The scenario once more, live, as `harness run --backend copilot` runs it: through
/// `CopilotHarness::run` against a fresh stand-in, the real binary behind a wrapper that
/// clears the environment. Returns the events and the outcome line as `harness run --format
/// jsonl` prints them, the exit status, and the stand-in's notes.
fn run_live(scenario: &Scenario, binary: &Path) -> Result<(String, Option<i32>, Vec<String>)> {
    let Setup { server, api, env } = prepare(scenario, binary, None)?;
    let wrapper = Path::new(HOME).join("copilot-clean-env");
    shared::clean_env_wrapper(&wrapper, binary, &env, None)?;
    let mut request = scenario.request(wrapper);
    request.resume = scenario.first_run(binary, &env)?;
    let (text, exit) = shared::run_live(&CopilotHarness, request)?;
    let notes = shared::stop(server, &api);
    shared::clean(HOME)?;
    Ok((text, exit, notes))
}

/// The differences between a live run and the recording's events (ids numbered on each
/// side, line numbers left out: the [`VARYING`] lines differ between runs), and between their
/// exit statuses.
fn live_drift(
    recorded: &str,
    _raw: &str,
    recorded_exit: i64,
    live: &str,
    exit: Option<i32>,
) -> Vec<String> {
    let (recorded, live) = (
        steady(&without_lines(&shared::without_stderr(recorded))),
        steady(&without_lines(&shared::without_stderr(live))),
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

/// Event lines without their `line` field.
fn without_lines(events: &str) -> String {
    let mut out = String::new();
    for line in events.lines() {
        match serde_json::from_str::<Value>(line) {
            Ok(mut value) => {
                if let Some(map) = value.as_object_mut() {
                    map.remove("line");
                }
                out.push_str(&value.to_string());
            }
            Err(_) => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_stored_system_prompt_is_cut_and_nothing_else() {
        let events = concat!(
            r#"{"type":"session.start","data":{"sessionId":"s"}}"#,
            "\n",
            r#"{"type":"system.message","data":{"role":"system","content":"You are é."}}"#,
            "\n",
            "not json\n",
        );
        let lines: Vec<String> = trimmed(events).lines().map(str::to_string).collect();
        assert_eq!(
            lines[0],
            r#"{"type":"session.start","data":{"sessionId":"s"}}"#
        );
        let cut: Value = serde_json::from_str(&lines[1]).unwrap();
        assert_eq!(
            cut,
            json!({"type": "system.message",
                   "data": {"role": "system", "content": "(cut by the recorder: 10 characters)"}})
        );
        assert_eq!(lines[2], "not json");
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn every_committed_copilot_scenario_loads_and_has_a_recording_and_expected_events() {
        let dir = fixtures::root().join("copilot");
        let names = super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        for name in &names {
            let scenario = Scenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            assert!(!scenario.turns.is_empty(), "{name}");
            let argv = scenario.argv_for(&scenario.prompt, None);
            assert_eq!(
                argv[..3],
                ["--output-format", "json", "--no-auto-update"],
                "{name}"
            );
            assert_eq!(argv.last(), Some(&format!("--prompt={}", scenario.prompt)));
            for file in ["jsonl", "expected.jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
        assert!(names.len() >= 25, "{} scenarios", names.len());
    }

    #[test]
    fn the_command_line_is_the_live_runners_with_the_prompt_last() {
        let scenario = Scenario {
            prompt: "--allow-all-tools".into(),
            permission_mode: Some("plan".into()),
            args: vec!["--silent".into()],
            ..Scenario::default()
        };
        assert_eq!(
            scenario.argv_for(&scenario.prompt, None),
            [
                "--output-format",
                "json",
                "--no-auto-update",
                "--deny-tool=write",
                "--deny-tool=shell",
                "--silent",
                "--prompt=--allow-all-tools"
            ]
        );
        let default: Scenario =
            serde_json::from_value(json!({"prompt": "x", "turns": []})).unwrap();
        assert_eq!(
            default.argv_for(&default.prompt, None),
            [
                "--output-format",
                "json",
                "--no-auto-update",
                "--allow-all-tools",
                "--prompt=x"
            ]
        );
    }

    #[test]
    fn runs_that_differ_only_in_varying_lines_do_not_drift() {
        let raw = |shells: usize| {
            let mut raw = String::from(
                "{\"type\":\"tool.execution_start\",\"data\":{\"toolCallId\":\"c\"}}\n",
            );
            raw.push_str(
                &"{\"type\":\"session.background_tasks_changed\",\"data\":{}}\n".repeat(shells),
            );
            raw.push_str(
                "{\"type\":\"tool.execution_complete\",\"data\":{}}\n{\"type\":\"result\"}\n",
            );
            raw
        };
        let events = |line: u64| format!("{{\"kind\":\"command\",\"line\":{line}}}\n");
        let (one, three) = (raw(1), raw(3));
        assert_eq!(
            event_drift((&events(3), &one), (&events(5), &three)),
            Vec::<String>::new()
        );
        // Each varying line has an id of its own, which must not shift the numbering of the
        // ids after it.
        let with_ids = |shells: usize| {
            let mut raw = String::new();
            for n in 0..shells {
                raw.push_str(&format!(
                    "{{\"type\":\"session.background_tasks_changed\",\"data\":{{}},\"id\":\"b-{n}\"}}\n"
                ));
            }
            raw.push_str("{\"type\":\"result\",\"sessionId\":\"s-1\"}\n");
            raw
        };
        let outcome = "{\"kind\":\"outcome\",\"session_id\":\"s-1\"}\n";
        assert_eq!(
            event_drift((outcome, &with_ids(1)), (outcome, &with_ids(3))),
            Vec::<String>::new()
        );
        assert_eq!(
            event_drift((&events(3), &one), (&events(6), &three)).len(),
            1
        );
    }

    #[test]
    fn the_figures_that_vary_between_runs_are_made_equal() {
        let line = r#"{"kind":"error","message":"retried 5 times (total retry wait time: 16.64 seconds) Last error: 500","raw":{"m":{"context_current_tokens":10480,"x":1}}}"#;
        assert_eq!(
            steady(line),
            "{\"kind\":\"error\",\"message\":\"retried 5 times (total retry wait time: N seconds) Last error: 500\",\"raw\":{\"m\":{\"context_current_tokens\":0,\"x\":1}}}\n"
        );
    }
}
