//! What every backend's recorder does the same way: the throwaway HOME it makes and removes,
//! the scenario's files, the stand-in behind its loopback server with the notes on its
//! script, the files a run leaves (`NAME.jsonl`, `NAME.stderr`, `NAME.cmd`), the environment
//! that keeps a run offline, and a live run's events.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};
use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use harness_agents_core::transcript::{Header, Record};
use harness_agents_core::{
    Backend, Normalizer, NormalizerConfig, OutcomeLine, RunItem, RunRequest,
};
use serde_json::{Value, json};

use super::server::{Reply, Request, Server};
use super::{drift, dump_request};

/// The file that marks a throwaway HOME as the recorder's to delete.
const MARKER: &str = ".harness-record";

/// Removes the throwaway `home`; refuses one the recorder did not make.
pub(crate) fn clean(home: &str) -> Result<()> {
    let path = Path::new(home);
    if path.exists() {
        if !path.join(MARKER).exists() {
            bail!("{home} exists and was not made by `cargo xtask record`; not touching it");
        }
        std::fs::remove_dir_all(path)?;
    }
    Ok(())
}

/// Makes `home` anew, marked as the recorder's, with the `project` folder in it.
pub(crate) fn fresh_home(home: &str, project: &str) -> Result<()> {
    clean(home)?;
    std::fs::create_dir_all(project)?;
    std::fs::write(
        Path::new(home).join(MARKER),
        "created by cargo xtask record\n",
    )?;
    Ok(())
}

/// Writes `files` (relative path to text) under `base`, making their folders.
pub(crate) fn write_files(base: &Path, files: &BTreeMap<String, String>) -> Result<()> {
    for (file, text) in files {
        let path = base.join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Whether a scenario's file name stays inside the folder it is written to.
pub(crate) fn plain_relative(file: &str) -> bool {
    let path = Path::new(file);
    !path.is_absolute() && path.components().all(|c| matches!(c, Component::Normal(_)))
}

/// Refuses the scenario at `source` when one of its `files` is not a plain relative path.
pub(crate) fn check_files<'a>(
    source: &Path,
    files: impl IntoIterator<Item = &'a String>,
) -> Result<()> {
    for file in files {
        if !plain_relative(file) {
            bail!(
                "{}: file {file:?} must be a plain relative path",
                source.display()
            );
        }
    }
    Ok(())
}

/// The environment every run starts from: `entries`, then a plain locale and terminal, and
/// a dead loopback proxy for anything not addressed to the stand-in.
pub(crate) fn offline_env<'a>(
    entries: impl IntoIterator<Item = (&'a str, String)>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = [
        ("LANG", "C.UTF-8".to_string()),
        ("TERM", "dumb".to_string()),
        // Anything not addressed to the stand-in goes to a port nobody listens on.
        ("HTTPS_PROXY", "http://127.0.0.1:9".to_string()),
        ("HTTP_PROXY", "http://127.0.0.1:9".to_string()),
        ("NO_PROXY", "127.0.0.1,localhost".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    env.extend(entries.into_iter().map(|(k, v)| (k.to_string(), v)));
    env
}

/// The npm platform name of this machine (`linux-x64`, `darwin-arm64`, ...), when the agents'
/// packages ship one for it.
pub(crate) fn npm_platform() -> Option<&'static str> {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => Some("linux-x64"),
        ("linux", "aarch64") => Some("linux-arm64"),
        ("macos", "x86_64") => Some("darwin-x64"),
        ("macos", "aarch64") => Some("darwin-arm64"),
        _ => None,
    }
}

/// A per-scenario seed for generated ids, stable across runs.
pub(crate) fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A scripted model API: it answers requests and says how its script was used.
pub(crate) trait StandIn: Send + 'static {
    /// Answers one request.
    fn handle(&mut self, request: &Request) -> Reply;
    /// What it noticed, given the requests the server answered: requests beyond the script,
    /// turns never requested.
    fn notes(&self, requests: &[String]) -> Vec<String>;
}

/// The notes of a stand-in whose script counts its turns: `overflow` requests came after
/// it ran out, `left` turns were never requested (either said only when not empty).
pub(crate) fn script_notes(overflow: &str, left: &str, requests: &[String]) -> Vec<String> {
    let mut notes = Vec::new();
    if !overflow.is_empty() {
        notes.push(format!(
            "{overflow} request(s) after the script ran out; requests: {}",
            requests.join(", ")
        ));
    }
    if !left.is_empty() {
        notes.push(format!("{left} scripted turn(s) never requested"));
    }
    notes
}

/// Where a run's request bodies go (`RECORD_DUMP_REQUESTS=1`): `NAME.requests.jsonl` in
/// `out`, emptied first; `None` without the variable.
pub(crate) fn dump_path(out: &Path, name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("RECORD_DUMP_REQUESTS")
        .map(|_| out.join(format!("{name}.requests.jsonl")))?;
    let _ = std::fs::remove_file(&path);
    Some(path)
}

/// A stand-in behind a loopback server on `port` (`0` for a free one), each request body
/// appended to `dump` when there is one.
pub(crate) fn serve<S: StandIn>(
    port: u16,
    api: &Arc<Mutex<S>>,
    dump: Option<PathBuf>,
) -> Result<Server> {
    let api = Arc::clone(api);
    Server::start(
        port,
        Box::new(move |request| {
            dump_request(dump.as_deref(), request);
            match api.lock() {
                Ok(mut api) => api.handle(request),
                Err(_) => Reply::not_found(&request.path),
            }
        }),
    )
}

/// The stand-in's notes on the requests `server` answered; stops the server.
pub(crate) fn stop<S: StandIn>(server: Server, api: &Mutex<S>) -> Vec<String> {
    let requests = server.stop();
    api.lock()
        .map(|api| api.notes(&requests))
        .unwrap_or_default()
}

/// A process's exit code as a `.cmd` file records it: the code, or minus the signal.
pub(crate) fn exit_code(status: ExitStatus) -> Value {
    match status.code() {
        Some(code) => json!(code),
        None => {
            use std::os::unix::process::ExitStatusExt;
            json!(status.signal().map(|s| -s))
        }
    }
}

/// The last line of a `.cmd` file: the exit code and the seconds the run took, to a tenth.
pub(crate) fn cmd_tail(exit_code: Value, seconds: f64) -> Value {
    json!({"exit_code": exit_code, "seconds": (seconds * 10.0).round() / 10.0})
}

/// Writes `NAME.cmd` into `out`: `cmd` (directory, environment, command line) pretty
/// printed, then `tail` on a line of its own when there is one.
pub(crate) fn write_cmd(out: &Path, name: &str, cmd: &Value, tail: Option<&Value>) -> Result<()> {
    let mut text = serde_json::to_string_pretty(cmd)? + "\n";
    if let Some(tail) = tail {
        text.push_str(&format!("{tail}\n"));
    }
    std::fs::write(out.join(format!("{name}.cmd")), text)?;
    Ok(())
}

/// Writes `NAME.jsonl` and `NAME.stderr` into `out`: what a run printed.
pub(crate) fn write_streams(out: &Path, name: &str, stdout: &[u8], stderr: &[u8]) -> Result<()> {
    std::fs::write(out.join(format!("{name}.jsonl")), stdout)?;
    std::fs::write(out.join(format!("{name}.stderr")), stderr)?;
    Ok(())
}

/// The events a backend's normalizer, configured with `cwd`, gives for a raw stream and its
/// stderr, as `harness normalize --cwd CWD` prints them.
pub(crate) fn normalize_in<N: Normalizer>(
    new: impl FnOnce(NormalizerConfig) -> N,
    cwd: &str,
    raw: &str,
    stderr: &str,
) -> String {
    let mut config = NormalizerConfig::default();
    config.cwd = Some(cwd.to_string());
    drift::normalize_with(new(config), raw.as_bytes(), stderr.as_bytes())
}

/// Event lines without the warnings made from standard error, and the outcome's `warning`
/// count without them: an agent's stderr notices (Gemini CLI's terminal warnings and
/// start-up timing messages) vary from run to run, so the drift check compares what stdout gives.
pub(crate) fn without_stderr(events: &str) -> String {
    let mut dropped = 0;
    let mut out = String::new();
    for line in events.lines() {
        let Ok(mut value) = serde_json::from_str::<Value>(line) else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        if value.get("stream").and_then(Value::as_str) == Some("stderr") {
            dropped += 1;
            continue;
        }
        if value.get("kind").and_then(Value::as_str) == Some("outcome")
            && let Some(counts) = value.get_mut("counts").and_then(Value::as_object_mut)
            && let Some(warnings) = counts.get("warning").and_then(Value::as_u64)
        {
            match warnings.saturating_sub(dropped) {
                0 => counts.remove("warning"),
                left => counts.insert("warning".into(), json!(left)),
            };
        }
        out.push_str(&value.to_string());
        out.push('\n');
    }
    out
}

/// The differences between a fresh recording's events and the hand-reviewed
/// `dir/NAME.expected.jsonl`, stderr's warnings left out of both; `old_raw` is the recording
/// the expected file was written from (its ids are neutralized with it). A new scenario has
/// none: with `check` that is a difference, otherwise its events are written to
/// `out/NAME.unreviewed.jsonl` for review and counted in `unreviewed`.
pub(crate) fn against_expected(
    dir: &Path,
    out: &Path,
    name: &str,
    check: bool,
    old_raw: &str,
    (events, raw): (&str, &str),
    unreviewed: &mut usize,
) -> Result<Vec<String>> {
    let expected_path = dir.join(format!("{name}.expected.jsonl"));
    if expected_path.exists() {
        let expected = without_stderr(&super::read(&expected_path));
        return Ok(
            drift::event_drift(&expected, old_raw, &without_stderr(events), raw)
                .into_iter()
                .map(|p| format!("expected: {p}"))
                .collect(),
        );
    }
    if check {
        return Ok(vec![format!(
            "no expected file {}",
            expected_path.display()
        )]);
    }
    std::fs::write(out.join(format!("{name}.unreviewed.jsonl")), events)?;
    *unreviewed += 1;
    Ok(Vec::new())
}

/// A recording: the raw stream and its standard error.
pub(crate) type Streams<'a> = (&'a str, &'a str);

/// What a fresh recording `new` of `name` differs in: with `check`, from the committed
/// recording `old` (the shapes `shape_drift` compares, then the events); otherwise from the
/// hand-reviewed `dir/NAME.expected.jsonl`. `normalize` gives a recording's events.
pub(crate) fn recording_drift(
    check: bool,
    (dir, name): (&Path, &str),
    old: Streams<'_>,
    new: Streams<'_>,
    normalize: fn(&str, &str) -> String,
    shape_drift: fn(&str, &str) -> Vec<String>,
) -> Vec<String> {
    let events = normalize(new.0, new.1);
    if !check {
        let expected = dir.join(format!("{name}.expected.jsonl"));
        return super::golden(&expected, old.0, &events, new.0);
    }
    if old.0.is_empty() {
        return vec![format!("no committed recording of {name}")];
    }
    let mut problems = shape_drift(old.0, new.0);
    problems.extend(
        drift::event_drift(&normalize(old.0, old.1), old.0, &events, new.0)
            .into_iter()
            .map(|p| format!("drift: {p}")),
    );
    problems
}

/// Reads a run's `stdout` to its end, calling `each` on every line as it comes (to act on
/// the run meanwhile); returns every byte.
pub(crate) fn read_lines(
    stdout: impl std::io::Read,
    mut each: impl FnMut(&[u8]),
) -> Result<Vec<u8>> {
    let mut reader = std::io::BufReader::new(stdout);
    let (mut bytes, mut line) = (Vec::new(), Vec::new());
    while std::io::BufRead::read_until(&mut reader, b'\n', &mut line)? > 0 {
        bytes.extend_from_slice(&line);
        each(&line);
        line.clear();
    }
    Ok(bytes)
}

/// The first run of a resume scenario, the one that creates the session the recorded run
/// continues: `program` with `args` and only `env`, in `cwd`, `stdin` written to its standard
/// input (or none), killed after `limit`. Returns the session id its stream reports, as
/// `normalizer` reads it; its output is not kept.
pub(crate) fn session_run<N: Normalizer>(
    program: &Path,
    args: &[String],
    env: &BTreeMap<String, String>,
    (cwd, stdin): (&str, Option<&str>),
    limit: Duration,
    mut normalizer: N,
) -> Result<String> {
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .envs(env)
        .current_dir(cwd)
        .stdin(match stdin {
            Some(_) => std::process::Stdio::piped(),
            None => std::process::Stdio::null(),
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {} for the first run", program.display()))?;
    if let (Some(mut pipe), Some(text)) = (child.stdin.take(), stdin) {
        std::io::Write::write_all(&mut pipe, text.as_bytes())?;
    }
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let run = super::Watched::start(child, started, limit)?;
    let mut events = Vec::new();
    read_lines(stdout, |line| {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        normalizer.push_line(line, &mut events);
        events.clear();
    })?;
    let (status, timed_out, stderr) = run.wait()?;
    if timed_out || !status.success() {
        bail!(
            "the first run failed ({status}): {}",
            String::from_utf8_lossy(&stderr)
        );
    }
    normalizer
        .session_id()
        .map(str::to_string)
        .context("the first run reported no session id")
}

/// The notes on one run: whether the watchdog killed it after `limit`, then the stand-in's.
pub(crate) fn run_notes(timed_out: bool, limit: Duration, api_notes: Vec<String>) -> Vec<String> {
    let killed = timed_out.then(|| format!("killed after {}s", limit.as_secs()));
    killed.into_iter().chain(api_notes).collect()
}

/// `text` quoted for `sh` (single quotes).
pub(crate) fn shlex_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Writes at `path` an executable wrapper that starts `binary` with only `env`, its standard
/// error appended to `stderr` when one is named: a live run through a `Backend`
/// then gets the scenario's environment and nothing of ours. Only the variable that marks the
/// run's processes (`HARNESS_RUN_*`, `RunTree`) passes through: without it the library could
/// not find a process the agent started in a group of its own, and would leave it running.
pub(crate) fn clean_env_wrapper(
    path: &Path,
    binary: &Path,
    env: &BTreeMap<String, String>,
    stderr: Option<&Path>,
) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;

    let mut script =
        String::from("#!/bin/sh\nexec env -i $(env | grep -E '^HARNESS_RUN_[A-Za-z0-9_]+=1$')");
    for (key, value) in env {
        script.push_str(&format!(" {}", shlex_quote(&format!("{key}={value}"))));
    }
    script.push_str(&format!(
        " {} \"$@\"",
        shlex_quote(&binary.display().to_string())
    ));
    if let Some(stderr) = stderr {
        script.push_str(&format!(
            " 2>>{}",
            shlex_quote(&stderr.display().to_string())
        ));
    }
    script.push('\n');
    std::fs::write(path, script)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// Runs `request` live through `harness` on a current-thread runtime: the events and the
/// outcome line as `harness run --format jsonl` prints them, and the exit code.
pub(crate) fn run_live(
    harness: &impl Backend,
    request: RunRequest,
) -> Result<(String, Option<i32>)> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let items: Vec<RunItem> = runtime.block_on(async {
        let stream = harness.run(request).await?;
        Ok::<_, harness_agents_core::RunError>(futures::StreamExt::collect(stream).await)
    })?;
    let mut text = String::new();
    let mut exit = None;
    for item in items {
        match item {
            RunItem::Event(event) => text.push_str(&serde_json::to_string(&event)?),
            RunItem::Outcome(outcome) => {
                exit = outcome.exit_code.flatten();
                text.push_str(&serde_json::to_string(&OutcomeLine::new(&outcome))?);
            }
        }
        text.push('\n');
    }
    Ok((text, exit))
}

/// A transcript file's standard output records, one line each: the A1 lines.
pub(crate) fn transcript_lines(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = String::new();
    for line in bytes.split(|b| *b == b'\n') {
        if line.is_empty() || Header::parse(line).is_some() {
            continue;
        }
        if let Record::Stdout(text) = Record::parse(line) {
            out.push_str(&String::from_utf8_lossy(text));
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn only_plain_relative_file_names_are_taken() {
        assert!(plain_relative("a/b.txt"));
        assert!(!plain_relative("/etc/passwd"));
        assert!(!plain_relative("../x"));
        assert!(!plain_relative("a/../../x"));
        let files = ["ok.txt".to_string(), "../no".to_string()];
        let error = check_files(Path::new("s.json"), &files).unwrap_err();
        assert_eq!(
            error.to_string(),
            "s.json: file \"../no\" must be a plain relative path"
        );
    }

    #[test]
    fn a_cmd_file_is_the_pretty_command_then_its_tail() {
        let out = tempfile::tempdir().unwrap();
        let cmd = json!({"argv": ["x"], "cwd": "/p"});
        write_cmd(out.path(), "a", &cmd, Some(&cmd_tail(json!(0), 1.26))).unwrap();
        write_cmd(out.path(), "b", &cmd, None).unwrap();
        let a = std::fs::read_to_string(out.path().join("a.cmd")).unwrap();
        let b = std::fs::read_to_string(out.path().join("b.cmd")).unwrap();
        assert_eq!(
            a,
            "{\n  \"argv\": [\n    \"x\"\n  ],\n  \"cwd\": \"/p\"\n}\n{\"exit_code\":0,\"seconds\":1.3}\n"
        );
        assert_eq!(
            b,
            "{\n  \"argv\": [\n    \"x\"\n  ],\n  \"cwd\": \"/p\"\n}\n"
        );
    }

    #[test]
    fn the_wrapper_passes_only_its_environment_and_the_runs_mark() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.sh");
        let env = BTreeMap::from([("KEPT".to_string(), "yes".to_string())]);
        clean_env_wrapper(&path, Path::new("/usr/bin/env"), &env, None).unwrap();
        let output = std::process::Command::new(&path)
            .env("HARNESS_RUN_42_00ff_0", "1")
            .env("LEAKED", "no")
            .output()
            .unwrap();
        let mut seen: Vec<String> = String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        seen.sort();
        assert_eq!(seen, ["HARNESS_RUN_42_00ff_0=1", "KEPT=yes"]);
    }

    #[test]
    fn the_wrapper_quotes_every_word() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.sh");
        let env = BTreeMap::from([("A".to_string(), "it's".to_string())]);
        clean_env_wrapper(&path, Path::new("/bin/x"), &env, Some(Path::new("/e"))).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "#!/bin/sh\nexec env -i $(env | grep -E '^HARNESS_RUN_[A-Za-z0-9_]+=1$') 'A=it'\\''s' '/bin/x' \"$@\" 2>>'/e'\n"
        );
    }
}
