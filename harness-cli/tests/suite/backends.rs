//! `harness backends`: each backend's agent found by `run`'s lookup (`--binary`, `$NAME_BIN`,
//! `PATH`), asked its version with a timeout, and that version set against the recordings;
//! `harness --version` names those recordings. The agents are scripts in a folder of their own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use harness_agents::Backend;
use serde_json::Value;

use super::harness;

/// A folder of scripted agents, removed on drop; the only folder on the `PATH` they are run
/// with.
struct Agents(PathBuf);

impl Agents {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "harness-cli-backends-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Agents(dir)
    }

    /// An executable `/bin/sh` script `name` with `body`.
    fn agent(&self, name: &str, body: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, format!("#!/bin/sh\nPATH=/usr/bin:/bin\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// `harness backends ARGS` with only this folder on `PATH` and no `*_BIN` variable but
    /// `env`.
    fn backends(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut command = harness();
        for var in ["CLAUDE_BIN", "CODEX_BIN", "OPENCODE_BIN", "GEMINI_BIN"] {
            command.env_remove(var);
        }
        command.env("PATH", &self.0).envs(env.iter().copied());
        command.arg("backends").args(args).output().unwrap()
    }
}

impl Drop for Agents {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `line`, a line of `harness backends`, holds every field of `fields` (a JSON object)
/// with the same value: what a backend reports, beside what was found of its agent.
pub fn reports(line: &str, fields: &str) -> bool {
    let line: Value = serde_json::from_str(line).unwrap();
    let fields: Value = serde_json::from_str(fields).unwrap();
    fields
        .as_object()
        .unwrap()
        .iter()
        .all(|(key, value)| line.get(key) == Some(value))
}

/// The JSON lines of `output`, by backend name.
fn rows(output: &Output) -> Vec<Value> {
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn row<'a>(rows: &'a [Value], name: &str) -> &'a Value {
    rows.iter().find(|r| r["name"] == name).unwrap()
}

#[test]
fn backends_reports_presence_path_version_and_coverage() {
    let agents = Agents::new("mixed");
    let claude = agents.agent("claude", "echo '2.1.332 (Claude Code)'");
    agents.agent("codex", "exec sleep 30");
    agents.agent("opencode", r"printf '\033[2J\377 garbage\n'");
    let gemini = agents.agent("my-gemini", "echo 0.99.1");
    let qwen = agents.agent("qwen", "echo 'qwen 0.4.0'");
    let started = Instant::now();
    let output = agents.backends(
        &["--timeout", "1", "--format", "jsonl"],
        &[("GEMINI_BIN", &gemini)],
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let rows = rows(&output);
    let names: Vec<_> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "claude", "codex", "opencode", "gemini", "pi", "qwen", "copilot", "acp"
        ]
    );

    let claude_row = row(&rows, "claude");
    assert_eq!(claude_row["status"], "found");
    assert_eq!(claude_row["path"], claude.display().to_string());
    assert_eq!(claude_row["version"], "2.1.332");
    assert_eq!(claude_row["coverage"], "recorded");
    assert_eq!(claude_row["recorded"], "2.1.332");
    assert_eq!(claude_row["older_recorded"], serde_json::json!(["2.1.197"]));
    assert_eq!(claude_row["source"], "path");
    assert_eq!(claude_row["exit_codes"], false);
    assert_eq!(claude_row["orchestration_source"], "none");

    let codex = row(&rows, "codex");
    assert_eq!(codex["status"], "broken");
    assert!(
        codex["problem"]
            .as_str()
            .unwrap()
            .ends_with("printed no version within 1 s"),
        "{codex}"
    );

    let opencode = row(&rows, "opencode");
    assert_eq!(opencode["status"], "broken");
    assert!(codex.get("version").is_none() && opencode.get("version").is_none());

    let gemini_row = row(&rows, "gemini");
    assert_eq!(gemini_row["source"], "env");
    assert_eq!(gemini_row["path"], gemini.display().to_string());
    assert_eq!(gemini_row["coverage"], "newer");

    let acp = row(&rows, "acp");
    assert_eq!(acp["status"], "found");
    let known: Vec<_> = acp["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["name"].as_str().unwrap(), a["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        known,
        [
            ("gemini", "missing"),
            ("opencode", "broken"),
            ("qwen", "found"),
            ("copilot", "missing"),
            ("claude-code-acp", "missing"),
            ("codex-acp", "missing"),
        ]
    );
    let qwen_row = &acp["agents"][2];
    assert_eq!(qwen_row["path"], qwen.display().to_string());
    assert_eq!(qwen_row["command"], serde_json::json!(["qwen", "--acp"]));
    // Older than the Qwen Code release `fixtures/acp/q*` were recorded with.
    assert_eq!(qwen_row["coverage"], "older");
    assert_eq!(
        acp["agents"][0]["install"],
        "npm install -g @google/gemini-cli"
    );
}

#[test]
fn a_missing_agent_is_a_row_not_an_error() {
    let agents = Agents::new("none");
    let rows = rows(&agents.backends(&[], &[]));
    assert_eq!(rows.len(), 8);
    for row in &rows {
        assert_eq!(row["status"], "missing", "{row}");
    }
    let codex = row(&rows, "codex");
    assert_eq!(codex["problem"], "codex was not found on PATH");
    assert_eq!(codex["install"], "npm install -g @openai/codex");
}

#[test]
fn binary_and_agent_name_what_one_backend_looks_at() {
    let agents = Agents::new("binary");
    let codex = agents.agent("codex-nightly", "echo codex-cli 0.163.0");
    let output = agents.backends(
        &["--backend", "codex", "--binary", codex.to_str().unwrap()],
        &[],
    );
    let codex_rows = rows(&output);
    assert_eq!(codex_rows.len(), 1);
    assert_eq!(codex_rows[0]["source"], "option");
    assert_eq!(codex_rows[0]["coverage"], "older_recorded");

    let acp_agent = agents.agent("my-acp", "echo 3.1.4");
    let command = format!("'{}' --acp", acp_agent.display());
    let acp = rows(&agents.backends(&["--backend", "acp", "--agent", &command], &[]));
    let only = &acp[0]["agents"][0];
    assert_eq!(only["version"], "3.1.4");
    assert_eq!(only["command"][1], "--acp");

    let output = agents.backends(&["--binary", "/bin/true"], &[]);
    assert_eq!(output.status.code(), Some(2), "--binary needs --backend");
    let output = agents.backends(&["--backend", "nope"], &[]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn the_human_table_has_a_row_per_backend_and_known_agent() {
    let agents = Agents::new("table");
    agents.agent("claude", "echo 2.1.197");
    agents.agent("gemini", r"printf 'v0.61.0\033]0;title\007\n'; exit 0");
    let output = agents.backends(&["--format", "human"], &[]);
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 8 + 6, "{text}");
    assert!(lines[0].starts_with("BACKEND"), "{text}");
    assert!(
        lines[1].starts_with("claude") && lines[1].contains("2.1.197 (older recorded)"),
        "{text}"
    );
    assert!(lines.iter().any(|l| l.starts_with("  gemini")), "{text}");
    assert!(
        !text.contains('\x1b'),
        "nothing an agent prints reaches the terminal raw"
    );
}

#[test]
fn version_names_the_recorded_agent_versions() {
    let output = harness().arg("--version").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.starts_with(concat!("harness ", env!("CARGO_PKG_VERSION"), "\n")),
        "{text}"
    );
    for (backend, versions) in [
        ("claude", harness_agents::ClaudeHarness.versions()),
        ("codex", harness_agents::CodexHarness.versions()),
        ("gemini", harness_agents::GeminiHarness.versions()),
        ("pi", harness_agents::PiHarness.versions()),
        ("qwen", harness_agents::QwenHarness.versions()),
        ("copilot", harness_agents::CopilotHarness.versions()),
    ] {
        let versions = versions.unwrap();
        let listed: Vec<_> = versions.all().collect();
        let line = format!("  {backend:<9} {}", listed.join(", "));
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("  acp") && l.contains("gemini 0.61.0")),
        "{text}"
    );
    let short = harness().arg("-V").output().unwrap();
    assert_eq!(
        String::from_utf8(short.stdout).unwrap(),
        concat!("harness ", env!("CARGO_PKG_VERSION"), "\n")
    );
}
