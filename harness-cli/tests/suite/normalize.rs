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
            let actual = String::from_utf8(output.stdout).unwrap();
            if let Err(problems) = fixtures::check_expected(&fixture.expected, &actual) {
                failures.push(format!("{}: {}", fixture.name, problems[0]));
            }
            checked += 1;
        }
    }
    // Claude 2.1.332, 2.1.197 and edges; Codex 0.171.0, 0.163.0 and edges.
    assert_eq!(checked, 49 + 47 + 9 + 51 + 50 + 2);
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        fixtures::UPDATE_HINT
    );
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
    // A named backend decodes from the first line (auto detection holds lines back until one
    // decides: see `detection_holds_back_only_the_lines_before_the_deciding_one`).
    let mut child = harness()
        .args(["normalize", "--backend", "claude"])
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

/// `harness ARGS` on `file` with the stderr file when there is one: (stdout, stderr, status).
fn normalize_fixture(fixture: &fixtures::Fixture, args: &[&str]) -> (String, String, bool) {
    let mut cmd = harness();
    cmd.arg("normalize").arg(&fixture.stream).args(args);
    if let Some(stderr) = &fixture.stderr {
        cmd.arg("--stderr").arg(stderr);
    }
    let output = cmd.output().unwrap();
    (
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
        output.status.success(),
    )
}

#[test]
fn auto_detects_every_fixture_as_its_explicit_backend() {
    let mut checked = 0;
    for folder in fixtures::CLAUDE_FOLDERS
        .into_iter()
        .chain(fixtures::CODEX_FOLDERS)
    {
        let codex = folder.starts_with("codex");
        for fixture in fixtures::streams(folder).unwrap() {
            let cwd: &[&str] = if codex {
                &["--cwd", "/home/dev2/project"]
            } else {
                &[]
            };
            let named = if codex { "codex" } else { "claude" };
            let explicit = normalize_fixture(&fixture, &[&["--backend", named], cwd].concat());
            let auto = normalize_fixture(&fixture, cwd);
            assert!(auto.2, "{}: {}", fixture.name, auto.1);
            assert_eq!(auto.0, explicit.0, "{}", fixture.name);
            let expected = std::fs::read_to_string(&fixture.expected).unwrap();
            assert!(
                fixtures::compare(&expected, &auto.0).is_ok(),
                "{}",
                fixture.name
            );
            if codex {
                assert!(
                    auto.1
                        .starts_with("harness: detected a codex stream (line "),
                    "{}: {}",
                    fixture.name,
                    auto.1
                );
            } else {
                assert_eq!(auto.1, "", "{}", fixture.name);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 49 + 47 + 9 + 51 + 50 + 2);
}

/// Every opencode recording is detected as opencode, and gives its expected events
/// through the binary, named or detected.
#[test]
fn auto_detects_every_opencode_recording_and_gives_its_expected_events() {
    let mut checked = 0;
    for fixture in fixtures::streams("opencode").unwrap() {
        let cwd = ["--cwd", "/home/oc/project"];
        let explicit =
            normalize_fixture(&fixture, &[&["--backend", "opencode"], &cwd[..]].concat());
        let auto = normalize_fixture(&fixture, &cwd);
        assert!(auto.2, "{}: {}", fixture.name, auto.1);
        assert_eq!(auto.0, explicit.0, "{}", fixture.name);
        assert!(
            auto.1
                .starts_with("harness: detected an opencode stream (line "),
            "{}: {}",
            fixture.name,
            auto.1
        );
        let expected = std::fs::read_to_string(&fixture.expected).unwrap();
        if let Err(problems) = fixtures::compare(&expected, &auto.0) {
            panic!("{}: {}", fixture.name, problems.join("; "));
        }
        checked += 1;
    }
    assert_eq!(checked, 46);
}

/// Every Qwen Code recording is detected as Qwen by its first line (its `init` names
/// `qwen_code_version`), not as Claude Code, whose shape it shares, and gives its expected
/// events through the binary, named or detected.
#[test]
fn auto_detects_every_qwen_recording_and_gives_its_expected_events() {
    let mut checked = 0;
    for fixture in fixtures::streams("qwen").unwrap() {
        let cwd = ["--cwd", "/home/qwen/project"];
        let explicit = normalize_fixture(&fixture, &[&["--backend", "qwen"], &cwd[..]].concat());
        let auto = normalize_fixture(&fixture, &cwd);
        assert!(auto.2, "{}: {}", fixture.name, auto.1);
        assert_eq!(auto.0, explicit.0, "{}", fixture.name);
        assert_eq!(
            auto.1, "harness: detected a qwen stream (line 1); --backend NAME chooses another\n",
            "{}",
            fixture.name
        );
        let expected = std::fs::read_to_string(&fixture.expected).unwrap();
        if let Err(problems) = fixtures::compare(&expected, &auto.0) {
            panic!("{}: {}", fixture.name, problems.join("; "));
        }
        checked += 1;
    }
    assert_eq!(checked, 32);
}

const CODEX: &str = concat!(
    "Reading prompt from stdin...\n",
    "\n",
    r#"{"type":"error","message":"reconnecting"}"#,
    "\n",
    r#"{"type":"thread.started","thread_id":"th"}"#,
    "\n",
    r#"{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"hi"}}"#,
    "\n",
    r#"{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":2}}"#,
    "\n",
);

#[test]
fn a_codex_stream_is_detected_and_keeps_its_line_numbers() {
    let output = run(&["normalize"], CODEX.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "harness: detected a codex stream (line 4); --backend NAME chooses another\n"
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            r#"{"kind":"warning","message":"Reading prompt from stdin...","source":"non_json","line":1}"#,
            r#"{"kind":"warning","message":"reconnecting","source":"stream","line":3}"#,
            r#"{"kind":"agent","text":"hi","line":5}"#,
            r#"{"kind":"outcome","session_id":"th","status":"success","final_output":"hi","metrics":{"input_tokens":1,"output_tokens":2,"num_turns":1},"counts":{"agent":1,"warning":2}}"#,
        ],
        "{text}"
    );
    // --backend still forces one: Claude reads the same stream as unknown types.
    let forced = run(&["normalize", "--backend", "claude"], CODEX.as_bytes());
    assert!(forced.stderr.is_empty());
    let text = String::from_utf8(forced.stdout).unwrap();
    assert_eq!(
        text.matches(r#""reason":"unknown_type""#).count(),
        4,
        "{text}"
    );
}

#[test]
fn claude_when_no_line_decides() {
    // `error` lines are printed by both backends' streams: they decide nothing.
    let stream = "{\"type\":\"error\",\"message\":\"x\"}\nnot json\n";
    let output = run(&["normalize"], stream.as_bytes());
    let claude = run(&["normalize", "--backend", "claude"], stream.as_bytes());
    assert!(output.stderr.is_empty());
    assert_eq!(output.stdout, claude.stdout);
    assert!(
        String::from_utf8_lossy(&output.stdout)
            .starts_with(r#"{"kind":"unknown","reason":"unknown_type","raw":{"message":"x","type":"error"},"line":1}"#)
    );
}

/// Starts `harness normalize` on a pipe; returns the child, its stdin and its stdout lines.
fn live_normalize(
    args: &[&str],
) -> (
    std::process::Child,
    std::process::ChildStdin,
    mpsc::Receiver<String>,
) {
    let mut child = harness()
        .arg("normalize")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx)
}

#[test]
fn detection_holds_back_only_the_lines_before_the_deciding_one() {
    let (mut child, mut stdin, rx) = live_normalize(&[]);
    stdin.write_all(b"banner\n").unwrap();
    stdin.flush().unwrap();
    // Nothing decides yet: nothing is written (a short wait, only to show nothing comes early).
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    stdin
        .write_all(b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n")
        .unwrap();
    stdin.flush().unwrap();
    // The deciding line releases the held one while the input is still open.
    let first = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(
        first,
        r#"{"kind":"warning","message":"banner","source":"non_json","line":1}"#
    );
    drop(stdin);
    assert_eq!(rx.iter().count(), 2);
    assert!(child.wait().unwrap().success());
}

#[test]
fn detection_gives_up_after_a_hundred_undecided_lines() {
    let (mut child, mut stdin, rx) = live_normalize(&[]);
    let undecided = "undecided\n".repeat(100);
    stdin.write_all(undecided.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The hundredth line takes the default (Claude) while the input is still open.
    let first = rx.recv_timeout(Duration::from_secs(60)).unwrap();
    assert_eq!(
        first,
        r#"{"kind":"warning","message":"undecided","source":"non_json","line":1}"#
    );
    // Claude from then on, even when a Codex line follows.
    stdin
        .write_all(b"{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n")
        .unwrap();
    drop(stdin);
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(rest.len(), 99 + 3, "{rest:?}");
    assert!(
        rest[99].contains(r#""reason":"unknown_type""#),
        "{}",
        rest[99]
    );
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_line_over_the_byte_bound_takes_the_default() {
    // A first line larger than the held-back bound is not parsed for detection: Claude decodes.
    let big = format!(
        "{{\"type\":\"thread.started\",\"thread_id\":\"{}\"}}\n",
        "x".repeat(1 << 20)
    );
    let output = run(&["normalize"], big.as_bytes());
    assert!(output.stderr.is_empty(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with(r#"{"kind":"unknown","reason":"unknown_type""#));
}

#[test]
fn costs_print_exactly_as_reported() {
    // Without serde_json's `float_roundtrip` the first reads back as 0.10900993826735517.
    for cost in [
        "0.10900993826735515",
        "0.30000000000000004",
        "0.01234",
        "12",
    ] {
        let stream = format!(
            "{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"ok\",\"total_cost_usd\":{cost}}}\n"
        );
        let output = run(&["normalize"], stream.as_bytes());
        let text = String::from_utf8(output.stdout).unwrap();
        assert_eq!(
            text,
            format!(
                "{{\"kind\":\"outcome\",\"status\":\"success\",\"final_output\":\"ok\",\"metrics\":{{\"total_cost_usd\":{cost}}},\"counts\":{{}}}}\n"
            )
        );
        let human = run(&["normalize", "--format", "human"], stream.as_bytes());
        let text = String::from_utf8(human.stdout).unwrap();
        assert_eq!(text, format!("── success · ${cost}\n"));
    }
}

#[test]
fn l1_started_puts_a_started_event_on_each_tool_use_line_and_changes_nothing_else() {
    let path = fixtures::root().join("claude/c_read.jsonl");
    let path = path.to_str().unwrap();
    let plain = run(&["normalize", "--backend", "claude", path], b"");
    let with = run(
        &["normalize", "--backend", "claude", "--started", path],
        b"",
    );
    assert!(plain.status.success() && with.status.success());
    let lines = |o: &std::process::Output| -> Vec<serde_json::Value> {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let (plain, with) = (lines(&plain), lines(&with));
    let started: Vec<&serde_json::Value> = with.iter().filter(|e| e["kind"] == "started").collect();
    assert_eq!(
        started,
        [
            &serde_json::json!({"kind": "started", "tool": "Read",
                "tool_use_id": "toolu_01ReadPart00000000000001", "line": 3,
                "expect": [{"kind": "read", "path": "/home/dev/project/src/app.py",
                    "range": {"start": 4, "end": 9}}]}),
            &serde_json::json!({"kind": "started", "tool": "Read",
                "tool_use_id": "toolu_01ReadWhole0000000000002", "line": 5,
                "expect": [{"kind": "read", "path": "/home/dev/project/README.md"}]}),
        ]
    );
    // The other events and the outcome line (its counts included) are unchanged.
    let rest: Vec<&serde_json::Value> = with.iter().filter(|e| e["kind"] != "started").collect();
    assert_eq!(rest, plain.iter().collect::<Vec<_>>());
}
