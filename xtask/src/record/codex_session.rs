//! `cargo xtask record --backend codex-session`: Codex sessions through `codex app-server`,
//! driven by the library's own `CodexHarness::session` with a scripted caller, against the
//! Responses API stand-in ([`super::openai`]).
//!
//! Scenarios live in `fixtures/codex-app-server/scenarios/NAME.json`: the `config.toml` (with
//! `{base_url}`), the project's files, the permission mode, the prompts (all queued at once:
//! the session runs them in order), the caller's answers to the permission requests in order
//! (`allow`, `allow_always`, `deny`, or `interrupt` to interrupt the turn instead, `close` to
//! close the session), whether to interrupt the turn once a tool use starts or to kill the
//! server with SIGKILL from outside, an optional earlier session whose thread the recorded one
//! resumes, and the stand-in's answers. Each runs in a fresh
//! `/home/dev2/project` with `HOME=/home/dev2` and `CODEX_HOME=/home/dev2/.codex`.
//!
//! What a recording keeps, in `fixtures/codex-app-server/` (or `--out DIR`): `NAME.jsonl`, the
//! server's standard output (what the normalizer reads, XA0); `NAME.stderr`, its standard
//! error; `NAME.client.jsonl`, every line the session wrote to the server (for the schema
//! check, `cargo xtask codex-schema`); `NAME.cmd`, how it ran; `NAME.live.jsonl`, what only
//! the live session knows: the errors it made itself, each turn's outcome and its end. The
//! events are checked against `NAME.expected.jsonl`, the live items against `NAME.live.jsonl`
//! (a missing one is written, to be reviewed by hand); and every process of the session (the
//! server and its descendants, seen as the session goes) must be gone once it has ended (I6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness_agents_codex::CodexHarness;
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::Record;
use harness_agents_core::{
    Backend, Decision, EventBody, NormalizerConfig, OutcomeLine, RunRequest,
};
use serde::Deserialize;
use serde_json::json;

use super::openai::{Responses, Turn};
use super::procs::{Processes, descendant_running, kill};
use super::{Options, drift, read, scenario_names, shared};

const HOME: &str = "/home/dev2";
const PROJECT: &str = "/home/dev2/project";
/// The longest a session's turn may take.
const TURN_LIMIT: Duration = Duration::from_secs(120);

/// One scripted session.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// `CODEX_HOME/config.toml`, with `{base_url}` for the stand-in's URL.
    pub config_toml: String,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The session's `--permission-mode`.
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// The prompts, queued at the start.
    pub prompts: Vec<String>,
    /// The caller's answers to the permission requests, in order: `allow`, `allow_always`,
    /// `deny`, `interrupt`, or `close`.
    #[serde(default)]
    pub answers: Vec<String>,
    /// Interrupt the turn this long after its first tool use starts (`started` events on).
    #[serde(default)]
    pub interrupt_after_started_ms: Option<u64>,
    /// Kill the server with SIGKILL this long after the turn's first tool use starts.
    #[serde(default)]
    pub kill_after_started_ms: Option<u64>,
    /// The prompts of an earlier session whose thread this one resumes; its lines are not
    /// kept.
    #[serde(default)]
    pub resume_after: Option<Vec<String>>,
    /// The stand-in's answers, in order (the earlier session's first).
    pub turns: Vec<Turn>,
}

impl Scenario {
    fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: Scenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        shared::check_files(path, scenario.files.keys())?;
        for answer in &scenario.answers {
            if !matches!(
                answer.as_str(),
                "allow" | "allow_always" | "deny" | "interrupt" | "close"
            ) {
                bail!("{}: unknown answer {answer}", path.display());
            }
        }
        Ok(scenario)
    }
}

/// Entry point of `cargo xtask record --backend codex-session`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("codex-app-server");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let codex = match &options.binary {
        Some(path) => path.clone(),
        None => super::codex::install(
            &super::cache_dir(),
            options
                .version
                .as_deref()
                .unwrap_or(super::codex::CODEX_VERSION),
        )?,
    };
    let out = super::Output::new(options, &dir)?;
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        // The committed recording, read before a new one replaces it.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let (items, mut problems) = run(name, &scenario, &codex, out.path())
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.path().join(format!("{name}.jsonl")));
        let stderr = read(&out.path().join(format!("{name}.stderr")));
        let events = normalize(&raw, &stderr);
        let live = live_json(&items, &events);
        let live_path = dir.join(format!("{name}.live.jsonl"));
        let old_live = read(&live_path);
        if old_live.is_empty() && !options.check {
            std::fs::write(&live_path, &live)?;
            problems.push(format!(
                "wrote {}: review it by hand against SPEC I6 and XA21",
                live_path.display()
            ));
        } else if old_live != live {
            problems.push(format!(
                "the live items differ from {}",
                live_path.display()
            ));
            std::fs::write(out.path().join(format!("{name}.live.jsonl")), &live)?;
        }
        let expected = dir.join(format!("{name}.expected.jsonl"));
        let old = read(&expected);
        if old.is_empty() && !options.check {
            std::fs::write(&expected, &events)?;
            problems.push(format!(
                "wrote {}: review it by hand against docs/codex-app-server.md",
                expected.display()
            ));
        } else {
            // Thread, turn and item ids, times and log timestamps change from run to run.
            let drift = drift::event_drift(&old, &old_raw, &events, &raw);
            if !drift.is_empty() {
                problems.push(format!("the events differ from {}", expected.display()));
                problems.extend(drift);
                std::fs::write(out.path().join(format!("{name}.events.jsonl")), &events)?;
            } else if !options.check {
                // The same events, with the new recording's ids.
                std::fs::write(&expected, &events)?;
            }
        }
        report.add(name, &scenario.about, problems);
    }
    report.finish("Codex sessions", out.path())
}

/// The events and the outcome line of a session's recorded lines, as `harness normalize
/// --backend codex` gives them for its transcript (XA0).
pub(crate) fn normalize(raw: &str, stderr: &str) -> String {
    let mut config = NormalizerConfig::with_cwd(PROJECT);
    config.session = true;
    let mut normalizer = CodexHarness.normalizer(config);
    let mut events = Vec::new();
    for line in raw.lines() {
        normalizer.push_line(line.as_bytes(), &mut events);
    }
    for line in stderr.lines() {
        normalizer.push_stderr(line.as_bytes(), &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    let mut text = String::new();
    for event in &events {
        text.push_str(&serde_json::to_string(event).unwrap_or_default());
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(&OutcomeLine::new(&outcome)).unwrap_or_default());
    text.push('\n');
    text
}

/// The caller's script: answers in order, an interrupt or a kill of the server once a tool use
/// starts, the end of input after the last turn.
struct Caller {
    answers: std::vec::IntoIter<String>,
    interrupt_after: Option<Duration>,
    kill_after: Option<Duration>,
    turns: u32,
    /// The server's binary, to find its process.
    codex: PathBuf,
    /// The server and its descendants, as the session goes.
    seen: Processes,
    /// What went wrong.
    notes: Vec<String>,
}

impl Caller {
    fn react(&mut self, handle: &SessionHandle, item: &SessionItem) {
        self.seen.snapshot(descendant_running(&self.codex));
        match item {
            SessionItem::Event(event) => match &event.body {
                EventBody::Permission { id, .. } => {
                    let decision = match self.answers.next().as_deref() {
                        Some("allow") => Decision::Allow,
                        Some("allow_always") => Decision::AllowAlways,
                        Some("interrupt") => {
                            let _ = handle.interrupt();
                            return;
                        }
                        Some("close") => {
                            let _ = handle.close();
                            return;
                        }
                        _ => Decision::Deny,
                    };
                    let _ = handle.answer(id.clone(), decision, None);
                }
                EventBody::Started { .. } => {
                    if let Some(after) = self.interrupt_after.take() {
                        std::thread::sleep(after);
                        let _ = handle.interrupt();
                    }
                    if let Some(after) = self.kill_after.take() {
                        std::thread::sleep(after);
                        self.seen.snapshot(descendant_running(&self.codex));
                        match descendant_running(&self.codex) {
                            Some(pid) => kill(pid),
                            None => self.notes.push("kill: no server process found".into()),
                        }
                    }
                }
                _ => {}
            },
            SessionItem::TurnEnd(outcome) if outcome.turn == Some(self.turns) => {
                let _ = handle.end_input();
            }
            _ => {}
        }
    }
}

/// Runs one session of `prompts` through the library, its lines going to `transcript`; its
/// items.
fn session(
    codex: &Path,
    mode: Option<&str>,
    prompts: &[String],
    caller: &mut Caller,
    resume: Option<String>,
    transcript: &Path,
) -> Result<Vec<SessionItem>> {
    let mut request = RunRequest::new("");
    request.binary = Some(codex.to_path_buf());
    request.cwd = Some(PathBuf::from(PROJECT));
    request.permission_mode = mode.map(str::to_string);
    request.timeout = Some(TURN_LIMIT);
    request.resume = resume;
    request.transcript = Some(transcript.to_path_buf());
    request.normalizer.started = caller.interrupt_after.is_some() || caller.kill_after.is_some();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let items = runtime.block_on(async {
        let session = CodexHarness.session(request).await?;
        for prompt in prompts {
            let _ = session.prompt(prompt.clone());
        }
        let items =
            fixtures::live::drive_session(session, |handle, item| caller.react(handle, item)).await;
        Ok::<_, harness_agents_core::RunError>(items)
    })?;
    Ok(items)
}

/// The session's id, as its first turn's outcome names it.
fn session_id(items: &[SessionItem]) -> Option<String> {
    items.iter().find_map(|item| match item {
        SessionItem::TurnEnd(outcome) => outcome.session_id.clone(),
        _ => None,
    })
}

/// What only the live session knows, as JSON lines: the errors it made itself (those the
/// transcript's `events` do not give), each turn's outcome, and its end.
fn live_json(items: &[SessionItem], events: &str) -> String {
    let offline: Vec<serde_json::Value> = events
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let own: Vec<SessionItem> = items
        .iter()
        .filter(|item| match item {
            SessionItem::Event(event) => {
                matches!(event.body, EventBody::Error { .. })
                    && !offline.contains(&serde_json::to_value(event).unwrap_or_default())
            }
            _ => true,
        })
        .cloned()
        .collect();
    let mut text = String::new();
    for value in fixtures::live::session_json(&own) {
        text.push_str(&value.to_string());
        text.push('\n');
    }
    text
}

/// Writes the `codex` wrapper a session starts: the scenario's environment and nothing of
/// ours, and every line the session writes appended to `client`. The wrapper execs the server,
/// so the process the session started is the server itself (a kill from outside then ends
/// it as an agent's death would); the copy of its input runs beside it.
fn wrapper(path: &Path, codex: &Path, env: &BTreeMap<String, String>, client: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let mut script = String::from("#!/bin/bash\nexec env -i");
    for (key, value) in env {
        script.push_str(&format!(
            " {}",
            shared::shlex_quote(&format!("{key}={value}"))
        ));
    }
    script.push_str(&format!(
        " {} \"$@\" < <(tee -a {})\n",
        shared::shlex_quote(&codex.display().to_string()),
        shared::shlex_quote(&client.display().to_string())
    ));
    std::fs::write(path, script)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// Records one scenario; the live session's items and what went wrong.
fn run(
    name: &str,
    scenario: &Scenario,
    codex: &Path,
    out: &Path,
) -> Result<(Vec<SessionItem>, Vec<String>)> {
    shared::fresh_home(HOME, PROJECT)?;
    shared::write_files(Path::new(PROJECT), &scenario.files)?;
    let api = Arc::new(Mutex::new(Responses::new(&scenario.turns)));
    let server = shared::serve(0, &api, shared::dump_path(out, name))?;
    let config = scenario.config_toml.replace(
        "{base_url}",
        &format!("http://127.0.0.1:{}/v1", server.port()),
    );
    let codex_home = Path::new(HOME).join(".codex");
    std::fs::create_dir_all(&codex_home)?;
    std::fs::write(codex_home.join("config.toml"), &config)?;
    let env = shared::offline_env([
        ("PATH", "/usr/local/bin:/usr/bin:/bin".to_string()),
        ("MOCK_OPENAI_API_KEY", "sk-mock-loopback-only".to_string()),
        ("HOME", HOME.to_string()),
        ("CODEX_HOME", "/home/dev2/.codex".to_string()),
    ]);
    let scratch = tempfile::tempdir()?;
    let client = out.join(format!("{name}.client.jsonl"));
    let _ = std::fs::remove_file(&client);
    let started = Instant::now();
    let mode = scenario.permission_mode.as_deref();
    let mut resume = None;
    if let Some(earlier) = &scenario.resume_after {
        let throwaway = scratch.path().join("earlier.client.jsonl");
        let binary = scratch.path().join("codex-earlier");
        wrapper(&binary, codex, &env, &throwaway)?;
        let mut caller = Caller {
            answers: Vec::new().into_iter(),
            interrupt_after: None,
            kill_after: None,
            turns: earlier.len() as u32,
            codex: codex.to_path_buf(),
            seen: Processes::default(),
            notes: Vec::new(),
        };
        let transcript = scratch.path().join("earlier.transcript");
        resume = session_id(&session(
            &binary,
            mode,
            earlier,
            &mut caller,
            None,
            &transcript,
        )?);
        if resume.is_none() {
            bail!("the earlier session named no thread");
        }
    }
    let binary = scratch.path().join("codex");
    wrapper(&binary, codex, &env, &client)?;
    let mut caller = Caller {
        answers: scenario.answers.clone().into_iter(),
        interrupt_after: scenario
            .interrupt_after_started_ms
            .map(Duration::from_millis),
        kill_after: scenario.kill_after_started_ms.map(Duration::from_millis),
        turns: scenario.prompts.len() as u32,
        codex: codex.to_path_buf(),
        seen: Processes::default(),
        notes: Vec::new(),
    };
    let transcript = scratch.path().join("transcript");
    let items = session(
        &binary,
        mode,
        &scenario.prompts,
        &mut caller,
        resume,
        &transcript,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let mut notes = caller.notes;
    if caller.seen.len() == 0 {
        notes.push("no process of the server was seen".into());
    }
    notes.extend(caller.seen.outlived());
    notes.extend(shared::stop(server, &api));
    shared::clean(HOME)?;

    // The transcript split into the fixtures' layout: stdout, stderr.
    let text = std::fs::read(&transcript)?;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    for line in text.split(|b| *b == b'\n').skip(1) {
        match Record::parse(line) {
            Record::Stdout(content) => {
                stdout.extend_from_slice(content);
                stdout.push(b'\n');
            }
            Record::Stderr(content) => {
                stderr.extend_from_slice(content);
                stderr.push(b'\n');
            }
            Record::Other(_) => {}
        }
    }
    shared::write_streams(out, name, &stdout, &stderr)?;
    // The stand-in's port changes from run to run.
    let config = scenario
        .config_toml
        .replace("{base_url}", "http://127.0.0.1:PORT/v1");
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": ["codex", "app-server"],
        "permission_mode": scenario.permission_mode, "prompts": scenario.prompts,
        "answers": scenario.answers, "config_toml": config});
    if let Some(ms) = scenario.kill_after_started_ms {
        cmd["kill_after_started_ms"] = json!(ms);
    }
    let exit = items.iter().find_map(|item| match item {
        SessionItem::Ended(end) => Some(json!(end.outcome.exit_code)),
        _ => None,
    });
    let tail = shared::cmd_tail(exit.unwrap_or(json!(null)), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;
    Ok((items, notes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_codex_session_scenario_loads() {
        let dir = fixtures::root().join("codex-app-server/scenarios");
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let scenario = Scenario::load(&path).unwrap();
                assert!(
                    scenario.config_toml.contains("{base_url}"),
                    "{}",
                    path.display()
                );
                count += 1;
            }
        }
        assert_eq!(
            count, 8,
            "one scenario per recording in fixtures/codex-app-server"
        );
    }
}
