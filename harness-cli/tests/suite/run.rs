//! `harness run` against the fake `claude` kept in `fixtures/fake-agent/` (its header lists the
//! environment variables it obeys): it replays a recorded stream, records its argv and stdin,
//! writes to stderr, exits non-zero, hangs or dies mid-line on request. No test runs the real
//! `claude` or touches the network.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::{assert_gone, harness, read_when_written};

/// The fake agent, and a temporary folder (its working directory and the files it records),
/// removed on drop.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("harness-run-{name}-"))
            .tempdir()
            .unwrap();
        Fake { dir }
    }

    fn agent(&self) -> PathBuf {
        fake_claude()
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `harness run --binary FAKE` with `args` and the fake's environment.
    fn command(&self, args: &[&str], env: &[(&str, &Path)]) -> Command {
        let mut cmd = harness();
        cmd.arg("run")
            .arg("--binary")
            .arg(self.agent())
            .arg("--cwd")
            .arg(self.dir.path())
            .args(args)
            .env_remove("CLAUDE_BIN")
            .env_remove("NO_COLOR");
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd
    }

    fn run(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut cmd = self.command(args, env);
        cmd.stdin(Stdio::null());
        guarded(cmd)
    }
}

/// The fake `claude` script in `fixtures/fake-agent/`.
pub fn fake_claude() -> PathBuf {
    fixtures::root().join("fake-agent").join("claude")
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

fn messages(events: &[Value], kind: &str) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["kind"] == kind)
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect()
}

const SMALL: &str = concat!(
    r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"s"}"#,
    "\n",
    r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"}]}}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","num_turns":1}"#,
    "\n",
);

/// The first two lines of SMALL: no result.
const CUT: &str = concat!(
    r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"s"}"#,
    "\n",
    r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"}]}}"#,
    "\n",
);

#[test]
fn every_recorded_stream_run_live_prints_its_expected_events_and_exit_code() {
    let fake = Fake::new("golden");
    let mut checked = 0;
    let mut failures = Vec::new();
    for folder in fixtures::CLAUDE_FOLDERS {
        for fixture in fixtures::streams(folder).unwrap() {
            let text = std::fs::read_to_string(&fixture.stream).unwrap_or_default();
            // A stream without an init line resolves paths against the run's directory,
            // which a recording's expected file cannot know.
            if !text.contains(r#""subtype":"init""#) || fixture.stderr.is_some() {
                continue;
            }
            let output = fake.run(&["hello"], &[("FAKE_STREAM", &fixture.stream)]);
            let expected = std::fs::read_to_string(&fixture.expected).unwrap();
            let actual = String::from_utf8(output.stdout).unwrap();
            if let Err(problems) = fixtures::compare(&expected, &actual) {
                failures.push(format!("{}: {}", fixture.name, problems[0]));
            }
            let outcome: Value = serde_json::from_str(actual.lines().last().unwrap()).unwrap();
            assert_eq!(outcome["exit_code"], 0, "{}", fixture.name);
            let code = if outcome["status"] == "success" { 0 } else { 1 };
            assert_eq!(output.status.code(), Some(code), "{}", fixture.name);
            checked += 1;
        }
    }
    assert!(checked >= 49 + 47, "only {checked} streams checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_prompt_starting_with_dashes_reaches_stdin_and_appears_nowhere_in_argv() {
    let fake = Fake::new("argv");
    let (argv, stdin) = (fake.path("argv"), fake.path("stdin"));
    let prompt = "--dangerously-skip-permissions and then\n--model x";
    let output = fake.run(
        &[
            "--model",
            "opus",
            "--permission-mode",
            "plan",
            "--arg",
            "--max-turns",
            "--arg",
            "3",
            "--",
            prompt,
        ],
        &[("FAKE_ARGV", &argv), ("FAKE_STDIN", &stdin)],
    );
    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), prompt);
    let args = std::fs::read_to_string(&argv).unwrap();
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "opus",
            "--permission-mode",
            "plan",
            "--max-turns",
            "3"
        ]
    );
    assert!(!args.contains("dangerously"));
    // The fake printed nothing: the run is incomplete.
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_prompt_of_dash_is_read_from_stdin() {
    let fake = Fake::new("stdin");
    let stdin = fake.path("stdin");
    let mut cmd = fake.command(&["-"], &[("FAKE_STDIN", &stdin)]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"from stdin\n-x\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), "from stdin\n-x\n");
}

#[test]
fn a_missing_binary_names_it_and_how_to_install_and_exits_127() {
    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "--binary", "/nonexistent/claude", "hi"]);
        cmd
    });
    assert_eq!(output.status.code(), Some(127));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("/nonexistent/claude"), "{err}");
    assert!(
        err.contains("npm install -g @anthropic-ai/claude-code"),
        "{err}"
    );
    assert!(output.stdout.is_empty());

    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "hi"])
            .env("CLAUDE_BIN", "/nonexistent/from-env");
        cmd
    });
    assert_eq!(output.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/from-env"));
}

#[test]
fn claude_bin_names_the_binary_when_no_binary_is_given() {
    let fake = Fake::new("env");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "hi"])
            .env("CLAUDE_BIN", fake.agent())
            .env("FAKE_STREAM", &stream);
        cmd
    });
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let events = lines(&output);
    assert_eq!(events[0]["kind"], "agent");
    assert_eq!(events[1]["kind"], "outcome");
    assert_eq!(events[1]["exit_code"], 0);
}

#[test]
fn a_child_exiting_non_zero_gives_events_so_far_end_of_input_events_and_its_status() {
    let fake = Fake::new("nonzero");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, CUT).unwrap();
    let output = fake.run(
        &["hi"],
        &[("FAKE_STREAM", &stream), ("FAKE_EXIT", Path::new("3"))],
    );
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output);
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["agent", "error", "outcome"]);
    assert_eq!(events[1]["message"], "stream ended without a result");
    assert_eq!(events[2]["status"], "incomplete");
    assert_eq!(events[2]["exit_code"], 3);
}

#[test]
fn an_agent_dying_mid_line_keeps_the_partial_line_and_reports_no_exit_code() {
    let fake = Fake::new("midline");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, CUT).unwrap();
    let output = fake.run(
        &["hi"],
        &[
            ("FAKE_STREAM", &stream),
            ("FAKE_PARTIAL", Path::new(r#"{"type":"assis"#)),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    let events = lines(&output);
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    // The cut line is read when stdout closes; the message it did not complete is flushed
    // at the end of input (S9).
    assert_eq!(kinds, ["warning", "agent", "error", "outcome"]);
    assert_eq!(events[0]["source"], "non_json");
    assert_eq!(events[0]["line"], 3);
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap()
            .contains(r#"{"type":"assis"#)
    );
    assert_eq!(events[3]["exit_code"], Value::Null);
    assert_eq!(events[3]["status"], "incomplete");
}

#[test]
fn stderr_lines_arrive_as_warnings() {
    let fake = Fake::new("stderr");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let output = fake.run(
        &["hi"],
        &[
            ("FAKE_STREAM", &stream),
            ("FAKE_STDERR", Path::new("careful\r\n\nnow")),
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    let events = lines(&output);
    assert_eq!(messages(&events, "warning"), ["careful", "now"]);
    let warnings: Vec<&Value> = events.iter().filter(|e| e["kind"] == "warning").collect();
    assert_eq!(warnings[0]["stream"], "stderr");
    assert_eq!(warnings[0]["source"], "stderr");
    assert_eq!(warnings[1]["line"], 3);
}

#[test]
fn the_first_event_is_printed_while_the_agent_is_still_running() {
    let fake = Fake::new("live");
    let stream = fake.path("stream.jsonl");
    // A rejected rate limit is a warning at once (C6); the fake then waits for `go`.
    let limit = r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected"}}"#;
    std::fs::write(&stream, format!("{limit}\n{SMALL}")).unwrap();
    let go = fake.path("go");
    let mut cmd = fake.command(&["hi"], &[("FAKE_STREAM", &stream), ("FAKE_GO", &go)]);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let first = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard");
    assert!(first.contains(r#""source":"rate_limit""#), "{first}");
    // Only now may the agent go on and finish.
    std::fs::write(&go, "").unwrap();
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(rest[1].contains(r#""kind":"outcome""#));
    assert!(child.wait().unwrap().success());
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
    assert_eq!(
        messages(&events, "error"),
        [
            "the run timed out after 1 second; its process group was killed",
            "stream ended without a result"
        ]
    );
    let outcome = events.last().unwrap();
    assert_eq!(outcome["status"], "incomplete");
    assert_eq!(outcome["exit_code"], Value::Null);
    assert_eq!(outcome["counts"]["error"], 2);
    // The script and the `sleep` it started are both gone.
    for pid in read_when_written(&pids).lines() {
        assert_gone(pid);
    }
}

#[test]
fn ctrl_c_stops_the_agent_prints_the_outcome_and_exits_130() {
    interrupt("INT", 130);
}

#[test]
fn sigterm_stops_the_agent_prints_the_outcome_and_exits_143() {
    interrupt("TERM", 143);
}

/// Sends `signal` to `harness run` while the agent hangs; expects `code`.
fn interrupt(signal: &str, code: i32) {
    let fake = Fake::new(&format!("sig{signal}"));
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, CUT).unwrap();
    let pids = fake.path("pids");
    let mut cmd = fake.command(&["hi"], &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)]);
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the fake hangs, everything it printed has been written; interrupt `harness`.
    let agent_pids = read_when_written(&pids);
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    assert_eq!(output.status.code(), Some(code), "{output:?}");
    let events = lines(&output);
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    // The stop is reported at once; the message still being assembled is flushed at the end.
    assert_eq!(kinds, ["error", "agent", "error", "outcome"]);
    assert_eq!(
        events[0]["message"],
        "the run was stopped; its process group was killed"
    );
    assert_eq!(events[3]["status"], "incomplete");
    for pid in agent_pids.lines() {
        assert_gone(pid);
    }
}

#[test]
fn a_flood_of_stderr_while_stdout_is_written_loses_nothing() {
    let fake = Fake::new("flood");
    // Both pipes carry far more than a pipe buffer, at the same time.
    let stream = fake.path("stream.jsonl");
    let consumed = r#"{"type":"stream_event"}"#;
    std::fs::write(
        &stream,
        format!("{}{SMALL}", format!("{consumed}\n").repeat(100_000)),
    )
    .unwrap();
    let err = fake.path("stderr");
    let lines_of_err: String = (1..=100_000).map(|n| format!("{n}\n")).collect();
    std::fs::write(&err, lines_of_err).unwrap();
    let output = fake.run(
        &["hi"],
        &[("FAKE_STREAM", &stream), ("FAKE_STDERR_FILE", &err)],
    );
    assert_eq!(output.status.code(), Some(0));
    let events = lines(&output);
    assert_eq!(events.len(), 100_002);
    let warnings: Vec<u64> = events
        .iter()
        .filter(|e| e["kind"] == "warning")
        .map(|e| e["message"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(warnings, (1..=100_000).collect::<Vec<u64>>());
    let outcome = events.last().unwrap();
    assert_eq!(outcome["counts"]["warning"], 100_000);
    assert_eq!(outcome["counts"]["agent"], 1);
    assert_eq!(outcome["status"], "success");
}

#[test]
fn a_stdout_line_of_tens_of_megabytes_is_one_event() {
    let fake = Fake::new("long");
    let stream = fake.path("stream.jsonl");
    let text = "x".repeat(30_000_000);
    let line = format!(
        r#"{{"type":"assistant","message":{{"id":"m","content":[{{"type":"text","text":"{text}"}}]}}}}"#
    );
    std::fs::write(
        &stream,
        format!("{line}\n{}", SMALL.lines().nth(2).unwrap()),
    )
    .unwrap();
    let output = fake.run(&["hi"], &[("FAKE_STREAM", &stream)]);
    assert_eq!(output.status.code(), Some(0));
    let events = lines(&output);
    assert_eq!(events.len(), 2);
    assert_eq!(events[0]["text"].as_str().map(str::len), Some(30_000_000));
    assert_eq!(events[1]["status"], "success");
}

#[test]
fn a_closed_output_pipe_stops_the_agent_and_ends_quietly() {
    let fake = Fake::new("pipe");
    let pid = fake.path("pid");
    let mut cmd = fake.command(&["hi"], &[("FAKE_FOREVER", &pid)]);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains(r#""reason":"unknown_type""#), "{first}");
    drop(stdout);
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(output.stderr.is_empty(), "{output:?}");
    assert_gone(&read_when_written(&pid));
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["run"][..],
        &["run", "--odd-prompt"],
        &["run", "--backend", "nope", "hi"],
        &["run", "--timeout", "soon", "hi"],
        &["run", "--timeout", "0", "hi"],
        &["run", "--cwd", "/nonexistent/dir", "hi"],
        &["run", "--format", "xml", "hi"],
    ] {
        let output = guarded({
            let mut cmd = harness();
            cmd.args(args).env("CLAUDE_BIN", "/nonexistent/claude");
            cmd
        });
        assert_eq!(output.status.code(), Some(2), "{args:?}: {output:?}");
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn human_format_prints_readable_lines_and_a_summary_with_the_exit_code() {
    let fake = Fake::new("human");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let output = fake.run(&["--format", "human", "hi"], &[("FAKE_STREAM", &stream)]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "agent     hi");
    assert!(
        lines[1].starts_with("── success · 1 turn · 1 agent · exit 0"),
        "{}",
        lines[1]
    );
    assert!(!text.contains('\x1b'));
}

#[test]
fn a_stream_replayed_line_by_line_with_delays_gives_its_expected_events() {
    let fake = Fake::new("delay");
    let fixture = fixtures::streams("claude")
        .unwrap()
        .into_iter()
        .find(|f| f.name.ends_with("c_read"))
        .unwrap();
    let output = fake.run(
        &["hello"],
        &[
            ("FAKE_STREAM", &fixture.stream),
            ("FAKE_DELAY", Path::new("0.01")),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let expected = std::fs::read_to_string(&fixture.expected).unwrap();
    let actual = String::from_utf8(output.stdout).unwrap();
    fixtures::compare(&expected, &actual).unwrap();
}
