//! C15 (Bash reclassification through `harness-codex-shell`) and C16 (no exit codes).
//!
//! The expected parts follow Codex's own parser (`conformance/shell/cases.jsonl` shows the
//! same or analogous scripts); these tests need the real classifier.

use serde_json::{Value, json};

use super::*;

/// The events of one Bash use under `init /repo`, its result on line 3.
fn bash(command: &str) -> Vec<Value> {
    one_tool(tool_use("t1", "Bash", json!({"command": command})))
}

/// A reclassified event: `kind` plus the given fields, with the tool fields and `command`.
fn part(kind: &str, command: &str, fields: Value) -> Value {
    let mut event = json!({
        "kind": kind, "command": command, "success": true, "tool": "Bash", "tool_use_id": "t1",
        "line": 3,
    });
    for (k, v) in fields.as_object().into_iter().flatten() {
        event[k] = v.clone();
    }
    event
}

fn command(command: &str) -> Value {
    json!({"kind": "command", "command": command, "success": true, "tool": "Bash", "tool_use_id": "t1", "line": 3})
}

#[test]
fn c15_cat_is_a_read() {
    assert_eq!(
        bash("cat README.md"),
        [part(
            "read",
            "cat README.md",
            json!({"path": "/repo/README.md"})
        )]
    );
}

#[test]
fn c15_search_path_is_the_operand_before_display_shortening() {
    assert_eq!(
        bash("rg -n foo src/webview"),
        [part(
            "search",
            "rg -n foo src/webview",
            json!({"query": "foo", "path": "/repo/src/webview"})
        )]
    );
    assert_eq!(
        bash("grep -rn TODO . | head -20"),
        [part(
            "search",
            "grep -rn TODO . | head -20",
            json!({"query": "TODO", "path": "/repo"})
        )]
    );
}

#[test]
fn c15_cd_then_ls_lists_the_cd_directory() {
    assert_eq!(
        bash("cd sub && ls"),
        [part("list", "cd sub && ls", json!({"path": "/repo/sub"}))]
    );
    assert_eq!(
        bash("cd .. && ls -la"),
        [part("list", "cd .. && ls -la", json!({"path": "/"}))]
    );
}

#[test]
fn c15_read_path_is_joined_onto_the_cd_directory() {
    assert_eq!(
        bash("cd repo && cat README.md"),
        [part(
            "read",
            "cd repo && cat README.md",
            json!({"path": "/repo/repo/README.md"})
        )]
    );
    let script = "cd /home/user/project && sed -n '1,60p' src/app.py";
    assert_eq!(
        bash(script),
        [part(
            "read",
            script,
            json!({"path": "/home/user/project/src/app.py"})
        )]
    );
}

#[test]
fn c15_a_part_with_no_path_and_no_cd_has_no_path() {
    assert_eq!(bash("rg --files"), [part("list", "rg --files", json!({}))]);
    assert_eq!(
        bash("rg foo"),
        [part("search", "rg foo", json!({"query": "foo"}))]
    );
}

#[test]
fn c15_one_event_per_part_in_order() {
    assert_eq!(
        bash("cat a.rs; cat b.rs"),
        [
            part("read", "cat a.rs; cat b.rs", json!({"path": "/repo/a.rs"})),
            part("read", "cat a.rs; cat b.rs", json!({"path": "/repo/b.rs"})),
        ]
    );
    assert_eq!(
        bash("rg --files | rg 'test'"),
        [
            part("list", "rg --files | rg 'test'", json!({})),
            part("search", "rg --files | rg 'test'", json!({"query": "test"})),
        ]
    );
}

#[test]
fn c15_every_part_carries_the_use_s_failure() {
    let script = "cat a.rs; cat b.rs";
    let failed = events(&[
        init("/repo"),
        assistant(
            "m1",
            json!([tool_use("t1", "Bash", json!({"command": script}))]),
        ),
        user(json!([tool_error("t1", json!("cat: b.rs: No such file"))])),
    ]);
    let fail = |path: &str| {
        json!({
            "kind": "read", "path": path, "command": script, "success": false,
            "error": "cat: b.rs: No such file", "tool": "Bash", "tool_use_id": "t1", "line": 3,
        })
    };
    assert_eq!(failed, [fail("/repo/a.rs"), fail("/repo/b.rs")]);
}

#[test]
fn c15_paths_stay_relative_without_a_working_directory() {
    let events = events(&[
        assistant(
            "m1",
            json!([tool_use("t1", "Bash", json!({"command": "cat ../a.rs"}))]),
        ),
        user(json!([tool_result("t1")])),
    ]);
    assert_eq!(
        events,
        [json!({
            "kind": "read", "path": "../a.rs", "command": "cat ../a.rs", "success": true,
            "tool": "Bash", "tool_use_id": "t1", "line": 2,
        })]
    );
}

#[test]
fn c15_a_leading_echo_is_dropped_as_codex_does() {
    // Codex drops an `echo` only in first position (`echo '--- a.rs ---' && cat a.rs`).
    assert_eq!(
        bash("echo hi && cat a"),
        [part("read", "echo hi && cat a", json!({"path": "/repo/a"}))]
    );
}

#[test]
fn c15_anything_else_is_one_command() {
    for script in [
        "cargo test",
        "cat a.rs && echo done",
        "echo foo > bar",
        "FOO=bar cargo test",
    ] {
        assert_eq!(bash(script), [command(script)], "{script}");
    }
}

#[test]
fn c16_a_failed_command_has_no_exit_code() {
    assert_eq!(
        events(&[
            assistant(
                "m1",
                json!([tool_use("t1", "Bash", json!({"command": "cargo test"}))])
            ),
            user(json!([tool_error(
                "t1",
                json!("Exit code 101\ntest failed")
            )])),
        ]),
        [json!({
            "kind": "command", "command": "cargo test", "success": false,
            "error": "Exit code 101\ntest failed", "tool": "Bash", "tool_use_id": "t1", "line": 2,
        })]
    );
}
