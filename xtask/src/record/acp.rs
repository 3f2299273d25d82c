//! `cargo xtask record --backend acp`: ACP transcripts of real agents, each driven end to end
//! by `harness run --backend acp`'s own code path (`AcpHarness::run`) against a loopback
//! stand-in: Gemini CLI (`gemini --acp --skip-trust`) against the Gemini API stand-in
//! ([`super::gemini_api`]), opencode (`opencode acp --pure --cwd PROJECT`) against the
//! Anthropic one ([`super::anthropic`]), the GitHub Copilot CLI (`copilot --acp
//! --no-auto-update`) against the chat-completions one ([`super::chat`]), set up as
//! [`super::copilot`] sets it up, and Qwen Code (`qwen --acp`) against the same stand-in, set
//! up by [`super::qwen_session`].
//!
//! Scenarios live in `fixtures/acp/scenarios/NAME.json` ([`Scenario`]): the agent, the
//! scenario of that agent's own corpus whose prompt, files and model turns are reused
//! (`fixtures/gemini/scenarios/FROM.json` or `fixtures/opencode/scenarios/FROM.json`, set up
//! exactly as their recorders do: the same HOME, settings or configuration, environment and
//! offline switches), the arguments after the agent's ACP command, and the permission mode the
//! client answers permission requests with. The agent is started through a wrapper that
//! clears the environment (only the scenario's variables reach it) and sends its standard
//! error to `NAME.stderr`.
//!
//! Each run writes its transcript (`RunRequest::transcript`, the A1 format) as `NAME.jsonl`,
//! the agent's standard error as `NAME.stderr`, and `NAME.cmd` (the agent's command line,
//! environment, directory, permission mode; last line the exit status and seconds). The
//! transcript normalized offline must give the live run's events (A1; the agent's stderr was
//! not the live run's, so its warnings are left out of that comparison); then the events are
//! compared with the hand-reviewed `NAME.expected.jsonl` (ids, durations and costs
//! neutralized), or written to `NAME.unreviewed.jsonl` for a new scenario. `--check` records
//! into a temporary folder and reports drift only. The agents are the versions the gemini and
//! opencode corpora were recorded with ([`super::gemini::GEMINI_VERSION`],
//! [`super::opencode::OPENCODE_VERSION`]), installed with npm into `target/record-cache/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use harness_agents_acp::{AcpHarness, AcpNormalizer};
use harness_agents_core::{NormalizerConfig, RunRequest};
use serde::Deserialize;
use serde_json::{Value, json};

use super::gemini;
use super::opencode;
use super::shared::without_stderr;
use super::{Options, drift, read, scenario_names, shared};
use super::{copilot, copilot_session, qwen, qwen_session};

/// Which ACP agent a scenario drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    /// Gemini CLI, `gemini --acp --skip-trust`.
    Gemini,
    /// opencode, `opencode acp --pure --cwd PROJECT`.
    Opencode,
    /// The GitHub Copilot CLI, `copilot --acp --no-auto-update`.
    Copilot,
    /// Qwen Code, `qwen --acp`.
    Qwen,
}

/// One recorded ACP run.
///
/// ```json
/// {"about": "a read", "agent": "gemini", "from": "c2_read_whole_absolute",
///  "args": ["--yolo"], "permission_mode": "bypassPermissions"}
/// ```
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What the scenario exercises, for people.
    #[serde(default)]
    pub about: String,
    /// The agent.
    pub agent: Agent,
    /// The scenario of the agent's own corpus to reuse (prompt, files, model turns).
    pub from: String,
    /// Arguments after the agent's ACP command.
    #[serde(default)]
    pub args: Vec<String>,
    /// The permission mode the client answers permission requests with (A13).
    #[serde(default)]
    pub permission_mode: Option<String>,
    /// The model's turns, replacing the `from` scenario's (Qwen's scenarios only: its turns
    /// are plain JSON the ACP run may need fewer of, e.g. none after a rejected call).
    #[serde(default)]
    pub turns: Option<Value>,
}

impl Scenario {
    fn load(path: &Path) -> Result<Scenario> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
    }

    /// The agent's ACP command after its binary.
    fn command(&self) -> Vec<String> {
        let fixed: &[&str] = match self.agent {
            Agent::Gemini => &["--acp", "--skip-trust"],
            Agent::Opencode => &["acp", "--pure", "--cwd", opencode::PROJECT],
            Agent::Copilot => &copilot_session::COMMAND,
            Agent::Qwen => &qwen_session::COMMAND,
        };
        fixed
            .iter()
            .map(|a| a.to_string())
            .chain(self.args.iter().cloned())
            .collect()
    }

    fn project(&self) -> &'static str {
        match self.agent {
            Agent::Gemini => gemini::PROJECT,
            Agent::Opencode => opencode::PROJECT,
            Agent::Copilot => copilot::PROJECT,
            Agent::Qwen => qwen::PROJECT,
        }
    }
}

/// The agents' binaries, installed once each when a scenario needs it.
#[derive(Default)]
struct Binaries {
    gemini: Option<PathBuf>,
    opencode: Option<PathBuf>,
    qwen: Option<PathBuf>,
    rg: Option<PathBuf>,
}

impl Binaries {
    fn gemini(&mut self) -> Result<PathBuf> {
        if self.gemini.is_none() {
            let cache = super::cache_dir();
            self.gemini = Some(gemini::install(&cache, gemini::GEMINI_VERSION)?);
        }
        self.gemini.clone().context("no gemini")
    }

    fn opencode(&mut self) -> Result<PathBuf> {
        if self.opencode.is_none() {
            let cache = super::cache_dir();
            self.opencode = Some(opencode::install(&cache, opencode::OPENCODE_VERSION)?);
        }
        self.opencode.clone().context("no opencode")
    }

    fn qwen(&mut self) -> Result<PathBuf> {
        if self.qwen.is_none() {
            self.qwen = Some(qwen_session::binary()?);
        }
        self.qwen.clone().context("no qwen")
    }
}

/// Entry point of `cargo xtask record --backend acp`.
pub(super) fn record(options: &Options) -> Result<()> {
    if options.binary.is_some() || options.version.is_some() {
        bail!(
            "--backend acp records the gemini, opencode and qwen corpora's versions; it takes no binary or --version"
        );
    }
    let dir = fixtures::root().join("acp");
    let names = scenario_names(&options.names, &dir.join("scenarios"))?;
    let output = super::Output::new(options, &dir)?;
    let out = output.path();
    let mut binaries = Binaries::default();
    let mut report = super::Report::new(options.check);
    for name in &names {
        let scenario = Scenario::load(&dir.join("scenarios").join(format!("{name}.json")))?;
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&dir.join(format!("{name}.jsonl")));
        let (binary, rg) = match scenario.agent {
            Agent::Gemini => (binaries.gemini()?, None),
            Agent::Qwen => (binaries.qwen()?, None),
            Agent::Opencode => {
                if binaries.rg.is_none() {
                    binaries.rg = Some(opencode::ripgrep(options)?);
                }
                (binaries.opencode()?, binaries.rg.clone())
            }
            Agent::Copilot => (copilot_session::binary()?, None),
        };
        let (live, mut problems) = run(name, &scenario, &binary, rg.as_deref(), out)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let events = normalize(&raw, &read(&out.join(format!("{name}.stderr"))));
        // A1: the transcript gives the live run's events (the runner's own errors aside).
        let offline = without_stderr(&events);
        let live = without_stderr(&live);
        if strip_exit(&offline) != strip_exit(&live) {
            problems.push(format!(
                "the transcript normalizes to other events than the live run's:\n{offline}\nlive:\n{live}"
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
    report.finish("ACP", out)
}

/// The outcome line without its `exit_code` (the live runner's alone) and the events the
/// runner adds itself (a timeout, a stop), so a live run and its transcript compare.
fn strip_exit(events: &str) -> String {
    let mut out = String::new();
    for line in events.lines() {
        let Ok(mut value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(map) = value.as_object_mut() {
            map.remove("exit_code");
        }
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// The events `harness normalize --backend acp` prints (the transcript names its directory).
fn normalize(raw: &str, stderr: &str) -> String {
    drift::normalize_with(
        AcpNormalizer::new(NormalizerConfig::default()),
        raw.as_bytes(),
        stderr.as_bytes(),
    )
}

/// Stops the stand-in's server: what the stand-in noticed.
type Stop = Box<dyn FnOnce() -> Vec<String>>;

/// Runs one scenario live through `AcpHarness::run`; returns the live events and outcome (as
/// `harness run --format jsonl` prints them) and what the stand-in noticed.
fn run(
    name: &str,
    scenario: &Scenario,
    binary: &Path,
    rg: Option<&Path>,
    out: &Path,
) -> Result<(String, Vec<String>)> {
    let stderr = out.join(format!("{name}.stderr"));
    std::fs::write(&stderr, "")?;
    let wrapper_path = out.join(format!("{name}.agent.sh"));
    let (env, stop): (BTreeMap<String, String>, Stop) = match scenario.agent {
        Agent::Gemini => {
            let base = fixtures::root().join("gemini/scenarios");
            let inner = gemini::Scenario::load(&base.join(format!("{}.json", scenario.from)))?;
            let setup = gemini::prepare(&inner, None)?;
            let (server, api) = (setup.server, setup.api);
            (setup.env, Box::new(move || shared::stop(server, &api)))
        }
        Agent::Opencode => {
            let base = fixtures::root().join("opencode/scenarios");
            let inner = opencode::Scenario::load(&base.join(format!("{}.json", scenario.from)))?;
            opencode::prepare(&inner, rg.context("no rg")?)?;
            let api = Arc::new(Mutex::new(inner.stand_in(shared::seed(&scenario.from))));
            let server = shared::serve(0, &api, None)?;
            let config = opencode::config(&inner, server.port());
            let env = opencode::environment(&inner, &config);
            (env, Box::new(move || shared::stop(server, &api)))
        }
        Agent::Copilot => {
            let base = fixtures::root().join("copilot/scenarios");
            let text = std::fs::read_to_string(base.join(format!("{}.json", scenario.from)))?;
            copilot_session::prepare(serde_json::from_str(&text)?, binary)?
        }
        Agent::Qwen => {
            let path = fixtures::root().join(format!("qwen/scenarios/{}.json", scenario.from));
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let mut corpus: Value = serde_json::from_str(&text)?;
            if let Some(turns) = &scenario.turns {
                corpus["turns"] = turns.clone();
            }
            qwen_session::prepare(corpus)?
        }
    };
    let prompt = match scenario.agent {
        Agent::Gemini => {
            let base = fixtures::root().join("gemini/scenarios");
            gemini::Scenario::load(&base.join(format!("{}.json", scenario.from)))?.prompt
        }
        Agent::Opencode => {
            let base = fixtures::root().join("opencode/scenarios");
            opencode::Scenario::load(&base.join(format!("{}.json", scenario.from)))?.prompt
        }
        Agent::Copilot => {
            let base = fixtures::root().join("copilot/scenarios");
            let text = std::fs::read_to_string(base.join(format!("{}.json", scenario.from)))?;
            serde_json::from_str::<copilot::Scenario>(&text)?.prompt
        }
        Agent::Qwen => {
            let base = fixtures::root().join("qwen/scenarios");
            qwen::Scenario::load(&base.join(format!("{}.json", scenario.from)))?.prompt
        }
    };
    shared::clean_env_wrapper(&wrapper_path, binary, &env, Some(&stderr))?;
    let mut request = RunRequest::new(prompt);
    let mut agent = vec![wrapper_path.display().to_string()];
    agent.extend(scenario.command());
    request.agent = Some(agent);
    request.cwd = Some(PathBuf::from(scenario.project()));
    request.permission_mode = scenario.permission_mode.clone();
    request.timeout = Some(gemini::RUN_LIMIT);
    request.transcript = Some(out.join(format!("{name}.jsonl")));
    let started = Instant::now();
    let (text, exit) = shared::run_live(&AcpHarness, request)?;
    // The run's transcript has a header and `out ` records (TR2, TR3); the recording keeps
    // its A1 lines alone.
    let transcript = out.join(format!("{name}.jsonl"));
    let lines = shared::transcript_lines(&transcript)?;
    std::fs::write(&transcript, lines)?;
    let seconds = started.elapsed().as_secs_f64();
    let notes = stop();
    shared::clean(match scenario.agent {
        Agent::Gemini => gemini::HOME,
        Agent::Opencode => opencode::HOME,
        Agent::Copilot => copilot::HOME,
        Agent::Qwen => qwen::HOME,
    })?;
    std::fs::remove_file(&wrapper_path)?;
    let binary_name = match scenario.agent {
        Agent::Gemini => "gemini",
        Agent::Opencode => "opencode",
        Agent::Copilot => "copilot",
        Agent::Qwen => "qwen",
    };
    let mut argv = vec![binary_name.to_string()];
    argv.extend(scenario.command());
    let mut env = env;
    for value in env.values_mut() {
        // The stand-in's port changes from run to run.
        if let Some(at) = value.find("http://127.0.0.1:")
            && !value[at..].starts_with("http://127.0.0.1:9\"")
            && value != "http://127.0.0.1:9"
        {
            let port_start = at + "http://127.0.0.1:".len();
            let port_end = value[port_start..]
                .find(|c: char| !c.is_ascii_digit())
                .map_or(value.len(), |n| port_start + n);
            value.replace_range(port_start..port_end, "PORT");
        }
    }
    let cmd = json!({"cwd": scenario.project(), "env": env, "argv": argv,
                     "permission_mode": scenario.permission_mode});
    let tail = shared::cmd_tail(json!(exit), seconds);
    shared::write_cmd(out, name, &cmd, Some(&tail))?;
    Ok((text, notes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_acp_scenario_loads_names_a_scenario_and_has_its_recording() {
        let dir = fixtures::root().join("acp");
        let names = super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        assert!(!names.is_empty());
        for name in &names {
            let scenario = Scenario::load(&dir.join(format!("scenarios/{name}.json"))).unwrap();
            let corpus = match scenario.agent {
                Agent::Gemini => "gemini",
                Agent::Opencode => "opencode",
                Agent::Copilot => "copilot",
                Agent::Qwen => "qwen",
            };
            let from = fixtures::root().join(format!("{corpus}/scenarios/{}.json", scenario.from));
            assert!(from.exists(), "{}", from.display());
            for file in ["jsonl", "expected.jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
    }

    #[test]
    fn the_acp_commands_are_the_measured_ones() {
        let mut scenario = Scenario {
            about: String::new(),
            agent: Agent::Gemini,
            from: "a".into(),
            args: vec!["--yolo".into()],
            permission_mode: None,
            turns: None,
        };
        assert_eq!(scenario.command(), ["--acp", "--skip-trust", "--yolo"]);
        scenario.agent = Agent::Opencode;
        scenario.args.clear();
        assert_eq!(
            scenario.command(),
            ["acp", "--pure", "--cwd", "/home/oc/project"]
        );
    }

    #[test]
    fn a_live_run_and_its_transcript_compare_without_the_exit_code() {
        let live = "{\"kind\":\"agent\",\"text\":\"hi\",\"line\":6}\n{\"kind\":\"outcome\",\"status\":\"success\",\"exit_code\":0}\n";
        let offline = "{\"kind\":\"agent\",\"text\":\"hi\",\"line\":6}\n{\"kind\":\"outcome\",\"status\":\"success\"}\n";
        assert_eq!(strip_exit(live), strip_exit(offline));
        assert_ne!(strip_exit(live), strip_exit(&offline.replace("hi", "ho")));
    }
}
