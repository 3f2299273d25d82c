//! `harness normalize`: the recorded streams, exit codes, stdin, streaming, broken pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use super::{harness, run};

#[test]
fn every_recorded_stream_prints_exactly_its_expected_events() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for folder in fixtures::CLAUDE_FOLDERS
        .into_iter()
        .chain(fixtures::CODEX_FOLDERS)
    {
        for fixture in fixtures::streams(folder).unwrap() {
            let mut cmd = harness();
            cmd.arg("normalize").arg(&fixture.stream);
            if folder.starts_with("codex") {
                // The expected files assume the directory the recordings were made in.
                cmd.args(["--backend", "codex", "--cwd", "/home/dev2/project"]);
            }
            if let Some(stderr) = &fixture.stderr {
                cmd.arg("--stderr").arg(stderr);
            }
            let output = cmd.output().unwrap();
            assert!(output.status.success(), "{}: {output:?}", fixture.name);
            let expected = std::fs::read_to_string(&fixture.expected).unwrap();
            let actual = String::from_utf8(output.stdout).unwrap();
            if let Err(problems) = fixtures::compare(&expected, &actual) {
                failures.push(format!("{}: {}", fixture.name, problems[0]));
            }
            checked += 1;
        }
    }
    // Claude 2.1.332, 2.1.197 and edges; Codex 0.171.0, 0.163.0 and edges.
    assert_eq!(checked, 49 + 47 + 9 + 50 + 50 + 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const SMALL: &str = concat!(
    r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"s"}"#,
    "\n",
    r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"}]}}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","num_turns":1}"#,
    "\n",
);

const SMALL_OUT: &str = concat!(
    r#"{"kind":"agent","text":"hi","line":2}"#,
    "\n",
    r#"{"kind":"outcome","session_id":"s","status":"success","final_output":"hi","metrics":{"num_turns":1},"counts":{"agent":1}}"#,
    "\n",
);

#[test]
fn j9_reads_stdin_when_no_file_or_dash_is_given() {
    for args in [&["normalize"][..], &["normalize", "-"]] {
        let output = run(args, SMALL.as_bytes());
        assert_eq!(output.status.code(), Some(0));
        assert_eq!(String::from_utf8_lossy(&output.stdout), SMALL_OUT);
        assert!(output.stderr.is_empty());
    }
}

#[test]
fn s10_stderr_file_is_read_after_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("run.stderr");
    std::fs::write(&err, "careful\r\n\nlast").unwrap();
    let output = run(
        &["normalize", "--stderr", err.to_str().unwrap()],
        SMALL.as_bytes(),
    );
    drop(dir);
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(lines[0], r#"{"kind":"agent","text":"hi","line":2}"#);
    assert_eq!(
        lines[1],
        r#"{"kind":"warning","message":"careful","source":"stderr","line":1,"stream":"stderr"}"#
    );
    assert_eq!(
        lines[2],
        r#"{"kind":"warning","message":"last","source":"stderr","line":3,"stream":"stderr"}"#
    );
    assert!(lines[3].contains(r#""counts":{"agent":1,"warning":2}"#));
}

#[test]
fn a_missing_file_is_one_line_naming_it_and_exit_1() {
    let output = harness()
        .args(["normalize", "/nonexistent/stream.jsonl"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    let err = String::from_utf8(output.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/stream.jsonl"), "{err}");
    assert!(err.contains("No such file"), "{err}");
}

#[test]
fn a_missing_stderr_file_fails_before_any_output() {
    let output = run(
        &["normalize", "--stderr", "/nonexistent/run.stderr"],
        SMALL.as_bytes(),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/run.stderr"));
}

#[test]
fn a_directory_is_unreadable_and_exit_1() {
    let output = harness()
        .args(["normalize", env!("CARGO_MANIFEST_DIR")])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(err.contains(env!("CARGO_MANIFEST_DIR")), "{err}");
}

#[test]
fn bad_usage_prints_usage_and_exits_2() {
    for args in [
        &["normalize", "--no-such-flag"][..],
        &["normalize", "a", "b"],
        &["frobnicate"],
        &[],
    ] {
        let output = harness().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("Usage:"),
            "{args:?}"
        );
    }
}

#[test]
fn an_unknown_backend_is_a_usage_error() {
    let output = run(&["normalize", "--backend", "nope"], b"");
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("nope") && err.contains("claude"), "{err}");
}

#[test]
fn c14a_cwd_and_workspace_options_resolve_paths() {
    let stream = concat!(
        r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"k","name":"Skill","input":{"skill":"ship"}},{"type":"tool_use","id":"r","name":"Read","input":{"file_path":"a/../b.txt"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"k","content":"ok"},{"type":"tool_result","tool_use_id":"r","content":"ok"}]}}"#,
        "\n",
    );
    let output = run(
        &["normalize", "--cwd", "/w", "--workspace", "ws"],
        stream.as_bytes(),
    );
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        r#"{"kind":"skill","name":"ship","path":"/w/ws/skills/ship/SKILL.md","success":true,"tool":"Skill","tool_use_id":"k","line":2}"#
    );
    assert_eq!(
        lines[1],
        r#"{"kind":"read","path":"/w/b.txt","success":true,"tool":"Read","tool_use_id":"r","line":2}"#
    );
}

#[test]
fn s6_events_come_out_while_the_input_is_still_open() {
    let mut child = harness()
        .arg("normalize")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    stdin.write_all(b"Starting Claude Code...\n").unwrap();
    stdin.flush().unwrap();
    // A guard against hanging forever, not a measure of speed: the event must arrive while
    // stdin is still open.
    let first = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(
        first,
        r#"{"kind":"warning","message":"Starting Claude Code...","source":"non_json","line":1}"#
    );
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(
        rest[0],
        r#"{"kind":"error","message":"stream ended without a result"}"#
    );
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_closed_output_pipe_ends_quietly() {
    let mut child = harness()
        .arg("normalize")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let writer = std::thread::spawn(move || {
        for _ in 0..200_000 {
            if stdin.write_all(b"not json at all\n").is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    BufReader::new(stdout).read_line(&mut first).unwrap();
    // Reader dropped here: the pipe closes.
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(first.contains("non_json"));
    assert_eq!(output.status.code(), Some(0));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
