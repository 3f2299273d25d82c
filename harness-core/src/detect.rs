//! Which agents are installed: each backend's binary found by the lookup a live run uses, asked
//! its version with a short timeout, and that version set against the releases the backend's
//! recordings cover (feature `process`).
//!
//! An agent that is missing, not executable, slow, hanging on its version flag, waiting for
//! input or printing garbage gives a [`Detection`] saying so, never an error: detection is for
//! an orchestrator choosing among the backends actually present.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::process::choose_binary;
use crate::registry::{Backend, Registry};
use crate::run::RunRequest;
use crate::versions::{Coverage, KnownAgent, Versions, parse_version};

/// How long an agent may take to print its version by default.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// How long what an agent left running may hold its pipes open after it has exited.
const LINGER: Duration = Duration::from_millis(500);

/// The most of each output stream kept from an agent asked its version.
const KEPT: usize = 64 * 1024;

/// What detection looks for, beyond each backend's own lookup.
///
/// ```
/// use harness_agents_core::detect::Probe;
///
/// let probe = Probe::default();
/// assert!(probe.binary.is_none());
/// assert_eq!(probe.timeout, harness_agents_core::detect::VERSION_TIMEOUT);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Probe {
    /// The binary, as `run --binary` names it; it wins over the backend's variable and `PATH`.
    /// Meant for one backend ([`detect`]): given to [`Registry::detect`], every backend with a
    /// launch looks at it.
    pub binary: Option<PathBuf>,
    /// A protocol backend's agent command, as `run --agent` gives it (`["gemini", "--acp"]`):
    /// detected instead of the backend's known agents.
    pub agent: Option<Vec<String>>,
    /// How long an agent may take to print its version before its process group is killed.
    pub timeout: Duration,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            binary: None,
            agent: None,
            timeout: VERSION_TIMEOUT,
        }
    }
}

/// Whether an agent is here and answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Presence {
    /// Found, and it printed a version.
    Found,
    /// Not found: no such file, or no such name on `PATH`.
    Missing,
    /// Found, but it cannot be run or did not print a version in time ([`Detection::problem`]
    /// says why).
    Broken,
    /// The backend has no agent of its own to look for (it cannot run live, or it is a
    /// protocol backend that knows no agent).
    NotLive,
}

impl Presence {
    /// The name `harness backends` prints (`"found"`, `"missing"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Found => "found",
            Presence::Missing => "missing",
            Presence::Broken => "broken",
            Presence::NotLive => "not_live",
        }
    }
}

/// Which lookup named the binary, as a live run would choose it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BinarySource {
    /// The caller's (`--binary`, `--agent`).
    Option,
    /// The backend's environment variable (`$CLAUDE_BIN`).
    Env,
    /// The backend's default name, looked up on `PATH`, or a known agent's command.
    Path,
}

/// What was found of one backend's agent (or of one agent a protocol backend knows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Detection {
    /// The backend's name (`"claude"`), or the known agent's (`"gemini"`).
    pub name: String,
    /// Whether the agent is here and answers.
    pub status: Presence,
    /// The binary looked for: a name looked up on `PATH`, or a path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<PathBuf>,
    /// Which lookup named [`Detection::binary`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<BinarySource>,
    /// A known agent's whole command line (`["gemini", "--acp"]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Where the binary was found, absolute.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// The version it printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How that version stands against the recordings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    /// The release the recordings come from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<&'static str>,
    /// Older releases whose recordings stay supported.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub older_recorded: &'static [&'static str],
    /// Why the agent is missing or broken.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// How to install it, when missing under its default name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub install: Option<&'static str>,
    /// A protocol backend's known agents (or the one of [`Probe::agent`]), each detected.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<Detection>,
}

impl Detection {
    /// Nothing found yet of `name`'s agent; the recordings of `versions`.
    fn new(name: &str, status: Presence, versions: Option<Versions>) -> Self {
        Detection {
            name: name.to_string(),
            status,
            binary: None,
            source: None,
            command: None,
            path: None,
            version: None,
            coverage: None,
            recorded: versions.map(|v| v.recorded),
            older_recorded: versions.map_or(&[], |v| v.older),
            problem: None,
            install: None,
            agents: Vec::new(),
        }
    }

    /// Whether the agent can be used: it is here and printed a version, or, for a protocol
    /// backend, one of its agents is.
    pub fn is_present(&self) -> bool {
        self.status == Presence::Found
    }
}

/// `backend`'s agent: the binary a live run would start (`probe.binary`, else the backend's
/// variable, else its name on `PATH`), where it is, its version and that version's coverage;
/// for a backend with known agents instead of a launch (`acp`), each of them (or
/// `probe.agent`), the backend `found` when one is. Never fails: a missing or broken agent is
/// a detection that says so.
pub fn detect(backend: &dyn Backend, probe: &Probe) -> Detection {
    let versions = backend.versions();
    let name = backend.name();
    if let Some(launch) = backend.launch() {
        let mut request = RunRequest::new("");
        request.binary = probe.binary.clone();
        let env = std::env::var_os(launch.env_var);
        let source = match (&probe.binary, &env) {
            (Some(_), _) => BinarySource::Option,
            (None, Some(value)) if !value.is_empty() => BinarySource::Env,
            _ => BinarySource::Path,
        };
        let binary = choose_binary(&request, env, launch.program);
        let install = (source == BinarySource::Path).then_some(launch.install);
        let args = versions.map_or(&["--version"][..], |v| v.args);
        return look_for(name, binary, source, args, versions, install, probe.timeout);
    }
    let agents: Vec<(KnownAgent, BinarySource, Vec<String>)> = match &probe.agent {
        Some(words) if !words.is_empty() => {
            let agent = KnownAgent::new("agent", &[], "");
            vec![(agent, BinarySource::Option, words.clone())]
        }
        _ => match &probe.binary {
            Some(binary) => {
                let agent = KnownAgent::new("agent", &[], "");
                vec![(
                    agent,
                    BinarySource::Option,
                    vec![binary.display().to_string()],
                )]
            }
            None => backend
                .known_agents()
                .iter()
                .map(|a| (*a, BinarySource::Path, words(a.command)))
                .collect(),
        },
    };
    let mut detection = Detection::new(name, Presence::NotLive, versions);
    detection.agents = std::thread::scope(|scope| {
        let threads: Vec<_> = agents
            .into_iter()
            .map(|(agent, source, command)| {
                scope.spawn(move || {
                    let binary = PathBuf::from(command.first().cloned().unwrap_or_default());
                    let args = agent.versions.map_or(&["--version"][..], |v| v.args);
                    let install = (!agent.install.is_empty()).then_some(agent.install);
                    let mut found = look_for(
                        agent.name,
                        binary,
                        source,
                        args,
                        agent.versions,
                        install,
                        probe.timeout,
                    );
                    found.command = Some(command);
                    found
                })
            })
            .collect();
        threads.into_iter().filter_map(|t| t.join().ok()).collect()
    });
    if !detection.agents.is_empty() {
        detection.status = if detection.agents.iter().any(Detection::is_present) {
            Presence::Found
        } else {
            Presence::Missing
        };
    }
    detection
}

impl Registry {
    /// Every registered backend's [`detect`]ion, in registration order, the agents asked
    /// their versions at the same time (so the whole takes about one `probe.timeout` at most).
    ///
    /// ```no_run
    /// use harness_agents_core::detect::Probe;
    /// # let registry = harness_agents_core::Registry::new();
    /// let present: Vec<String> = registry
    ///     .detect(&Probe::default())
    ///     .into_iter()
    ///     .filter(|d| d.is_present())
    ///     .map(|d| d.name)
    ///     .collect();
    /// ```
    pub fn detect(&self, probe: &Probe) -> Vec<Detection> {
        let backends: Vec<&dyn Backend> = self.names().filter_map(|n| self.get(n)).collect();
        std::thread::scope(|scope| {
            let threads: Vec<_> = backends
                .into_iter()
                .map(|backend| (backend.name(), scope.spawn(move || detect(backend, probe))))
                .collect();
            threads
                .into_iter()
                .map(|(name, thread)| {
                    thread.join().unwrap_or_else(|_| {
                        let mut failed = Detection::new(name, Presence::Broken, None);
                        failed.problem = Some("detection failed".to_string());
                        failed
                    })
                })
                .collect()
        })
    }
}

/// `&'static` words as owned ones.
fn words(command: &[&str]) -> Vec<String> {
    command.iter().map(|w| w.to_string()).collect()
}

/// Looks for `binary`, asks it its version with `args`, and says what it found.
fn look_for(
    name: &str,
    binary: PathBuf,
    source: BinarySource,
    args: &[&str],
    versions: Option<Versions>,
    install: Option<&'static str>,
    timeout: Duration,
) -> Detection {
    let mut detection = Detection::new(name, Presence::Missing, versions);
    detection.source = Some(source);
    detection.binary = Some(binary.clone());
    let path = match find(&binary) {
        Ok(path) => path,
        Err(Lookup::Missing(problem)) => {
            detection.problem = Some(problem);
            detection.install = install;
            return detection;
        }
        Err(Lookup::NotExecutable(path)) => {
            detection.status = Presence::Broken;
            detection.problem = Some(format!("{} is not executable", path.display()));
            detection.path = Some(path);
            return detection;
        }
    };
    detection.path = Some(path.clone());
    match ask_version(&path, args, timeout) {
        Ok(version) => {
            detection.status = Presence::Found;
            detection.coverage = Some(match versions {
                Some(versions) => versions.coverage(&version),
                None => Coverage::Unknown,
            });
            detection.version = Some(version);
        }
        Err(problem) => {
            detection.status = Presence::Broken;
            detection.problem = Some(problem);
        }
    }
    detection
}

/// Why a binary was not found.
enum Lookup {
    /// Nothing there: the text says where it was looked for.
    Missing(String),
    /// A file without execute permission, or a folder.
    NotExecutable(PathBuf),
}

/// Where `binary` is, as a live run would start it: a name without a slash on `PATH`, anything
/// else as the path it is (relative to the current directory).
fn find(binary: &Path) -> Result<PathBuf, Lookup> {
    let is_path = binary.as_os_str().as_encoded_bytes().contains(&b'/');
    if is_path {
        let path = std::path::absolute(binary).unwrap_or_else(|_| binary.to_path_buf());
        return match std::fs::metadata(&path) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => Ok(path),
            Ok(_) => Err(Lookup::NotExecutable(path)),
            Err(_) => Err(Lookup::Missing(format!(
                "{} does not exist",
                path.display()
            ))),
        };
    }
    let missing = || Lookup::Missing(format!("{} was not found on PATH", binary.display()));
    if binary.as_os_str().is_empty() {
        return Err(missing());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut not_executable = None;
    for dir in std::env::split_paths(&path).filter(|d| !d.as_os_str().is_empty()) {
        let candidate = dir.join(binary);
        match std::fs::metadata(&candidate) {
            Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {
                return Ok(std::path::absolute(&candidate).unwrap_or(candidate));
            }
            Ok(meta) if meta.is_file() => {
                not_executable.get_or_insert(candidate);
            }
            _ => {}
        }
    }
    Err(not_executable.map_or_else(missing, Lookup::NotExecutable))
}

/// Runs `path args` with no input, in a process group of its own, and gives the version it
/// prints (standard output first, then standard error); kills the group after `timeout`.
fn ask_version(path: &Path, args: &[&str], timeout: Duration) -> Result<String, String> {
    let asked = format!("{} {}", path.display(), args.join(" "));
    let mut child =
        spawn(path, args).map_err(|e| format!("{} cannot be run: {e}", path.display()))?;
    let group = rustix::process::Pid::from_child(&child);
    let (tx, rx) = mpsc::channel();
    for (index, pipe) in [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(pipe) = pipe else { continue };
        let tx = tx.clone();
        // Detached: a process outside the group may hold the pipe open; its thread then ends
        // when that process does, and nothing waits for it.
        std::thread::spawn(move || {
            let _ = tx.send((index, keep_start(pipe)));
        });
    }
    drop(tx);
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => break None,
        }
    };
    let mut outputs = [Vec::new(), Vec::new()];
    let mut collect = |until: Instant| {
        while let Ok((index, bytes)) =
            rx.recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            outputs[index] = bytes;
        }
    };
    if status.is_some() {
        // The pipes close when the agent's leftovers do: they get a moment (within the
        // deadline), then go with the group below, their output already read.
        collect(deadline.min(Instant::now() + LINGER));
    }
    // Whatever the agent left running (or the agent itself, on a timeout) goes, and with it
    // the pipes it held.
    let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
    let _ = child.wait();
    if status.is_some() {
        collect(Instant::now() + Duration::from_millis(200));
    }
    let Some(status) = status else {
        return Err(format!(
            "`{asked}` printed no version within {} s",
            timeout.as_secs_f64()
        ));
    };
    let [stdout, stderr] = outputs.map(|b| String::from_utf8_lossy(&b).into_owned());
    if let Some(version) = parse_version(&stdout).or_else(|| parse_version(&stderr)) {
        return Ok(version.to_string());
    }
    let said = first_line(&stdout).or_else(|| first_line(&stderr));
    let said = said.map_or_else(|| "nothing".to_string(), |line| format!("{line:?}"));
    Err(if status.success() {
        format!("`{asked}` printed no version: {said}")
    } else {
        format!("`{asked}` failed ({status}): {said}")
    })
}

/// Starts `path args` with no input and its outputs piped, in a process group of its own.
///
/// A binary being written (an agent updating itself, or a file another thread of this process
/// still held open for writing when some thread forked) fails with `ETXTBSY` for a moment: it
/// is tried again a few times before that counts.
fn spawn(path: &Path, args: &[&str]) -> std::io::Result<std::process::Child> {
    let mut tries = 0;
    loop {
        let spawned = Command::new(path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn();
        match spawned {
            Err(e)
                if e.raw_os_error() == Some(rustix::io::Errno::TXTBSY.raw_os_error())
                    && tries < 10 =>
            {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// The first [`KEPT`] bytes `pipe` gives; the rest is read and dropped, so the agent never
/// blocks on a full pipe.
fn keep_start(mut pipe: Box<dyn Read + Send>) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return kept,
            Ok(n) => {
                let room = KEPT.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

/// The first non-blank line of `text`, trimmed and cut to 120 characters.
fn first_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(line.chars().take(120).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalizer::{Normalizer, NormalizerConfig};
    use crate::process::Launch;

    /// A backend whose agent is named by the tests, recorded at 1.2.3 and 1.1.0.
    struct Toy;

    impl Backend for Toy {
        fn name(&self) -> &'static str {
            "toy"
        }

        fn normalizer(&self, _: NormalizerConfig) -> Box<dyn Normalizer> {
            unimplemented!("detection never normalizes")
        }

        fn versions(&self) -> Option<Versions> {
            Some(Versions::new("1.2.3").older(&["1.1.0"]))
        }

        fn launch(&self) -> Option<Launch> {
            Some(Launch::new(
                "harness-test-no-such-agent",
                "HARNESS_TEST_NO_SUCH_AGENT_BIN",
                "install the toy",
            ))
        }
    }

    /// A protocol backend that knows two agents, one of them missing.
    struct Protocol;

    impl Backend for Protocol {
        fn name(&self) -> &'static str {
            "protocol"
        }

        fn normalizer(&self, _: NormalizerConfig) -> Box<dyn Normalizer> {
            unimplemented!("detection never normalizes")
        }

        fn known_agents(&self) -> &'static [KnownAgent] {
            const AGENTS: &[KnownAgent] = &[
                KnownAgent::new("sh", &["/bin/sh", "-c", "echo 9.9.9"], "")
                    .recorded(Versions::new("9.9.9").args(&["-c", "echo 9.9.9"])),
                KnownAgent::new("gone", &["harness-test-no-such-agent", "--acp"], "get it"),
            ];
            AGENTS
        }
    }

    /// A folder of scripted agents, removed on drop.
    struct Scripts(PathBuf);

    impl Scripts {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("harness-detect-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scripts(dir)
        }

        /// An executable `/bin/sh` script with `body`.
        fn agent(&self, name: &str, body: &str) -> PathBuf {
            let path = self.0.join(name);
            let text = format!("#!/bin/sh\nPATH=/usr/bin:/bin\n{body}\n");
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
            path
        }
    }

    impl Drop for Scripts {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn probe(binary: &Path, millis: u64) -> Probe {
        Probe {
            binary: Some(binary.to_path_buf()),
            timeout: Duration::from_millis(millis),
            ..Probe::default()
        }
    }

    #[test]
    fn a_present_agent_gives_its_path_version_and_coverage() {
        let scripts = Scripts::new("present");
        let table = [
            ("recorded", "echo '1.2.3 (Toy)'", Coverage::Recorded),
            ("older", "echo toy-cli v1.1.0", Coverage::OlderRecorded),
            ("newer", "echo 2.0.0", Coverage::Newer),
            ("stderr", "echo 'version 1.0.0' >&2", Coverage::Older),
            ("exits_1", "echo 1.2.3; exit 1", Coverage::Recorded),
        ];
        for (name, body, coverage) in table {
            let agent = scripts.agent(name, body);
            let found = detect(&Toy, &probe(&agent, 5000));
            assert_eq!(found.status, Presence::Found, "{name}: {found:?}");
            assert_eq!(found.path.as_deref(), Some(agent.as_path()), "{name}");
            assert_eq!(found.coverage, Some(coverage), "{name}");
            assert_eq!(found.source, Some(BinarySource::Option));
            assert_eq!(found.recorded, Some("1.2.3"));
            assert_eq!(found.older_recorded, ["1.1.0"]);
            assert!(found.problem.is_none() && found.install.is_none());
        }
    }

    #[test]
    fn a_missing_agent_is_a_row_saying_so() {
        let found = detect(&Toy, &Probe::default());
        assert_eq!(found.status, Presence::Missing);
        assert_eq!(found.source, Some(BinarySource::Path));
        assert_eq!(
            found.problem.as_deref(),
            Some("harness-test-no-such-agent was not found on PATH")
        );
        assert_eq!(found.install, Some("install the toy"));
        let found = detect(&Toy, &probe(Path::new("/nonexistent/toy"), 5000));
        assert_eq!(found.status, Presence::Missing);
        assert_eq!(
            found.problem.as_deref(),
            Some("/nonexistent/toy does not exist")
        );
        assert_eq!(
            found.install, None,
            "no hint for a binary named by the caller"
        );
    }

    #[test]
    fn a_broken_agent_is_a_row_saying_why() {
        let scripts = Scripts::new("broken");
        let garbage = scripts.agent("garbage", r"printf '\033]0;pwned\007\377\376 x.y\n'");
        let failing = scripts.agent("failing", "echo 'error: no config' >&2; exit 3");
        let silent = scripts.agent("silent", "exit 0");
        let plain = scripts.0.join("plain");
        std::fs::write(&plain, "echo 1.2.3").unwrap();
        let table = [
            (
                garbage,
                "printed no version: \"\\u{1b}]0;pwned\\u{7}\u{fffd}\u{fffd} x.y\"",
            ),
            (failing, "failed (exit status: 3): \"error: no config\""),
            (silent, "printed no version: nothing"),
        ];
        for (agent, problem) in table {
            let found = detect(&Toy, &probe(&agent, 5000));
            assert_eq!(found.status, Presence::Broken, "{found:?}");
            let said = found.problem.unwrap();
            assert!(said.ends_with(problem), "{said}");
            assert!(found.version.is_none() && found.coverage.is_none());
        }
        let found = detect(&Toy, &probe(&plain, 5000));
        assert_eq!(found.status, Presence::Broken);
        assert!(found.problem.unwrap().ends_with("plain is not executable"));
    }

    #[test]
    fn an_agent_that_hangs_is_killed_at_the_timeout() {
        let scripts = Scripts::new("hangs");
        let marker = scripts.0.join("grandchild-alive");
        let table = [
            ("sleeps", "exec sleep 30".to_string()),
            ("prints_forever", "exec yes 'no version'".to_string()),
            // Standard input is empty: an agent that reads it sees its end at once.
            ("reads_input", "cat; echo 1.2.3".to_string()),
            // Exits having answered, but leaves a grandchild holding its output open.
            (
                "leaves_a_grandchild",
                format!("(sleep 2; touch {}) & echo 1.2.3", marker.display()),
            ),
        ];
        for (name, body) in table {
            let agent = scripts.agent(name, &body);
            let started = Instant::now();
            let found = detect(&Toy, &probe(&agent, 400));
            assert!(started.elapsed() < Duration::from_secs(3), "{name}");
            if name.starts_with("reads") || name.starts_with("leaves") {
                assert_eq!(found.version.as_deref(), Some("1.2.3"), "{name}: {found:?}");
            } else {
                assert_eq!(found.status, Presence::Broken, "{name}");
                let said = found.problem.unwrap();
                assert!(said.ends_with("printed no version within 0.4 s"), "{said}");
            }
        }
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "the agent's process group is killed");
    }

    #[test]
    fn a_protocol_backend_lists_its_known_agents() {
        let found = detect(&Protocol, &Probe::default());
        assert_eq!(found.status, Presence::Found);
        assert!(found.path.is_none() && found.recorded.is_none());
        let [sh, gone] = &found.agents[..] else {
            panic!("{found:?}")
        };
        assert_eq!(
            (sh.status, sh.version.as_deref(), sh.coverage),
            (Presence::Found, Some("9.9.9"), Some(Coverage::Recorded))
        );
        assert_eq!(sh.command.as_deref().map(<[_]>::len), Some(3));
        assert_eq!(gone.status, Presence::Missing);
        assert_eq!(gone.install, Some("get it"));
        assert_eq!(
            gone.command.clone().unwrap(),
            ["harness-test-no-such-agent", "--acp"]
        );

        let probe = Probe {
            agent: Some(vec!["harness-test-no-such-agent".into(), "--acp".into()]),
            ..Probe::default()
        };
        let found = detect(&Protocol, &probe);
        assert_eq!(found.status, Presence::Missing);
        assert_eq!(found.agents.len(), 1);
        assert_eq!(found.agents[0].source, Some(BinarySource::Option));
    }

    #[test]
    fn a_registry_detects_every_backend_in_order() {
        let mut registry = Registry::new();
        registry.register(Box::new(Toy));
        registry.register(Box::new(Protocol));
        let names: Vec<String> = registry
            .detect(&Probe::default())
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(names, ["toy", "protocol"]);
    }
}
