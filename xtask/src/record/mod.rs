//! `cargo xtask record`: re-records the Claude Code corpus from the real binary against a
//! scripted stand-in for the Anthropic Messages API, and reports drift.
//!
//! ```text
//! cargo xtask record [--claude PATH] [--version V] [--out DIR] [SCENARIO...]
//! cargo xtask record --check [--claude PATH] [--version V] [SCENARIO...]
//! cargo xtask record --backend codex [--check] [--codex PATH] [--version V] [SCENARIO...]
//! ```
//!
//! - Without `--claude`, installs `@anthropic-ai/claude-code@V` (default [`CLAUDE_VERSION`],
//!   the corpus's version) with npm into `target/record-cache/` and runs the platform binary
//!   from `@anthropic-ai/claude-code-linux-x64` (about 250 MB; needs Node.js and npm).
//! - Each scenario of `fixtures/claude/scenarios/*.json` (all, or those named) runs in a fresh
//!   project at `/home/dev/project` with `HOME=/home/dev` and `CLAUDE_CODE_TMPDIR=/tmp/claude`,
//!   the very paths of the shared recordings, so nothing is scrubbed afterwards (with
//!   `--include-partial-messages` a path is split across `input_json_delta` chunks, which no
//!   search-and-replace could fix). Both folders are created for the run and removed after
//!   it; the command refuses to touch a `/home/dev` it did not create.
//! - The prompt is passed as the argument right after `--print`, exactly as the shared `.cmd`
//!   files show (the scenarios are our own text, and [`scenario::Scenario::validate`] refuses a
//!   prompt starting with `-`); a scenario driven through `--input-format stream-json` writes
//!   its lines to stdin instead.
//! - Only loopback traffic: the binary's API base URL is the stand-in on `127.0.0.1`, the
//!   environment carries the README's no-telemetry switches and a dead loopback proxy for
//!   anything else, and the stand-in stops by itself (see [`server`]).
//! - Writes `NAME.jsonl` (stdout), `NAME.stderr` and `NAME.cmd` (argv, environment, working
//!   directory) into `fixtures/claude/recorded/` (or `--out DIR`), then checks each fresh
//!   recording against the golden `fixtures/claude/NAME.expected.jsonl` (ids, durations and
//!   costs neutralized, see [`drift`]) and prints one line per scenario.
//! - `--check` records into a temporary folder instead and reports drift against the
//!   committed recordings (`fixtures/claude/recorded/`, or `fixtures/claude/` when that holds
//!   none): new or vanished top-level types, system subtypes, content block types, tool names,
//!   `tool_use_result` shapes, and any difference in the normalized events. It exits non-zero
//!   on drift.
//!
//! Not run in CI: it needs npm, the network for the install, and a few minutes.
//!
//! `--backend codex` does the same for `codex exec` (see [`codex`]): the Responses API stand-in
//! [`openai`], scenarios in `fixtures/codex/scenarios/`, recordings in `fixtures/codex/recorded/`.
//! `--codex PATH` names a `codex` binary (and implies `--backend codex`); `--version` then
//! picks the `@openai/codex` version (default [`codex::CODEX_VERSION`]).
//!
//! The HTTP part ([`server`]) knows nothing of either API: each stand-in is a handler on it.

pub mod anthropic;
pub mod codex;
pub mod drift;
pub mod gemini;
pub mod gemini_api;
pub mod openai;
pub mod scenario;
pub mod server;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use anthropic::Anthropic;
use scenario::{HttpsPage, Interrupt, Scenario};
use server::Server;

/// The Claude Code version the shared corpus was recorded with.
pub const CLAUDE_VERSION: &str = "2.1.197";
/// Where the scratch project lives (the shared recordings' path).
const PROJECT: &str = "/home/dev/project";
/// The throwaway HOME.
const HOME: &str = "/home/dev";
/// The binary's temporary folder.
const TMP: &str = "/tmp/claude";
/// The file that marks `/home/dev` as ours to delete.
const MARKER: &str = ".harness-record";
/// The longest one scenario may run.
const RUN_LIMIT: Duration = Duration::from_secs(180);
/// How long after the tool use shows on stdout the interrupt is sent (the tool is running).
const INTERRUPT_DELAY: Duration = Duration::from_millis(1500);

/// Options of one invocation.
#[derive(Debug, Default)]
struct Options {
    claude: Option<PathBuf>,
    version: Option<String>,
    out: Option<PathBuf>,
    check: bool,
    codex: bool,
    gemini: bool,
    names: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| {
            args.next()
                .cloned()
                .with_context(|| format!("{flag} needs a value"))
        };
        match arg.as_str() {
            "--claude" => options.claude = Some(PathBuf::from(value("--claude")?)),
            "--codex" => {
                options.claude = Some(PathBuf::from(value("--codex")?));
                options.codex = true;
            }
            "--gemini" => {
                options.claude = Some(PathBuf::from(value("--gemini")?));
                options.gemini = true;
            }
            "--version" => options.version = Some(value("--version")?),
            "--out" => options.out = Some(PathBuf::from(value("--out")?)),
            "--check" => options.check = true,
            "--backend" => match value("--backend")?.as_str() {
                "claude" => options.codex = false,
                "codex" => options.codex = true,
                "gemini" => options.gemini = true,
                other => bail!("backend {other:?}: `claude`, `codex` or `gemini`"),
            },
            flag if flag.starts_with('-') => bail!(
                "unknown option {flag}\nusage: cargo xtask record [--backend claude|codex|gemini] [--check] [--claude PATH | --codex PATH | --gemini PATH] [--version V] [--out DIR] [SCENARIO...]"
            ),
            name => options.names.push(name.to_string()),
        }
    }
    Ok(options)
}

/// Entry point of `cargo xtask record ARGS`.
pub fn record(args: &[String]) -> Result<()> {
    let options = parse(args)?;
    if options.codex {
        return codex::record(&options);
    }
    if options.gemini {
        return gemini::record(&options);
    }
    let scenarios = load_scenarios(&options.names)?;
    let claude = match &options.claude {
        Some(path) => path.clone(),
        None => install(options.version.as_deref().unwrap_or(CLAUDE_VERSION))?,
    };
    let fixtures_dir = fixtures::root().join("claude");
    let recorded = fixtures_dir.join("recorded");
    let out = if options.check {
        std::env::temp_dir().join(format!("harness-record-check-{}", std::process::id()))
    } else {
        options.out.clone().unwrap_or_else(|| recorded.clone())
    };
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let mut failures = Vec::new();
    let mut skipped = 0;
    for (name, scenario) in &scenarios {
        if let Some(why) = &scenario.unsupported {
            println!("{name}: skipped: {why} ({})", scenario.about);
            skipped += 1;
            continue;
        }
        let notes =
            run(name, scenario, &claude, &out).with_context(|| format!("recording {name}"))?;
        let raw = read(&out.join(format!("{name}.jsonl")));
        let stderr = read(&out.join(format!("{name}.stderr")));
        let mut problems = notes;
        if options.check {
            let baseline = if has_recordings(&recorded) {
                &recorded
            } else {
                &fixtures_dir
            };
            let old = baseline.join(format!("{name}.jsonl"));
            if !old.exists() {
                problems.push(format!("no committed recording {}", old.display()));
            } else {
                let old_stderr = read(&baseline.join(format!("{name}.stderr")));
                problems.extend(drift::drift(&read(&old), &old_stderr, &raw, &stderr));
            }
        } else {
            problems.extend(golden(&fixtures_dir, name, &raw, &stderr));
        }
        if problems.is_empty() {
            println!("{name}: ok");
        } else {
            println!("{name}: {} difference(s)", problems.len());
            for problem in problems.iter().take(12) {
                println!("    {problem}");
            }
            failures.push(name.clone());
        }
    }
    let ran = scenarios.len() - skipped;
    let what = if options.check {
        "without drift"
    } else {
        "reproducing the golden events"
    };
    println!(
        "{}/{ran} scenarios {what}{}; recordings in {}",
        ran - failures.len(),
        if skipped > 0 {
            format!(" ({skipped} skipped)")
        } else {
            String::new()
        },
        out.display()
    );
    if !failures.is_empty() {
        bail!(
            "{} scenario(s) differ: {}",
            failures.len(),
            failures.join(", ")
        );
    }
    Ok(())
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn has_recordings(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .filter_map(|e| e.ok())
            .any(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
    })
}

/// The differences between a fresh recording's events and the golden expected file.
fn golden(fixtures_dir: &Path, name: &str, raw: &str, stderr: &str) -> Vec<String> {
    let expected_path = fixtures_dir.join(format!("{name}.expected.jsonl"));
    if !expected_path.exists() {
        return Vec::new();
    }
    let expected = read(&expected_path);
    let expected_raw = read(&fixtures_dir.join(format!("{name}.jsonl")));
    let events = drift::normalize(raw.as_bytes(), stderr.as_bytes());
    drift::event_drift(&expected, &expected_raw, &events, raw)
        .into_iter()
        .map(|p| format!("golden: {p}"))
        .collect()
}

/// The scenarios to run, by name, sorted.
fn load_scenarios(names: &[String]) -> Result<Vec<(String, Scenario)>> {
    let dir = fixtures::root().join("claude/scenarios");
    let mut all = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if let Some(name) = path
            .file_name()
            .and_then(|f| f.to_str())
            .and_then(|f| f.strip_suffix(".json"))
        {
            all.insert(name.to_string(), path.clone());
        }
    }
    let chosen: Vec<String> = if names.is_empty() {
        all.keys().cloned().collect()
    } else {
        names.to_vec()
    };
    chosen
        .into_iter()
        .map(|name| {
            let path = all
                .get(&name)
                .with_context(|| format!("no scenario {name} in {}", dir.display()))?;
            Ok((name, Scenario::load(path)?))
        })
        .collect()
}

/// Installs Claude Code `version` with npm into `target/record-cache/` (once) and returns the
/// platform binary.
fn install(version: &str) -> Result<PathBuf> {
    let cache = crate::root().join("target/record-cache").join(version);
    let platform = match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x64",
        ("linux", "aarch64") => "linux-arm64",
        ("macos", "x86_64") => "darwin-x64",
        ("macos", "aarch64") => "darwin-arm64",
        (os, arch) => bail!("no Claude Code binary package for {os}/{arch}"),
    };
    let binary = cache.join(format!(
        "node_modules/@anthropic-ai/claude-code-{platform}/claude"
    ));
    npm_install(
        &cache,
        &format!("@anthropic-ai/claude-code@{version}"),
        binary,
    )
}

/// Installs `package` (`name@version`) with npm into `cache` unless `binary`, the file it
/// provides, is already there; returns `binary`.
pub(crate) fn npm_install(cache: &Path, package: &str, binary: PathBuf) -> Result<PathBuf> {
    if binary.exists() {
        return Ok(binary);
    }
    std::fs::create_dir_all(cache)?;
    eprintln!("installing {package} into {}", cache.display());
    let status = Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--prefix",
        ])
        .arg(cache)
        .arg(package)
        .status()
        .context("running npm (Node.js and npm are needed to record)")?;
    if !status.success() || !binary.exists() {
        bail!(
            "npm install failed ({status}); expected {}",
            binary.display()
        );
    }
    Ok(binary)
}

/// The environment of a run: the README's switches, then the scenario's changes.
fn environment(scenario: &Scenario, port: u16) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = [
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("LANG", "C.UTF-8"),
        ("TERM", "dumb"),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-api03-mock-key-for-loopback-only",
        ),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("IS_SANDBOX", "1"),
        ("HOME", HOME),
        ("CLAUDE_CODE_TMPDIR", TMP),
        ("TMPDIR", TMP),
        // Anything not addressed to the stand-in goes to a port nobody listens on.
        ("HTTPS_PROXY", "http://127.0.0.1:9"),
        ("HTTP_PROXY", "http://127.0.0.1:9"),
        ("NO_PROXY", "127.0.0.1,localhost"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
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
    std::fs::create_dir_all(PROJECT)?;
    std::fs::write(
        Path::new(HOME).join(MARKER),
        "created by cargo xtask record\n",
    )?;
    std::fs::create_dir_all(TMP)?;
    for (file, text) in &scenario.files {
        let path = Path::new(PROJECT).join(file);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn clean_dirs() -> Result<()> {
    let home = Path::new(HOME);
    if home.exists() {
        if !home.join(MARKER).exists() {
            bail!("{HOME} exists and was not made by `cargo xtask record`; not touching it");
        }
        std::fs::remove_dir_all(home)?;
    }
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
fn run(name: &str, scenario: &Scenario, claude: &Path, out: &Path) -> Result<Vec<String>> {
    fresh_dirs(scenario)?;
    let api = Arc::new(Mutex::new(Anthropic::new(scenario, seed(name))));
    let handler_api = Arc::clone(&api);
    let server = Server::start(
        scenario.port.unwrap_or(0),
        Box::new(move |request| match handler_api.lock() {
            Ok(mut api) => api.handle(request),
            Err(_) => server::Reply::not_found(&request.path),
        }),
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
    let mut stderr_pipe = child.stderr.take().context("no stderr pipe")?;
    let stderr_thread = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr_pipe, &mut bytes);
        bytes
    });
    let child = Arc::new(Mutex::new(child));
    let watchdog_child = Arc::clone(&child);
    let started = Instant::now();
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog_done = Arc::clone(&done);
    let watchdog = std::thread::spawn(move || {
        while !watchdog_done.load(std::sync::atomic::Ordering::Relaxed) {
            if started.elapsed() > RUN_LIMIT {
                if let Ok(mut child) = watchdog_child.lock() {
                    let _ = child.kill();
                }
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    });

    let mut stdout_bytes = Vec::new();
    let mut pending = scenario.interrupt.clone();
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    while reader.read_until(b'\n', &mut line)? > 0 {
        stdout_bytes.extend_from_slice(&line);
        if let Some(how) = &pending
            && shows_tool_use(&String::from_utf8_lossy(&line))
        {
            if let Ok(mut child) = child.lock() {
                interrupt(&mut child, how);
                drop(child.stdin.take());
            }
            pending = None;
        }
        line.clear();
    }
    let status = loop {
        if let Ok(mut child) = child.lock()
            && let Some(status) = child.try_wait()?
        {
            break status;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let timed_out = watchdog.join().unwrap_or(false);
    let stderr_bytes = stderr_thread.join().unwrap_or_default();
    let requests = server.stop();
    drop(https);
    clean_dirs()?;

    std::fs::write(out.join(format!("{name}.jsonl")), &stdout_bytes)?;
    std::fs::write(out.join(format!("{name}.stderr")), &stderr_bytes)?;
    let mut full_argv = vec!["claude".to_string()];
    full_argv.extend(argv);
    let cmd = json!({"cwd": PROJECT, "env": env, "argv": full_argv});
    std::fs::write(
        out.join(format!("{name}.cmd")),
        serde_json::to_string_pretty(&cmd)? + "\n",
    )?;

    let mut notes = Vec::new();
    if timed_out {
        notes.push(format!("killed after {}s", RUN_LIMIT.as_secs()));
    }
    if let Ok(api) = api.lock() {
        if api.overflow > 0 {
            notes.push(format!(
                "{} request(s) after the script ran out; requests: {}",
                api.overflow,
                requests.join(", ")
            ));
        }
        if api.remaining() > 0 {
            notes.push(format!(
                "{} scripted turn(s) never requested",
                api.remaining()
            ));
        }
    }
    let _ = status;
    Ok(notes)
}

/// A per-scenario seed for generated ids, stable across runs.
fn seed(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn options() {
        let args: Vec<String> = ["--check", "--claude", "/x/claude", "a_plain_text"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = parse(&args).unwrap();
        assert!(o.check);
        assert_eq!(o.claude, Some(PathBuf::from("/x/claude")));
        assert_eq!(o.names, ["a_plain_text"]);
        assert!(parse(&["--bogus".to_string()]).is_err());
        assert!(
            parse(&["--backend".to_string(), "codex".to_string()])
                .unwrap()
                .codex
        );
        assert!(parse(&["--backend".to_string(), "no-such".to_string()]).is_err());
        let gemini = parse(&["--backend".to_string(), "gemini".to_string()]).unwrap();
        assert!(gemini.gemini && !gemini.codex);
        let gemini = parse(&["--gemini".to_string(), "/x/gemini".to_string()]).unwrap();
        assert!(gemini.gemini);
        assert_eq!(gemini.claude, Some(PathBuf::from("/x/gemini")));
        let codex = parse(&["--codex".to_string(), "/x/codex".to_string()]).unwrap();
        assert!(codex.codex);
        assert_eq!(codex.claude, Some(PathBuf::from("/x/codex")));
    }

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
