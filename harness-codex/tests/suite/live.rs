//! Live runs against the fake `codex` kept in `fixtures/fake-agent/`: a shell script that
//! records its argv, working directory and stdin, replays a recorded stream to stdout and its
//! recorded stderr, then exits as the recording did. No test runs the real `codex`.
//!
//! The recordings' expected files assume `--cwd /home/dev2/project`, a directory that does not
//! exist here, and the driver refuses to start an agent in a missing directory
//! (`RunError::WorkingDirectory`). So the golden replay starts the fake in a temporary folder
//! and gives the normalizer `/home/dev2/project` through `RunRequest::normalizer`; the other
//! tests go through the `Backend` trait, where the normalizer resolves against the run's own
//! directory.

use harness_agents_codex::{CodexHarness, LAUNCH};
use harness_agents_core::{Backend, Kind, RunError};
use serde_json::json;

use fixtures::live::{Fake, assert_missing_binary, run_by_name, runtime};

use super::{completed, turn_completed};

#[test]
fn every_recording_replayed_live_gives_its_expected_events_and_exit_code() {
    let (checked, failures) = fixtures::live::replay_recordings(
        &CodexHarness,
        "codex",
        &fixtures::CODEX_FOLDERS,
        &super::config(),
    );
    assert_eq!(checked, 51 + 50 + 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_run_by_name_starts_in_its_directory_and_resolves_relative_paths_against_it() {
    let fake = Fake::new("codex");
    let stream = fake.path("stream");
    let command = json!({
        "id": "item_0", "type": "command_execution", "command": "/bin/bash -lc 'cat README.md'",
        "aggregated_output": "", "exit_code": 0, "status": "completed",
    });
    std::fs::write(
        &stream,
        format!("{}\n{}\n", completed(command), turn_completed(json!({}))),
    )
    .unwrap();
    let request = fake.recording_request("hi", Some(&stream));
    let (events, outcome) = run_by_name(Box::new(CodexHarness), request);

    let dir = fake.dir().display().to_string();
    assert_eq!(fake.pwd(), dir);
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            &format!("--cd={dir}"),
            "-"
        ]
    );
    let event = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(event["kind"], "read");
    assert_eq!(event["path"], format!("{dir}/README.md"));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn without_a_cwd_the_run_uses_the_callers_directory() {
    let fake = Fake::new("codex");
    let (argv, stream) = (fake.path("argv"), fake.path("stream"));
    let command = json!({
        "id": "item_0", "type": "command_execution", "command": "cat notes.txt",
        "exit_code": 0, "status": "completed",
    });
    std::fs::write(&stream, format!("{}\n", completed(command))).unwrap();
    let mut request = fake.request("hi", &[("FAKE_ARGV", &argv), ("FAKE_STREAM", &stream)]);
    request.cwd = None;
    let (events, outcome) = run_by_name(Box::new(CodexHarness), request);

    let here = std::env::current_dir().unwrap().display().to_string();
    let argv = std::fs::read_to_string(&argv).unwrap();
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(argv[3], format!("--cd={here}"));
    let event = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(event["path"], format!("{here}/notes.txt"));
    // No terminal line: end-of-input error, incomplete, and the exit code all the same.
    assert_eq!(events.len(), 2);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn x10_a_resumed_run_goes_through_execs_resume_subcommand_with_the_prompt_on_stdin() {
    // The recorded resumed run: its thread keeps the id it resumed (X10).
    let id = "01a24ae9-3513-7cc3-8f97-8f23e3f6fff1";
    let recording = fixtures::root().join("codex/l4_resume_by_id.jsonl");
    let fake = Fake::new("codex");
    let prompt = "What number did I ask you to remember?";
    let mut request = fake.recording_request(prompt, Some(&recording));
    request.resume = Some(id.into());
    request.permission_mode = Some("bypassPermissions".into());
    let (events, outcome) = run_by_name(Box::new(CodexHarness), request);

    let dir = fake.dir().display().to_string();
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            &format!("--cd={dir}"),
            "--sandbox=danger-full-access",
            "resume",
            "--",
            id,
            "-"
        ]
    );
    assert_eq!(fake.stdin(), prompt);
    let kinds: Vec<_> = events.iter().map(|e| e.kind()).collect();
    assert_eq!(kinds, [Kind::Command, Kind::Agent]);
    assert_eq!(outcome.session_id.as_deref(), Some(id));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn the_prompt_goes_to_stdin_and_never_into_argv() {
    let fake = Fake::new("codex");
    let (argv, stdin) = (fake.path("argv"), fake.path("stdin"));
    let prompt = "--dangerously-bypass-approvals-and-sandbox\n-m evil\r\n\u{e9} -";
    let mut request = fake.request(prompt, &[("FAKE_ARGV", &argv), ("FAKE_STDIN", &stdin)]);
    request.model = Some("gpt-5.5".into());
    request.permission_mode = Some("plan".into());
    request.extra_args = vec!["--ephemeral".into()];
    let (_, outcome) = run_by_name(Box::new(CodexHarness), request);

    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), prompt);
    let dir = fake.dir().display().to_string();
    let argv = std::fs::read_to_string(&argv).unwrap();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            &format!("--cd={dir}"),
            "--model=gpt-5.5",
            "--sandbox=read-only",
            "--ephemeral",
            "-"
        ]
    );
    assert!(!argv.contains("dangerously"), "{argv}");
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn a_missing_binary_is_binary_not_found_saying_it_does_not_exist() {
    assert_missing_binary(&CodexHarness, "/nonexistent/codex");
    assert_eq!(LAUNCH.install, "npm install -g @openai/codex");
}

#[test]
fn a_missing_directory_is_a_working_directory_error() {
    let fake = Fake::new("codex");
    let mut request = fake.request("hi", &[]);
    request.cwd = Some(fake.path("missing"));
    let result = runtime().block_on(CodexHarness.run(request));
    assert!(
        matches!(result, Err(RunError::WorkingDirectory { .. })),
        "{:?}",
        result.err()
    );
}
