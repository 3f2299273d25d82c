//! `cargo xtask record --backend claude-session`: recordings of real Claude Code sessions, each
//! driven through the library's own session (`ClaudeHarness::session`, CS5-CS10 of
//! `docs/claude-session.md`) by a caller scripted per scenario, against the Messages API
//! stand-in ([`super::anthropic`]).
//!
//! Scenarios live in `fixtures/claude-session/scenarios/NAME.json` ([`SessionScenario`]): the
//! project's files and the stand-in's turns as in `fixtures/claude/scenarios/`, then one caller
//! script per session. A script is a list of reactions: on the session's opening, on the Nth
//! permission request, on the end of turn N, do these actions (a prompt, an answer, an
//! interrupt, a pause, `close`, the end of the caller's input, or a kill of the agent's process
//! from outside). A second session resumes the first's (`RunRequest::resume`) in a new process.
//!
//! Each session runs with `--permission-mode default` (so requests reach the caller) and
//! `RunRequest::transcript` set: the transcript is the recording, `NAME.jsonl` (a second
//! session's `NAME.resumed.jsonl`). What only the live session knows, each turn's outcome, the
//! events the session made itself and its end, goes to `NAME.live.jsonl` (`NAME.resumed.live.jsonl`).
//! Then the recorder checks, for each session:
//!
//! - I7: the transcript, normalized offline, gives exactly the live session's events, the
//!   session's own aside;
//! - the events against the hand-reviewed `NAME.expected.jsonl` (ids, durations and costs
//!   neutralized), or with `--check` against the committed recording; the live outcomes
//!   against the committed `NAME.live.jsonl`;
//! - I6: every process of the agent (snapshot as the session goes, the agent and all its
//!   descendants) is gone once the session has ended;
//! - the project files the scenario names exist, or do not, afterwards.
//!
//! Each session is bounded by [`SESSION_LIMIT`] (then dropped, which kills its processes) and
//! each turn by [`TURN_LIMIT`]. The agent runs behind a wrapper that clears its environment,
//! in a throwaway `HOME` of its own ([`HOME`]), so a Claude corpus recording beside it does not
//! meet it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use futures::StreamExt;
use harness_agents_claude::{ClaudeHarness, ClaudeNormalizer};
use harness_agents_core::session::{Session, SessionItem};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{Backend, Decision, EventBody, OutcomeLine, RunRequest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::anthropic::{Anthropic, Steps};
use super::procs::{Processes, kill, table};
use super::scenario::{Scenario, Turn};
use super::{Options, claude, drift, read, scenario_names, shared};

/// The throwaway HOME of a session (not the Claude corpus's, so both can record at once).
const HOME: &str = "/home/cs";
/// The project the agent works in.
const PROJECT: &str = "/home/cs/project";
/// The agent's temporary folder.
const TMP: &str = "/tmp/claude-cs";
/// The longest one session may run.
const SESSION_LIMIT: Duration = Duration::from_secs(120);
/// The longest one turn may run (`RunRequest::timeout`).
const TURN_LIMIT: Duration = Duration::from_secs(60);

/// One scripted session scenario.
///
/// ```json
/// {"about": "a request allowed",
///  "turns": [{"blocks": [{"type": "tool_use", "id": "toolu_01", "name": "Bash",
///                         "input": {"command": "touch made.txt"}}]},
///            {"blocks": [{"type": "text", "text": "Made it."}]}],
///  "sessions": [{"caller": [
///     {"on": "open", "then": [{"prompt": "Make a file"}]},
///     {"on": {"permission": 1}, "then": [{"answer": "allow"}]},
///     {"on": {"turn_end": 1}, "then": ["end_input"]}]}],
///  "files_after": {"made.txt": true}}
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionScenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// Files of the scratch project, by path relative to it.
    #[serde(default)]
    pub files: BTreeMap<String, String>,
    /// The answer to requests without tools.
    #[serde(default)]
    pub side_answer: Option<String>,
    /// The stand-in's answers, as in a corpus scenario; one script for every session of the
    /// scenario, so a resumed session's requests take the steps after the first's.
    pub turns: Vec<Turn>,
    /// The sessions, one process each, in order; the second resumes the first's session.
    pub sessions: Vec<SessionScript>,
    /// Project files that must exist (`true`) or not (`false`) once every session has ended.
    #[serde(default)]
    pub files_after: BTreeMap<String, bool>,
}

/// The caller of one session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionScript {
    /// What the caller does, and when.
    pub caller: Vec<Reaction>,
}

/// Actions taken when something happens in the session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reaction {
    /// When.
    pub on: On,
    /// What, in order.
    pub then: Vec<Action>,
}

/// What a reaction waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    /// The session has opened.
    Open,
    /// The Nth `permission` event of the session (1, 2, ...) has arrived.
    Permission(u32),
    /// Turn N has ended.
    TurnEnd(u32),
}

/// One thing the caller does.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Send a prompt.
    Prompt(String),
    /// Answer the permission request that triggered the reaction: `allow` or `allow_always`.
    Answer(String),
    /// Deny the permission request that triggered the reaction, with this message.
    Deny(String),
    /// Interrupt the running turn.
    Interrupt,
    /// Close the session.
    Close,
    /// End the caller's input.
    EndInput,
    /// Wait this many milliseconds (a tool runs meanwhile).
    WaitMs(u64),
    /// Kill the agent's process with SIGKILL, from outside the library.
    Kill,
}

impl SessionScenario {
    fn load(path: &Path) -> Result<SessionScenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let scenario: SessionScenario =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
        scenario
            .validate()
            .with_context(|| format!("checking {}", path.display()))?;
        Ok(scenario)
    }

    /// The rules a scenario must follow to be run safely and mean one thing.
    fn validate(&self) -> Result<()> {
        if self.sessions.is_empty() || self.sessions.len() > 2 {
            bail!("a scenario has one session, or two when the second resumes the first");
        }
        shared::check_files(
            Path::new("scenario"),
            self.files.keys().chain(self.files_after.keys()),
        )?;
        self.stand_in().validate()?;
        for session in &self.sessions {
            for reaction in &session.caller {
                for action in &reaction.then {
                    match action {
                        Action::Answer(name) => {
                            if !matches!(reaction.on, On::Permission(_)) {
                                bail!("an answer needs a permission request to answer");
                            }
                            match Decision::from_name(name) {
                                Some(Decision::Allow | Decision::AllowAlways) => {}
                                _ => bail!("answer {name:?}: allow or allow_always (deny: `deny`)"),
                            }
                        }
                        Action::Deny(_) if !matches!(reaction.on, On::Permission(_)) => {
                            bail!("a denial needs a permission request to answer")
                        }
                        Action::WaitMs(ms) if *ms > 10_000 => bail!("wait_ms above ten seconds"),
                        _ => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// The corpus scenario the stand-in plays.
    fn stand_in(&self) -> Scenario {
        Scenario {
            about: self.about.clone(),
            files: self.files.clone(),
            side_answer: self.side_answer.clone(),
            turns: self.turns.clone(),
            ..Scenario::default()
        }
    }
}

/// The file stem of session `index` of scenario `name`: `NAME`, then `NAME.resumed`.
fn stem(name: &str, index: usize) -> String {
    if index == 0 {
        name.to_string()
    } else {
        format!("{name}.resumed")
    }
}

/// Entry point of `cargo xtask record --backend claude-session`.
pub(super) fn record(options: &Options) -> Result<()> {
    let dir = fixtures::root().join("claude-session");
    let names = scenario_names(&options.names, &dir.join("scenarios"))?;
    let claude = match &options.binary {
        Some(path) => path.clone(),
        None => claude::install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(claude::CLAUDE_VERSION),
        )?,
    };
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = SessionScenario::load(&dir.join("scenarios").join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recordings.
        let old: Vec<(String, String)> = (0..scenario.sessions.len())
            .map(|i| {
                let stem = stem(name, i);
                (
                    read(&dir.join(format!("{stem}.jsonl"))),
                    read(&dir.join(format!("{stem}.live.jsonl"))),
                )
            })
            .collect();
        let mut problems =
            run(name, &scenario, &claude, out).with_context(|| format!("recording {name}"))?;
        for (index, (old_raw, old_live)) in old.iter().enumerate() {
            let stem = stem(name, index);
            let transcript = read(&out.join(format!("{stem}.jsonl")));
            let live = read(&out.join(format!("{stem}.live.jsonl")));
            let (events, raw) = normalize(&transcript)?;
            let old_stdout = stdout_of(old_raw);
            if options.check {
                if old_raw.is_empty() {
                    problems.push(format!("no committed recording of {stem}"));
                    continue;
                }
                let (old_events, _) = normalize(old_raw)?;
                let shapes = drift::shape_drift(&drift::shape(&old_stdout), &drift::shape(&raw));
                problems.extend(shapes.into_iter().map(|p| format!("{stem}: {p}")));
                problems.extend(
                    drift::event_drift(&old_events, &old_stdout, &events, &raw)
                        .into_iter()
                        .map(|p| format!("{stem}: drift: {p}")),
                );
            } else {
                problems.extend(
                    shared::against_expected(
                        &dir,
                        out,
                        &stem,
                        false,
                        &old_stdout,
                        (&events, &raw),
                        &mut report.unreviewed,
                    )?
                    .into_iter()
                    .map(|p| format!("{stem}: {p}")),
                );
            }
            if !old_live.is_empty() && old_live != &live {
                problems.push(format!(
                    "{stem}: the live session's outcomes differ:\n{old_live}now:\n{live}"
                ));
            }
        }
        report.add(name, &scenario.about, problems);
    }
    report.finish("Claude Code session", out)
}

/// The `out` records of a transcript, one line each: the agent's standard output, for the
/// shape and the ids of a recording.
fn stdout_of(transcript: &str) -> String {
    transcript
        .lines()
        .skip(1)
        .filter_map(|line| line.strip_prefix("out "))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// What `harness normalize` prints for a transcript (with the settings its header names), and
/// the agent's standard output in it.
fn normalize(transcript: &str) -> Result<(String, String)> {
    let (first, rest) = transcript.split_once('\n').unwrap_or((transcript, ""));
    let header = match Header::parse(first.as_bytes()) {
        Some(Ok(header)) => header,
        Some(Err(e)) => bail!("{e}"),
        None => bail!("not a transcript: no header"),
    };
    let mut normalizer = ClaudeNormalizer::new(header.config());
    let mut events = Vec::new();
    replay(rest.as_bytes(), &mut normalizer, &mut events)?;
    let outcome = harness_agents_core::Normalizer::finish(&mut normalizer, &mut events);
    let mut text = String::new();
    for event in &events {
        text.push_str(&serde_json::to_string(event)?);
        text.push('\n');
    }
    text.push_str(&serde_json::to_string(&OutcomeLine::new(&outcome))?);
    text.push('\n');
    Ok((text, stdout_of(transcript)))
}

/// The environment of every session: the Claude corpus's, in this recorder's HOME.
fn environment(port: u16) -> BTreeMap<String, String> {
    claude::environment_in(HOME, TMP, &Scenario::default(), port)
}

/// Runs a scenario's sessions; writes their transcripts, live outcomes and the `.cmd` file
/// into `out`; returns what went wrong.
fn run(name: &str, scenario: &SessionScenario, claude: &Path, out: &Path) -> Result<Vec<String>> {
    shared::clean(HOME)?;
    shared::fresh_home(HOME, PROJECT)?;
    if Path::new(TMP).exists() {
        std::fs::remove_dir_all(TMP)?;
    }
    std::fs::create_dir_all(TMP)?;
    shared::write_files(Path::new(PROJECT), &scenario.files)?;
    let api = Arc::new(Mutex::new(Anthropic::new(
        &scenario.stand_in(),
        Steps::AssistantMessages,
        shared::seed(name),
    )));
    let server = shared::serve(0, &api, shared::dump_path(out, name))?;
    let env = environment(server.port());
    let wrapper = out.join(format!("{name}.agent.sh"));
    shared::clean_env_wrapper(&wrapper, claude, &env, None)?;
    let agent = std::fs::canonicalize(claude)?;

    let mut problems = Vec::new();
    let mut session_id = None;
    let started = Instant::now();
    for (index, script) in scenario.sessions.iter().enumerate() {
        let stem = stem(name, index);
        let mut request = RunRequest::default();
        request.binary = Some(wrapper.clone());
        request.cwd = Some(PathBuf::from(PROJECT));
        request.permission_mode = Some("default".into());
        request.timeout = Some(TURN_LIMIT);
        request.transcript = Some(out.join(format!("{stem}.jsonl")));
        if index > 0 {
            let Some(id) = session_id.clone() else {
                problems.push(format!("{stem}: the first session named no session id"));
                break;
            };
            request.resume = Some(id);
        }
        // A runtime per session: dropping it ends the driver's task, so a session cut short
        // by the limit has its transcript written out before it is read.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let (items, notes) = runtime.block_on(async {
            let session = ClaudeHarness.session(request).await?;
            Ok::<_, anyhow::Error>(drive(session, &script.caller, &agent).await)
        })?;
        drop(runtime);
        problems.extend(notes.into_iter().map(|n| format!("{stem}: {n}")));
        if let Some(SessionItem::Ended(end)) = items.last() {
            session_id = end.outcome.session_id.clone().or(session_id);
        }
        let transcript = read(&out.join(format!("{stem}.jsonl")));
        let (offline, _) = normalize(&transcript)?;
        let (live, made) = split_live(&items, &offline);
        problems.extend(live.into_iter().map(|p| format!("{stem}: I7: {p}")));
        let mut text = String::new();
        for value in made {
            text.push_str(&value.to_string());
            text.push('\n');
        }
        std::fs::write(out.join(format!("{stem}.live.jsonl")), text)?;
    }
    let seconds = started.elapsed().as_secs_f64();
    problems.extend(shared::stop(server, &api));
    for (file, exists) in &scenario.files_after {
        if Path::new(PROJECT).join(file).exists() != *exists {
            let what = if *exists { "missing" } else { "present" };
            problems.push(format!("project file {file} is {what} after the session"));
        }
    }
    shared::clean(HOME)?;
    if Path::new(TMP).exists() {
        std::fs::remove_dir_all(TMP)?;
    }
    std::fs::remove_file(&wrapper)?;
    let mut env = env;
    env.insert("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:PORT".into());
    let cmd = json!({
        "cwd": PROJECT,
        "env": env,
        "library": "ClaudeHarness::session",
        "permission_mode": "default",
        "sessions": scenario.sessions.len(),
    });
    shared::write_cmd(out, name, &cmd, Some(&json!({"seconds": seconds.round()})))?;
    Ok(problems)
}

/// Reads a session to its end, the caller reacting as `script` says; returns every item and
/// what went wrong (a session past [`SESSION_LIMIT`], a process that outlived it).
async fn drive(
    mut session: Session,
    script: &[Reaction],
    agent: &Path,
) -> (Vec<SessionItem>, Vec<String>) {
    let handle = session.handle();
    let mut notes = Vec::new();
    let mut seen = Processes::default();
    let mut items = Vec::new();
    let mut permissions = 0;
    let deadline = tokio::time::Instant::now() + SESSION_LIMIT;
    let mut trigger = Some((On::Open, None::<String>));
    loop {
        if let Some((on, request)) = trigger.take() {
            for reaction in script.iter().filter(|r| r.on == on) {
                for action in &reaction.then {
                    seen.snapshot(agent_pid(agent));
                    let sent = match action {
                        Action::Prompt(text) => handle.prompt(text.clone()),
                        Action::Answer(name) => {
                            let decision = Decision::from_name(name).unwrap_or(Decision::Allow);
                            handle.answer(request.clone().unwrap_or_default(), decision, None)
                        }
                        Action::Deny(message) => handle.answer(
                            request.clone().unwrap_or_default(),
                            Decision::Deny,
                            Some(message.clone()),
                        ),
                        Action::Interrupt => handle.interrupt(),
                        Action::Close => handle.close(),
                        Action::EndInput => handle.end_input(),
                        Action::WaitMs(ms) => {
                            tokio::time::sleep(Duration::from_millis(*ms)).await;
                            Ok(())
                        }
                        Action::Kill => {
                            match agent_pid(agent) {
                                Some(pid) => kill(pid),
                                None => notes.push("kill: no agent process found".into()),
                            }
                            Ok(())
                        }
                    };
                    if sent.is_err() {
                        notes.push(format!("{action:?}: the session had already ended"));
                    }
                }
            }
        }
        let item = match tokio::time::timeout_at(deadline, session.next()).await {
            Ok(Some(item)) => item,
            Ok(None) => break,
            Err(_) => {
                notes.push(format!(
                    "the session did not end within {}s",
                    SESSION_LIMIT.as_secs()
                ));
                break;
            }
        };
        seen.snapshot(agent_pid(agent));
        trigger = match &item {
            SessionItem::Event(event) => match &event.body {
                EventBody::Permission { id, .. } => {
                    permissions += 1;
                    Some((On::Permission(permissions), Some(id.clone())))
                }
                _ => None,
            },
            SessionItem::TurnEnd(outcome) => outcome.turn.map(|n| (On::TurnEnd(n), None)),
            SessionItem::Ended(_) => None,
        };
        items.push(item);
    }
    // Dropping the session stops whatever is left of it.
    drop(session);
    if !matches!(items.last(), Some(SessionItem::Ended(_))) {
        notes.push("the session's stream ended without its end".into());
    }
    notes.extend(seen.outlived());
    (items, notes)
}

/// Splits a live session's items against its transcript's events (`offline`, as `harness
/// normalize` prints them): what the live session gave beyond those events (each turn's
/// outcome, the events the session made itself, its end) as JSON, and the differences (I7):
/// a live event the transcript does not give that the session could not have made, or an
/// event of the transcript the live session did not give.
fn split_live(items: &[SessionItem], offline: &str) -> (Vec<String>, Vec<Value>) {
    let mut expected: Vec<Value> = offline
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    expected.pop(); // the outcome line
    let mut at = 0;
    let (mut problems, mut made) = (Vec::new(), Vec::new());
    for item in items {
        match item {
            SessionItem::Event(event) => {
                let value = serde_json::to_value(event).unwrap_or_default();
                if expected.get(at) == Some(&value) {
                    at += 1;
                    continue;
                }
                let own = event.line.is_none()
                    && match &event.body {
                        EventBody::Error { .. } => true,
                        EventBody::Warning { source, .. } => {
                            *source == harness_agents_core::WarningSource::Input
                        }
                        _ => false,
                    };
                if !own {
                    problems.push(format!(
                        "a live event the transcript does not give: {value}"
                    ));
                }
                made.push(value);
            }
            SessionItem::TurnEnd(_) | SessionItem::Ended(_) => {
                made.extend(fixtures::live::session_json(std::slice::from_ref(item)));
            }
        }
    }
    for missing in &expected[at..] {
        problems.push(format!(
            "an event of the transcript the live session did not give: {missing}"
        ));
    }
    (problems, made)
}

/// The agent's process: our child running the Claude Code binary (the wrapper execs it).
fn agent_pid(agent: &Path) -> Option<i32> {
    let ours = std::process::id() as i32;
    table()
        .into_iter()
        .find(|p| {
            p.ppid == ours
                && std::fs::read_link(format!("/proc/{}/exe", p.pid)).is_ok_and(|e| e == agent)
        })
        .map(|p| p.pid)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_session_scenario_loads_and_has_its_recordings() {
        let dir = fixtures::root().join("claude-session");
        let names = scenario_names(&[], &dir.join("scenarios")).unwrap();
        assert!(names.len() >= 10, "{names:?}");
        for name in &names {
            let scenario =
                SessionScenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            for index in 0..scenario.sessions.len() {
                let stem = stem(name, index);
                for file in ["jsonl", "expected.jsonl", "live.jsonl"] {
                    let path = dir.join(format!("{stem}.{file}"));
                    assert!(path.exists(), "{}", path.display());
                }
            }
        }
    }

    #[test]
    fn a_caller_script_reads_as_written() {
        let scenario: SessionScenario = serde_json::from_value(json!({
            "turns": [],
            "sessions": [{"caller": [
                {"on": "open", "then": [{"prompt": "hi"}, "end_input"]},
                {"on": {"permission": 2}, "then": [{"deny": "no"}, {"wait_ms": 5}, "kill"]},
                {"on": {"turn_end": 1}, "then": ["interrupt", "close"]}
            ]}]
        }))
        .unwrap();
        scenario.validate().unwrap();
        let caller = &scenario.sessions[0].caller;
        assert_eq!(
            caller[0].then,
            [Action::Prompt("hi".into()), Action::EndInput]
        );
        assert_eq!(caller[1].on, On::Permission(2));
        assert_eq!(
            caller[1].then,
            [Action::Deny("no".into()), Action::WaitMs(5), Action::Kill]
        );
        assert_eq!(caller[2].on, On::TurnEnd(1));
        assert_eq!(caller[2].then, [Action::Interrupt, Action::Close]);
    }

    #[test]
    fn scripts_that_cannot_mean_one_thing_are_refused() {
        let refused = |value: Value| {
            serde_json::from_value::<SessionScenario>(value)
                .map_err(anyhow::Error::from)
                .and_then(|s| s.validate())
                .is_err()
        };
        let open = |action: Value| json!({"turns": [], "sessions": [{"caller": [{"on": "open", "then": [action]}]}]});
        assert!(refused(open(json!({"answer": "allow"}))));
        assert!(refused(open(json!({"deny": "no"}))));
        assert!(refused(open(json!({"wait_ms": 60_000}))));
        assert!(refused(json!({"turns": [], "sessions": []})));
        assert!(refused(
            json!({"turns": [], "sessions": [{"caller": []}], "files_after": {"../x": true}})
        ));
        assert!(!refused(open(json!({"prompt": "hi"}))));
    }

    #[test]
    fn a_transcripts_stdout_is_its_out_records() {
        let transcript = "{\"harness_transcript\":1,\"backend\":\"claude\",\"session\":true}\nout {\"a\":1}\nerr oops\nout {\"b\":2}\n";
        assert_eq!(stdout_of(transcript), "{\"a\":1}\n{\"b\":2}\n");
        let (events, raw) = normalize(transcript).unwrap();
        assert_eq!(raw, "{\"a\":1}\n{\"b\":2}\n");
        assert!(
            events
                .lines()
                .last()
                .unwrap()
                .contains("\"kind\":\"outcome\"")
        );
        assert!(normalize("{\"a\":1}\n").is_err());
    }

    #[test]
    fn the_session_files_are_named_by_session() {
        assert_eq!(stem("r_resume", 0), "r_resume");
        assert_eq!(stem("r_resume", 1), "r_resume.resumed");
    }
}
