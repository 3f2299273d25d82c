//! `cargo xtask record --backend pi-session`: Pi sessions through `pi --mode rpc`, driven by
//! the library's own `PiHarness::session` with a scripted caller, against the Anthropic
//! Messages stand-in ([`super::anthropic`]), in the same `/home/pi` as `--backend pi`
//! ([`super::pi`]: its settings, `rg`, `fd` and offline environment).
//!
//! Scenarios live in `fixtures/pi-session/scenarios/NAME.json` ([`Scenario`]): the prompts (all
//! queued at once: the session runs them in order), whether to interrupt, close, or kill Pi's
//! process (SIGKILL from outside, as an agent's death) once a tool use starts, an optional
//! earlier session this one resumes, and the stand-in's answers (the
//! earlier session's first; a request's step is the number of assistant messages it carries,
//! so the turns of one conversation follow on).
//!
//! What a recording keeps, in `fixtures/pi-session/` (or `--out DIR`): `NAME.jsonl`, Pi's
//! standard output (what the normalizer reads, with `response` lines, PI16); `NAME.stderr`;
//! `NAME.client.jsonl`, every line the session wrote to Pi; `NAME.cmd`, how it ran;
//! `NAME.live.jsonl`, what only the live session knows (each turn's end, the errors the
//! session made itself, its end). The events are checked against the hand-reviewed
//! `NAME.expected.jsonl`, the live items against `NAME.live.jsonl` (a missing one is written,
//! to be reviewed by hand). Every process of Pi's seen during the session must be gone soon
//! after it ends (I6).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::Record;
use harness_agents_core::{Backend, EventBody, NormalizerConfig, OutcomeLine, RunRequest};
use harness_agents_pi::PiHarness;
use serde::Deserialize;
use serde_json::{Value, json};

use super::pi::{HOME, MODEL, PROJECT, SearchTools};
use super::procs::{Processes, family, kill};
use super::scenario::Turn;
use super::{Options, read, scenario_names, shared};

/// The longest a session's turn may take.
const TURN_LIMIT: Duration = Duration::from_secs(120);

/// One scripted session.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// Files of the project, by relative path.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The prompts, queued at the start.
    pub prompts: Vec<String>,
    /// Interrupt the turn this long after its first tool use starts (`started` events on).
    #[serde(default)]
    pub interrupt_after_started_ms: Option<u64>,
    /// Close the session this long after its first tool use starts.
    #[serde(default)]
    pub close_after_started_ms: Option<u64>,
    /// Kill Pi's process (SIGKILL) this long after the first tool use starts.
    #[serde(default)]
    pub kill_after_started_ms: Option<u64>,
    /// The prompts of an earlier session this one resumes; its lines are not kept.
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
        Ok(scenario)
    }

    /// The `--backend pi` scenario whose setup this one shares: every tool, its files, its
    /// stand-in's answers.
    fn setup(&self) -> super::pi::Scenario {
        super::pi::Scenario {
            about: self.about.clone(),
            prompt: String::new(),
            permission_mode: Some("bypassPermissions".to_string()),
            files: self.files.clone(),
            turns: self.turns.clone(),
            ..super::pi::Scenario::default()
        }
    }
}

/// Entry point of `cargo xtask record --backend pi-session`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("pi-session");
    let scenario_dir = dir.join("scenarios");
    let names = scenario_names(&options.names, &scenario_dir)?;
    let binary = match &options.binary {
        Some(path) => path.clone(),
        None => super::pi::install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(super::pi::PI_VERSION),
        )?,
    };
    let tools = SearchTools {
        rg: super::opencode::ripgrep(options)?,
        fd: super::pi::fd()?,
    };
    let out = super::Output::new(options, &dir)?;
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&scenario_dir.join(format!("{name}.json")))?;
        let (items, mut problems) = run(name, &scenario, &binary, &tools, out.path())
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
                "wrote {}: review it by hand against docs/pi.md",
                live_path.display()
            ));
        } else if without_session_id(&old_live) != without_session_id(&live) {
            problems.push(format!(
                "the live session differs from {}",
                live_path.display()
            ));
            std::fs::write(out.path().join(format!("{name}.live.jsonl")), &live)?;
        } else if old_live != live && !options.check {
            std::fs::write(&live_path, &live)?;
        }
        let expected = dir.join(format!("{name}.expected.jsonl"));
        let old = read(&expected);
        if old.is_empty() && !options.check {
            std::fs::write(&expected, &events)?;
            problems.push(format!(
                "wrote {}: review it by hand against docs/pi.md",
                expected.display()
            ));
        } else if without_session_id(&old) != without_session_id(&events) {
            problems.push(format!("the events differ from {}", expected.display()));
            std::fs::write(out.path().join(format!("{name}.events.jsonl")), &events)?;
        } else if old != events && !options.check {
            // The reviewed events again, but for the new recording's session id.
            std::fs::write(&expected, &events)?;
        }
        report.add(name, &scenario.about, problems);
    }
    report.finish("Pi sessions", out.path())
}

/// The events and the outcome line of a session's recorded lines, read as a session's stream
/// with `--cwd /home/pi/project`.
pub(crate) fn normalize(raw: &str, stderr: &str) -> String {
    let mut config = NormalizerConfig::with_cwd(PROJECT);
    config.session = true;
    let mut normalizer = PiHarness.normalizer(config);
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

/// `events` with the session id left out of every outcome and turn end: Pi makes a new one (a
/// UUID v7) each run.
fn without_session_id(events: &str) -> String {
    events
        .lines()
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(mut value)
                if value.get("kind").and_then(Value::as_str) == Some("outcome")
                    || value.get("turn_end").is_some() =>
            {
                if let Some(object) = value.as_object_mut() {
                    object.remove("session_id");
                }
                format!("{value}\n")
            }
            _ => format!("{line}\n"),
        })
        .collect()
}

/// What only the live session knows, as JSON lines: the errors it made itself (those the
/// transcript's `events` do not give), each turn's end, and the session's end.
fn live_json(items: &[SessionItem], events: &str) -> String {
    let offline: Vec<Value> = events
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

/// Pi's process among this process's descendants: the one running Node (the wrapper's `exec`
/// of Pi's script, which renames itself, so its command line does not say `pi`), not a zombie.
fn pi_process() -> Option<i32> {
    let ours = std::process::id() as i32;
    family(ours)
        .into_iter()
        .filter(|p| p.pid != ours && !p.zombie)
        .find(|p| {
            std::fs::read_link(format!("/proc/{}/exe", p.pid)).is_ok_and(|exe| {
                exe.file_name()
                    .is_some_and(|n| n == "node" || n == "nodejs")
            })
        })
        .map(|p| p.pid)
}

/// The caller's script: an interrupt, a close or a kill of Pi once a tool use starts, the end
/// of input after the last turn.
struct Caller {
    interrupt_after: Option<Duration>,
    close_after: Option<Duration>,
    kill_after: Option<Duration>,
    turns: u32,
    /// Pi's process and its descendants, as the session goes.
    seen: Processes,
    /// What went wrong.
    notes: Vec<String>,
}

impl Caller {
    fn new(turns: usize) -> Caller {
        Caller {
            interrupt_after: None,
            close_after: None,
            kill_after: None,
            turns: turns as u32,
            seen: Processes::default(),
            notes: Vec::new(),
        }
    }

    fn react(&mut self, handle: &SessionHandle, item: &SessionItem) {
        self.seen.snapshot(pi_process());
        match item {
            SessionItem::Event(event) if matches!(event.body, EventBody::Started { .. }) => {
                if let Some(after) = self.interrupt_after.take() {
                    std::thread::sleep(after);
                    let _ = handle.interrupt();
                }
                if let Some(after) = self.close_after.take() {
                    std::thread::sleep(after);
                    self.seen.snapshot(pi_process());
                    let _ = handle.close();
                }
                if let Some(after) = self.kill_after.take() {
                    std::thread::sleep(after);
                    // The running tool's process is Pi's child now: seen, so it must go too.
                    self.seen.snapshot(pi_process());
                    match pi_process() {
                        Some(pid) => kill(pid),
                        None => self.notes.push("kill: no process of Pi found".into()),
                    }
                }
            }
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
    binary: &Path,
    prompts: &[String],
    caller: &mut Caller,
    resume: Option<String>,
    transcript: &Path,
) -> Result<Vec<SessionItem>> {
    let mut request = RunRequest::new("");
    request.binary = Some(binary.to_path_buf());
    request.cwd = Some(PathBuf::from(PROJECT));
    request.model = Some(MODEL.to_string());
    request.permission_mode = Some("bypassPermissions".to_string());
    request.timeout = Some(TURN_LIMIT);
    request.resume = resume;
    request.transcript = Some(transcript.to_path_buf());
    request.normalizer.started = caller.interrupt_after.is_some()
        || caller.close_after.is_some()
        || caller.kill_after.is_some();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let items = runtime.block_on(async {
        let session = PiHarness.session(request).await?;
        for prompt in prompts {
            let _ = session.prompt(prompt.clone());
        }
        let items =
            fixtures::live::drive_session(session, |handle, item| caller.react(handle, item)).await;
        Ok::<_, harness_agents_core::RunError>(items)
    })?;
    Ok(items)
}

/// The session's id, as its first turn's end or its end names it.
fn session_id(items: &[SessionItem]) -> Option<String> {
    items.iter().find_map(|item| match item {
        SessionItem::TurnEnd(outcome) => outcome.session_id.clone(),
        SessionItem::Ended(end) => end.outcome.session_id.clone(),
        SessionItem::Event(_) => None,
    })
}

/// Writes the `pi` wrapper a session starts: the scenario's environment and nothing of ours,
/// and every line the session writes appended to `client`. The wrapper execs Pi, so the
/// process the session started is Pi itself (a kill from outside then ends it as an agent's
/// death would, and nothing of the wrapper's holds the session's pipes open); the copy of its
/// input runs beside it. Only the variable that marks the session's processes (`HARNESS_RUN_*`,
/// `RunTree`) passes through, as [`shared::clean_env_wrapper`] lets it: Pi starts each `bash`
/// call in a group of its own, and without the mark a call still running when Pi dies would be
/// found by nothing and left running.
fn wrapper(path: &Path, pi: &Path, env: &BTreeMap<String, String>, client: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let mut script =
        String::from("#!/bin/bash\nexec env -i $(env | grep -E '^HARNESS_RUN_[A-Za-z0-9_]+=1$')");
    for (key, value) in env {
        script.push_str(&format!(
            " {}",
            shared::shlex_quote(&format!("{key}={value}"))
        ));
    }
    script.push_str(&format!(
        " {} \"$@\" < <(tee -a {})\n",
        shared::shlex_quote(&pi.display().to_string()),
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
    pi: &Path,
    tools: &SearchTools,
    out: &Path,
) -> Result<(Vec<SessionItem>, Vec<String>)> {
    let setup = super::pi::prepare(name, &scenario.setup(), tools, shared::dump_path(out, name))?;
    let env = setup.env.clone();
    let scratch = tempfile::tempdir()?;
    let client = out.join(format!("{name}.client.jsonl"));
    let _ = std::fs::remove_file(&client);
    let started = Instant::now();
    let mut resume = None;
    if let Some(earlier) = &scenario.resume_after {
        let throwaway = scratch.path().join("earlier.client.jsonl");
        let binary = scratch.path().join("pi-earlier");
        wrapper(&binary, pi, &env, &throwaway)?;
        let mut caller = Caller::new(earlier.len());
        let transcript = scratch.path().join("earlier.transcript");
        resume = session_id(&session(&binary, earlier, &mut caller, None, &transcript)?);
        if resume.is_none() {
            bail!("the earlier session named no session id");
        }
    }
    let binary = scratch.path().join("pi");
    wrapper(&binary, pi, &env, &client)?;
    let mut caller = Caller::new(scenario.prompts.len());
    caller.interrupt_after = scenario
        .interrupt_after_started_ms
        .map(Duration::from_millis);
    caller.close_after = scenario.close_after_started_ms.map(Duration::from_millis);
    caller.kill_after = scenario.kill_after_started_ms.map(Duration::from_millis);
    let transcript = scratch.path().join("transcript");
    let items = session(
        &binary,
        &scenario.prompts,
        &mut caller,
        resume.clone(),
        &transcript,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let mut notes = caller.notes;
    if caller.seen.len() == 0 {
        notes.push("no process of Pi was seen".into());
    }
    notes.extend(caller.seen.outlived());
    notes.extend(shared::stop(setup.server, &setup.api));
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
    let mut request = RunRequest::new("");
    request.model = Some(MODEL.to_string());
    request.permission_mode = Some("bypassPermissions".to_string());
    request.resume = resume.map(|_| "SESSION_ID".to_string());
    let mut argv = vec![Value::from("pi")];
    argv.extend(
        harness_agents_pi::session_args(&request)
            .into_iter()
            .map(Value::from),
    );
    let mut cmd = json!({"cwd": PROJECT, "env": env, "argv": argv, "prompts": scenario.prompts,
        "resume_after": scenario.resume_after});
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
    fn every_committed_pi_session_scenario_loads() {
        let dir = fixtures::root().join("pi-session/scenarios");
        let mut count = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                Scenario::load(&path).unwrap();
                count += 1;
            }
        }
        assert_eq!(
            count, 6,
            "one scenario per recording in fixtures/pi-session"
        );
    }
}
