//! The `gemini` backend through the binary: `harness normalize` on every Gemini CLI recording,
//! with the backend named and detected (docs/gemini.md), and `harness run --backend gemini`
//! against the fake `gemini` of `fixtures/fake-agent/` (its header lists the environment
//! variables it obeys). No test runs the real `gemini`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::harness;

/// The directory the recordings were made in (`cargo xtask record --backend gemini`).
const CWD: &str = "/home/gemini/project";

fn normalize(fixture: &fixtures::Fixture, args: &[&str]) -> Output {
    let mut cmd = harness();
    cmd.arg("normalize").arg(&fixture.stream).args(args);
    if let Some(stderr) = &fixture.stderr {
        cmd.arg("--stderr").arg(stderr);
    }
    cmd.output().unwrap()
}

#[test]
fn every_gemini_recording_prints_its_expected_events_named_or_detected() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for fixture in fixtures::streams("gemini").unwrap() {
        let named = normalize(&fixture, &["--backend", "gemini", "--cwd", CWD]);
        let detected = normalize(&fixture, &["--cwd", CWD]);
        assert!(named.status.success(), "{}: {named:?}", fixture.name);
        assert!(detected.status.success(), "{}: {detected:?}", fixture.name);
        assert_eq!(named.stdout, detected.stdout, "{}", fixture.name);
        // The first line of every recording is `init`, which only Gemini CLI prints.
        assert_eq!(
            String::from_utf8(detected.stderr).unwrap(),
            "harness: detected a gemini stream (line 1); --backend NAME chooses another\n",
            "{}",
            fixture.name
        );
        let actual = String::from_utf8(named.stdout).unwrap();
        if let Err(problems) = fixtures::check_expected(&fixture.expected, &actual) {
            failures.push(format!("{}: {}", fixture.name, problems[0]));
        }
        checked += 1;
    }
    assert_eq!(checked, 40);
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        fixtures::UPDATE_HINT
    );
}

#[test]
fn backends_lists_gemini_without_exit_codes_and_with_a_plan() {
    let output = harness().arg("backends").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    // The line also says whether Gemini CLI is installed (suite::backends).
    assert!(
        text.lines().any(|l| super::backends::reports(
            l,
            r#"{"exit_codes":false,"name":"gemini","orchestration_source":"plan"}"#
        )),
        "{text}"
    );
}

/// A temporary folder for what the fake records, removed on drop; the run's directory.
struct Fake {
    dir: PathBuf,
}

impl Fake {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("harness-run-gemini-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Fake { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `harness run --backend gemini --binary FAKE --cwd DIR ARGS PROMPT`, the fake's
    /// environment, `GEMINI_BIN` not inherited; fails (not hangs) after a minute.
    fn run(&self, args: &[&str], prompt: &str, env: &[(&str, &Path)]) -> Output {
        let mut cmd = harness();
        cmd.args([
            "run",
            "--backend",
            "gemini",
            "--format",
            "jsonl",
            "--binary",
        ])
        .arg(fixtures::root().join("fake-agent").join("gemini"))
        .arg("--cwd")
        .arg(&self.dir)
        .args(args)
        .arg(prompt)
        .env_remove("GEMINI_BIN")
        .stdin(Stdio::null());
        for (key, value) in env {
            cmd.env(key, value);
        }
        guarded(cmd)
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

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

#[test]
fn run_gemini_sends_the_prompt_to_stdin_maps_the_options_and_prints_the_recording() {
    let fake = Fake::new("run");
    let (argv, stdin) = (fake.path("argv"), fake.path("stdin"));
    let recording = fixtures::root().join("gemini/m_multi_tool_turn.jsonl");
    let prompt = "--approval-mode=yolo is text, not an option";
    let output = fake.run(
        &[
            "--model",
            "gemini-2.5-flash",
            "--permission-mode",
            "bypassPermissions",
            "--",
        ],
        prompt,
        &[
            ("FAKE_ARGV", &argv),
            ("FAKE_STDIN", &stdin),
            ("FAKE_STREAM", &recording),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(std::fs::read_to_string(&stdin).unwrap(), prompt);
    assert_eq!(
        std::fs::read_to_string(&argv)
            .unwrap()
            .lines()
            .collect::<Vec<_>>(),
        [
            "--output-format=stream-json",
            "--skip-trust",
            "--model=gemini-2.5-flash",
            "--approval-mode=yolo"
        ]
    );
    let events = lines(&output);
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["agent", "read", "search", "command", "agent", "outcome"]
    );
    let dir = fake.dir.display().to_string();
    assert_eq!(events[1]["path"], json!(format!("{dir}/README.md")));
    assert_eq!(events[5]["status"], "success");
    assert_eq!(events[5]["exit_code"], 0);
    assert_eq!(
        events[5]["final_output"],
        "README read, two sources, five lines."
    );
}

#[test]
fn run_gemini_reports_an_api_error_and_the_agents_exit_status() {
    // A 400 from the API: Gemini CLI prints a failed `result` and exits 144 (400 mod 256).
    let fake = Fake::new("exit");
    let recording = fixtures::root().join("gemini/q_http_400.jsonl");
    let code = PathBuf::from("144");
    let output = fake.run(
        &[],
        "hi",
        &[("FAKE_STREAM", &recording), ("FAKE_EXIT", &code)],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let events = lines(&output);
    assert_eq!(events[0]["kind"], "error");
    assert!(
        events[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("[API Error: "),
        "{events:?}"
    );
    let outcome = events.last().unwrap();
    assert_eq!(outcome["status"], "error");
    assert_eq!(outcome["exit_code"], 144);
}

#[test]
fn the_readmes_side_by_side_gemini_line_is_what_normalize_prints() {
    let readme = std::fs::read_to_string(fixtures::root().join("../README.md")).unwrap();
    let fixture = fixtures::streams("gemini")
        .unwrap()
        .into_iter()
        .find(|f| f.name == "gemini/c_read_range")
        .unwrap();
    let output = normalize(&fixture, &["--backend", "gemini", "--cwd", CWD]);
    let first = String::from_utf8(output.stdout).unwrap();
    let first = first.lines().next().unwrap();
    assert!(readme.lines().any(|l| l == first), "README lacks {first}");
    assert!(readme.contains(
        "harness normalize --backend gemini --cwd /home/gemini/project fixtures/gemini/c_read_range.jsonl"
    ));
}
