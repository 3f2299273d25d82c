//! `harness run --backend opencode` against the fake `opencode` kept in `fixtures/fake-agent/`
//! (its header lists the environment variables it obeys): it records its argv, replays a
//! recorded stream and its stderr, and exits as the recording did. No test runs the real
//! `opencode` (`cargo xtask record --backend opencode` does, with the same command line).
//!
//! The recordings' expected files assume the project lived at `/home/oc/project`, so the
//! golden replay runs the fake in `TMP/root/home/oc/project` and strips `TMP/root` from what
//! `harness` prints, as the Codex tests do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use fixtures::recording_order;
use serde_json::Value;

use super::harness;

struct Fake {
    dir: PathBuf,
}

impl Fake {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "harness-run-opencode-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Fake { dir }
    }

    fn agent(&self) -> PathBuf {
        fixtures::root().join("fake-agent").join("opencode")
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `harness run --backend opencode --binary FAKE` with `args` and the fake's environment.
    fn command(&self, args: &[&str], env: &[(&str, &Path)]) -> Command {
        let mut cmd = harness();
        cmd.args(["run", "--backend", "opencode", "--binary"])
            .arg(self.agent())
            .args(args)
            .env_remove("OPENCODE_BIN")
            .stdin(Stdio::null());
        for (key, value) in env {
            cmd.env(key, value);
        }
        cmd
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
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

#[test]
fn every_opencode_recording_run_live_prints_its_expected_events_and_exit_code() {
    let fake = Fake::new("golden");
    let root = fake.path("root");
    let project = root.join("home/oc/project");
    std::fs::create_dir_all(&project).unwrap();
    let root = root.display().to_string();
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in fixtures::streams("opencode").unwrap() {
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
        cmd.arg("--cwd").arg(&project).arg("hello");
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
        assert_eq!(outcome["exit_code"], Value::from(exit), "{}", fixture.name);
        let status = if outcome["status"] == "success" { 0 } else { 1 };
        assert_eq!(output.status.code(), Some(status), "{}", fixture.name);
        checked += 1;
    }
    assert_eq!(checked, 46);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_prompt_goes_last_after_a_double_dash_and_the_options_are_opencode_s() {
    let fake = Fake::new("argv");
    let argv = fake.path("argv");
    let prompt = "--auto and then -m other";
    let mut cmd = fake.command(
        &[
            "--cwd",
            &fake.dir.display().to_string(),
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--permission-mode",
            "bypassPermissions",
            "--arg",
            "--pure",
            "--",
            prompt,
        ],
        &[("FAKE_ARGV", &argv)],
    );
    cmd.stdout(Stdio::null());
    let output = guarded(cmd);
    // No stream: S9's error, status incomplete, exit status 1.
    assert_eq!(output.status.code(), Some(1));
    let args = std::fs::read_to_string(&argv).unwrap();
    assert_eq!(
        args.lines().collect::<Vec<_>>(),
        [
            "run",
            "--format=json",
            "--thinking",
            "--model=anthropic/claude-sonnet-4-5",
            "--auto",
            "--pure",
            "--",
            prompt,
        ]
    );
}

#[test]
fn a_missing_opencode_names_its_npm_package_and_exits_127() {
    // The default name not on PATH gets the install hint; a path named explicitly is reported
    // as it is.
    let fake = Fake::new("missing");
    let mut cmd = harness();
    cmd.args(["run", "--backend", "opencode", "hi"])
        .env("PATH", fake.path("empty-bin"))
        .env_remove("OPENCODE_BIN")
        .stdin(Stdio::null());
    let output = guarded(cmd);
    assert_eq!(output.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("npm install -g opencode-ai"), "{stderr}");

    let mut cmd = harness();
    cmd.args(["run", "--backend", "opencode", "--binary"])
        .arg(fake.path("no-such-opencode"))
        .arg("hi")
        .stdin(Stdio::null());
    let output = guarded(cmd);
    assert_eq!(output.status.code(), Some(127));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("no-such-opencode does not exist"),
        "{stderr}"
    );
}
