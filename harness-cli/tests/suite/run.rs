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
            "--model=opus",
            "--permission-mode=plan",
            "--max-turns",
            "3"
        ]
    );
    assert!(!args.contains("dangerously"));
    // The fake printed nothing: the run is incomplete.
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn i5_resume_is_the_one_turn_form_through_the_agents_own_flag() {
    let fake = Fake::new("resume");
    let argv = fake.path("argv");
    fake.run(
        &["--resume=-0b5c8a4e", "--model", "opus", "hi"],
        &[("FAKE_ARGV", &argv)],
    );
    // One word, so an id starting with `-` is never read as an option.
    assert_eq!(
        std::fs::read_to_string(&argv)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        [
            "--print",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model=opus",
            "--resume=-0b5c8a4e",
        ]
    );
}

#[test]
fn i5_pi_resumes_with_its_session_flag_as_the_next_word() {
    let fake = Fake::new("piresume");
    let argv = fake.path("argv");
    let output = fake.run(
        &["--backend", "pi", "--resume=-abc", "hi"],
        &[("FAKE_ARGV", &argv)],
    );
    let argv = std::fs::read_to_string(&argv).unwrap_or_else(|e| panic!("{e}: {output:?}"));
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        ["--mode", "json", "--session", "-abc"]
    );
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

/// A binary named by `--binary` or `$CLAUDE_BIN` that does not exist says
/// so, not how to install Claude Code; only `claude` missing from `PATH` gets the hint.
#[test]
fn a_missing_binary_says_what_is_missing_and_exits_127() {
    let stderr = |output: &Output| String::from_utf8_lossy(&output.stderr).into_owned();
    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "--binary", "/nonexistent/claude", "hi"])
            .env_remove("CLAUDE_BIN");
        cmd
    });
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: /nonexistent/claude does not exist\n"
    );
    assert!(output.stdout.is_empty());

    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "hi"])
            .env("CLAUDE_BIN", "/nonexistent/from-env");
        cmd
    });
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: /nonexistent/from-env does not exist\n"
    );

    // A name other than the default, not on PATH: no install hint either.
    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "--binary", "harness-test-no-such-claude", "hi"]);
        cmd
    });
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: harness-test-no-such-claude was not found on PATH\n"
    );

    // No `claude` on PATH (an empty directory): the install hint.
    let fake = Fake::new("missing");
    let empty = fake.path("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let output = guarded({
        let mut cmd = harness();
        cmd.args(["run", "hi"])
            .env_remove("CLAUDE_BIN")
            .env("PATH", &empty);
        cmd
    });
    assert_eq!(output.status.code(), Some(127));
    assert_eq!(
        stderr(&output),
        "harness: claude was not found on PATH; install it with \
         `npm install -g @anthropic-ai/claude-code`\n"
    );
}

#[test]
fn a_binary_that_is_not_executable_says_so_and_exits_126() {
    let fake = Fake::new("noexec");
    let agent = fake.path("claude");
    std::fs::write(&agent, "#!/bin/sh\n").unwrap();
    let output = guarded({
        let mut cmd = harness();
        cmd.arg("run").arg("--binary").arg(&agent).arg("hi");
        cmd
    });
    assert_eq!(output.status.code(), Some(126));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("harness: {} is not executable\n", agent.display())
    );
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

/// A timeout after the agent's `result` keeps the status the result gave
/// (O1: the answer is known) and its exit status; the timeout is an `error` event, and the
/// agent's exit code is `null`.
#[test]
fn a_timeout_after_the_result_keeps_its_status_and_exit_status() {
    let fake = Fake::new("late-timeout");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let pids = fake.path("pids");
    // The fake writes `pids` once it has printed the stream. On a machine too slow for that
    // before the deadline, try again with more time.
    for secs in ["1", "5", "30"] {
        let _ = std::fs::remove_file(&pids);
        let output = fake.run(
            &["--timeout", secs, "hi"],
            &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)],
        );
        if !pids.exists() {
            continue;
        }
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let events = lines(&output);
        let unit = if secs == "1" { "second" } else { "seconds" };
        assert_eq!(
            messages(&events, "error"),
            [format!(
                "the run timed out after {secs} {unit}; its process group was killed"
            )]
        );
        let outcome = events.last().unwrap();
        assert_eq!(outcome["status"], "success");
        assert_eq!(outcome["final_output"], "hi");
        assert_eq!(outcome["exit_code"], Value::Null);
        assert_eq!(outcome["counts"]["error"], 1);
        for pid in std::fs::read_to_string(&pids).unwrap().lines() {
            assert_gone(pid);
        }
        return;
    }
    panic!("the fake never printed its stream before the deadline");
}

#[test]
fn ctrl_c_stops_the_agent_prints_the_outcome_and_exits_130() {
    interrupt("INT", 130);
}

/// A closed terminal or a dropped ssh session stops the run like SIGTERM.
#[test]
fn sighup_stops_the_agent_prints_the_outcome_and_exits_129() {
    interrupt("HUP", 129);
}

/// The other signals that end a process by default, and that people and
/// supervisors send, stop the run too, so what the agent started dies with it.
#[test]
fn sigquit_sigusr1_and_sigusr2_stop_the_agent_and_exit_128_plus_their_number() {
    for (signal, code) in [("QUIT", 131), ("USR1", 138), ("USR2", 140)] {
        interrupt(signal, code);
    }
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
    self::signal(&child, signal);
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

/// I6: a process the agent started in a session of its own (`setsid`, as
/// opencode starts its tools) dies with the run on SIGINT, SIGTERM and SIGHUP.
#[test]
fn a_signal_kills_what_the_agent_started_in_another_session() {
    for (signal, code) in [("INT", 130), ("TERM", 143), ("HUP", 129)] {
        let fake = Fake::new(&format!("setsid-{signal}"));
        let stream = fake.path("stream.jsonl");
        std::fs::write(&stream, CUT).unwrap();
        let (pids, setsid) = (fake.path("pids"), fake.path("setsid"));
        let mut cmd = fake.command(
            &["hi"],
            &[
                ("FAKE_STREAM", &stream),
                ("FAKE_PIDS", &pids),
                ("FAKE_SETSID", &setsid),
            ],
        );
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let agent_pids = read_when_written(&pids);
        let detached = read_when_written(&setsid);
        self::signal(&child, signal);
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let output = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("hang guard")
            .unwrap();
        assert_eq!(output.status.code(), Some(code), "{output:?}");
        for pid in agent_pids.lines().chain(detached.lines()) {
            assert_gone(pid);
        }
    }
}

/// I6: and on `--timeout`.
#[test]
fn a_timeout_kills_what_the_agent_started_in_another_session() {
    let fake = Fake::new("setsid-timeout");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, CUT).unwrap();
    let (pids, setsid) = (fake.path("pids"), fake.path("setsid"));
    let output = fake.run(
        &["--timeout", "1", "hi"],
        &[
            ("FAKE_STREAM", &stream),
            ("FAKE_PIDS", &pids),
            ("FAKE_SETSID", &setsid),
        ],
    );
    assert_eq!(output.status.code(), Some(1));
    for pid in read_when_written(&pids)
        .lines()
        .chain(read_when_written(&setsid).lines())
    {
        assert_gone(pid);
    }
}

/// I6: and when the agent ends by itself, with its answer.
#[test]
fn a_normal_end_kills_what_the_agent_left_in_another_session() {
    let fake = Fake::new("setsid-end");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, SMALL).unwrap();
    let setsid = fake.path("setsid");
    let output = fake.run(
        &["hi"],
        &[("FAKE_STREAM", &stream), ("FAKE_SETSID", &setsid)],
    );
    assert!(output.status.success(), "{output:?}");
    assert_gone(&read_when_written(&setsid));
}

/// `kill -9 harness` leaves nothing to catch; the agent dies of its
/// parent-death signal. (What the agent itself started is not covered: see `docs/cli.md`.)
#[test]
fn killing_harness_with_sigkill_kills_the_agent() {
    let fake = Fake::new("sigkill");
    let stream = fake.path("stream.jsonl");
    std::fs::write(&stream, CUT).unwrap();
    let pids = fake.path("pids");
    let mut cmd = fake.command(&["hi"], &[("FAKE_STREAM", &stream), ("FAKE_PIDS", &pids)]);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pids = read_when_written(&pids);
    let [agent, grandchild] = pids.lines().collect::<Vec<_>>()[..] else {
        panic!("{pids:?}")
    };
    signal(&child, "KILL");
    assert_eq!(child.wait().unwrap().code(), None);
    assert_dead(agent);
    // The agent's `sleep` outlives it (no one is left to kill the group): end it here.
    signal_pid(grandchild, "KILL");
    assert_dead(grandchild);
}

/// With `harness run ... | slow-reader`, a signal stops the agent at once;
/// what is left, the outcome included, is printed when the reader reads.
#[test]
fn a_signal_stops_the_agent_at_once_while_the_output_is_not_read() {
    let blocked = Blocked::start("blocked-sig", &[]);
    blocked.agent_waits();
    signal(&blocked.child, "INT");
    assert_gone(&blocked.agent);
    let (code, events) = blocked.read_to_end();
    assert_eq!(code, Some(130));
    assert_eq!(
        messages(&events, "error"),
        [
            "the run was stopped; its process group was killed",
            "stream ended without a result"
        ]
    );
    assert_eq!(events.last().unwrap()["status"], "incomplete");
}

/// When the reader then goes away, `harness` exits with the signal's status.
#[test]
fn a_signal_while_the_output_is_not_read_then_closed_exits_with_its_status() {
    let mut blocked = Blocked::start("blocked-closed", &[]);
    blocked.agent_waits();
    signal(&blocked.child, "HUP");
    assert_gone(&blocked.agent);
    drop(blocked.child.stdout.take());
    let (tx, rx) = mpsc::channel();
    let mut child = blocked.child;
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap();
    assert_eq!(status.code(), Some(129));
}

/// Nor does an output nobody reads hold back `--timeout`.
#[test]
fn a_timeout_stops_the_agent_at_once_while_the_output_is_not_read() {
    let blocked = Blocked::start("blocked-timeout", &["--timeout", "1"]);
    assert_gone(&blocked.agent);
    let (code, events) = blocked.read_to_end();
    assert_eq!(code, Some(1));
    assert_eq!(
        messages(&events, "error"),
        [
            "the run timed out after 1 second; its process group was killed",
            "stream ended without a result"
        ]
    );
    assert_eq!(events.last().unwrap()["status"], "incomplete");
}

/// After a first signal the outcome waits for the reader; a second one
/// exits at once, without it.
#[test]
fn a_second_signal_exits_at_once_while_the_output_is_not_read() {
    let mut blocked = Blocked::start("blocked-twice", &[]);
    blocked.agent_waits();
    signal(&blocked.child, "TERM");
    assert_gone(&blocked.agent);
    signal(&blocked.child, "INT");
    // Still nothing read: `harness` must exit anyway.
    let mut status = None;
    for _ in 0..3000 {
        status = blocked.child.try_wait().unwrap();
        if status.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = status.expect("harness is still waiting for its reader");
    // The first signal's status.
    assert_eq!(status.code(), Some(143));
}

/// `harness run` with the fake printing lines forever, its standard output a pipe that is
/// not read until `read_to_end`.
struct Blocked {
    _fake: Fake,
    child: std::process::Child,
    agent: String,
}

impl Blocked {
    fn start(name: &str, args: &[&str]) -> Self {
        let fake = Fake::new(name);
        let pid = fake.path("pid");
        let mut args = args.to_vec();
        args.push("hi");
        let mut cmd = fake.command(&args, &[("FAKE_FOREVER", &pid)]);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let agent = read_when_written(&pid).trim().to_string();
        Blocked {
            _fake: fake,
            child,
            agent,
        }
    }

    /// Waits until the agent has written nothing for a while: every buffer between it and
    /// this test is full. Only makes the test sharper: an agent slow to run returns early.
    fn agent_waits(&self) {
        let io = Path::new("/proc").join(&self.agent).join("io");
        let written = || {
            let text = std::fs::read_to_string(&io).unwrap_or_default();
            text.lines()
                .find_map(|l| l.strip_prefix("wchar:"))
                .and_then(|n| n.trim().parse::<u64>().ok())
        };
        let (mut last, mut same) = (written(), 0);
        for _ in 0..3000 {
            std::thread::sleep(Duration::from_millis(20));
            let now = written();
            same = if now == last { same + 1 } else { 0 };
            if same == 5 {
                return;
            }
            last = now;
        }
    }

    /// Reads everything `harness` prints, then its exit status.
    fn read_to_end(self) -> (Option<i32>, Vec<Value>) {
        let (tx, rx) = mpsc::channel();
        let child = self.child;
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let output = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("hang guard")
            .unwrap();
        let events = lines(&output);
        assert_eq!(events.last().unwrap()["kind"], "outcome");
        (output.status.code(), events)
    }
}

/// Sends `name` (`INT`, `KILL`, ...) to `child`.
fn signal(child: &std::process::Child, name: &str) {
    signal_pid(&child.id().to_string(), name);
}

fn signal_pid(pid: &str, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), pid.trim()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits (at most a minute) until `pid` is dead: gone, or a zombie no one has reaped yet (an
/// orphan's reaper is outside this test).
fn assert_dead(pid: &str) {
    let stat = Path::new("/proc").join(pid.trim()).join("stat");
    for _ in 0..3000 {
        match std::fs::read_to_string(&stat) {
            Err(_) => return,
            // The state follows the command name, which is in parentheses.
            Ok(text)
                if text
                    .rsplit(')')
                    .next()
                    .unwrap_or("")
                    .trim_start()
                    .starts_with('Z') =>
            {
                return;
            }
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    panic!("process {pid} is still running");
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
