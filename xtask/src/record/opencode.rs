//! `cargo xtask record --backend opencode`: the opencode corpus, recorded from the npm
//! package's binary (`opencode-ai`) against the Anthropic Messages stand-in
//! ([`super::anthropic`]), reused as is: opencode's title request carries no tools and gets the
//! side answer, every step's request carries tools and takes the next turn.
//!
//! Scenarios live in `fixtures/opencode/scenarios/NAME.json` ([`Scenario`]). Each runs in a
//! fresh project at `/home/oc/project` with `HOME=/home/oc`, its own `XDG_*` folders and
//! `TMPDIR` under it (opencode keeps its database, logs and an unpacked library there), and
//! `rg` copied into `/home/oc/bin` so `grep` and `glob` work offline. The command line is the
//! live runner's own ([`Backend::args`](harness_agents_core::Backend::args) of `harness_agents_opencode::OpencodeHarness`: `run --format=json --thinking`), then
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
//! `rg` comes from `--rg PATH`, else `$RECORD_RG`, else `rg` on `PATH` (Debian: `apt-get
//! install ripgrep`).

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness_agents_core::{Harness, NormalizerConfig, RunRequest};
use harness_agents_opencode::{OpencodeHarness, OpencodeNormalizer};
use serde::Deserialize;
use serde_json::{Value, json};

use super::anthropic::Anthropic;
use super::scenario::Turn;
use super::server::{Reply, Server};
use super::{Options, drift, read, scenario_names};

/// The opencode version the corpus was recorded with (`npm view opencode-ai version` on
/// 2026-12-01).
pub const OPENCODE_VERSION: &str = harness_agents_opencode::VERSIONS.recorded;
/// The throwaway HOME.
pub const HOME: &str = "/home/oc";
/// The project the agent works in.
pub const PROJECT: &str = "/home/oc/project";
const MARKER: &str = ".harness-record";
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
    /// The stand-in's answers, in order, to the requests that carry tools.
    pub turns: Vec<Turn>,
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
        for file in scenario.files.keys() {
            let p = Path::new(file);
            if p.is_absolute()
                || p.components()
                    .any(|c| !matches!(c, std::path::Component::Normal(_)))
            {
                bail!(
                    "{}: file {file:?} must be a plain relative path",
                    path.display()
                );
            }
        }
        Ok(scenario)
    }

    /// The stand-in for this scenario (the Claude scenario type carries what it reads).
    pub(super) fn stand_in(&self, seed: u64) -> Anthropic {
        let scenario = super::scenario::Scenario {
            turns: self.turns.clone(),
            side_answer: Some(self.side_answer.clone().unwrap_or_else(|| "Title".into())),
            ..super::scenario::Scenario::default()
        };
        Anthropic::new(&scenario, seed)
    }

    /// The arguments after `opencode`, the prompt last after `--`: the live runner's.
    fn argv(&self) -> Vec<String> {
        let mut request = RunRequest::new(self.prompt.clone());
        request.extra_args = ["--pure".to_string()]
            .into_iter()
            .chain(self.args.iter().cloned())
            .collect();
        let mut args = OpencodeHarness.args(&request, Path::new(PROJECT));
        if !self.thinking {
            args.retain(|a| a != "--thinking");
        }
        args.extend(["--".to_string(), self.prompt.clone()]);
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
    let mut env: BTreeMap<String, String> = [
        ("PATH", format!("{HOME}/bin:/usr/local/bin:/usr/bin:/bin")),
        ("LANG", "C.UTF-8".into()),
        ("TERM", "dumb".into()),
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
        // Anything not addressed to the stand-in goes to a port nobody listens on.
        ("HTTPS_PROXY", "http://127.0.0.1:9".into()),
        ("HTTP_PROXY", "http://127.0.0.1:9".into()),
        ("NO_PROXY", "127.0.0.1,localhost".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    env.extend(scenario.env.clone());
    env
}

/// The npm package.
pub const PACKAGE: &str = "opencode-ai";

/// Installs `opencode-ai@version` into `cache/opencode-VERSION/` (once) and returns the
/// platform binary (an optional dependency of the package).
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(format!("opencode-{version}"));
    let platform = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x64",
        ("linux", "aarch64") => "linux-arm64",
        ("macos", "x86_64") => "darwin-x64",
        ("macos", "aarch64") => "darwin-arm64",
        (os, arch) => bail!("no opencode binary package for {os}/{arch} known here"),
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

pub(super) fn clean() -> Result<()> {
    let home = Path::new(HOME);
    if home.exists() {
        if !home.join(MARKER).exists() {
            bail!("{HOME} exists and was not made by `cargo xtask record`; not touching it");
        }
        std::fs::remove_dir_all(home)?;
    }
    Ok(())
}

pub(super) fn prepare(scenario: &Scenario, rg: &Path) -> Result<()> {
    clean()?;
    std::fs::create_dir_all(PROJECT)?;
    std::fs::write(
        Path::new(HOME).join(MARKER),
        "created by cargo xtask record\n",
    )?;
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
    for (file, text) in &scenario.files {
        let path = Path::new(PROJECT).join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
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
    let out = if options.check {
        std::env::temp_dir().join(format!(
            "harness-record-opencode-check-{}",
            std::process::id()
        ))
    } else {
        options.out.clone().unwrap_or_else(|| dir.clone())
    };
    std::fs::create_dir_all(&out)?;
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // The committed recording, read before a new one may replace it (its ids neutralize
        // the expected file's).
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let old_stderr = read(&dir.join(format!("{name}.stderr")));
        let mut problems = run(name, &scenario, &binary, &rg, &out)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let stderr = read(&out.join(format!("{name}.stderr")));
        let events = normalize(&raw, &stderr);
        if options.check {
            if old_raw.is_empty() {
                problems.push(format!("no committed recording of {name}"));
            }
            let old_events = normalize(&old_raw, &old_stderr);
            problems.extend(shape_drift(&old_raw, &raw));
            problems.extend(
                drift::event_drift(&old_events, &old_raw, &events, &raw)
                    .into_iter()
                    .map(|p| format!("drift: {p}")),
            );
        } else {
            let expected = dir.join(format!("{name}.expected.jsonl"));
            if expected.exists() {
                problems.extend(
                    drift::event_drift(&read(&expected), &old_raw, &events, &raw)
                        .into_iter()
                        .map(|p| format!("golden: {p}")),
                );
            } else {
                problems.push(format!("no {}", expected.display()));
            }
        }
        report.add(name, &scenario.about, problems);
    }
    report.finish("opencode", &out)
}

/// The normalized events of a raw opencode stream, with `--cwd /home/oc/project`.
pub fn normalize(raw: &str, stderr: &str) -> String {
    let mut config = NormalizerConfig::default();
    config.cwd = Some(PROJECT.to_string());
    drift::normalize_with(
        OpencodeNormalizer::new(config),
        raw.as_bytes(),
        stderr.as_bytes(),
    )
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
) -> Result<Vec<String>> {
    prepare(scenario, rg)?;
    let api = Arc::new(Mutex::new(scenario.stand_in(super::claude::seed(name))));
    let handler_api = Arc::clone(&api);
    let dump = std::env::var_os("RECORD_DUMP_REQUESTS")
        .map(|_| out.join(format!("{name}.requests.jsonl")));
    let server = Server::start(
        0,
        Box::new(move |request| {
            if let Some(path) = &dump
                && let Ok(mut file) = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
            {
                let _ = file.write_all(&request.body);
                let _ = file.write_all(b"\n");
            }
            match handler_api.lock() {
                Ok(mut api) => api.handle(request),
                Err(_) => Reply::not_found(&request.path),
            }
        }),
    )?;
    let config = config(scenario, server.port());
    let env = environment(scenario, &config);
    let argv = scenario.argv();
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
    let mut stdout_bytes = Vec::new();
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    while reader.read_until(b'\n', &mut line)? > 0 {
        stdout_bytes.extend_from_slice(&line);
        line.clear();
    }
    let (status, timed_out, stderr_bytes) = run.wait()?;
    let seconds = started.elapsed().as_secs_f64();
    let requests = server.stop();
    clean()?;

    std::fs::write(out.join(format!("{name}.jsonl")), &stdout_bytes)?;
    std::fs::write(out.join(format!("{name}.stderr")), &stderr_bytes)?;
    let mut full_argv = vec!["opencode".to_string()];
    full_argv.extend(argv);
    let cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv});
    let exit_code: Value = match status.code() {
        Some(code) => json!(code),
        None => {
            use std::os::unix::process::ExitStatusExt;
            json!(status.signal().map(|s| -s))
        }
    };
    let tail = json!({"exit_code": exit_code, "seconds": (seconds * 10.0).round() / 10.0});
    std::fs::write(
        out.join(format!("{name}.cmd")),
        format!("{}\n{tail}\n", serde_json::to_string_pretty(&cmd)?),
    )?;

    let mut notes = Vec::new();
    if timed_out {
        notes.push(format!("killed after {}s", RUN_LIMIT.as_secs()));
    }
    if let Ok(api) = api.lock() {
        if !api.overflow.is_empty() {
            notes.push(format!(
                "{} request(s) after the script ran out; requests: {}",
                api.overflow.join(", "),
                requests.join(", ")
            ));
        }
        if !api.remaining().is_empty() {
            notes.push(format!(
                "{} scripted turn(s) never requested",
                api.remaining().join(", ")
            ));
        }
    }
    Ok(notes)
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
            let argv = scenario.argv();
            assert_eq!(argv[..2], ["run", "--format=json"], "{name}");
            assert_eq!(argv[argv.len() - 2..], ["--", scenario.prompt.as_str()]);
            count += 1;
        }
        assert!(count >= 25, "only {count} opencode scenarios");
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
