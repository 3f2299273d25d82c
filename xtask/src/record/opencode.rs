//! `cargo xtask record --backend opencode`: the opencode corpus, recorded from the npm
//! package's binary (`opencode-ai`) against the Anthropic Messages stand-in
//! ([`super::anthropic`]): opencode's title and compaction requests carry no tools and get the
//! side answer; every step's request carries tools and takes the turn of its thread (the main
//! one, or a `task` sub-agent's) at the count of tool results it carries.
//!
//! Scenarios live in `fixtures/opencode/scenarios/NAME.json` ([`Scenario`]). Each runs in a
//! fresh project at `/home/oc/project` with `HOME=/home/oc`, its own `XDG_*` folders and
//! `TMPDIR` under it (opencode keeps its database, logs and an unpacked library there), and
//! `rg` copied into `/home/oc/bin` so `grep` and `glob` work offline. The command line is the
//! live runner's own ([`Backend::args`] of
//! `harness_agents_opencode::OpencodeHarness`: `run --format=json --thinking`), then
//! `--pure` (no plugins), the scenario's arguments, `--` and the prompt, exactly as `harness run
//! --backend opencode` starts it. The configuration goes in `OPENCODE_CONFIG_CONTENT`: the
//! stand-in as the `anthropic` provider's base URL, no autoupdate, no sharing; the environment
//! turns off every other outside fetch (models list, plugins, LSP downloads, Claude Code
//! skills) and points any proxy-aware request at a dead loopback port.
//!
//! The recordings are the corpus: they go to `fixtures/opencode/` itself (or `--out DIR`), and
//! each fresh recording is checked against the hand-reviewed
//! `fixtures/opencode/NAME.expected.jsonl` (normalized with `--cwd /home/oc/project`). `--check` records into a temporary folder and reports drift against the
//! committed recordings (the raw stream's types, tools, tool statuses and step reasons, and the
//! normalized events with ids, times and costs neutralized). `RECORD_DUMP_REQUESTS=1` writes
//! each run's request bodies to `NAME.requests.jsonl`.
//!
//! A scenario with `resume_from` records a resumed run (P15): a first run with that prompt
//! creates the session, against the same stand-in (its first turn; the resumed run's first
//! request is at the same step, answered a second time, so it takes the next turn); then the
//! recorded run gives the scenario's prompt with `--session=ID`, the id the first run's lines
//! gave, on the command line `harness run --resume ID` builds. The first run's output is not
//! kept; its command line and session id go into `NAME.cmd` as `pre_run`.
//!
//! `rg` comes from `--rg PATH`, else `$RECORD_RG`, else `rg` on `PATH` (Debian: `apt-get
//! install ripgrep`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness_agents_core::{Backend, NormalizerConfig, RunRequest};
use harness_agents_opencode::{OpencodeHarness, OpencodeNormalizer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::anthropic::{Anthropic, Steps};
use super::scenario::Turn;
use super::{Options, read, scenario_names, shared};

/// The opencode version the corpus was recorded with (`npm view opencode-ai version` on
/// 2026-12-01).
pub const OPENCODE_VERSION: &str = harness_agents_opencode::VERSIONS.recorded;
/// The throwaway HOME.
pub const HOME: &str = "/home/oc";
/// The project the agent works in.
pub const PROJECT: &str = "/home/oc/project";
pub(super) const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The model the configuration names (the stand-in answers with it).
const MODEL: &str = "anthropic/claude-sonnet-4-5";
/// The small model (titles).
const SMALL_MODEL: &str = "anthropic/claude-haiku-4-5";

/// One scripted `opencode run`.
///
/// ```json
/// {
///   "about": "read a file",
///   "prompt": "Read notes.txt",
///   "files": {"notes.txt": "alpha\n"},
///   "turns": [
///     {"blocks": [{"type": "tool_use", "id": "toolu_01", "name": "read",
///                  "input": {"filePath": "/home/oc/project/notes.txt"}}]},
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
    /// The prompt, after `--`.
    pub prompt: String,
    /// The prompt of a first run, with the same arguments, whose session the recorded run
    /// continues (`--session=ID`); its output is not kept.
    #[serde(default)]
    pub resume_from: Option<String>,
    /// Whether `--thinking` stays on the command line (the live runner's default: yes).
    #[serde(default = "yes")]
    pub thinking: bool,
    /// Arguments after the live runner's and `--pure`, before `--`.
    #[serde(default)]
    pub args: Vec<String>,
    /// Merged into the configuration (`permission`, `agent`, ...).
    #[serde(default)]
    pub config: serde_json::Map<String, Value>,
    /// Variables added to the standard environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The answer to requests without tools (the title).
    #[serde(default)]
    pub side_answer: Option<String>,
    /// The main thread's answers to the requests that carry tools, each chosen by the tool
    /// results its request carries ([`Steps::ToolResults`]): by default the turns in order,
    /// a retry after an HTTP error or the first request after a compaction taking the next
    /// one at the same step.
    pub turns: Vec<Turn>,
    /// The answers of each sub-agent (`task`): the key is a text its first user message
    /// contains (the `prompt` of the `task` tool use), the turns are chosen as the main
    /// thread's are.
    #[serde(default)]
    pub agents: BTreeMap<String, Vec<Turn>>,
}

fn yes() -> bool {
    true
}

impl Scenario {
    pub(super) fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: Scenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        shared::check_files(path, scenario.files.keys())?;
        Ok(scenario)
    }

    /// The stand-in for this scenario (the Claude scenario type carries what it reads).
    pub(super) fn stand_in(&self, seed: u64) -> Anthropic {
        let scenario = super::scenario::Scenario {
            turns: self.turns.clone(),
            agents: self.agents.clone(),
            side_answer: Some(self.side_answer.clone().unwrap_or_else(|| "Title".into())),
            ..super::scenario::Scenario::default()
        };
        Anthropic::new(&scenario, Steps::ToolResults, seed)
    }

    /// The arguments after `opencode` for `prompt`, last after `--`: the live runner's,
    /// continuing the session `resume` if any.
    fn argv_of(&self, prompt: &str, resume: Option<&str>) -> Vec<String> {
        let mut request = RunRequest::new(prompt);
        request.resume = resume.map(str::to_string);
        request.extra_args = ["--pure".to_string()]
            .into_iter()
            .chain(self.args.iter().cloned())
            .collect();
        let mut args = OpencodeHarness.args(&request, Path::new(PROJECT));
        if !self.thinking {
            args.retain(|a| a != "--thinking");
        }
        args.extend(["--".to_string(), prompt.to_string()]);
        args
    }
}

/// The configuration for a stand-in on `port`, with the scenario's settings merged in.
pub(super) fn config(scenario: &Scenario, port: u16) -> Value {
    let mut config = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "small_model": SMALL_MODEL,
        "autoupdate": false,
        "share": "disabled",
        "provider": {"anthropic": {"options": {
            "baseURL": format!("http://127.0.0.1:{port}/v1"),
            "apiKey": "sk-ant-mock-loopback-only"
        }}}
    });
    if let Some(map) = config.as_object_mut() {
        for (k, v) in &scenario.config {
            map.insert(k.clone(), v.clone());
        }
    }
    config
}

/// The environment of a run: fresh HOME, XDG folders and TMPDIR, the offline switches, then
/// the scenario's variables.
pub(super) fn environment(scenario: &Scenario, config: &Value) -> BTreeMap<String, String> {
    let home = |sub: &str| format!("{HOME}/{sub}");
    let mut env = shared::offline_env([
        ("PATH", format!("{HOME}/bin:/usr/local/bin:/usr/bin:/bin")),
        ("HOME", HOME.into()),
        ("XDG_CONFIG_HOME", home(".config")),
        ("XDG_DATA_HOME", home(".local/share")),
        ("XDG_CACHE_HOME", home(".cache")),
        ("XDG_STATE_HOME", home(".local/state")),
        ("TMPDIR", home("tmp")),
        ("ANTHROPIC_API_KEY", "sk-ant-mock-loopback-only".into()),
        ("OPENCODE_CONFIG_CONTENT", config.to_string()),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1".into()),
        ("OPENCODE_DISABLE_LSP_DOWNLOAD", "1".into()),
        ("OPENCODE_DISABLE_SHARE", "1".into()),
        ("OPENCODE_DISABLE_CLAUDE_CODE", "1".into()),
        ("OPENCODE_DISABLE_EXTERNAL_SKILLS", "1".into()),
    ]);
    env.extend(scenario.env.clone());
    env
}

/// The npm package.
pub const PACKAGE: &str = "opencode-ai";

/// Installs `opencode-ai@version` into `cache/opencode-VERSION/` (once) and returns the
/// platform binary (an optional dependency of the package).
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(format!("opencode-{version}"));
    let Some(platform) = shared::npm_platform() else {
        let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
        bail!("no opencode binary package for {os}/{arch} known here")
    };
    let binary = cache.join(format!("node_modules/opencode-{platform}/bin/opencode"));
    super::npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)
}

/// The `rg` to give the agent: `--rg`, `$RECORD_RG`, or the first on `PATH`.
pub(super) fn ripgrep(options: &Options) -> Result<PathBuf> {
    if let Some(path) = options
        .rg
        .clone()
        .or_else(|| std::env::var_os("RECORD_RG").map(PathBuf::from))
    {
        return Ok(path);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("rg"))
        .find(|p| p.is_file())
        .context("no `rg` found (grep and glob need ripgrep): install it (apt-get install ripgrep) or pass --rg PATH")
}

/// Makes `/home/oc` anew: the project with the scenario's files, opencode's folders, `rg`.
pub(super) fn prepare(scenario: &Scenario, rg: &Path) -> Result<()> {
    shared::fresh_home(HOME, PROJECT)?;
    for sub in [
        "bin",
        "tmp",
        ".config",
        ".local/share",
        ".cache",
        ".local/state",
    ] {
        std::fs::create_dir_all(Path::new(HOME).join(sub))?;
    }
    std::fs::copy(rg, Path::new(HOME).join("bin/rg"))
        .with_context(|| format!("copying {}", rg.display()))?;
    shared::write_files(Path::new(PROJECT), &scenario.files)
}

/// Entry point of `cargo xtask record --backend opencode`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("opencode");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let binary = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(OPENCODE_VERSION),
        )?,
    };
    let rg = ripgrep(options)?;
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // The committed recording, read before a new one may replace it (its ids neutralize
        // the expected file's).
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let old_stderr = read(&dir.join(format!("{name}.stderr")));
        let mut problems = run(name, &scenario, &binary, &rg, out, options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let stderr = read(&out.join(format!("{name}.stderr")));
        problems.extend(shared::recording_drift(
            options.check,
            (&dir, name),
            (&old_raw, &old_stderr),
            (&raw, &stderr),
            normalize,
            shape_drift,
        ));
        report.add(name, &scenario.about, problems);
    }
    report.finish("opencode", out)
}

/// Keeps opencode's database `from` (with what its write-ahead log holds) as the one file
/// `to`: `VACUUM INTO` copies every row, compacted, and the copy is switched out of WAL mode so
/// that reading it makes no `-wal` or `-shm` file beside it.
pub(super) fn keep_database(from: &Path, to: &Path) -> Result<()> {
    if !from.exists() {
        return Ok(());
    }
    if let Some(dir) = to.parent() {
        if dir.exists() {
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::create_dir_all(dir)?;
    }
    let source =
        rusqlite::Connection::open(from).with_context(|| format!("opening {}", from.display()))?;
    source
        .execute("VACUUM INTO ?1", [to.to_string_lossy()])
        .with_context(|| format!("copying {} into {}", from.display(), to.display()))?;
    drop(source);
    let copy = rusqlite::Connection::open(to)?;
    copy.pragma_update(None, "journal_mode", "DELETE")?;
    Ok(())
}

/// The normalized events of a raw opencode stream, with `--cwd /home/oc/project`.
pub fn normalize(raw: &str, stderr: &str) -> String {
    shared::normalize_in(OpencodeNormalizer::new, PROJECT, raw, stderr)
}

/// What kinds of things a raw opencode stream holds: line types, part types, tools with their
/// status, step reasons, error names.
fn shape(raw: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in raw.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            out.insert("line: <not JSON>".to_string());
            continue;
        };
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("<none>").to_string();
        out.insert(format!("type: {}", text(value.get("type"))));
        if let Some(part) = value.get("part") {
            out.insert(format!("part type: {}", text(part.get("type"))));
            if let Some(tool) = part.get("tool") {
                let status = text(part.pointer("/state/status"));
                out.insert(format!("tool: {} {status}", text(Some(tool))));
            }
            if part.get("type").and_then(Value::as_str) == Some("step-finish") {
                out.insert(format!("step reason: {}", text(part.get("reason"))));
            }
        }
        if let Some(error) = value.get("error") {
            out.insert(format!("error: {}", text(error.get("name"))));
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
    rg: &Path,
    out: &Path,
    sessions: bool,
) -> Result<Vec<String>> {
    prepare(scenario, rg)?;
    let api = Arc::new(Mutex::new(scenario.stand_in(shared::seed(name))));
    let server = shared::serve(0, &api, shared::dump_path(out, name))?;
    let config = config(scenario, server.port());
    let env = environment(scenario, &config);
    let pre_run = match &scenario.resume_from {
        Some(first) => {
            let args = scenario.argv_of(first, None);
            let id = shared::session_run(
                binary,
                &args,
                &env,
                (PROJECT, None),
                RUN_LIMIT,
                OpencodeNormalizer::new(NormalizerConfig::default()),
            )?;
            Some((args, id))
        }
        None => None,
    };
    let argv = scenario.argv_of(
        &scenario.prompt,
        pre_run.as_ref().map(|(_, id)| id.as_str()),
    );
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
    let run = super::Watched::start(child, started, RUN_LIMIT)?;
    let stdout_bytes = shared::read_lines(stdout, |_| {})?;
    let (status, timed_out, stderr_bytes) = run.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let api_notes = shared::stop(server, &api);
    if sessions {
        let data = Path::new(HOME).join(".local/share/opencode");
        keep_database(
            &data.join("opencode.db"),
            &out.join(name).join("opencode.db"),
        )?;
    }
    shared::clean(HOME)?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut full_argv = vec!["opencode".to_string()];
    full_argv.extend(argv);
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv});
    if let Some((args, id)) = pre_run {
        let argv: Vec<&str> = std::iter::once("opencode")
            .chain(args.iter().map(String::as_str))
            .collect();
        cmd["pre_run"] = json!({"argv": argv, "session_id": id});
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
    fn every_committed_opencode_scenario_loads_and_runs_the_live_command_line() {
        let dir = fixtures::root().join("opencode/scenarios");
        let mut count = 0;
        for name in super::scenario_names(&[], &dir).unwrap() {
            let scenario = Scenario::load(&dir.join(format!("{name}.json"))).unwrap();
            let argv = scenario.argv_of(&scenario.prompt, None);
            assert_eq!(argv[..2], ["run", "--format=json"], "{name}");
            assert_eq!(argv[argv.len() - 2..], ["--", scenario.prompt.as_str()]);
            count += 1;
        }
        assert!(count >= 25, "only {count} opencode scenarios");
    }

    #[test]
    fn a_resumed_run_continues_the_first_runs_session_on_the_live_command_line() {
        let scenario = Scenario {
            prompt: "-x".into(),
            thinking: true,
            ..Scenario::default()
        };
        assert_eq!(
            scenario.argv_of("-x", Some("ses_1")),
            [
                "run",
                "--format=json",
                "--thinking",
                "--session=ses_1",
                "--pure",
                "--",
                "-x"
            ]
        );
    }

    #[test]
    fn the_configuration_points_at_the_stand_in_and_takes_the_scenario_settings() {
        let mut scenario = Scenario::default();
        scenario
            .config
            .insert("permission".into(), json!({"bash": "deny"}));
        let config = config(&scenario, 4242);
        assert_eq!(
            config["provider"]["anthropic"]["options"]["baseURL"],
            "http://127.0.0.1:4242/v1"
        );
        assert_eq!(config["permission"]["bash"], "deny");
        let env = environment(&scenario, &config);
        assert_eq!(env["HOME"], HOME);
        assert_eq!(env["OPENCODE_DISABLE_MODELS_FETCH"], "1");
        assert!(env["PATH"].starts_with("/home/oc/bin:"));
    }

    #[test]
    fn shape_names_types_tools_and_reasons() {
        let raw = r#"{"type":"tool_use","part":{"type":"tool","tool":"read","state":{"status":"error"}}}
{"type":"step_finish","part":{"type":"step-finish","reason":"stop"}}
"#;
        let shape: Vec<String> = shape(raw).into_iter().collect();
        assert_eq!(
            shape,
            [
                "part type: step-finish",
                "part type: tool",
                "step reason: stop",
                "tool: read error",
                "type: step_finish",
                "type: tool_use"
            ]
        );
    }
}
