//! Claude Code's part of `cargo xtask record`: its scenarios (`fixtures/claude/scenarios/`),
//! the scratch folders it runs in, and one run of the binary against the Messages API
//! stand-in ([`super::anthropic`]).
//!
//! - Each scenario runs in a fresh project at `/home/dev/project` with `HOME=/home/dev` and
//!   `CLAUDE_CODE_TMPDIR=/tmp/claude`, the very paths of the recordings, so nothing is scrubbed
//!   afterwards (with `--include-partial-messages` a path is split across `input_json_delta`
//!   chunks, which no search-and-replace could fix). Both folders are created for the run and
//!   removed after it; the command refuses to touch a `/home/dev` it did not create.
//! - The prompt is passed as the argument right after `--print`; a scenario driven through
//!   `--input-format stream-json` writes its lines to stdin instead.
//! - Only loopback traffic: the binary's API base URL is the stand-in on `127.0.0.1`, the
//!   environment carries the README's no-telemetry switches and a dead loopback proxy for
//!   anything else, and the stand-in stops by itself.
//! - With `RECORD_DUMP_REQUESTS=1` in the environment, the request bodies of each run go to
//!   `NAME.requests.jsonl` beside its recording (the tools offered, what each thread sends).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use super::anthropic::{Anthropic, Steps};
use super::scenario::{HttpsPage, Interrupt, Scenario};
use super::{Options, drift, npm_install, read, shared};

/// The Claude Code version `fixtures/claude/` is recorded with.
pub const CLAUDE_VERSION: &str = harness_agents_claude::VERSIONS.recorded;
/// Where the scratch project lives (the shared recordings' path).
const PROJECT: &str = "/home/dev/project";
/// The throwaway HOME.
const HOME: &str = "/home/dev";
/// The binary's temporary folder.
const TMP: &str = "/tmp/claude";
/// The longest one scenario may run.
const RUN_LIMIT: Duration = Duration::from_secs(180);
/// How long after the tool use shows on stdout the interrupt is sent (the tool is running).
const INTERRUPT_DELAY: Duration = Duration::from_millis(1500);

/// The Claude Code package on npm.
pub const PACKAGE: &str = "@anthropic-ai/claude-code";

/// Entry point of `cargo xtask record` for Claude Code.
pub(super) fn record(options: &Options) -> Result<()> {
    let scenarios = load_scenarios(&options.names)?;
    let claude = match &options.binary {
        Some(path) => path.clone(),
        None => install(
            &super::cache_dir(),
            options.version.as_deref().unwrap_or(CLAUDE_VERSION),
        )?,
    };
    let fixtures_dir = fixtures::root().join("claude");
    let out = super::Output::new(options, &fixtures_dir)?;
    let mut report = super::Report::new(options.check);
    for (name, scenario) in &scenarios {
        if let Some(why) = &scenario.unsupported {
            report.skip(name, &format!("{why} ({})", scenario.about));
            continue;
        }
        // Read before the run: it may overwrite the committed recording.
        let old_raw = read(&fixtures_dir.join(format!("{name}.jsonl")));
        let old_stderr = read(&fixtures_dir.join(format!("{name}.stderr")));
        let notes = run(name, scenario, &claude, out.path(), options.sessions)
            .with_context(|| format!("recording {name}"))?;
        let raw = read(&out.path().join(format!("{name}.jsonl")));
        let stderr = read(&out.path().join(format!("{name}.stderr")));
        let mut problems = notes;
        problems.extend(shared::recording_drift(
            options.check,
            (&fixtures_dir, name),
            (&old_raw, &old_stderr),
            (&raw, &stderr),
            |raw, stderr| drift::normalize(raw.as_bytes(), stderr.as_bytes()),
            |old, new| drift::shape_drift(&drift::shape(old), &drift::shape(new)),
        ));
        report.add(name, &scenario.about, problems);
    }
    report.finish("Claude", out.path())
}

/// The scenarios to run, by name, sorted.
fn load_scenarios(names: &[String]) -> Result<Vec<(String, Scenario)>> {
    let dir = fixtures::root().join("claude/scenarios");
    super::scenario_names(names, &dir)?
        .into_iter()
        .map(|name| {
            let path = dir.join(format!("{name}.json"));
            if !path.is_file() {
                bail!("no scenario {name} in {}", dir.display());
            }
            let scenario = Scenario::load(&path)?;
            Ok((name, scenario))
        })
        .collect()
}

/// Installs Claude Code `version` with npm into `cache/VERSION/` (once) and returns the
/// platform binary.
pub fn install(cache: &Path, version: &str) -> Result<PathBuf> {
    let cache = cache.join(version);
    let Some(platform) = shared::npm_platform() else {
        let (os, arch) = (std::env::consts::OS, std::env::consts::ARCH);
        bail!("no Claude Code binary package for {os}/{arch}")
    };
    let binary = cache.join(format!(
        "node_modules/@anthropic-ai/claude-code-{platform}/claude"
    ));
    npm_install(&cache, &format!("{PACKAGE}@{version}"), binary)
}

/// The environment of a run: the README's switches, then the scenario's changes.
fn environment(scenario: &Scenario, port: u16) -> BTreeMap<String, String> {
    environment_in(HOME, TMP, scenario, port)
}

/// The environment of a run with `home` as HOME and `tmp` as the temporary folder.
pub(super) fn environment_in(
    home: &str,
    tmp: &str,
    scenario: &Scenario,
    port: u16,
) -> BTreeMap<String, String> {
    let mut env = shared::offline_env(
        [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            (
                "ANTHROPIC_API_KEY",
                "sk-ant-api03-mock-key-for-loopback-only",
            ),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("IS_SANDBOX", "1"),
            ("HOME", home),
            ("CLAUDE_CODE_TMPDIR", tmp),
            ("TMPDIR", tmp),
        ]
        .map(|(k, v)| (k, v.to_string())),
    );
    env.insert(
        "ANTHROPIC_BASE_URL".into(),
        format!("http://127.0.0.1:{port}"),
    );
    for key in &scenario.unset_env {
        env.remove(key);
    }
    env.extend(scenario.env.clone());
    env
}

/// Removes and recreates the throwaway HOME (with the project) and temporary folder.
fn fresh_dirs(scenario: &Scenario) -> Result<()> {
    clean_dirs()?;
    shared::fresh_home(HOME, PROJECT)?;
    std::fs::create_dir_all(TMP)?;
    shared::write_files(Path::new(PROJECT), &scenario.files)
}

fn clean_dirs() -> Result<()> {
    shared::clean(HOME)?;
    if Path::new(TMP).exists() {
        std::fs::remove_dir_all(TMP)?;
    }
    Ok(())
}

/// A helper process of ours, stopped (by its own id) when dropped.
struct Helper(Child);

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Serves `page` over HTTPS on `127.0.0.1:page.port` with `openssl s_server -HTTP`, after
/// writing a fresh self-signed certificate for 127.0.0.1 to `HOME/tls/{cert,key}.pem`.
fn serve_https(page: &HttpsPage) -> Result<Child> {
    let tls = Path::new(HOME).join("tls");
    let root = tls.join("www");
    let file = root.join(page.path.trim_start_matches('/'));
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // `-HTTP` serves each file as a whole response, so the status line is ours ("200 OK").
    let response = format!(
        "HTTP/1.0 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n{}",
        page.body.len(),
        page.body
    );
    std::fs::write(&file, response)?;
    let made = Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
        ])
        .args([
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
        ])
        .arg("-keyout")
        .arg(tls.join("key.pem"))
        .arg("-out")
        .arg(tls.join("cert.pem"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("running openssl (needed for the HTTPS page)")?;
    if !made.success() {
        bail!("openssl req failed: {made}");
    }
    let mut server = Command::new("openssl")
        .args(["s_server", "-quiet", "-HTTP", "-accept"])
        .arg(format!("127.0.0.1:{}", page.port))
        .arg("-cert")
        .arg(tls.join("cert.pem"))
        .arg("-key")
        .arg(tls.join("key.pem"))
        .current_dir(&root)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting openssl s_server")?;
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", page.port)).is_err() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = server.kill();
            let _ = server.wait();
            bail!("openssl s_server did not listen on 127.0.0.1:{}", page.port);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(server)
}

/// Sends the interrupt a scenario asks for.
fn interrupt(child: &mut Child, how: &Interrupt) {
    std::thread::sleep(INTERRUPT_DELAY);
    match how {
        Interrupt::Sigint => {
            if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
            }
        }
        Interrupt::Stdin(line) => {
            if let Some(stdin) = child.stdin.as_mut() {
                let _ = writeln!(stdin, "{line}");
            }
        }
    }
}

/// Whether a stdout line is an assistant message with a tool use.
fn shows_tool_use(line: &str) -> bool {
    serde_json::from_str::<Value>(line).is_ok_and(|v| {
        v.get("type") == Some(&json!("assistant"))
            && v.pointer("/message/content")
                .and_then(Value::as_array)
                .is_some_and(|c| c.iter().any(|b| b.get("type") == Some(&json!("tool_use"))))
    })
}

/// Runs one scenario; writes its three files into `out`; returns notes on the script's use.
fn run(
    name: &str,
    scenario: &Scenario,
    claude: &Path,
    out: &Path,
    sessions: bool,
) -> Result<Vec<String>> {
    fresh_dirs(scenario)?;
    let api = Arc::new(Mutex::new(Anthropic::new(
        scenario,
        Steps::AssistantMessages,
        shared::seed(name),
    )));
    // With RECORD_DUMP_REQUESTS set, every request body goes to NAME.requests.jsonl (for
    // writing scenarios: what tools the binary offers, what each thread sends).
    let server = shared::serve(
        scenario.port.unwrap_or(0),
        &api,
        shared::dump_path(out, name),
    )?;
    let https = match &scenario.https_page {
        Some(page) => Some(Helper(serve_https(page)?)),
        None => None,
    };
    let env = environment(scenario, server.port());
    let mut argv = vec!["--print".to_string()];
    argv.extend(scenario.prompt.clone());
    argv.extend(scenario.args.iter().cloned());

    let needs_stdin =
        !scenario.stdin.is_empty() || matches!(scenario.interrupt, Some(Interrupt::Stdin(_)));
    let mut child = Command::new(claude)
        .args(&argv)
        .env_clear()
        .envs(&env)
        .current_dir(PROJECT)
        .stdin(if needs_stdin {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", claude.display()))?;
    if let Some(stdin) = child.stdin.as_mut() {
        for line in &scenario.stdin {
            writeln!(stdin, "{line}")?;
        }
    }
    if scenario.interrupt.is_none() {
        drop(child.stdin.take());
    }
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let run = super::Watched::start(child, Instant::now(), RUN_LIMIT)?;

    let mut pending = scenario.interrupt.clone();
    let stdout_bytes = shared::read_lines(stdout, |line| {
        if let Some(how) = &pending
            && shows_tool_use(&String::from_utf8_lossy(line))
        {
            if let Ok(mut child) = run.child().lock() {
                interrupt(&mut child, how);
                drop(child.stdin.take());
            }
            pending = None;
        }
    })?;
    let (status, timed_out, stderr_bytes) = run.wait()?;
    let api_notes = shared::stop(server, &api);
    drop(https);
    if sessions {
        let stored = Path::new(HOME).join(".claude/projects");
        super::keep_sessions(&stored, &out.join(name).join("projects"))?;
    }
    clean_dirs()?;

    shared::write_streams(out, name, &stdout_bytes, &stderr_bytes)?;
    let mut full_argv = vec!["claude".to_string()];
    full_argv.extend(argv);
    let cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv});
    shared::write_cmd(out, name, &cmd, None)?;

    let _ = status;
    Ok(shared::run_notes(timed_out, RUN_LIMIT, api_notes))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn environment_follows_the_scenario() {
        let mut scenario = Scenario::default();
        scenario.unset_env.push("ANTHROPIC_API_KEY".into());
        scenario
            .env
            .insert("CLAUDE_CODE_OAUTH_TOKEN".into(), "t".into());
        let env = environment(&scenario, 4242);
        assert_eq!(env["ANTHROPIC_BASE_URL"], "http://127.0.0.1:4242");
        assert_eq!(env["HOME"], HOME);
        assert!(!env.contains_key("ANTHROPIC_API_KEY"));
        assert_eq!(env["CLAUDE_CODE_OAUTH_TOKEN"], "t");
    }

    #[test]
    fn tool_use_lines_are_recognized() {
        assert!(shows_tool_use(
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}"#
        ));
        assert!(!shows_tool_use(
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"tool_use"}]}}"#
        ));
    }
}
