//! `cargo xtask record --backend pi`: the Pi corpus, recorded from the npm package's `pi`
//! (`@mariozechner/pi-coding-agent`) against the Anthropic Messages stand-in
//! ([`super::anthropic`]). Pi makes one request per model call and no side requests; each
//! request carries every assistant message so far (a failed one is dropped before Pi retries),
//! so a request's step is the number of assistant messages it carries and a retry takes the
//! next turn at the same step.
//!
//! Scenarios live in `fixtures/pi/scenarios/NAME.json` ([`Scenario`]). Each runs in a fresh
//! project at `/home/pi/project` with `HOME=/home/pi` and `TMPDIR=/home/pi/tmp`, made for the
//! run and removed after it (the command refuses to touch a `/home/pi` it did not make).
//! `~/.pi/agent/models.json` points the built-in `anthropic` provider at the stand-in (its
//! models, prices and context windows stay), `~/.pi/agent/settings.json` shortens the retry
//! delays (the scenario may add settings), `PI_OFFLINE=1` turns off Pi's start-up network use
//! (update check, telemetry, downloads of `rg` and `fd`), and a dead loopback proxy takes
//! anything else. `rg` and `fd` go into `/home/pi/bin`, first on `PATH`, for `grep` and
//! `find`: `rg` from `--rg PATH`, `$RECORD_RG` or `PATH`; `fd` is a wrapper around `fd` or
//! `fdfind` (`$RECORD_FD`, else `PATH`) that drops `--no-require-git`, which Pi passes and
//! Debian 12's fd 8.6 rejects (the projects have no `.gitignore` and no git, so the flag
//! changes nothing).
//!
//! The command line is the live runner's own (`PiHarness`'s `Backend::args`: `--mode json
//! --model anthropic/claude-sonnet-4-5 --tools LIST`, the permission mode's tools), then the
//! scenario's arguments; the prompt goes to standard input, as `harness run --backend pi`
//! gives it. Recordings (`NAME.jsonl`, `NAME.stderr`, `NAME.cmd`) go to `fixtures/pi/` (or
//! `--out DIR`) and are compared with the hand-reviewed `NAME.expected.jsonl`, normalized with
//! `--cwd /home/pi/project`. `--check` records into a temporary folder and reports drift
//! against the committed recordings: new or vanished line types, message roles, block types,
//! tools, stop reasons, and any difference in the normalized events (ids, times and costs
//! neutralized). With `RECORD_DUMP_REQUESTS=1`, each run's request bodies go to
//! `NAME.requests.jsonl`.
//!
//! A scenario with `resume_from` records a resumed run (PI15): a first run with that prompt
//! and the scenario's arguments creates the session, against the same stand-in (its first
//! turn: the resumed run's request carries the first run's answer, so it is at the next step);
//! then the recorded run gives the scenario's prompt on the command line `harness run --resume
//! ID` builds (`--session ID`), the id the first run's header gave. The first run's output is
//! not kept; its command line, prompt and session id go into `NAME.cmd` as `pre_run`.
//!
//! Every scenario then runs a second time, live, through `PiHarness::run` (the prompt on
//! stdin, the command line it builds) against a fresh stand-in, the real binary behind a
//! wrapper that clears the environment. Its events must be the recording's (ids numbered on
//! each side) and its exit status the recorded one.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use harness_agents_core::{Backend, NormalizerConfig, RunRequest};
use harness_agents_pi::{PiHarness, PiNormalizer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::anthropic::{Anthropic, Steps};
use super::scenario::Turn;
use super::server::Server;
use super::{Options, drift, read, scenario_names, shared};

/// The Pi version the corpus was recorded with.
pub const PI_VERSION: &str = harness_agents_pi::VERSIONS.recorded;
/// The npm package.
pub const PACKAGE: &str = "@mariozechner/pi-coding-agent";
pub(super) const HOME: &str = "/home/pi";
pub(super) const PROJECT: &str = "/home/pi/project";
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The model every run asks for: a built-in Anthropic model (with prices), its base URL the
/// stand-in's.
pub(super) const MODEL: &str = "anthropic/claude-sonnet-4-5";

/// One scripted `pi --mode json` run.
///
/// ```json
/// {
///   "about": "read a file",
///   "prompt": "Read notes.txt",
///   "files": {"notes.txt": "alpha\n"},
///   "turns": [
///     {"blocks": [{"type": "tool_use", "id": "toolu_01", "name": "read",
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
    /// The prompt, written to standard input.
    pub prompt: String,
    /// The prompt of a first run, with the same arguments, whose session the recorded run
    /// continues (`--session ID`); its output is not kept.
    #[serde(default)]
    pub resume_from: Option<String>,
    /// The request's permission mode (`--tools`): `bypassPermissions` (every tool) unless
    /// given; `null` leaves Pi's default tools.
    #[serde(default = "every_tool")]
    pub permission_mode: Option<String>,
    /// Arguments after the live runner's.
    #[serde(default)]
    pub args: Vec<String>,
    /// Top-level keys merged over the default `settings.json`.
    #[serde(default)]
    pub settings: BTreeMap<String, Value>,
    /// Variables added to the standard environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
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

    fn stand_in(&self, seed: u64) -> Anthropic {
        let scenario = super::scenario::Scenario {
            turns: self.turns.clone(),
            ..super::scenario::Scenario::default()
        };
        Anthropic::new(&scenario, Steps::AssistantMessages, seed)
    }

    /// The live request for this scenario, run in the project.
    fn request(&self, binary: PathBuf) -> RunRequest {
        let mut request = RunRequest::new(self.prompt.clone());
        request.cwd = Some(PathBuf::from(PROJECT));
        request.binary = Some(binary);
        request.timeout = Some(RUN_LIMIT);
        request.model = Some(MODEL.to_string());
        request.permission_mode = self.permission_mode.clone();
        request.extra_args = self.args.clone();
        request.normalizer.cwd = Some(PROJECT.to_string());
        request
    }

    /// The arguments after `pi`: the live runner's.
    fn argv(&self) -> Vec<String> {
        self.argv_resuming(None)
    }

    /// The arguments after `pi`, continuing the session `resume` if any: the live runner's
    /// (the prompt goes to standard input, so it is no argument).
    fn argv_resuming(&self, resume: Option<&str>) -> Vec<String> {
        let mut request = self.request(PathBuf::from("pi"));
        request.resume = resume.map(str::to_string);
        PiHarness.args(&request, Path::new(PROJECT))
    }

    /// The first run of a resumed scenario, in a prepared home with its environment `env`:
    /// its arguments and the session id its header gave. `None` when the scenario resumes
    /// nothing.
    fn pre_run(
        &self,
        binary: &Path,
        env: &BTreeMap<String, String>,
    ) -> Result<Option<(Vec<String>, String)>> {
        let Some(first) = &self.resume_from else {
            return Ok(None);
        };
        let args = self.argv();
        let id = shared::session_run(
            binary,
            &args,
            env,
            (PROJECT, Some(first)),
            RUN_LIMIT,
            PiNormalizer::new(NormalizerConfig::default()),
        )?;
        Ok(Some((args, id)))
    }

    /// `~/.pi/agent/settings.json`: retries after 100 ms, 200 ms, 400 ms (Pi's default is
    /// 2 s, 4 s, 8 s), then the scenario's own keys.
    fn settings(&self) -> Value {
        let mut settings = json!({"retry": {"baseDelayMs": 100}});
        for (key, value) in &self.settings {
            settings[key] = value.clone();
        }
        settings
    }
}

/// Installs `@mariozechner/pi-coding-agent@version` into `cache/pi-VERSION/` (once) and
/// returns its `pi`.
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(format!("pi-{version}"));
    let binary = cache.join("node_modules/.bin/pi");
    super::npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)
}

/// The `fd` (or Debian's `fdfind`) to wrap: `$RECORD_FD`, else the first on `PATH`.
pub(super) fn fd() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("RECORD_FD") {
        return Ok(PathBuf::from(path));
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .flat_map(|dir| [dir.join("fd"), dir.join("fdfind")])
        .find(|p| p.is_file())
        .context(
            "no `fd` found (find needs it): install it (apt-get install fd-find) or set RECORD_FD",
        )
}

/// The tools Pi's `grep` and `find` run.
pub(super) struct SearchTools {
    pub(super) rg: PathBuf,
    pub(super) fd: PathBuf,
}

/// A fresh project, HOME and stand-in for one run of a scenario.
pub(super) struct Setup {
    pub(super) server: Server,
    pub(super) api: Arc<Mutex<Anthropic>>,
    pub(super) env: BTreeMap<String, String>,
}

/// Makes `/home/pi` anew (the project, Pi's settings, `rg` and `fd`) and starts the stand-in.
pub(super) fn prepare(
    name: &str,
    scenario: &Scenario,
    tools: &SearchTools,
    dump: Option<PathBuf>,
) -> Result<Setup> {
    use std::os::unix::fs::PermissionsExt;

    shared::fresh_home(HOME, PROJECT)?;
    let home = Path::new(HOME);
    for sub in ["bin", "tmp", ".pi/agent"] {
        std::fs::create_dir_all(home.join(sub))?;
    }
    std::fs::copy(&tools.rg, home.join("bin/rg"))
        .with_context(|| format!("copying {}", tools.rg.display()))?;
    let wrapper = format!(
        "#!/bin/sh\n# Pi passes --no-require-git, which fd 8.6 rejects; without git it changes nothing.\nfor a; do shift; [ \"$a\" = --no-require-git ] || set -- \"$@\" \"$a\"; done\nexec {} \"$@\"\n",
        shared::shlex_quote(&tools.fd.display().to_string())
    );
    std::fs::write(home.join("bin/fd"), wrapper)?;
    std::fs::set_permissions(home.join("bin/fd"), std::fs::Permissions::from_mode(0o755))?;
    shared::write_files(Path::new(PROJECT), &scenario.files)?;

    let api = Arc::new(Mutex::new(scenario.stand_in(shared::seed(name))));
    let server = shared::serve(0, &api, dump)?;
    let models = json!({"providers": {"anthropic": {
        "baseUrl": format!("http://127.0.0.1:{}", server.port())
    }}});
    std::fs::write(
        home.join(".pi/agent/models.json"),
        serde_json::to_string_pretty(&models)?,
    )?;
    std::fs::write(
        home.join(".pi/agent/settings.json"),
        serde_json::to_string_pretty(&scenario.settings())?,
    )?;
    let mut env = shared::offline_env([
        ("PATH", format!("{HOME}/bin:/usr/local/bin:/usr/bin:/bin")),
        ("HOME", HOME.to_string()),
        ("TMPDIR", format!("{HOME}/tmp")),
        ("ANTHROPIC_API_KEY", "sk-ant-mock-loopback-only".to_string()),
        ("PI_OFFLINE", "1".to_string()),
    ]);
    env.extend(scenario.env.clone());
    Ok(Setup { server, api, env })
}

/// Entry point of `cargo xtask record --backend pi`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("pi");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let binary = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(PI_VERSION),
        )?,
    };
    let tools = SearchTools {
        rg: super::opencode::ripgrep(options)?,
        fd: fd()?,
    };
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let old_stderr = read(&dir.join(format!("{name}.stderr")));
        let mut problems = run(name, &scenario, &binary, &tools, out, options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let stderr = read(&out.join(format!("{name}.stderr")));
        let events = normalize(&raw, &stderr);
        // The same scenario through `harness run --backend pi`'s code path.
        let (live, exit, notes) = run_live(name, &scenario, &binary, &tools)
            .with_context(|| format!("running {name} live"))?;
        problems.extend(notes.into_iter().map(|n| format!("live: {n}")));
        let recorded_exit = recorded_exit_code(&out.join(format!("{name}.cmd")));
        problems.extend(live_drift(&events, recorded_exit, &live, exit));
        if options.check {
            if old_raw.is_empty() {
                problems.push(format!("no committed recording fixtures/pi/{name}.jsonl"));
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
    report.finish("Pi", out)
}

/// The events `harness normalize --backend pi --cwd /home/pi/project` prints.
pub fn normalize(raw: &str, stderr: &str) -> String {
    shared::normalize_in(PiNormalizer::new, PROJECT, raw, stderr)
}

/// `events` of the raw stream `raw` with each stdout `line` counted without the
/// `tool_execution_update` lines before it: how many of those a shell command prints depends
/// on when its output arrives (Pi sends its output so far at most every so often), so two runs
/// of one scenario may differ in them, and in nothing else.
fn without_updates(events: &str, raw: &str) -> String {
    let mut before = Vec::new();
    let mut updates = 0;
    for line in raw.split('\n') {
        before.push(updates);
        let kind = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_string));
        if kind.as_deref() == Some("tool_execution_update") {
            updates += 1;
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
            let skipped = before.get(index).copied().unwrap_or(updates);
            map.insert("line".into(), json!(n - skipped));
        }
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// The differences between two runs' events, each with its raw stream: ids, times and costs
/// neutralized ([`drift::event_drift`]), stderr's warnings left out
/// ([`shared::without_stderr`]), lines counted without `tool_execution_update` lines
/// ([`without_updates`]).
fn event_drift((old, old_raw): (&str, &str), (new, new_raw): (&str, &str)) -> Vec<String> {
    let old = shared::without_stderr(&without_updates(old, old_raw));
    let new = shared::without_stderr(&without_updates(new, new_raw));
    drift::event_drift(&old, old_raw, &new, new_raw)
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

/// What kinds of things a raw Pi stream holds: line types, message roles and stop reasons,
/// content block types, tools with whether they failed, `message_update` event types.
fn shape(raw: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            out.insert("line: <not JSON>".to_string());
            continue;
        };
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("<none>").to_string();
        let kind = text(value.get("type"));
        out.insert(format!("type: {kind}"));
        if let Some(event) = value.get("assistantMessageEvent") {
            out.insert(format!("update: {}", text(event.get("type"))));
        }
        if kind == "message_end"
            && let Some(message) = value.get("message")
        {
            let role = text(message.get("role"));
            out.insert(format!("role: {role}"));
            if role == "assistant" {
                out.insert(format!("stop reason: {}", text(message.get("stopReason"))));
            }
            for block in message
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                out.insert(format!("block: {role}/{}", text(block.get("type"))));
            }
        }
        if kind == "tool_execution_end" {
            let failed = value.get("isError") == Some(&Value::Bool(true));
            let outcome = if failed { "error" } else { "ok" };
            out.insert(format!("tool: {} {outcome}", text(value.get("toolName"))));
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
    tools: &SearchTools,
    out: &Path,
    sessions: bool,
) -> Result<Vec<String>> {
    let Setup {
        server,
        api,
        mut env,
    } = prepare(name, scenario, tools, shared::dump_path(out, name))?;
    let pre_run = scenario.pre_run(binary, &env)?;
    let argv = scenario.argv_resuming(pre_run.as_ref().map(|(_, id)| id.as_str()));
    let started = Instant::now();
    let mut child = Command::new(binary)
        .args(&argv)
        .env_clear()
        .envs(&env)
        .current_dir(PROJECT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", binary.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(scenario.prompt.as_bytes())?;
    }
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let watched = super::Watched::start(child, started, RUN_LIMIT)?;
    let stdout_bytes = shared::read_lines(stdout, |_| {})?;
    let (status, timed_out, stderr_bytes) = watched.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let api_notes = shared::stop(server, &api);
    if sessions {
        // `--sessions`: the session files Pi stored, beside the live stream.
        let stored = Path::new(HOME).join(".pi/agent/sessions");
        super::keep_sessions(&stored, &out.join(name).join("sessions"))?;
    }
    shared::clean(HOME)?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut full_argv = vec!["pi".to_string()];
    full_argv.extend(argv);
    env.insert(
        "PATH".into(),
        format!("{HOME}/bin:/usr/local/bin:/usr/bin:/bin"),
    );
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv, "stdin": scenario.prompt,
                     "settings": scenario.settings(),
                     "models": {"providers": {"anthropic": {"baseUrl": "http://127.0.0.1:PORT"}}}});
    if let Some((args, id)) = pre_run {
        let argv: Vec<&str> = std::iter::once("pi")
            .chain(args.iter().map(String::as_str))
            .collect();
        cmd["pre_run"] = json!({"argv": argv, "stdin": scenario.resume_from, "session_id": id});
    }
    let tail = shared::cmd_tail(shared::exit_code(status), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;
    Ok(shared::run_notes(timed_out, RUN_LIMIT, api_notes))
}

/// The scenario once more, live, as `harness run --backend pi` runs it: through
/// `PiHarness::run` against a fresh stand-in, the real binary behind a wrapper that clears the
/// environment. Returns the events and the outcome line as `harness run --format jsonl` prints
/// them, the exit status, and the stand-in's notes.
fn run_live(
    name: &str,
    scenario: &Scenario,
    binary: &Path,
    tools: &SearchTools,
) -> Result<(String, Option<i32>, Vec<String>)> {
    let Setup { server, api, env } = prepare(name, scenario, tools, None)?;
    let wrapper = Path::new(HOME).join("pi-clean-env");
    shared::clean_env_wrapper(&wrapper, binary, &env, None)?;
    let mut request = scenario.request(wrapper);
    // A resumed scenario's first run goes straight to Pi: only the resumed run is compared.
    request.resume = scenario.pre_run(binary, &env)?.map(|(_, id)| id);
    let (text, exit) = shared::run_live(&PiHarness, request)?;
    let notes = shared::stop(server, &api);
    shared::clean(HOME)?;
    Ok((text, exit, notes))
}

/// The differences between a live run and the recording's events (ids numbered on each
/// side, line numbers left out: the live run's `tool_execution_update` lines are not kept,
/// see [`without_updates`]), and between their exit statuses.
fn live_drift(recorded: &str, recorded_exit: i64, live: &str, exit: Option<i32>) -> Vec<String> {
    let (recorded, live) = (
        without_lines(&shared::without_stderr(recorded)),
        without_lines(&shared::without_stderr(live)),
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
    fn every_committed_pi_scenario_loads_and_has_a_recording_and_expected_events() {
        let dir = fixtures::root().join("pi");
        let names = super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        for name in &names {
            let scenario = Scenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            assert!(!scenario.turns.is_empty(), "{name}");
            let argv = scenario.argv();
            assert_eq!(argv[..4], ["--mode", "json", "--model", MODEL], "{name}");
            assert!(!argv.contains(&scenario.prompt), "{name}");
            for file in ["jsonl", "expected.jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
        assert!(names.len() >= 25, "{} scenarios", names.len());
    }

    #[test]
    fn the_command_line_is_the_live_runners_with_the_permission_modes_tools() {
        let scenario = Scenario {
            prompt: "--tools bash".into(),
            permission_mode: Some("plan".into()),
            args: vec!["--thinking".into(), "high".into()],
            ..Scenario::default()
        };
        assert_eq!(
            scenario.argv(),
            [
                "--mode",
                "json",
                "--model",
                MODEL,
                "--tools",
                "read,grep,find,ls",
                "--thinking",
                "high"
            ]
        );
        let default: Scenario =
            serde_json::from_value(json!({"prompt": "x", "turns": []})).unwrap();
        assert_eq!(
            default.permission_mode.as_deref(),
            Some("bypassPermissions")
        );
        let none: Scenario =
            serde_json::from_value(json!({"prompt": "x", "permission_mode": null, "turns": []}))
                .unwrap();
        assert_eq!(none.argv(), ["--mode", "json", "--model", MODEL]);
        assert_eq!(default.settings()["retry"]["baseDelayMs"], 100);
    }

    #[test]
    fn a_resumed_run_continues_the_first_runs_session_on_the_live_command_line() {
        let scenario: Scenario = serde_json::from_value(json!({
            "prompt": "Which word?",
            "resume_from": "Remember apple.",
            "turns": []
        }))
        .unwrap();
        assert_eq!(scenario.resume_from.as_deref(), Some("Remember apple."));
        assert_eq!(
            scenario.argv_resuming(Some("-019b")),
            [
                "--mode",
                "json",
                "--model",
                MODEL,
                "--session",
                "-019b",
                "--tools",
                "read,bash,edit,write,grep,find,ls"
            ]
        );
        // The first run is the scenario's own command line, without a session.
        assert_eq!(scenario.argv_resuming(None), scenario.argv());
        assert!(!scenario.argv().iter().any(|a| a == "--session"));
    }

    #[test]
    fn runs_that_differ_only_in_update_lines_do_not_drift() {
        let raw = |updates: usize| {
            let mut raw =
                String::from("{\"type\":\"tool_execution_start\",\"toolCallId\":\"toolu_1\"}\n");
            raw.push_str(&"{\"type\":\"tool_execution_update\"}\n".repeat(updates));
            raw.push_str("{\"type\":\"tool_execution_end\"}\n{\"type\":\"agent_end\"}\n");
            raw
        };
        let events = |line: u64| {
            format!(
                "{{\"kind\":\"command\",\"line\":{line}}}\n{{\"kind\":\"warning\",\"line\":1,\"stream\":\"stderr\"}}\n"
            )
        };
        let (one, three) = (raw(1), raw(3));
        assert_eq!(
            event_drift((&events(3), &one), (&events(5), &three)),
            Vec::<String>::new()
        );
        assert_eq!(
            event_drift((&events(3), &one), (&events(6), &three)).len(),
            1
        );
        assert_eq!(
            without_updates(&events(5), &three),
            "{\"kind\":\"command\",\"line\":2}\n{\"kind\":\"warning\",\"line\":1,\"stream\":\"stderr\"}\n"
        );
    }

    #[test]
    fn shape_names_types_roles_blocks_tools_and_updates() {
        let raw = r#"{"type":"message_update","assistantMessageEvent":{"type":"text_delta"}}
{"type":"message_end","message":{"role":"assistant","stopReason":"toolUse","content":[{"type":"toolCall"}]}}
{"type":"tool_execution_end","toolName":"bash","isError":true}
"#;
        let shape: Vec<String> = shape(raw).into_iter().collect();
        assert_eq!(
            shape,
            [
                "block: assistant/toolCall",
                "role: assistant",
                "stop reason: toolUse",
                "tool: bash error",
                "type: message_end",
                "type: message_update",
                "type: tool_execution_end",
                "update: text_delta"
            ]
        );
    }
}
