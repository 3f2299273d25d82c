//! `cargo xtask record --backend acp-session`: ACP sessions of real agents (A16-A22, G13),
//! each driven through the library's own `Backend::session` (Gemini CLI through
//! `GeminiHarness`, `gemini --acp`; opencode through `AcpHarness`, `opencode acp`) by a
//! scripted caller, against the same loopback stand-ins as `--backend acp`. The same caller
//! records the GitHub Copilot CLI's sessions (`CopilotHarness`, `copilot --acp`) into
//! `fixtures/copilot-session/` for `--backend copilot-session` ([`super::copilot_session`]),
//! and Qwen Code's (`QwenHarness`, `qwen --acp`) into `fixtures/qwen-session/` for `--backend
//! qwen-session` ([`super::qwen_session`]).
//!
//! Scenarios live in `fixtures/acp-session/scenarios/NAME.json` ([`Scenario`]): the agent, the
//! scenario of its own corpus whose files, settings and environment are reused (`from`), the
//! model's turns for the whole session (replacing that scenario's), the prompts (each sent when
//! the previous turn has ended), the caller's answers to the permission requests in order
//! (`allow`, `allow_always`, `deny`, or `interrupt`, `close`, `end_input`: interrupt the
//! turn, close the session, or end the caller's input while the request waits;
//! `allow_then_kill`, `allow_then_interrupt`, `allow_then_close`: allow, then SIGKILL the
//! agent, interrupt the turn or close the session while the command runs), and optionally
//! the prompts of a second session that resumes the first
//! (`--resume`): only that second session is then kept.
//!
//! Each scenario writes `NAME.jsonl` (the session's transcript lines, A1, without the
//! transcript's header), `NAME.stderr` and `NAME.cmd`. The transcript normalized offline must
//! give the live session's events (I7; the agent's stderr warnings aside); then its events are
//! compared with the hand-reviewed `NAME.expected.jsonl`, or written to
//! `NAME.unreviewed.jsonl`. The agents are the versions their corpora were recorded with,
//! installed with npm into `target/record-cache/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use harness_agents_acp::{AcpHarness, AcpNormalizer};
use harness_agents_copilot::CopilotHarness;
use harness_agents_core::session::{Session, SessionItem};
use harness_agents_core::{Backend, Decision, EventBody, NormalizerConfig, RunRequest};
use harness_agents_gemini::GeminiHarness;
use harness_agents_qwen::QwenHarness;
use serde::Deserialize;
use serde_json::{Value, json};

use super::acp::Agent;
use super::procs::{self, Processes};
use super::shared::without_stderr;
use super::{
    Options, copilot, copilot_session, drift, gemini, opencode, qwen, qwen_session, read,
    scenario_names, shared,
};

/// The agent's process: our child (the wrapper execs the agent).
fn agent_pid() -> Option<i32> {
    let ours = std::process::id() as i32;
    procs::table()
        .into_iter()
        .find(|p| p.ppid == ours && !p.zombie)
        .map(|p| p.pid)
}

/// The caller's answer to one permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// Allow it once.
    Allow,
    /// Allow it for the rest of the session.
    AllowAlways,
    /// Deny it.
    Deny,
    /// Interrupt the turn while it waits.
    Interrupt,
    /// Close the session while it waits (A20).
    Close,
    /// End the caller's input while it waits (A19: it is then denied).
    EndInput,
    /// Allow it once, then kill the agent's process with SIGKILL from outside
    /// [`KILL_AFTER`] later, while the allowed command runs (I6).
    AllowThenKill,
    /// Allow it once, then interrupt the turn [`KILL_AFTER`] later, while the allowed command
    /// runs; the next prompt follows the turn's end.
    AllowThenInterrupt,
    /// Allow it once, then close the session [`KILL_AFTER`] later, while the allowed command
    /// runs (A20).
    AllowThenClose,
}

/// How long after allowing the command the agent is killed or the turn interrupted, for
/// [`Answer::AllowThenKill`] and [`Answer::AllowThenInterrupt`].
const KILL_AFTER: std::time::Duration = std::time::Duration::from_millis(1500);

/// One recorded session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The agent.
    pub agent: Agent,
    /// The scenario of the agent's own corpus whose files, settings and environment are used.
    pub from: String,
    /// The model's turns for the whole session, in the corpus's form; the `from` scenario's
    /// when absent.
    #[serde(default)]
    pub turns: Option<Value>,
    /// The prompts, one turn each.
    pub prompts: Vec<String>,
    /// The answers to the permission requests, in the order they are asked.
    #[serde(default)]
    pub answers: Vec<Answer>,
    /// The prompts of a second session resuming the first; only it is kept.
    #[serde(default)]
    pub resume: Vec<String>,
    /// The permission mode of the session (A18).
    #[serde(default)]
    pub permission_mode: Option<String>,
}

impl Scenario {
    fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// The `from` scenario of the agent's corpus, its turns replaced by the session's.
    fn corpus_json(&self) -> Result<Value> {
        let corpus = match self.agent {
            Agent::Gemini => "gemini",
            Agent::Opencode => "opencode",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
        };
        let path = fixtures::root().join(format!("{corpus}/scenarios/{}.json", self.from));
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let mut value: Value = serde_json::from_str(&text)?;
        if let Some(turns) = &self.turns {
            value["turns"] = turns.clone();
        }
        Ok(value)
    }
}

/// Entry point of `cargo xtask record --backend acp-session`.
pub(super) fn record(options: &Options) -> Result<()> {
    record_in(options, "acp-session")
}

/// Records the session scenarios of `fixtures/FOLDER/` (`acp-session`, `copilot-session`,
/// `qwen-session`): each names its agent.
pub(super) fn record_in(options: &Options, folder: &str) -> Result<()> {
    if options.binary.is_some() || options.version.is_some() {
        bail!("--backend {folder} records its agents' corpora's versions");
    }
    let dir = fixtures::root().join(folder);
    let names = scenario_names(&options.names, &dir.join("scenarios"))?;
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    let cache = super::cache_dir();
    for name in &names {
        let scenario = Scenario::load(&dir.join("scenarios").join(format!("{name}.json")))?;
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let binary = match scenario.agent {
            Agent::Gemini => gemini::install(&cache, gemini::GEMINI_VERSION)?,
            Agent::Opencode => opencode::install(&cache, opencode::OPENCODE_VERSION)?,
            Agent::Copilot => copilot_session::binary()?,
            Agent::Qwen => qwen_session::binary()?,
        };
        let rg = match scenario.agent {
            Agent::Opencode => Some(opencode::ripgrep(options)?),
            Agent::Gemini | Agent::Copilot | Agent::Qwen => None,
        };
        let (live, mut problems) = run(name, &scenario, &binary, rg.as_deref(), out)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let events = normalize(&raw, &read(&out.join(format!("{name}.stderr"))), &scenario);
        // I7: the transcript gives the live session's events (stderr warnings aside).
        let offline = events_only(&without_stderr(&events));
        // The errors the live session made itself (a dead agent's, I6) have no line and are
        // not the transcript's.
        let live: String = events_only(&without_stderr(&live))
            .lines()
            .filter(|l| {
                offline.lines().any(|o| o == *l)
                    || !l.contains("\"kind\":\"error\"")
                    || l.contains("\"line\":")
            })
            .map(|l| format!("{l}\n"))
            .collect();
        if offline != live {
            problems.push(format!(
                "the transcript normalizes to other events than the live session's:\n{offline}\nlive:\n{live}"
            ));
        }
        problems.extend(match scenario.agent {
            Agent::Qwen => qwen_session::against_expected(
                (&dir, out, name),
                options.check,
                &old_raw,
                (&events, &raw),
                &mut report.unreviewed,
            )?,
            Agent::Gemini | Agent::Opencode | Agent::Copilot => shared::against_expected(
                &dir,
                out,
                name,
                options.check,
                &old_raw,
                (&events, &raw),
                &mut report.unreviewed,
            )?,
        });
        report.add(name, &scenario.about, problems);
    }
    report.finish("ACP session", out)
}

/// The event lines of `text`, without the outcome line.
fn events_only(text: &str) -> String {
    text.lines()
        .filter(|l| !l.contains("\"kind\":\"outcome\""))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The normalizer settings of a scenario's session (A18).
fn config(scenario: &Scenario) -> NormalizerConfig {
    let mut config = NormalizerConfig::default();
    config.session = !matches!(
        scenario.permission_mode.as_deref(),
        Some("bypassPermissions" | "yolo")
    );
    config
}

/// The events `harness normalize --backend acp` prints of a session's transcript lines.
fn normalize(raw: &str, stderr: &str, scenario: &Scenario) -> String {
    drift::normalize_with(
        AcpNormalizer::new(config(scenario)),
        raw.as_bytes(),
        stderr.as_bytes(),
    )
}

/// Stops the stand-in's server: what the stand-in noticed.
type Stop = Box<dyn FnOnce() -> Vec<String>>;

/// Runs a scenario's session (and its resumed session) live; returns the kept session's
/// events as `harness session --format jsonl` prints them (its outcome line last) and what
/// the stand-in noticed.
fn run(
    name: &str,
    scenario: &Scenario,
    binary: &Path,
    rg: Option<&Path>,
    out: &Path,
) -> Result<(String, Vec<String>)> {
    let stderr = out.join(format!("{name}.stderr"));
    std::fs::write(&stderr, "")?;
    let wrapper = out.join(format!("{name}.agent.sh"));
    let corpus = scenario.corpus_json()?;
    let (env, stop, project, home): (BTreeMap<String, String>, Stop, &str, &str) =
        match scenario.agent {
            Agent::Gemini => {
                let inner: gemini::Scenario = serde_json::from_value(corpus)?;
                let setup = gemini::prepare(&inner, None)?;
                let (server, api) = (setup.server, setup.api);
                let stop: Stop = Box::new(move || shared::stop(server, &api));
                (setup.env, stop, gemini::PROJECT, gemini::HOME)
            }
            Agent::Opencode => {
                let inner: opencode::Scenario = serde_json::from_value(corpus)?;
                opencode::prepare(&inner, rg.context("no rg")?)?;
                let api = Arc::new(Mutex::new(inner.stand_in(shared::seed(&scenario.from))));
                let server = shared::serve(0, &api, None)?;
                let config = opencode::config(&inner, server.port());
                let env = opencode::environment(&inner, &config);
                let stop: Stop = Box::new(move || shared::stop(server, &api));
                (env, stop, opencode::PROJECT, opencode::HOME)
            }
            Agent::Copilot => {
                let (env, stop) = copilot_session::prepare(corpus, binary)?;
                (env, stop, copilot::PROJECT, copilot::HOME)
            }
            Agent::Qwen => {
                let (env, stop) = qwen_session::prepare(corpus)?;
                (env, stop, qwen::PROJECT, qwen::HOME)
            }
        };
    shared::clean_env_wrapper(&wrapper, binary, &env, Some(&stderr))?;
    let transcript = out.join(format!("{name}.transcript"));
    let started = Instant::now();
    let mut answers = scenario.answers.iter().copied();
    let first = session(
        scenario,
        &wrapper,
        project,
        None,
        &scenario.prompts,
        &mut answers,
        &transcript,
    );
    let result = match (first, scenario.resume.is_empty()) {
        (Ok(kept), true) => Ok(kept),
        (Ok((_, session_id, _)), false) => {
            // The first session is the setup of the second: only the resumed one is kept.
            std::fs::write(&stderr, "")?;
            match session_id {
                Some(id) => session(
                    scenario,
                    &wrapper,
                    project,
                    Some(id),
                    &scenario.resume,
                    &mut answers,
                    &transcript,
                ),
                None => Err(anyhow::anyhow!("the first session named no session id")),
            }
        }
        (Err(e), _) => Err(e),
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut notes = stop();
    shared::clean(home)?;
    std::fs::remove_file(&wrapper)?;
    let (text, _, session_notes) = result?;
    notes.extend(session_notes);
    std::fs::write(
        out.join(format!("{name}.jsonl")),
        shared::transcript_lines(&transcript)?,
    )?;
    std::fs::remove_file(&transcript)?;
    let mut argv = vec![
        match scenario.agent {
            Agent::Gemini => "gemini",
            Agent::Opencode => "opencode",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
        }
        .to_string(),
    ];
    argv.extend(command(scenario.agent));
    let cmd = json!({"cwd": project, "argv": argv, "permission_mode": scenario.permission_mode,
                     "prompts": scenario.prompts, "answers": scenario.answers.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>(),
                     "resume": scenario.resume});
    // The session's outcome line is the last; its exit code is the agent's.
    let exit = text
        .lines()
        .last()
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .and_then(|o| o.get("exit_code").cloned())
        .unwrap_or(Value::Null);
    let tail = shared::cmd_tail(exit, seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;
    Ok((text, notes))
}

/// The agent's ACP arguments after its binary, as the session starts it.
fn command(agent: Agent) -> Vec<String> {
    let args: &[&str] = match agent {
        Agent::Gemini => &["--acp", "--skip-trust"],
        Agent::Opencode => &["acp", "--pure", "--cwd", opencode::PROJECT],
        Agent::Copilot => &copilot_session::COMMAND,
        Agent::Qwen => &qwen_session::COMMAND,
    };
    args.iter().map(|a| a.to_string()).collect()
}

/// Drives one session to its end: the prompts one turn at a time, the answers in order.
/// Returns the events and the session's outcome line as JSON lines, its session id, and what
/// went wrong (a process of the agent that outlived the session, I6).
fn session(
    scenario: &Scenario,
    wrapper: &Path,
    project: &str,
    resume: Option<String>,
    prompts: &[String],
    answers: &mut impl Iterator<Item = Answer>,
    transcript: &Path,
) -> Result<(String, Option<String>, Vec<String>)> {
    let mut seen = Processes::default();
    let mut notes = Vec::new();
    let mut request = RunRequest::new("");
    request.cwd = Some(PathBuf::from(project));
    request.permission_mode = scenario.permission_mode.clone();
    request.timeout = Some(gemini::RUN_LIMIT);
    request.transcript = Some(transcript.to_path_buf());
    request.resume = resume;
    match scenario.agent {
        Agent::Gemini | Agent::Copilot | Agent::Qwen => {
            request.binary = Some(wrapper.to_path_buf())
        }
        Agent::Opencode => {
            let mut agent = vec![wrapper.display().to_string()];
            agent.extend(command(Agent::Opencode));
            request.agent = Some(agent);
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let items = runtime.block_on(async {
        let session: Session = match scenario.agent {
            Agent::Gemini => GeminiHarness.session(request).await?,
            Agent::Opencode => AcpHarness.session(request).await?,
            Agent::Copilot => CopilotHarness.session(request).await?,
            Agent::Qwen => QwenHarness.session(request).await?,
        };
        let mut prompts = prompts.iter();
        if let Some(first) = prompts.next() {
            session.prompt(first.clone())?;
        }
        let mut items = Vec::new();
        let mut session = session;
        let mut input_over = false;
        let limit = gemini::RUN_LIMIT * 3;
        let read = async {
            while let Some(item) = session.next().await {
                seen.snapshot(agent_pid());
                match &item {
                    SessionItem::Event(event) => {
                        if let EventBody::Permission { id, .. } = &event.body {
                            match answers.next() {
                                Some(Answer::Interrupt) => session.interrupt()?,
                                Some(Answer::Close) => {
                                    input_over = true;
                                    session.close()?
                                }
                                Some(Answer::EndInput) => {
                                    input_over = true;
                                    session.end_input()?
                                }
                                Some(Answer::Allow) => {
                                    session.answer(id.clone(), Decision::Allow, None)?
                                }
                                Some(Answer::AllowThenKill) => {
                                    input_over = true;
                                    session.answer(id.clone(), Decision::Allow, None)?;
                                    tokio::time::sleep(KILL_AFTER).await;
                                    seen.snapshot(agent_pid());
                                    match agent_pid() {
                                        Some(pid) => procs::kill(pid),
                                        None => notes.push("kill: no agent process found".into()),
                                    }
                                }
                                Some(Answer::AllowThenClose) => {
                                    input_over = true;
                                    session.answer(id.clone(), Decision::Allow, None)?;
                                    tokio::time::sleep(KILL_AFTER).await;
                                    session.close()?
                                }
                                Some(Answer::AllowThenInterrupt) => {
                                    session.answer(id.clone(), Decision::Allow, None)?;
                                    tokio::time::sleep(KILL_AFTER).await;
                                    session.interrupt()?
                                }
                                Some(Answer::AllowAlways) => {
                                    session.answer(id.clone(), Decision::AllowAlways, None)?
                                }
                                Some(Answer::Deny) | None => {
                                    session.answer(id.clone(), Decision::Deny, None)?
                                }
                            }
                        }
                    }
                    SessionItem::TurnEnd(_) if input_over => {}
                    SessionItem::TurnEnd(_) => match prompts.next() {
                        Some(next) => session.prompt(next.clone())?,
                        None => session.end_input()?,
                    },
                    SessionItem::Ended(_) => {}
                }
                items.push(item);
            }
            Ok::<_, anyhow::Error>(())
        };
        tokio::time::timeout(limit, read)
            .await
            .context("the session did not end in time")??;
        Ok::<_, anyhow::Error>(items)
    })?;
    // I6: no process of the agent outlives its session.
    notes.extend(seen.outlived());
    let mut text = String::new();
    let mut session_id = None;
    for item in &items {
        let line = match item {
            SessionItem::Event(event) => serde_json::to_value(event)?,
            SessionItem::TurnEnd(_) => continue,
            SessionItem::Ended(end) => {
                session_id = end.outcome.session_id.clone();
                serde_json::to_value(harness_agents_core::OutcomeLine::new(&end.outcome))?
            }
        };
        text.push_str(&line.to_string());
        text.push('\n');
    }
    Ok((text, session_id, notes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_session_scenario_loads_and_has_its_recording() {
        for folder in ["acp-session", "copilot-session"] {
            every_scenario_loads_and_has_its_recording(folder);
        }
    }

    fn every_scenario_loads_and_has_its_recording(folder: &str) {
        let dir = fixtures::root().join(folder);
        let names = super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        assert!(!names.is_empty());
        for name in &names {
            let scenario = Scenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            scenario.corpus_json().unwrap();
            for file in ["jsonl", "expected.jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
    }
}
