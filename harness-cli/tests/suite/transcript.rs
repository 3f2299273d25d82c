//! `harness run --transcript FILE` then `harness normalize FILE`, with no other option: the
//! transcript is a complete record of the run (TR1-TR7 of `docs/transcript.md`), so the replay
//! gives the live run's events, in the same order, line numbers included; only the outcome's
//! exit code is the live run's alone. The runs are the fake agents of `fixtures/fake-agent/`
//! replaying every recording, with its standard error, in a directory given with `--cwd`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use super::harness;

/// Runs `cmd` to completion, failing (not hanging) when it takes more than a minute.
fn guarded(mut cmd: Command) -> Output {
    cmd.stdin(Stdio::null());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(cmd.output());
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
        .unwrap()
}

fn values(output: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `harness normalize FILE` and nothing else.
fn replay(transcript: &Path) -> Output {
    let mut cmd = harness();
    cmd.args(["normalize", "--format", "jsonl"]).arg(transcript);
    guarded(cmd)
}

/// What a replay must print: the live lines, the outcome without its exit code.
fn without_exit_code(mut live: Vec<Value>) -> Vec<Value> {
    if let Some(outcome) = live.last_mut().and_then(Value::as_object_mut) {
        outcome.remove("exit_code");
    }
    live
}

/// Runs every recording of `folders` live through the fake `agent` as `backend`, in
/// `DIR/project` given with `--cwd` and saving a transcript, then replays the transcript alone;
/// returns how many runs, how many printed a path under the project (so resolved relative
/// paths against `--cwd`), and how many printed a warning from standard error.
fn round_trips(backend: &str, agent: &str, folders: &[&str]) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let transcript = dir.path().join("t");
    let (mut runs, mut paths, mut stderr) = (0, 0, 0);
    let mut failures = Vec::new();
    for folder in folders {
        for fixture in fixtures::streams(folder).unwrap() {
            let exit = PathBuf::from(fixture.recorded_exit_code().to_string());
            let mut cmd = harness();
            cmd.args(["run", "--backend", backend, "--format", "jsonl", "--binary"])
                .arg(fixtures::root().join("fake-agent").join(agent))
                .arg("--cwd")
                .arg(&project)
                .arg("--transcript")
                .arg(&transcript)
                .arg("hello")
                .env("FAKE_STREAM", &fixture.stream)
                .env("FAKE_EXIT", &exit);
            if let Some(file) = &fixture.stderr {
                cmd.env("FAKE_STDERR_FILE", file);
            }
            let live = guarded(cmd);
            let offline = replay(&transcript);
            assert!(offline.status.success(), "{}: {offline:?}", fixture.name);
            let live_text = String::from_utf8_lossy(&live.stdout).to_string();
            let (live, offline) = (values(&live.stdout), values(&offline.stdout));
            if without_exit_code(live.clone()) != offline {
                failures.push(fixture.name.clone());
            }
            paths += usize::from(live_text.contains(&project.display().to_string()));
            stderr += usize::from(live_text.contains(r#""source":"stderr""#));
            runs += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "replayed to other events: {failures:?}"
    );
    (runs, paths, stderr)
}

/// TR4: opencode resolves relative paths against the run's directory (C14a), which only
/// the transcript's header now says; its API errors on standard error are warnings (S4).
#[test]
fn tr4_every_opencode_run_with_cwd_and_stderr_replays_from_its_transcript_alone() {
    let (runs, paths, stderr) = round_trips("opencode", "opencode", &["opencode"]);
    assert_eq!(runs, 46);
    assert!(
        paths > 0 && stderr > 0,
        "{paths} with paths, {stderr} with stderr"
    );
}

/// TR4: Codex too (X9: relative paths against its `--cd`).
#[test]
fn tr4_every_codex_run_with_cwd_and_stderr_replays_from_its_transcript_alone() {
    let (runs, paths, stderr) = round_trips("codex", "codex", &fixtures::CODEX_FOLDERS);
    assert_eq!(runs, 51 + 50 + 2);
    assert!(
        paths > 0 && stderr > 0,
        "{paths} with paths, {stderr} with stderr"
    );
}

/// TR2, TR3: the file is a header, then the lines in the order they arrived, each tagged with
/// the pipe it came from; standard error written while standard output is (the fake copies
/// it concurrently) replays in that same order.
#[test]
fn tr3_stderr_lines_keep_their_place_among_the_stdout_lines() {
    let dir = tempfile::tempdir().unwrap();
    let stream = dir.path().join("stream.jsonl");
    let lines: Vec<String> = (0..200)
        .map(|i| format!(r#"{{"type":"assistant","message":{{"id":"m{i}","content":[{{"type":"text","text":"t{i}"}}]}}}}"#))
        .collect();
    std::fs::write(&stream, lines.join("\n") + "\n").unwrap();
    let errors = dir.path().join("stderr");
    let text: String = (0..200).map(|i| format!("warning {i}\n")).collect();
    std::fs::write(&errors, text).unwrap();
    let transcript = dir.path().join("t");
    let mut cmd = harness();
    cmd.args(["run", "--format", "jsonl", "--started", "--binary"])
        .arg(super::run::fake_claude())
        .arg("--cwd")
        .arg(dir.path())
        .arg("--transcript")
        .arg(&transcript)
        .arg("hello")
        .env_remove("CLAUDE_BIN")
        .env("FAKE_STREAM", &stream)
        .env("FAKE_STDERR_FILE", &errors);
    let live = guarded(cmd);
    let saved = std::fs::read(&transcript).unwrap();
    let mut records = saved.split(|b| *b == b'\n');
    let header: Value = serde_json::from_slice(records.next().unwrap()).unwrap();
    assert_eq!(header["harness_transcript"], 1);
    assert_eq!(header["backend"], "claude");
    assert_eq!(header["cwd"], dir.path().display().to_string());
    assert_eq!(header["started"], true);
    let records: Vec<&[u8]> = records.filter(|r| !r.is_empty()).collect();
    assert_eq!(records.len(), 400);
    assert_eq!(
        records.iter().filter(|r| r.starts_with(b"err ")).count(),
        200
    );
    assert!(
        records
            .iter()
            .all(|r| r.starts_with(b"err ") || r.starts_with(b"out "))
    );
    let live = values(&live.stdout);
    assert_eq!(live.iter().filter(|e| e["source"] == "stderr").count(), 200);
    assert_eq!(without_exit_code(live), values(&replay(&transcript).stdout));
}

/// TR4: an option given to `normalize` wins over the header's; `--backend` too.
#[test]
fn tr4_options_on_the_command_line_win_over_the_header() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t");
    std::fs::write(
        &transcript,
        concat!(
            r#"{"harness_transcript":1,"backend":"codex","cwd":"/recorded"}"#,
            "\n",
            r#"out {"type":"item.completed","item":{"id":"i","type":"file_change","changes":[{"path":"a.txt","kind":"add"}],"status":"completed"}}"#,
            "\n",
            "err careful\n",
        ),
    )
    .unwrap();
    let paths = |extra: &[&str]| {
        let mut cmd = harness();
        cmd.args(["normalize", "--format", "jsonl"])
            .args(extra)
            .arg(&transcript);
        let events = values(&guarded(cmd).stdout);
        let kinds: Vec<String> = events
            .iter()
            .map(|e| e["kind"].as_str().unwrap().to_string())
            .collect();
        (kinds, events[0]["path"].clone())
    };
    let (kinds, path) = paths(&[]);
    assert_eq!(kinds, ["write", "warning", "error", "outcome"]);
    assert_eq!(path, "/recorded/a.txt");
    assert_eq!(paths(&["--cwd", "/other"]).1, "/other/a.txt");
    let (kinds, _) = paths(&["--backend", "claude"]);
    assert_eq!(kinds[0], "unknown");
}

/// TR2: a version this harness does not read is an error, not a plain stream.
#[test]
fn tr2_a_transcript_of_another_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t");
    std::fs::write(
        &transcript,
        "{\"harness_transcript\":2,\"backend\":\"codex\"}\nout {}\n",
    )
    .unwrap();
    let output = replay(&transcript);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "harness: cannot read {}: transcript version 2 is not supported (this harness reads version 1)\n",
            transcript.display()
        )
    );
}

/// TR6: an ACP run's transcript holds the conversation and the agent's standard error, which
/// the replay gives as the same warnings at the same places.
#[test]
fn tr6_an_acp_run_with_stderr_replays_from_its_transcript_alone() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t");
    let agent = fixtures::root().join("fake-agent/acp");
    let command = format!(
        "sh -c 'echo starting up >&2; echo config loaded >&2; exec sh \"$0\"' '{}'",
        agent.display()
    );
    let mut cmd = harness();
    cmd.args(["run", "--backend", "acp", "--format", "jsonl", "--cwd"])
        .arg(dir.path())
        .arg("--agent")
        .arg(command)
        .arg("--transcript")
        .arg(&transcript)
        .arg("Read notes.txt");
    let live = guarded(cmd);
    assert!(live.status.success(), "{live:?}");
    let live = values(&live.stdout);
    let warnings: Vec<&Value> = live.iter().filter(|e| e["source"] == "stderr").collect();
    assert_eq!(warnings.len(), 2, "{live:?}");
    assert_eq!(without_exit_code(live), values(&replay(&transcript).stdout));
}
