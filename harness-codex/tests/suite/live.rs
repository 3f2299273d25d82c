//! Live runs against the fake `codex` kept in `fixtures/fake-agent/`: a shell script that
//! records its argv, working directory and stdin, replays a recorded stream to stdout and its
//! recorded stderr, then exits as the recording did. No test runs the real `codex`.
//!
//! The recordings' expected files assume `--cwd /home/dev2/project`, a directory that does not
//! exist here, and the driver refuses to start an agent in a missing directory
//! (`RunError::WorkingDirectory`). So the golden replay starts the fake in a temporary folder
//! and gives the normalizer `/home/dev2/project` through `RunRequest::normalizer`; the other
//! tests go through the `Harness` trait, where the normalizer resolves against the run's own
//! directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
use harness_codex::{CodexHarness, INSTALL};
use harness_core::{
    Event, Harness, NormalizerConfig, Outcome, OutcomeLine, Registry, RunError, RunItem,
    RunRequest, RunStream,
};
use serde_json::json;

use fixtures::recording_order;

use super::{CWD, completed, turn_completed};

/// The fake `codex` script in `fixtures/fake-agent/` (its header lists the environment
/// variables it obeys).
fn agent() -> PathBuf {
    fixtures::root().join("fake-agent").join("codex")
}

/// A temporary folder for what the fake records, removed on drop; the run's directory.
struct Fake {
    dir: tempfile::TempDir,
}

impl Fake {
    fn new(name: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("harness-codex-live-{name}-"))
            .tempdir()
            .unwrap();
        Fake { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A request for the fake, run in its folder, with `env` for the script.
    fn request(&self, prompt: &str, env: &[(&str, &Path)]) -> RunRequest {
        RunRequest {
            prompt: prompt.into(),
            cwd: Some(self.dir.path().to_path_buf()),
            binary: Some(agent()),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.display().to_string()))
                .collect::<BTreeMap<_, _>>(),
            ..RunRequest::default()
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Every item of the stream (at most a minute): the events, then the outcome, last.
async fn collect(stream: RunStream) -> (Vec<Event>, Outcome) {
    let items: Vec<RunItem> = tokio::time::timeout(Duration::from_secs(60), stream.collect())
        .await
        .expect("hang guard");
    let mut events = Vec::new();
    let mut outcome = None;
    for item in items {
        assert!(outcome.is_none(), "the outcome is the last item");
        match item {
            RunItem::Event(event) => events.push(event),
            RunItem::Outcome(o) => outcome = Some(o),
        }
    }
    (events, outcome.expect("an outcome"))
}

/// Runs `request` through the registry, as callers choosing a backend by name do.
fn run_by_name(request: RunRequest) -> (Vec<Event>, Outcome) {
    let mut registry = Registry::new();
    registry.register(Box::new(CodexHarness));
    let codex = registry.get("codex").unwrap();
    runtime().block_on(async { collect(codex.run(request).await.unwrap()).await })
}

#[test]
fn every_recording_replayed_live_gives_its_expected_events_and_exit_code() {
    let fake = Fake::new("golden");
    let config = NormalizerConfig {
        cwd: Some(CWD.into()),
        ..NormalizerConfig::default()
    };
    let runtime = runtime();
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
            let mut request = fake.request("hello", &env);
            request.normalizer = config.clone();
            let (events, outcome) =
                runtime.block_on(async { collect(CodexHarness.run(request).await.unwrap()).await });
            // A negative recorded status is the signal that ended Codex: no exit code (O1).
            let code = i32::try_from(exit).ok().filter(|c| *c >= 0);
            assert_eq!(outcome.exit_code, Some(code), "{}", fixture.name);

            let mut actual = String::new();
            for event in &events {
                actual.push_str(&serde_json::to_string(event).unwrap());
                actual.push('\n');
            }
            actual.push_str(&serde_json::to_string(&OutcomeLine::new(&outcome)).unwrap());
            let expected = std::fs::read_to_string(&fixture.expected).unwrap();
            if let Err(problems) = fixtures::compare(
                &recording_order(&expected).unwrap(),
                &recording_order(&actual).unwrap(),
            ) {
                failures.push(format!("{}: {}", fixture.name, problems.join("; ")));
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 50 + 50 + 2);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_run_by_name_starts_in_its_directory_and_resolves_relative_paths_against_it() {
    let fake = Fake::new("cwd");
    let (argv, pwd, stream) = (fake.path("argv"), fake.path("pwd"), fake.path("stream"));
    let command = json!({
        "id": "item_0", "type": "command_execution", "command": "/bin/bash -lc 'cat README.md'",
        "aggregated_output": "", "exit_code": 0, "status": "completed",
    });
    std::fs::write(
        &stream,
        format!("{}\n{}\n", completed(command), turn_completed(json!({}))),
    )
    .unwrap();
    let request = fake.request(
        "hi",
        &[
            ("FAKE_ARGV", &argv),
            ("FAKE_PWD", &pwd),
            ("FAKE_STREAM", &stream),
        ],
    );
    let (events, outcome) = run_by_name(request);

    let dir = fake.dir.path().display().to_string();
    assert_eq!(std::fs::read_to_string(&pwd).unwrap().trim_end(), dir);
    let argv = std::fs::read_to_string(&argv).unwrap();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        ["exec", "--json", "--skip-git-repo-check", "-C", &dir, "-"]
    );
    let event = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(event["kind"], "read");
    assert_eq!(event["path"], format!("{dir}/README.md"));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn without_a_cwd_the_run_uses_the_callers_directory() {
    let fake = Fake::new("nocwd");
    let (argv, stream) = (fake.path("argv"), fake.path("stream"));
    let command = json!({
        "id": "item_0", "type": "command_execution", "command": "cat notes.txt",
        "exit_code": 0, "status": "completed",
    });
    std::fs::write(&stream, format!("{}\n", completed(command))).unwrap();
    let mut request = fake.request("hi", &[("FAKE_ARGV", &argv), ("FAKE_STREAM", &stream)]);
    request.cwd = None;
    let (events, outcome) = run_by_name(request);

    let here = std::env::current_dir().unwrap().display().to_string();
    let argv = std::fs::read_to_string(&argv).unwrap();
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(argv[3..5], ["-C", here.as_str()]);
    let event = serde_json::to_value(&events[0]).unwrap();
    assert_eq!(event["path"], format!("{here}/notes.txt"));
    // No terminal line: end-of-input error, incomplete, and the exit code all the same.
    assert_eq!(events.len(), 2);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn the_prompt_goes_to_stdin_and_never_into_argv() {
    let fake = Fake::new("argv");
    let (argv, stdin) = (fake.path("argv"), fake.path("stdin"));
    let prompt = "--dangerously-bypass-approvals-and-sandbox\n-m evil\r\n\u{e9} -";
    let mut request = fake.request(prompt, &[("FAKE_ARGV", &argv), ("FAKE_STDIN", &stdin)]);
    request.model = Some("gpt-5.5".into());
    request.permission_mode = Some("plan".into());
    request.extra_args = vec!["--ephemeral".into()];
    let (_, outcome) = run_by_name(request);

    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), prompt);
    let dir = fake.dir.path().display().to_string();
    let argv = std::fs::read_to_string(&argv).unwrap();
    assert_eq!(
        argv.lines().collect::<Vec<_>>(),
        [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "-C",
            &dir,
            "-m",
            "gpt-5.5",
            "--sandbox",
            "read-only",
            "--ephemeral",
            "-"
        ]
    );
    assert!(!argv.contains("dangerously"), "{argv}");
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn a_missing_binary_is_binary_not_found_with_the_install_hint() {
    let request = RunRequest {
        prompt: "hi".into(),
        binary: Some("/nonexistent/codex".into()),
        ..RunRequest::default()
    };
    let mut registry = Registry::new();
    registry.register(Box::new(CodexHarness));
    let codex = registry.get("codex").unwrap();
    let Err(err) = runtime().block_on(codex.run(request)) else {
        panic!("spawned a missing binary");
    };
    assert!(matches!(err, RunError::BinaryNotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!("/nonexistent/codex was not found; install it with `{INSTALL}`")
    );
    assert_eq!(INSTALL, "npm install -g @openai/codex");
}

#[test]
fn a_missing_directory_is_a_working_directory_error() {
    let fake = Fake::new("nodir");
    let mut request = fake.request("hi", &[]);
    request.cwd = Some(fake.path("missing"));
    let result = runtime().block_on(CodexHarness.run(request));
    assert!(
        matches!(result, Err(RunError::WorkingDirectory { .. })),
        "{:?}",
        result.err()
    );
}
