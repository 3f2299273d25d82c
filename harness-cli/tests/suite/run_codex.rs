//! `harness run --backend codex` against the fake `codex` kept in `fixtures/fake-agent/` (its
//! header lists the environment variables it obeys): it records its argv and stdin, replays a
//! recorded stream and its stderr, exits as the recording did, or hangs on request. No test
//! runs the real `codex`.
//!
//! The recordings' expected files assume the project lived at `/home/dev2/project`, and the
//! driver will not start an agent in a missing directory. So the golden replay runs the fake in
//! `TMP/root/home/dev2/project` and strips `TMP/root` from what `harness` prints: relative
//! paths resolve against the same directory names, `..` included, and nothing else changes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fixtures::recording_order;
use serde_json::Value;

use super::{assert_gone, harness, read_when_written};

/// A few lines of a successful Codex run.
const SMALL: &str = concat!(
    r#"{"type":"thread.started","thread_id":"th-1"}"#,
    "\n",
    r#"{"type":"turn.started"}"#,
    "\n",
    r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}"#,
    "\n",
    r#"{"type":"turn.completed","usage":{"input_tokens":5,"cached_input_tokens":0,"output_tokens":1,"reasoning_output_tokens":0}}"#,
    "\n",
);

/// A run cut short: a command started, never completed, no terminal line.
const CUT: &str = concat!(
    r#"{"type":"thread.started","thread_id":"th-1"}"#,
    "\n",
    r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"sleep 100","status":"in_progress"}}"#,
    "\n",
);

/// A temporary folder for what the fake records, removed on drop; the run's directory.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("harness-run-codex-{name}-"))
            .tempdir()
            .unwrap();
        Fake { dir }
    }

    /// The fake `codex` script in `fixtures/fake-agent/` (its header lists the environment
    /// variables it obeys).
    fn agent(&self) -> PathBuf {
        fixtures::root().join("fake-agent").join("codex")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `harness run --backend codex` with `args`, the fake's environment, and neither
    /// `CODEX_BIN` nor `CLAUDE_BIN` inherited.
    fn command(&self, args: &[&str], env: &[(&str, &Path)]) -> Command {
        let mut cmd = harness();
        cmd.args(["run", "--backend", "codex"])
            .args(args)
            .env_remove("CODEX_BIN")
            .env_remove("CLAUDE_BIN")
            .stdin(Stdio::null());
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd
    }

    /// `harness run --backend codex --binary FAKE --cwd DIR` with `args`.
    fn run(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = self.command(&[], env);
        cmd.arg("--binary")
            .arg(self.agent())
            .arg("--cwd")
            .arg(self.dir.path())
            .args(args);
        guarded(cmd)
    }
}

/// Runs `cmd` to completion, failing (not hanging) when it takes more than a minute.
fn guarded(mut cmd: Command) -> Output {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap()
}

fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["kind"].as_str().unwrap()).collect()
}

#[test]
fn every_codex_recording_run_live_prints_its_expected_events_and_exit_code() {
    let fake = Fake::new("golden");
    let root = fake.path("root");
    let project = root.join("home/dev2/project");
    std::fs::create_dir_all(&project).unwrap();
    let root = root.display().to_string();
    let mut checked = 0;
    let mut failures = Vec::new();
    for folder in fixtures::CODEX_FOLDERS {
        for fixture in fixtures::streams(folder).unwrap() {
            let exit = fixture.recorded_exit_code();
            let exit_text = PathBuf::from(exit.to_string());
            let mut env = vec![
                ("FAKE_STREAM", fixture.stream.as_path()),
                ("FAKE_EXIT", exit_text.as_path()),
            ];
            if let Some(stderr) = &fixture.stderr {
                env.push(("FAKE_STDERR_FILE", stderr));
            }
            let mut cmd = fake.command(&[], &env);
            cmd.arg("--binary")
                .arg(fake.agent())
                .arg("--cwd")
                .arg(&project)
                .arg("hello");
            let output = guarded(cmd);
            let actual = String::from_utf8(output.stdout).unwrap().replace(&root, "");
            let expected = std::fs::read_to_string(&fixture.expected).unwrap();
            if let Err(problems) = fixtures::compare(
                &recording_order(&expected).unwrap(),
                &recording_order(&actual).unwrap(),
            ) {
                failures.push(format!("{}: {}", fixture.name, problems.join("; ")));
            }
            let outcome: Value = serde_json::from_str(actual.lines().last().unwrap()).unwrap();
            // A negative recorded status is the signal that ended Codex: no exit code (O1).
            let code = if exit < 0 { Value::Null } else { exit.into() };
            assert_eq!(outcome["exit_code"], code, "{}", fixture.name);
            let status = if outcome["status"] == "success" { 0 } else { 1 };
            assert_eq!(output.status.code(), Some(status), "{}", fixture.name);
            checked += 1;
        }
    }
    assert_eq!(checked, 51 + 50 + 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_prompt_starting_with_dashes_reaches_stdin_and_appears_nowhere_in_argv() {
    let fake = Fake::new("argv");
    let (argv, stdin) = (fake.path("argv"), fake.path("stdin"));
    let prompt = "--dangerously-bypass-approvals-and-sandbox and then\n-m other";
    let output = fake.run(
        &[
            "--model",
            "gpt-5.5",
            "--permission-mode",
            "workspace-write",
            "--arg",
            "--ephemeral",
            "--",
            prompt,
        ],
        &[("FAKE_ARGV", &argv), ("FAKE_STDIN", &stdin)],
    );
    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), prompt);
    let args = std::fs::read_to_string(&argv).unwrap();
    let dir = fake.dir.path().display().to_string();
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            &format!("--cd={dir}"),
            "--model=gpt-5.5",
            "--sandbox=workspace-write",
            "--ephemeral",
            "-"
        ]
    );
    assert!(!args.contains("dangerously"), "{args}");
    // The fake printed nothing: the run is incomplete.
    assert_eq!(output.status.code(), Some(1));
}

/// A binary named by `--binary` or `$CODEX_BIN` that does not exist says so;
/// only `codex` missing from `PATH` gets the install hint.
#[test]
fn a_missing_codex_says_what_is_missing_and_exits_127() {
    let fake = Fake::new("missing");
    let stderr = |output: &Output| String::from_utf8_lossy(&output.stderr).into_owned();
    let output = guarded(fake.command(&["--binary", "/nonexistent/codex", "hi"], &[]));
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: /nonexistent/codex does not exist\n"
    );
    assert!(output.stdout.is_empty());

    let output = guarded(fake.command(
        &["hi"],
        &[("CODEX_BIN", Path::new("/nonexistent/from-env"))],
    ));
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: /nonexistent/from-env does not exist\n"
    );

    // No `codex` on PATH (an empty directory): the install hint.
    let empty = fake.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = guarded(fake.command(&["hi"], &[("PATH", &empty)]));
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: codex was not found on PATH; install it with `npm install -g @openai/codex`\n"
    );
}

#[test]
fn codex_bin_names_the_binary_when_no_binary_is_given() {
    let fake = Fake::new("env");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let mut cmd = fake.command(
        &["hi"],
        &[("CODEX_BIN", &fake.agent()), ("FAKE_STREAM", &stream)],
    );
    // Claude's variable is not Codex's.
    cmd.env("CLAUDE_BIN", "/nonexistent/claude");
    let output = guarded(cmd);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = lines(&output);
    assert_eq!(kinds(&events), ["agent", "outcome"]);
    assert_eq!(events[1]["session_id"], "th-1");
    assert_eq!(events[1]["exit_code"], 0);
}

#[test]
fn the_agents_exit_code_is_in_the_outcome() {
    let fake = Fake::new("exit");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let output = fake.run(
        &["hi"],
        &[("FAKE_STREAM", &stream), ("FAKE_EXIT", Path::new("3"))],
    );
    let events = lines(&output);
    let outcome = events.last().unwrap();
    assert_eq!(outcome["exit_code"], 3);
    // The exit status of `harness` follows the outcome's status.
    assert_eq!(outcome["status"], "success");
    assert_eq!(output.status.code(), Some(0));

    std::fs::write(&stream, CUT).unwrap();
    let output = fake.run(
        &["hi"],
        &[("FAKE_STREAM", &stream), ("FAKE_EXIT", Path::new("-9"))],
    );
    let events = lines(&output);
    assert_eq!(kinds(&events), ["unknown", "error", "outcome"]);
    assert_eq!(events[0]["reason"], "unresolved_tool_use");
    assert_eq!(events[2]["status"], "incomplete");
    assert_eq!(events[2]["exit_code"], Value::Null);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_timeout_kills_the_agents_process_group_and_says_so() {
    let fake = Fake::new("timeout");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, CUT).unwrap();
    let pids = fake.path("pids");
    let output = fake.run(
        &["--timeout", "1", "hi"],
        &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)],
    );
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output);
    let errors: Vec<&str> = events
        .iter()
        .filter(|e| e["kind"] == "error")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        [
            "the run timed out after 1 second; its process group was killed",
            "stream ended without a result"
        ]
    );
    let outcome = events.last().unwrap();
    assert_eq!(outcome["status"], "incomplete");
    assert_eq!(outcome["exit_code"], Value::Null);
    assert_eq!(outcome["counts"]["error"], 2);
    assert_eq!(outcome["counts"]["unknown"], 1);
    // The script and the `sleep` it started are both gone.
    for pid in read_when_written(&pids).lines() {
        assert_gone(pid);
    }
}
