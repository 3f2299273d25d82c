//! `cargo xtask record --backend opencode-sessions`: opencode sessions through `opencode
//! serve` (the PS rules of `docs/opencode.md`), recorded from the npm package's binary against
//! the Anthropic stand-in ([`super::anthropic`]), driven through the library's own
//! `Backend::session` with the caller scripted.
//!
//! Scenarios live in `fixtures/opencode/sessions/scenarios/NAME.json` ([`SessionScenario`]);
//! each runs in the fresh `/home/oc` of `opencode` recordings, with the same configuration and
//! offline environment. The recording is the session's transcript (`NAME.jsonl`: its header,
//! then the session's server events), which `harness normalize` replays; each fresh recording
//! is compared with the hand-reviewed `NAME.expected.jsonl` (its events and outcome, as the
//! golden test reads them). `--check` records into a temporary folder and reports drift.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use harness_agents_core::session::SessionItem;
use harness_agents_core::{Backend, Decision, EventBody, RunRequest};
use harness_agents_opencode::OpencodeHarness;
use serde::Deserialize;
use serde_json::Value;

use super::opencode::{self, HOME, PROJECT, Scenario};
use super::procs::{self, descendant_running};
use super::scenario::Turn;
use super::{Options, drift, scenario_names, shared};

/// How long one session may take.
const SESSION_LIMIT: Duration = Duration::from_secs(120);

/// One scripted session.
///
/// ```json
/// {
///   "about": "permission once",
///   "config": {"permission": {"bash": "ask"}},
///   "prompts": ["Touch made.txt"],
///   "answers": ["allow"],
///   "turns": [
///     {"blocks": [{"type": "tool_use", "id": "toolu_01", "name": "bash",
///                  "input": {"command": "touch made.txt", "description": "Touch"}}]},
///     {"blocks": [{"type": "text", "text": "Done."}]}
///   ]
/// }
/// ```
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct SessionScenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The prompts, each sent when the turn before has ended.
    pub prompts: Vec<String>,
    /// The caller's answers to the permission requests, in the order asked: `allow`,
    /// `allow_always`, `deny`, or `close` (close the session while the request waits).
    #[serde(default)]
    pub answers: Vec<String>,
    /// Interrupt the first turn this long after its first command started (`started` events
    /// are on), then check that no `sleep` is left running once it has ended.
    #[serde(default)]
    pub interrupt_after_ms: Option<u64>,
    /// Kill the server with SIGKILL this long after the first command's `sleep` is seen
    /// running (`started` events are on): the turn must end `error`, the session
    /// `AgentExited` (I6), and no `sleep` may be left running.
    #[serde(default)]
    pub kill_after_ms: Option<u64>,
    /// Run the first prompt in a session of its own, then the others in a second session
    /// that resumes it (I5) on a new server; the recording is the second session's.
    #[serde(default)]
    pub resume: bool,
    /// Merged into the configuration.
    #[serde(default)]
    pub config: serde_json::Map<String, Value>,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The model's answers, as for `opencode` scenarios.
    pub turns: Vec<Turn>,
}

impl SessionScenario {
    fn load(path: &Path) -> Result<SessionScenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: SessionScenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        shared::check_files(path, scenario.files.keys())?;
        if scenario.prompts.is_empty() || (scenario.resume && scenario.prompts.len() < 2) {
            bail!("{}: too few prompts", path.display());
        }
        Ok(scenario)
    }

    /// The `opencode` scenario holding what the stand-in and the environment read.
    fn as_run(&self) -> Scenario {
        Scenario {
            about: self.about.clone(),
            prompt: String::new(),
            config: self.config.clone(),
            files: self.files.clone(),
            turns: self.turns.clone(),
            ..Scenario::default()
        }
    }
}

/// Entry point of `cargo xtask record --backend opencode-sessions`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("opencode/sessions");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let binary = match &options.binary {
        Some(path) => path.clone(),
        None => opencode::install(
            &super::cache_dir(),
            options
                .version
                .as_deref()
                .unwrap_or(opencode::OPENCODE_VERSION),
        )?,
    };
    let rg = opencode::ripgrep(options)?;
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = SessionScenario::load(&scenario_dir.join(format!("{name}.json")))?;
        let mut problems =
            run(name, &scenario, &binary, &rg, out).with_context(|| format!("recording {name}"))?;
        let fresh = super::read(&out.join(format!("{name}.jsonl")));
        let expected = super::read(&dir.join(format!("{name}.expected.jsonl")));
        let now = normalize(&fresh);
        // A running tool's part, unresolved at the end, carries its start time.
        if drift::neutral(&neutral(&now), &[]) != drift::neutral(&neutral(&expected), &[]) {
            problems.push(format!(
                "the events differ from {name}.expected.jsonl (ids and times aside)"
            ));
        }
        if !options.check && expected.is_empty() {
            std::fs::write(dir.join(format!("{name}.expected.jsonl")), &now)?;
            problems.push(format!("wrote {name}.expected.jsonl: review it by hand"));
        }
        report.add(name, &scenario.about, problems);
    }
    report.finish("opencode sessions", out)
}

/// A transcript's events and outcome, one JSON value a line, as the golden test reads them.
pub fn normalize(transcript: &str) -> String {
    let mut lines = transcript.lines();
    let Some(header) = lines
        .next()
        .and_then(|l| harness_agents_core::transcript::Header::parse(l.as_bytes()))
        .and_then(Result::ok)
    else {
        return String::new();
    };
    let mut normalizer = OpencodeHarness.normalizer(header.config());
    let mut events = Vec::new();
    if harness_agents_core::transcript::replay(
        transcript.as_bytes(),
        normalizer.as_mut(),
        &mut events,
    )
    .is_err()
    {
        return String::new();
    }
    let outcome = normalizer.finish(&mut events);
    let mut text = String::new();
    for event in &events {
        text.push_str(&serde_json::to_string(event).unwrap_or_default());
        text.push('\n');
    }
    let line = harness_agents_core::OutcomeLine::new(&outcome);
    text.push_str(&serde_json::to_string(&line).unwrap_or_default());
    text.push('\n');
    text
}

/// A normalized text with the server's ids (`ses_`, `msg_`, `prt_`, `per_`, `call_`/`toolu_`
/// kept) and costs made neutral, so two recordings compare.
fn neutral(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_inclusive(['"']) {
        let id = ["ses_", "msg_", "prt_", "per_"]
            .iter()
            .any(|p| word.starts_with(p) && word.len() > 20);
        if id {
            out.push_str(&word[..4]);
            out.push('"');
        } else {
            out.push_str(word);
        }
    }
    out
}

/// The session's `sleep` processes still alive (a command the abort should have killed).
fn sleeps() -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let entry = entry.ok()?;
        let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
        cmdline.starts_with(b"sleep\0").then_some(pid)
    })
    .filter(|pid| {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == Path::new(PROJECT))
    })
    .collect()
}

/// A scripted answer: a decision, or `None` for `close`.
fn decision(text: &str) -> Result<Option<Decision>> {
    Ok(Some(match text {
        "allow" => Decision::Allow,
        "allow_always" => Decision::AllowAlways,
        "deny" => Decision::Deny,
        "close" => return Ok(None),
        other => bail!("unknown answer {other}"),
    }))
}

/// One session: `prompts` sent one after another, `answers` given in order. Returns the
/// session id and the problems seen.
async fn session(
    request: RunRequest,
    prompts: &[String],
    answers: &mut Vec<Option<Decision>>,
    interrupt: Option<u64>,
    kill: Option<(u64, &Path)>,
) -> Result<(Option<String>, Vec<String>)> {
    let mut session = OpencodeHarness.session(request).await?;
    let handle = session.handle();
    let mut prompts = prompts.iter();
    if let Some(first) = prompts.next() {
        session.prompt(first.clone())?;
    }
    let mut problems = Vec::new();
    let mut id = None;
    let mut interrupted = false;
    let mut sleeping = None;
    let mut closed = false;
    let mut killed = None;
    let read = async {
        while let Some(item) = session.next().await {
            match item {
                SessionItem::Event(event) => match &event.body {
                    EventBody::Permission { id, .. } => {
                        let answer = if answers.is_empty() {
                            problems.push(format!("an unscripted permission request {id}"));
                            Some(Decision::Deny)
                        } else {
                            answers.remove(0)
                        };
                        match answer {
                            Some(answer) => handle.answer(id.clone(), answer, None)?,
                            None => {
                                closed = true;
                                handle.close()?;
                            }
                        }
                    }
                    EventBody::Started { .. } if kill.is_some() && killed.is_none() => {
                        if let Some((ms, binary)) = kill {
                            // `started` comes before the command's process exists: wait for
                            // it (a loaded machine takes seconds), then the scenario's delay.
                            for _ in 0..200 {
                                if !sleeps().is_empty() {
                                    break;
                                }
                                tokio::time::sleep(Duration::from_millis(100)).await;
                            }
                            tokio::time::sleep(Duration::from_millis(ms)).await;
                            let running = !sleeps().is_empty();
                            match descendant_running(binary) {
                                Some(pid) => procs::kill(pid),
                                None => problems.push("kill: no server process found".into()),
                            }
                            killed = Some(running);
                        }
                    }
                    EventBody::Started { .. } if !interrupted => {
                        if let Some(ms) = interrupt {
                            interrupted = true;
                            let handle = handle.clone();
                            // Whether the command was running when the interrupt went out, so
                            // that its absence afterwards means something.
                            sleeping = Some(tokio::spawn(async move {
                                tokio::time::sleep(Duration::from_millis(ms)).await;
                                let running = !sleeps().is_empty();
                                let _ = handle.interrupt();
                                running
                            }));
                        }
                    }
                    _ => {}
                },
                SessionItem::TurnEnd(_) if closed => {}
                SessionItem::TurnEnd(outcome) if killed.is_some() => {
                    if outcome.status != harness_agents_core::Status::Error {
                        problems.push(format!("the killed turn ended {:?}", outcome.status));
                    }
                }
                SessionItem::TurnEnd(outcome) => {
                    id = outcome.session_id.clone();
                    if interrupt.is_some() && outcome.turn == Some(1) {
                        let left = sleeps();
                        if !left.is_empty() {
                            problems.push(format!("the aborted command still runs: {left:?}"));
                        }
                    }
                    match prompts.next() {
                        Some(next) => handle.prompt(next.clone())?,
                        None => handle.end_input()?,
                    }
                }
                SessionItem::Ended(end) => {
                    let expected = if killed.is_some() {
                        harness_agents_core::session::EndReason::AgentExited
                    } else {
                        harness_agents_core::session::EndReason::Caller
                    };
                    if end.reason != expected {
                        problems.push(format!("the session ended: {:?}", end.reason));
                    }
                }
            }
        }
        Ok::<_, anyhow::Error>(())
    };
    match tokio::time::timeout(SESSION_LIMIT, read).await {
        Ok(result) => result?,
        Err(_) => problems.push("the session did not end in time".to_string()),
    }
    let running = match sleeping {
        Some(task) => task.await.unwrap_or(false),
        None => true,
    };
    if !running {
        problems.push("no sleep was running when the interrupt went out".to_string());
    }
    if kill.is_some() {
        match killed {
            None => problems.push("the server was not killed".to_string()),
            Some(false) => problems.push("no sleep was running when the server was killed".into()),
            Some(true) => {}
        }
        // I6: the command the server started runs in a process group of its own.
        let mut left = sleeps();
        for _ in 0..100 {
            if left.is_empty() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            left = sleeps();
        }
        if !left.is_empty() {
            problems.push(format!(
                "I6: the killed server's command still runs: {left:?}"
            ));
            for pid in left {
                procs::kill(pid as i32);
            }
        }
    }
    Ok((id, problems))
}

fn run(
    name: &str,
    scenario: &SessionScenario,
    binary: &Path,
    rg: &Path,
    out: &Path,
) -> Result<Vec<String>> {
    let as_run = scenario.as_run();
    opencode::prepare(&as_run, rg)?;
    let api = Arc::new(Mutex::new(as_run.stand_in(shared::seed(name))));
    let server = shared::serve(0, &api, shared::dump_path(out, name))?;
    let config = opencode::config(&as_run, server.port());
    let env = opencode::environment(&as_run, &config);
    let transcript = out.join(format!("{name}.jsonl"));
    let request = |transcript: Option<&Path>| {
        let mut request = RunRequest::default();
        request.binary = Some(binary.to_path_buf());
        request.cwd = Some(PROJECT.into());
        request.env = env.clone();
        request.normalizer.started =
            scenario.interrupt_after_ms.is_some() || scenario.kill_after_ms.is_some();
        request.transcript = transcript.map(Path::to_path_buf);
        request.timeout = Some(SESSION_LIMIT);
        request
    };
    let mut answers = scenario
        .answers
        .iter()
        .map(|a| decision(a))
        .collect::<Result<Vec<_>>>()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut problems = runtime.block_on(async {
        if scenario.resume {
            let (first, _) = scenario.prompts.split_at(1);
            let (id, mut problems) =
                session(request(None), first, &mut answers, None, None).await?;
            let Some(id) = id else {
                bail!("the first session named no id");
            };
            let mut second = request(Some(&transcript));
            second.resume = Some(id);
            let rest = &scenario.prompts[1..];
            let (_, more) = session(
                second,
                rest,
                &mut answers,
                scenario.interrupt_after_ms,
                None,
            )
            .await?;
            problems.extend(more);
            Ok(problems)
        } else {
            let request = request(Some(&transcript));
            let (_, problems) = session(
                request,
                &scenario.prompts,
                &mut answers,
                scenario.interrupt_after_ms,
                scenario.kill_after_ms.map(|ms| (ms, binary)),
            )
            .await?;
            Ok(problems)
        }
    })?;
    problems.extend(shared::stop(server, &api));
    if !answers.is_empty() {
        problems.push(format!(
            "{} scripted answers were not asked for",
            answers.len()
        ));
    }
    shared::clean(HOME)?;
    Ok(problems)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_session_scenario_loads() {
        let dir = fixtures::root().join("opencode/sessions/scenarios");
        for name in super::scenario_names(&[], &dir).unwrap() {
            let scenario = SessionScenario::load(&dir.join(format!("{name}.json"))).unwrap();
            for answer in &scenario.answers {
                decision(answer).unwrap();
            }
        }
    }

    #[test]
    fn neutral_hides_server_ids_only() {
        assert_eq!(
            neutral(r#"{"id":"per_e3b0c44298fc1c149afbf4c8","tool_use_id":"toolu_01"}"#),
            r#"{"id":"per_","tool_use_id":"toolu_01"}"#
        );
    }
}
