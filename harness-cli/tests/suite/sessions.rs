//! `harness sessions` on the stored sessions the real binaries wrote (`fixtures/sessions/`):
//! rows, filters, prices, stats, show, the JSON Schema, and DuckDB.

use std::path::PathBuf;

use jsonschema::Validator;
use serde_json::{Value, json};

use super::run_with_env;

/// Every agent's variables emptied (an empty variable is an unset one) and `HOME` nowhere: a
/// test reads only the folders it names, never the machine's own sessions.
const ISOLATED: [(&str, &str); 11] = [
    ("HOME", "/nonexistent"),
    ("CLAUDE_CONFIG_DIR", ""),
    ("CODEX_HOME", ""),
    ("XDG_CONFIG_HOME", ""),
    ("XDG_DATA_HOME", ""),
    ("OPENCODE_DB", ""),
    ("GEMINI_CLI_HOME", ""),
    ("PI_CODING_AGENT_DIR", ""),
    ("QWEN_RUNTIME_DIR", ""),
    ("QWEN_HOME", ""),
    ("COPILOT_HOME", ""),
];

/// Runs `harness` with `args` in the [`ISOLATED`] environment.
fn run(args: &[&str], stdin: &[u8]) -> std::process::Output {
    run_with_env(args, &ISOLATED, stdin)
}

/// [`run`] with more variables.
fn run_env(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> std::process::Output {
    let mut all = ISOLATED.to_vec();
    all.extend(env.iter().copied());
    run_with_env(args, &all, stdin)
}

fn stored(path: &str) -> String {
    fixtures::root()
        .join("sessions")
        .join(path)
        .display()
        .to_string()
}

/// Two Claude Code sessions (one with a sub-agent) and one Codex session.
fn three() -> Vec<String> {
    [
        "--claude-dir",
        &stored("claude/c_read"),
        "--claude-dir",
        &stored("claude/m_subagent"),
        "--codex-home",
        &stored("codex/c01_cat"),
    ]
    .map(str::to_string)
    .to_vec()
}

fn rows(args: &[&str], more: &[String]) -> Vec<Value> {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(more.iter().map(String::as_str));
    let output = run(&all, b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn schema(of: &str) -> Validator {
    let output = run(&["sessions", "schema", of], b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let schema: Value = serde_json::from_slice(&output.stdout).unwrap();
    jsonschema::meta::validate(&schema).unwrap();
    jsonschema::draft202012::new(&schema).unwrap()
}

#[test]
fn list_gives_one_row_per_session_with_its_figures() {
    let mut got = rows(&["sessions", "list", "--format", "json"], &three());
    let validator = schema("list");
    for row in &got {
        assert!(validator.is_valid(row), "{row}");
    }
    for row in &mut got {
        assert!(row["path"].as_str().unwrap().ends_with(".jsonl"));
        row.as_object_mut().unwrap().remove("path");
    }
    // Sorted by start; the Codex model has no price: no cost, and `cost_usd` is not computed
    // from nothing.
    assert_eq!(
        got[0],
        json!({"backend": "codex", "id": "01a22fa9-2827-71d0-8191-c6ced1f58163",
            "project": "/home/dev2/project", "start": "2026-12-01T03:32:24.767Z",
            "end": "2026-12-01T03:32:24.877Z", "duration_ms": 110, "turns": 1, "messages": 2,
            "input_tokens": 2400, "output_tokens": 80, "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0, "computed": ["cost_usd"],
            "first_prompt": "Run `cat README.md` and report.",
            "models": {"gpt-5.5": {"messages": 2, "input_tokens": 2400, "output_tokens": 80,
                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}},
            "tools": {"exec_command": {"uses": 1, "input_tokens": 1200, "output_tokens": 40,
                "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
    );
    // T3, T7: tokens summed per message (computed), the cost Claude Code stored.
    assert_eq!(got[1]["id"], "30963002-e97a-42d1-8bbc-41d63ac4ff77");
    assert_eq!(got[1]["messages"], 3);
    assert_eq!(got[1]["input_tokens"], 360);
    assert_eq!(got[1]["cost_usd"], 0.00324);
    assert_eq!(got[1]["computed"], json!(["tokens"]));
    assert_eq!(got[1]["tools"]["Read"]["uses"], 2);
    assert_eq!(got[1]["models"]["claude-opus-5-5"]["messages"], 3);
    // T8: the sub-agent's file counts in its session.
    assert_eq!(got[2]["id"], "3ccf1dc8-1aab-4824-872b-7dbd67c7dd46");
    assert_eq!(got[2]["input_tokens"], 480);
    assert_eq!(got[2]["first_prompt"], "Use a subagent to read the README");
    assert_eq!(got[2]["tools"]["Read"]["uses"], 1);
}

#[test]
fn list_filters_by_backend_date_and_project() {
    let count = |more: &[&str]| {
        let mut args = vec!["sessions", "list", "--format", "json"];
        args.extend(more);
        rows(&args, &three()).len()
    };
    assert_eq!(count(&[]), 3);
    assert_eq!(count(&["--backend", "codex"]), 1);
    assert_eq!(count(&["--backend", "claude"]), 2);
    assert_eq!(count(&["--backend", "claude,codex"]), 3);
    assert_eq!(count(&["--backend", "codex", "--backend", "claude"]), 3);
    assert_eq!(count(&["--since", "2026-12-02"]), 0);
    assert_eq!(count(&["--until", "2026-12-01"]), 3);
    assert_eq!(count(&["--until", "2026-11-30"]), 0);
    assert_eq!(count(&["--since", "2026-12-01T03:32:25"]), 2);
    assert_eq!(count(&["--project", "dev2"]), 1);
}

#[test]
fn the_environment_names_the_default_locations() {
    let env = [
        ("CLAUDE_CONFIG_DIR", stored("claude/c_read")),
        ("CODEX_HOME", stored("codex/c01_cat")),
        ("HOME", "/nonexistent".to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let output = run_env(&["sessions", "list", "--format", "json"], &env, b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout).lines().count(), 2);
}

/// Without `CLAUDE_CONFIG_DIR`, Claude Code's sessions are under `$XDG_CONFIG_HOME/claude`
/// and `~/.claude`, each read once; `CLAUDE_CONFIG_DIR` may name `projects/` itself; a Codex
/// home's `archived_sessions/` is read beside its `sessions/`.
#[test]
fn each_agent_is_found_in_its_default_folders() {
    let home = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &std::path::Path| {
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(stored(from))
            .arg(to)
            .status()
            .unwrap();
        assert!(status.success());
    };
    std::fs::create_dir_all(home.path().join(".config")).unwrap();
    copy("claude/c_read", &home.path().join(".config/claude"));
    copy("claude/m_subagent", &home.path().join(".claude"));
    std::fs::create_dir_all(home.path().join(".codex")).unwrap();
    copy(
        "codex/c01_cat/sessions",
        &home.path().join(".codex/archived_sessions"),
    );
    let home_dir = home.path().display().to_string();
    let count = |env: &[(&str, &str)]| {
        // An empty variable is an unset one: the test's own environment does not count.
        let mut all = vec![
            ("CLAUDE_CONFIG_DIR", ""),
            ("CODEX_HOME", ""),
            ("XDG_CONFIG_HOME", ""),
        ];
        all.extend(env);
        let output = run_env(&["sessions", "list", "--format", "json"], &all, b"");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8_lossy(&output.stdout).lines().count()
    };
    assert_eq!(count(&[("HOME", &home_dir)]), 3);
    // The same folder twice (a link) is read once.
    std::fs::remove_dir_all(home.path().join(".claude")).unwrap();
    std::os::unix::fs::symlink(
        home.path().join(".config/claude"),
        home.path().join(".claude"),
    )
    .unwrap();
    assert_eq!(count(&[("HOME", &home_dir)]), 2);
    let xdg = home.path().join("elsewhere").display().to_string();
    let projects = stored("claude/m_subagent/projects");
    assert_eq!(
        count(&[("HOME", &home_dir), ("XDG_CONFIG_HOME", &xdg)]),
        2,
        "~/.claude is still read"
    );
    assert_eq!(
        count(&[("HOME", &home_dir), ("CLAUDE_CONFIG_DIR", &projects)]),
        2,
        "m_subagent's session, and the archived rollout"
    );
}

#[test]
fn a_price_file_prices_an_unknown_model() {
    let dir = tempfile::tempdir().unwrap();
    let prices = dir.path().join("prices.json");
    std::fs::write(&prices, r#"{"gpt-5.5": {"input": 1.25, "output": 10}}"#).unwrap();
    let path = prices.display().to_string();
    let got = rows(
        &[
            "sessions",
            "list",
            "--format",
            "json",
            "--backend",
            "codex",
            "--prices",
            &path,
        ],
        &three(),
    );
    // 2,400 input tokens at 1.25 and 80 output tokens at 10 per million.
    assert_eq!(got[0]["cost_usd"], 0.0038);
    std::fs::write(&prices, r#"{"gpt-5.5": {"input": "cheap"}}"#).unwrap();
    let output = run(&["sessions", "list", "--prices", &path], b"");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a price table"));
}

#[test]
fn stats_sums_by_model_and_by_tool() {
    // By model, `uses` counts the model's messages, each API response once (T, R rules): three
    // in `c_read`, two in `m_subagent` and two in its sub-agent's file, two in the rollout.
    let validator = schema("stats");
    let by_model = rows(
        &["sessions", "stats", "--by", "model", "--format", "json"],
        &three(),
    );
    assert!(by_model.iter().all(|r| validator.is_valid(r)));
    assert_eq!(
        by_model,
        [
            json!({"key": "claude-opus-5-5", "sessions": 2, "uses": 7, "input_tokens": 840,
                "output_tokens": 210, "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0, "cost_usd": 0.00756}),
            json!({"key": "gpt-5.5", "sessions": 1, "uses": 2, "input_tokens": 2400,
                "output_tokens": 80, "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0}),
        ]
    );
    let by_tool = rows(
        &["sessions", "stats", "--by", "tool", "--format", "json"],
        &three(),
    );
    let uses: Vec<(String, u64)> = by_tool
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["uses"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        uses,
        [
            ("Agent".into(), 1),
            ("Read".into(), 3),
            ("exec_command".into(), 1)
        ]
    );
    let by_agent = rows(
        &["sessions", "stats", "--by", "agent", "--format", "json"],
        &three(),
    );
    let agents: Vec<(&str, u64, u64)> = by_agent
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap();
            (r["key"].as_str().unwrap(), n("sessions"), n("uses"))
        })
        .collect();
    assert_eq!(agents, [("claude", 2, 7), ("codex", 1, 2)]);
    let by_day = rows(
        &["sessions", "stats", "--by", "day", "--format", "json"],
        &three(),
    );
    assert_eq!(by_day.len(), 1);
    assert_eq!(by_day[0]["key"], "2026-12-01");
    assert_eq!(by_day[0]["sessions"], 3);
    let by_week = rows(
        &["sessions", "stats", "--by", "week", "--format", "json"],
        &three(),
    );
    assert_eq!(by_week[0]["key"], "2026-W49");
    let table = run(
        &[
            "sessions",
            "stats",
            "--by",
            "project",
            "--format",
            "table",
            "--claude-dir",
            &stored("claude/c_read"),
        ],
        b"",
    );
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(text.starts_with("key "), "{text}");
    assert!(text.contains("/home/dev/project"), "{text}");
}

#[test]
fn show_prints_a_sessions_events_then_its_outcome() {
    let mut args = vec!["sessions".to_string(), "show".into(), "3ccf".into()];
    args.extend(three());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let lines = rows(&args, &[]);
    let kinds: Vec<&str> = lines.iter().map(|l| l["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["agent", "unknown", "agent", "read", "agent", "outcome"]
    );
    // T8: the sub-agent's read carries the Agent tool use that started it.
    assert_eq!(
        lines[3]["parent_tool_use_id"],
        "toolu_01Agent0000000000000037"
    );
    assert_eq!(lines[5]["status"], "success");
    let unknown = run(
        &[
            "sessions",
            "show",
            "nope",
            "--claude-dir",
            &stored("claude/c_read"),
        ],
        b"",
    );
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no stored session nope"));
}

/// The README's DuckDB query, run on `stats --by tool` when DuckDB's Python package is there
/// (`.ci/run` installs it; on CI its absence is a failure).
#[test]
fn duckdb_reads_the_rows_as_they_are() {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import duckdb"])
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs DuckDB's Python package"
        );
        eprintln!("duckdb is not importable: `pip install duckdb` to run this test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join("tools.jsonl");
    let output = run(
        &[
            &["sessions", "stats", "--by", "tool", "--format", "json"][..],
            &three().iter().map(String::as_str).collect::<Vec<_>>(),
        ]
        .concat(),
        b"",
    );
    std::fs::write(&file, &output.stdout).unwrap();
    let query = format!(
        "import duckdb\n\
         rows = duckdb.sql(\"SELECT key AS tool, uses, cost_usd FROM read_json_auto('{}') \
         ORDER BY cost_usd DESC NULLS LAST LIMIT 10\").fetchall()\n\
         print(rows)",
        file.display()
    );
    let result = std::process::Command::new("python3")
        .args(["-c", &query])
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&result.stdout).trim(),
        "[('Read', 3, 0.00324), ('Agent', 1, 0.00108), ('exec_command', 1, None)]"
    );
}

/// Copies a recorded scenario's stored files into a fresh folder.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `--cache`: a session is read again only when a file of it changed.
#[test]
fn the_cache_reuses_unchanged_sessions_only() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("claude");
    copy_tree(&fixtures::root().join("sessions/claude/c_read"), &home);
    let cache = dir.path().join("cache/sessions.jsonl");
    let (home_arg, cache_arg) = (home.display().to_string(), cache.display().to_string());
    let list = || {
        let args = [
            "sessions",
            "list",
            "--format",
            "json",
            "--codex-home",
            "/nonexistent",
            "--claude-dir",
            &home_arg,
            "--cache",
            &cache_arg,
        ];
        rows(&args, &[])
    };
    let first = list();
    assert_eq!(first[0]["turns"], 1);
    let text = std::fs::read_to_string(&cache).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    // A cached row whose files did not change is used as it is: make it say 99 turns.
    std::fs::write(&cache, text.replace(r#""turns":1"#, r#""turns":99"#)).unwrap();
    assert_eq!(list()[0]["turns"], 99);
    // A file that changed is read again.
    let transcript = std::fs::read_dir(home.join("projects/-home-dev-project"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap();
    std::io::Write::write_all(&mut file, b"{\"type\":\"summary\",\"summary\":\"s\"}\n").unwrap();
    drop(file);
    assert_eq!(list()[0]["turns"], 1);
}

#[test]
fn the_list_table_shows_the_start_to_the_second_in_utc() {
    let mut args = vec!["sessions", "list", "--format", "table"];
    let more = three();
    args.extend(more.iter().map(String::as_str));
    let output = run(&args, b"");
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("agent  id "), "{text}");
    assert!(
        lines[1].starts_with(
            "codex  01a22fa9-2827-71d0-8191-c6ced1f58163 2026-12-01 03:32:24       0.0     1"
        ),
        "{text}"
    );
}

/// T3: the message Claude Code writes itself for a persistent API error (model `<synthetic>`)
/// is a turn, but no model's message.
#[test]
fn a_synthetic_message_counts_for_no_model() {
    let got = rows(
        &["sessions", "list", "--format", "json"],
        &[
            "--claude-dir".to_string(),
            stored("claude/q4_500_persistent"),
            "--codex-home".to_string(),
            "/nonexistent".to_string(),
        ],
    );
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["turns"], 1);
    assert_eq!(got[0]["models"], json!({}));
}

/// `--format human` and `--format jsonl`, the names `run` and `normalize` use, work for the
/// rows too (aliases of `table` and `json`).
#[test]
fn the_row_formats_take_the_names_the_other_commands_use() {
    let more = three();
    let with = |format: &str| {
        let mut args = vec!["sessions", "list", "--format", format];
        args.extend(more.iter().map(String::as_str));
        let output = run(&args, b"");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        output.stdout
    };
    assert_eq!(with("human"), with("table"));
    assert_eq!(with("jsonl"), with("json"));
    assert_ne!(with("jsonl"), with("human"));
}

/// OS1, GS1: opencode's database and Gemini CLI's chats, each found from its own variables
/// (`XDG_DATA_HOME`, `GEMINI_CLI_HOME`) or named with `--dir`; `stats --by agent` sums them
/// by agent.
#[test]
fn opencode_and_gemini_sessions_are_found_on_their_own() {
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("opencode")).unwrap();
    std::fs::copy(
        stored("opencode/c01_read/opencode.db"),
        data.path().join("opencode/opencode.db"),
    )
    .unwrap();
    let gemini_home = tempfile::tempdir().unwrap();
    let tmp = gemini_home.path().join(".gemini/tmp/project");
    std::fs::create_dir_all(tmp.join("chats")).unwrap();
    let from = PathBuf::from(stored("gemini/c_read_range/tmp/project"));
    std::fs::copy(from.join(".project_root"), tmp.join(".project_root")).unwrap();
    for chat in std::fs::read_dir(from.join("chats")).unwrap().flatten() {
        std::fs::copy(chat.path(), tmp.join("chats").join(chat.file_name())).unwrap();
    }
    let data_dir = data.path().display().to_string();
    let gemini_dir = gemini_home.path().display().to_string();
    let env = [
        ("XDG_DATA_HOME", data_dir.as_str()),
        ("GEMINI_CLI_HOME", gemini_dir.as_str()),
    ];
    let list = |args: &[&str]| -> Vec<Value> {
        let mut all = vec!["sessions", "list", "--format", "json"];
        all.extend(args);
        let output = run_env(&all, &env, b"");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = list(&[]);
    let agents: Vec<&str> = all.iter().map(|r| r["backend"].as_str().unwrap()).collect();
    assert_eq!(agents, ["opencode", "gemini"], "{all:?}");
    let opencode = &all[0];
    assert_eq!(opencode["project"], "/home/oc/project");
    assert_eq!(opencode["turns"], 1);
    assert_eq!(opencode["messages"], 2);
    assert_eq!(opencode["input_tokens"], 240);
    assert_eq!(opencode["output_tokens"], 60);
    // OS7: opencode's own cost, not computed.
    assert_eq!(opencode["cost_usd"], 0.00162);
    assert_eq!(opencode["computed"], json!(["tokens"]));
    assert_eq!(opencode["tools"]["read"]["uses"], 1);
    let gemini = &all[1];
    assert_eq!(gemini["project"], "/home/gemini/project");
    assert_eq!(gemini["turns"], 1);
    assert_eq!(gemini["messages"], 2);
    assert_eq!(gemini["tools"]["read_file"]["uses"], 1);
    // GS6: no cost stored; `gemini-3.8-flash` has no price in the table.
    assert_eq!(gemini["computed"], json!(["tokens", "cost_usd"]));
    assert!(gemini.get("cost_usd").is_none(), "{gemini}");
    assert_eq!(list(&["--backend", "gemini"]).len(), 1);
    // `--dir AGENT=DIR` reads that folder instead of the agent's defaults, the other agents'
    // defaults still read.
    let gemini_dir = format!("gemini={}", stored("gemini/u_resume"));
    let named = list(&["--dir", &gemini_dir]);
    assert_eq!(named.len(), 2, "{named:?}");
    assert_eq!(named[1]["backend"], "gemini");
    assert_eq!(named[1]["turns"], 2);
    let bad = run_env(
        &["sessions", "list", "--dir", &stored("opencode/a_plain")],
        &env,
        b"",
    );
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let opencode_dir = format!("opencode={}", stored("opencode/a_plain"));
    let named = list(&["--dir", &opencode_dir, "--backend", "opencode"]);
    assert_eq!(named.len(), 1);
    assert_eq!(named[0]["first_prompt"], "\"Say hello.\"");
    let output = run_env(
        &["sessions", "stats", "--by", "agent", "--format", "json"],
        &env,
        b"",
    );
    let keys: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["key"].to_string())
        .collect();
    assert_eq!(keys, ["\"gemini\"", "\"opencode\""]);
}

/// QH1, CH1: Qwen Code's chats and Copilot's session folders, found in a home folder
/// (`~/.qwen/projects`, `~/.copilot/session-state`), from their own variables (`QWEN_HOME`,
/// `COPILOT_HOME`), or named with `--dir`; `--backend` keeps one agent's.
#[test]
fn qwen_and_copilot_sessions_are_found_on_their_own() {
    let home = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &std::path::Path| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let status = std::process::Command::new("cp")
            .arg("-r")
            .arg(stored(from))
            .arg(to)
            .status()
            .unwrap();
        assert!(status.success());
    };
    copy(
        "qwen/c_read_file/projects",
        &home.path().join(".qwen/projects"),
    );
    copy(
        "copilot/c_view_whole/session-state",
        &home.path().join(".copilot/session-state"),
    );
    let home_dir = home.path().display().to_string();
    let list = |args: &[&str], env: &[(&str, &str)]| -> Vec<Value> {
        let mut all = vec!["sessions", "list", "--format", "json"];
        all.extend(args);
        let output = run_env(&all, env, b"");
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = list(&[], &[("HOME", &home_dir)]);
    let agents: Vec<&str> = all.iter().map(|r| r["backend"].as_str().unwrap()).collect();
    assert_eq!(agents, ["qwen", "copilot"], "{all:?}");
    let qwen = &all[0];
    assert_eq!(qwen["id"], "8c1f5fb7-81b7-4483-8e43-1b3efdb17114");
    assert_eq!(qwen["project"], "/home/qwen/project");
    assert_eq!(qwen["turns"], 1);
    assert_eq!(qwen["messages"], 2);
    assert_eq!(qwen["input_tokens"], 240);
    assert_eq!(qwen["output_tokens"], 60);
    assert_eq!(qwen["tools"]["read_file"]["uses"], 1);
    // QH7: no cost stored; `qwen3-coder-plus` has no price in the table.
    assert_eq!(qwen["computed"], json!(["tokens", "cost_usd"]));
    assert!(qwen.get("cost_usd").is_none(), "{qwen}");
    let copilot = &all[1];
    assert_eq!(copilot["id"], "e7425d1e-e08c-49a4-bcb7-adebd6eab498");
    assert_eq!(copilot["project"], "/home/copilot/project");
    assert_eq!(copilot["turns"], 1);
    assert_eq!(copilot["messages"], 2);
    // CH4: the tokens stdout never prints, from the stored usage records.
    assert_eq!(copilot["input_tokens"], 240);
    assert_eq!(copilot["output_tokens"], 60);
    assert_eq!(copilot["tools"]["view"]["uses"], 1);
    // gpt-4.1 is priced from the table: 240 * 2 + 60 * 8 per million.
    assert_eq!(copilot["computed"], json!(["tokens", "cost_usd"]));
    assert_eq!(copilot["cost_usd"], 0.00096);
    for agent in ["qwen", "copilot"] {
        let one = list(&["--backend", agent], &[("HOME", &home_dir)]);
        assert_eq!(one.len(), 1, "{one:?}");
        assert_eq!(one[0]["backend"], agent);
    }
    // Each agent's own variable stands for its folder in the home.
    let qwen_home = home.path().join(".qwen").display().to_string();
    let copilot_home = home.path().join(".copilot").display().to_string();
    let moved = list(
        &[],
        &[("QWEN_HOME", &qwen_home), ("COPILOT_HOME", &copilot_home)],
    );
    assert_eq!(moved.len(), 2, "{moved:?}");
    // `--dir AGENT=DIR` reads that folder instead of the agent's defaults: the resumed
    // sessions, two turns each.
    let qwen_dir = format!("qwen={}", stored("qwen/u_resume"));
    let copilot_dir = format!("copilot={}", stored("copilot/u_resume"));
    let named = list(
        &["--dir", &qwen_dir, "--dir", &copilot_dir],
        &[("HOME", &home_dir)],
    );
    let turns: Vec<(&str, &Value)> = named
        .iter()
        .map(|r| (r["backend"].as_str().unwrap(), &r["turns"]))
        .collect();
    assert_eq!(turns, [("qwen", &json!(2)), ("copilot", &json!(2))]);
    let output = run_env(
        &["sessions", "show", "--dir", &qwen_dir, "f9d86a13"],
        &[],
        b"",
    );
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let shown = String::from_utf8_lossy(&output.stdout);
    assert_eq!(shown.lines().count(), 4, "{shown}");
}
