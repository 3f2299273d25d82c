//! `cargo xtask record --backend codex-session`: Codex sessions through `codex app-server`,
//! driven by the library's own `CodexHarness::session` with a scripted caller, against the
//! Responses API stand-in ([`super::openai`]).
//!
//! Scenarios live in `fixtures/codex-app-server/scenarios/NAME.json`: the `config.toml` (with
//! `{base_url}`), the project's files, the permission mode, the prompts (all queued at once:
//! the session runs them in order), the caller's answers to the permission requests in order
//! (`allow`, `allow_always`, `deny`, or `interrupt` to interrupt the turn instead), whether to
//! interrupt the turn once a tool use starts, an optional earlier session whose thread the
//! recorded one resumes, and the stand-in's answers. Each runs in a fresh
//! `/home/dev2/project` with `HOME=/home/dev2` and `CODEX_HOME=/home/dev2/.codex`.
//!
//! What a recording keeps, in `fixtures/codex-app-server/` (or `--out DIR`): `NAME.jsonl`, the
//! server's standard output (what the normalizer reads, XA0); `NAME.stderr`, its standard
//! error; `NAME.client.jsonl`, every line the session wrote to the server (for the schema
//! check, `cargo xtask codex-schema`); `NAME.cmd`, how it ran. The events are checked against
//! `NAME.expected.jsonl` (a missing one is written, to be reviewed by hand).

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
use super::{Options, read, scenario_names, shared};

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
    /// `deny`, or `interrupt`.
    #[serde(default)]
    pub answers: Vec<String>,
    /// Interrupt the turn this long after its first tool use starts (`started` events on).
    #[serde(default)]
    pub interrupt_after_started_ms: Option<u64>,
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
                "allow" | "allow_always" | "deny" | "interrupt"
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
        let mut problems = run(name, &scenario, &codex, out.path())
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.path().join(format!("{name}.jsonl")));
        let stderr = read(&out.path().join(format!("{name}.stderr")));
        let events = normalize(&raw, &stderr);
        let expected = dir.join(format!("{name}.expected.jsonl"));
        let old = read(&expected);
        if old.is_empty() && !options.check {
            std::fs::write(&expected, &events)?;
            problems.push(format!(
                "wrote {}: review it by hand against docs/codex-app-server.md",
                expected.display()
            ));
        } else if old != events {
            problems.push(format!("the events differ from {}", expected.display()));
            std::fs::write(out.path().join(format!("{name}.events.jsonl")), &events)?;
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

/// The caller's script: answers in order, an interrupt once a tool use starts, the end of
/// input after the last turn.
struct Caller {
    answers: std::vec::IntoIter<String>,
    interrupt_after: Option<Duration>,
    turns: u32,
}

impl Caller {
    fn react(&mut self, handle: &SessionHandle, item: &SessionItem) {
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
                        _ => Decision::Deny,
                    };
                    let _ = handle.answer(id.clone(), decision, None);
                }
                EventBody::Started { .. } => {
                    if let Some(after) = self.interrupt_after.take() {
                        std::thread::sleep(after);
                        let _ = handle.interrupt();
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

/// Runs one session of `prompts` through the library, its lines going to `transcript`; the
/// session's id.
fn session(
    codex: &Path,
    mode: Option<&str>,
    prompts: &[String],
    caller: Caller,
    resume: Option<String>,
    transcript: &Path,
) -> Result<Option<String>> {
    let mut request = RunRequest::new("");
    request.binary = Some(codex.to_path_buf());
    request.cwd = Some(PathBuf::from(PROJECT));
    request.permission_mode = mode.map(str::to_string);
    request.timeout = Some(TURN_LIMIT);
    request.resume = resume;
    request.transcript = Some(transcript.to_path_buf());
    request.normalizer.started = caller.interrupt_after.is_some();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut caller = caller;
    let items = runtime.block_on(async {
        let session = CodexHarness.session(request).await?;
        for prompt in prompts {
            let _ = session.prompt(prompt.clone());
        }
        let items =
            fixtures::live::drive_session(session, |handle, item| caller.react(handle, item)).await;
        Ok::<_, harness_agents_core::RunError>(items)
    })?;
    let id = items.iter().find_map(|item| match item {
        SessionItem::TurnEnd(outcome) => outcome.session_id.clone(),
        _ => None,
    });
    Ok(id)
}

/// Writes the `codex` wrapper a session starts: the scenario's environment and nothing of
/// ours, and every line the session writes appended to `client`.
fn wrapper(path: &Path, codex: &Path, env: &BTreeMap<String, String>, client: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let mut script = format!(
        "#!/bin/sh\ntee -a {} | exec env -i",
        shared::shlex_quote(&client.display().to_string())
    );
    for (key, value) in env {
        script.push_str(&format!(
            " {}",
            shared::shlex_quote(&format!("{key}={value}"))
        ));
    }
    script.push_str(&format!(
        " {} \"$@\"\n",
        shared::shlex_quote(&codex.display().to_string())
    ));
    std::fs::write(path, script)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

fn run(name: &str, scenario: &Scenario, codex: &Path, out: &Path) -> Result<Vec<String>> {
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
        let caller = Caller {
            answers: Vec::new().into_iter(),
            interrupt_after: None,
            turns: earlier.len() as u32,
        };
        let transcript = scratch.path().join("earlier.transcript");
        resume = session(&binary, mode, earlier, caller, None, &transcript)?;
        if resume.is_none() {
            bail!("the earlier session named no thread");
        }
    }
    let binary = scratch.path().join("codex");
    wrapper(&binary, codex, &env, &client)?;
    let caller = Caller {
        answers: scenario.answers.clone().into_iter(),
        interrupt_after: scenario
            .interrupt_after_started_ms
            .map(Duration::from_millis),
        turns: scenario.prompts.len() as u32,
    };
    let transcript = scratch.path().join("transcript");
    session(
        &binary,
        mode,
        &scenario.prompts,
        caller,
        resume,
        &transcript,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let notes = shared::stop(server, &api);
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
    let cmd = json!({"cwd": PROJECT, "env": env, "argv": ["codex", "app-server"],
        "permission_mode": scenario.permission_mode, "prompts": scenario.prompts,
        "answers": scenario.answers, "config_toml": config});
    let tail = shared::cmd_tail(json!(0), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;
    Ok(notes)
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
            count, 6,
            "one scenario per recording in fixtures/codex-app-server"
        );
    }
}
