//! `cargo xtask record --backend qwen`: the Qwen Code corpus, recorded from the npm package's
//! `qwen` (`@qwen-code/qwen-code`) against the chat-completions stand-in ([`super::chat`]).
//! Qwen sends one request per model call, each carrying every assistant message so far (a
//! failed one is retried with the same messages), so a request's step is the number of
//! assistant messages it carries; its managed-memory extraction after the last answer is a
//! side request, recognised by its system prompt, and gets the side answer.
//!
//! Scenarios live in `fixtures/qwen/scenarios/NAME.json` ([`Scenario`]). Each runs in a fresh
//! project at `/home/qwen/project` with `HOME=/home/qwen` and `TMPDIR=/home/qwen/tmp`, made for
//! the run and removed after it. `OPENAI_BASE_URL` points at the stand-in, `~/.qwen/
//! settings.json` picks the OpenAI auth type and turns off telemetry, usage statistics and the
//! update check, and a dead loopback proxy takes anything else. The bundled ripgrep is made
//! executable after the install (npm's install scripts, which do it, are skipped), so
//! `grep_search` runs it as it does on a user's machine.
//!
//! The command line is the live runner's own (`QwenHarness`'s `Backend::args`: `--output-format
//! stream-json --approval-mode=MODE`, the permission mode's, `yolo` by default), then the
//! scenario's arguments; the prompt goes to standard
//! input, never the command line. Recordings (`NAME.jsonl`, `NAME.stderr`, `NAME.cmd`) go to
//! `fixtures/qwen/` (or `--out DIR`) and are compared with the hand-reviewed
//! `NAME.expected.jsonl`, normalized with `--cwd /home/qwen/project`. `--check` records into a temporary folder and reports
//! drift against the committed recordings: new or vanished line types, system subtypes,
//! stream event types, block types, tools with whether they failed, result subtypes, and any
//! line that differs once ids, times, process group numbers and the order of the init line's tools are
//! neutralized. With
//! `RECORD_DUMP_REQUESTS=1`, each run's request bodies go to `NAME.requests.jsonl`.
//!
//! A scenario with `resume_from` records a resumed run: a first run with that prompt, then
//! the recorded one with `--resume=ID` (the first run's session, `pre_run` in the `.cmd`
//! file). `--sessions` keeps the chats Qwen stored (`~/.qwen/projects/<dir>/chats/`) in
//! `NAME/projects/` beside the live stream.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Value, json};

use harness_agents_core::{Backend, NormalizerConfig, RunRequest};
use harness_agents_qwen::{QwenHarness, QwenNormalizer};

use super::chat::Chat;
use super::scenario::Turn;
use super::server::Server;
use super::{Options, drift, read, scenario_names, shared};

/// The Qwen Code version the corpus was recorded with.
pub const QWEN_VERSION: &str = harness_agents_qwen::VERSIONS.recorded;
/// The npm package.
pub const PACKAGE: &str = "@qwen-code/qwen-code";
/// The HOME every run gets, made anew for it.
pub const HOME: &str = "/home/qwen";
/// The project every run works in.
pub const PROJECT: &str = "/home/qwen/project";
const RUN_LIMIT: Duration = Duration::from_secs(120);
/// The model every run names (any name does: the stand-in answers them all).
const MODEL: &str = "qwen3-coder-plus";

/// One scripted `qwen` run.
///
/// ```json
/// {
///   "about": "read a file",
///   "prompt": "Read notes.txt",
///   "files": {"notes.txt": "alpha\n"},
///   "turns": [
///     {"blocks": [{"type": "tool_use", "id": "call_01", "name": "read_file",
///                  "input": {"file_path": "/home/qwen/project/notes.txt"}}]},
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
    /// The request's permission mode: `bypassPermissions` (`--approval-mode yolo`) unless
    /// given; `null` leaves Qwen's default.
    #[serde(default = "every_tool")]
    pub permission_mode: Option<String>,
    /// Arguments after the runner's.
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
    /// The answer to side requests (the memory extraction).
    #[serde(default)]
    pub side_answer: Option<String>,
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
    /// Reads a scenario file and checks its file names.
    pub fn load(path: &Path) -> Result<Scenario> {
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
            side_answer: self.side_answer.clone(),
            ..super::scenario::Scenario::default()
        };
        Chat::new(&scenario)
    }

    /// The arguments after `qwen`: the live runner's (`QwenHarness`'s `Backend::args`), with
    /// `--resume=ID` when `resume` names a session.
    fn argv(&self, resume: Option<&str>) -> Vec<String> {
        let mut request = RunRequest::new(self.prompt.clone());
        request.permission_mode = self.permission_mode.clone();
        request.extra_args = self.args.clone();
        request.resume = resume.map(str::to_string);
        QwenHarness.args(&request, Path::new(PROJECT))
    }

    /// `~/.qwen/settings.json`: the OpenAI auth type, the model, no telemetry, usage
    /// statistics or update check; then the scenario's own keys.
    fn settings(&self) -> Value {
        let mut settings = json!({
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": MODEL},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false}
        });
        for (key, value) in &self.settings {
            settings[key] = value.clone();
        }
        settings
    }
}

/// Installs `@qwen-code/qwen-code@version` into `cache/qwen-VERSION/` (once), makes its
/// bundled ripgrep executable, and returns its `qwen`.
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt;

    let cache = cache.join(format!("qwen-{version}"));
    let binary = cache.join("node_modules/.bin/qwen");
    let binary = super::npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)?;
    let vendor = cache.join("node_modules/@qwen-code/qwen-code/vendor/ripgrep");
    for entry in std::fs::read_dir(&vendor).into_iter().flatten().flatten() {
        let rg = entry.path().join("rg");
        if rg.is_file() {
            std::fs::set_permissions(&rg, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(binary)
}

/// A fresh project, HOME and stand-in for one run of a scenario.
pub struct Setup {
    /// The stand-in's server.
    pub server: Server,
    /// The stand-in.
    pub api: Arc<Mutex<Chat>>,
    /// The agent's whole environment.
    pub env: BTreeMap<String, String>,
}

/// Makes `/home/qwen` anew (the project, Qwen's settings) and starts the stand-in.
pub fn prepare(scenario: &Scenario, dump: Option<PathBuf>) -> Result<Setup> {
    shared::fresh_home(HOME, PROJECT)?;
    let home = Path::new(HOME);
    for sub in ["tmp", ".qwen"] {
        std::fs::create_dir_all(home.join(sub))?;
    }
    shared::write_files(Path::new(PROJECT), &scenario.files)?;
    std::fs::write(
        home.join(".qwen/settings.json"),
        serde_json::to_string_pretty(&scenario.settings())?,
    )?;
    let api = Arc::new(Mutex::new(scenario.stand_in()));
    let server = shared::serve(0, &api, dump)?;
    let mut env = shared::offline_env([
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("HOME", HOME.to_string()),
        ("TMPDIR", format!("{HOME}/tmp")),
        ("OPENAI_API_KEY", "sk-mock-loopback-only".to_string()),
        (
            "OPENAI_BASE_URL",
            format!("http://127.0.0.1:{}/v1", server.port()),
        ),
        ("OPENAI_MODEL", MODEL.to_string()),
        ("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1".to_string()),
    ]);
    env.extend(scenario.env.clone());
    Ok(Setup { server, api, env })
}

/// Entry point of `cargo xtask record --backend qwen`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("qwen");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let binary = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(QWEN_VERSION),
        )?,
    };
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let mut problems = run(name, &scenario, &binary, out, options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let stderr = read(&out.join(format!("{name}.stderr")));
        let events = normalize(&raw, &stderr);
        if options.check {
            if old_raw.is_empty() {
                problems.push(format!("no committed recording fixtures/qwen/{name}.jsonl"));
            } else {
                problems.extend(shape_drift(&old_raw, &raw));
                problems.extend(line_drift(&old_raw, &raw));
            }
        }
        problems.extend(against_expected(
            &dir,
            (out, name),
            options.check,
            &old_raw,
            (&events, &raw),
            &mut report.unreviewed,
        )?);
        report.add(name, &scenario.about, problems);
    }
    report.finish("Qwen Code", out)
}

/// [`shared::against_expected`] with the process group numbers of failed shell commands
/// reports neutralized on both sides ([`without_pgid`]): they differ in every run.
fn against_expected(
    dir: &Path,
    (out, name): (&Path, &str),
    check: bool,
    old_raw: &str,
    (events, raw): (&str, &str),
    unreviewed: &mut usize,
) -> Result<Vec<String>> {
    let expected = dir.join(format!("{name}.expected.jsonl"));
    if !expected.exists() {
        let events = (events, raw);
        return shared::against_expected(dir, out, name, check, old_raw, events, unreviewed);
    }
    let expected = shared::without_stderr(&without_pgid(&read(&expected)));
    let events = shared::without_stderr(&without_pgid(events));
    Ok(drift::event_drift(&expected, old_raw, &events, raw)
        .into_iter()
        .map(|p| format!("expected: {p}"))
        .collect())
}

/// The events `harness normalize --backend qwen --cwd /home/qwen/project` prints.
pub fn normalize(raw: &str, stderr: &str) -> String {
    shared::normalize_in(QwenNormalizer::new, PROJECT, raw, stderr)
}

/// A raw line with what varies between runs neutralized: ids, times and the session's
/// UUIDs (numbered in order of appearance), so two runs compare line by line.
fn neutral(raw: &str) -> Vec<String> {
    fn walk(value: &mut Value, ids: &mut BTreeMap<String, usize>) {
        match value {
            Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    match key.as_str() {
                        "duration_ms" | "duration_api_ms" => *v = json!(0),
                        // The init line lists the tools in the order they registered, which
                        // varies between runs.
                        "tools" => {
                            if let Value::Array(names) = v {
                                names.sort_by_key(Value::to_string);
                            }
                        }
                        _ => walk(v, ids),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, ids)),
            Value::String(text) if is_uuid(text) => {
                let n = ids.len();
                let n = *ids.entry(text.clone()).or_insert(n);
                *text = format!("<id {n}>");
            }
            Value::String(text) if text.contains(PGID) => *text = without_pgid(text),
            _ => {}
        }
    }
    let mut ids = BTreeMap::new();
    raw.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(mut value) => {
                walk(&mut value, &mut ids);
                value.to_string()
            }
            Err(_) => line.to_string(),
        })
        .collect()
}

/// What a shell result's display text ends with: the process group, a number that varies.
const PGID: &str = "Process Group PGID: ";

/// `text` with the number after each [`PGID`] replaced by `N`.
pub(super) fn without_pgid(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(PGID) {
        let (before, after) = rest.split_at(at + PGID.len());
        out.push_str(before);
        out.push('N');
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Whether `text` is a UUID (8-4-4-4-12 hex digits).
fn is_uuid(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    parts.len() == 5
        && parts
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(p, n)| p.len() == n && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The lines of two runs that differ once neutralized ([`neutral`]).
fn line_drift(old: &str, new: &str) -> Vec<String> {
    let (old, new) = (neutral(old), neutral(new));
    let mut out = Vec::new();
    if old.len() != new.len() {
        out.push(format!("{} lines, were {}", new.len(), old.len()));
    }
    for (n, (a, b)) in old.iter().zip(&new).enumerate() {
        if a != b {
            out.push(format!("line {}: {b}\n      was: {a}", n + 1));
        }
    }
    out
}

/// What kinds of things a raw stream holds: line types, system subtypes, stream event types,
/// block types by role, tools with whether they failed, result subtypes.
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
        match kind.as_str() {
            "system" | "result" => {
                out.insert(format!("{kind}: {}", text(value.get("subtype"))));
            }
            "stream_event" => {
                out.insert(format!("event: {}", text(value.pointer("/event/type"))));
            }
            _ => {}
        }
        for block in value
            .pointer("/message/content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.insert(format!("block: {kind}/{}", text(block.get("type"))));
            if block.get("type") == Some(&json!("tool_use")) {
                names.insert(text(block.get("id")), text(block.get("name")));
            }
            if block.get("type") == Some(&json!("tool_result")) {
                let name = names
                    .get(&text(block.get("tool_use_id")))
                    .cloned()
                    .unwrap_or_default();
                let failed = block.get("is_error") == Some(&Value::Bool(true));
                out.insert(format!(
                    "tool: {name} {}",
                    if failed { "error" } else { "ok" }
                ));
            }
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
    let Setup { server, api, env } = prepare(scenario, shared::dump_path(out, name))?;
    // A resume scenario: a first run with its own prompt, then the run recorded, resuming it.
    let (argv, pre_run) = match &scenario.resume_from {
        Some(first) => {
            let id = shared::session_run(
                binary,
                &scenario.argv(None),
                &env,
                (PROJECT, Some(first)),
                RUN_LIMIT,
                QwenNormalizer::new(NormalizerConfig::default()),
            )?;
            let mut argv = vec!["qwen".to_string()];
            argv.extend(scenario.argv(None));
            let pre_run = json!({"argv": argv, "stdin": first, "session_id": id});
            (scenario.argv(Some(&id)), Some(pre_run))
        }
        None => (scenario.argv(None), None),
    };
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
        // `--sessions`: the chats of every project, `projects/<dir>/chats/<id>.jsonl`.
        let stored = Path::new(HOME).join(".qwen/projects");
        super::keep_sessions(&stored, &out.join(name).join("projects"))?;
        // The memory feature's files beside the chats are not sessions.
        for project in std::fs::read_dir(out.join(name).join("projects"))?.flatten() {
            for entry in std::fs::read_dir(project.path())?.flatten() {
                if entry.file_name() != "chats" {
                    let path = entry.path();
                    if path.is_dir() {
                        std::fs::remove_dir_all(&path)?;
                    } else {
                        std::fs::remove_file(&path)?;
                    }
                }
            }
        }
    }
    shared::clean(HOME)?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut full_argv = vec!["qwen".to_string()];
    full_argv.extend(argv);
    let mut env = env;
    env.insert(
        "OPENAI_BASE_URL".into(),
        "http://127.0.0.1:PORT/v1".to_string(),
    );
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv,
                         "stdin": scenario.prompt, "settings": scenario.settings()});
    if let Some(pre_run) = pre_run {
        cmd["pre_run"] = pre_run;
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
    fn every_committed_qwen_scenario_loads_and_has_a_recording() {
        let dir = fixtures::root().join("qwen");
        let names = super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        for name in &names {
            let scenario = Scenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            assert!(!scenario.turns.is_empty(), "{name}");
            assert!(!scenario.argv(None).contains(&scenario.prompt), "{name}");
            for file in ["jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
        assert!(names.len() >= 25, "{} scenarios", names.len());
    }

    #[test]
    fn permission_modes_become_approval_modes() {
        let scenario = Scenario {
            prompt: "--yolo".into(),
            permission_mode: Some("acceptEdits".into()),
            args: vec!["--include-partial-messages".into()],
            ..Scenario::default()
        };
        assert_eq!(
            scenario.argv(None),
            [
                "--output-format",
                "stream-json",
                "--approval-mode=auto-edit",
                "--include-partial-messages"
            ]
        );
        let none: Scenario =
            serde_json::from_value(json!({"prompt": "x", "permission_mode": null, "turns": []}))
                .unwrap();
        assert_eq!(none.argv(None), ["--output-format", "stream-json"]);
    }

    #[test]
    fn runs_differing_in_ids_and_times_do_not_drift() {
        let a = r#"{"type":"system","uuid":"0b0e6c52-1111-4222-8333-444455556666","session_id":"0b0e6c52-1111-4222-8333-444455556666"}
{"type":"result","duration_ms":12}"#;
        let b = r#"{"type":"system","uuid":"9b0e6c52-1111-4222-8333-444455556666","session_id":"9b0e6c52-1111-4222-8333-444455556666"}
{"type":"result","duration_ms":99}"#;
        assert!(line_drift(a, b).is_empty());
        assert_eq!(
            without_pgid("Exit Code: 1\nProcess Group PGID: 18143\nmore"),
            "Exit Code: 1\nProcess Group PGID: N\nmore"
        );
        assert_eq!(line_drift(a, "{}").len(), 2);
        let shape: Vec<String> = shape(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"c1","name":"edit"}]}}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"c1","is_error":true}]}}"#,
        )
        .into_iter()
        .collect();
        assert_eq!(
            shape,
            [
                "block: assistant/tool_use",
                "block: user/tool_result",
                "tool: edit error",
                "type: assistant",
                "type: user"
            ]
        );
    }
}
