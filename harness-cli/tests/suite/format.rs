//! Output formats: `--format human` and `--color` on `harness normalize` (the same printer
//! serves `harness run`).

use super::run;

const STREAM: &str = concat!(
    r#"{"type":"system","subtype":"init","cwd":"/repo","session_id":"s1"}"#,
    "\n",
    r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"look first"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"src/app.py","offset":4,"limit":6}},{"type":"tool_use","id":"t2","name":"Grep","input":{"pattern":"foo","path":"src"}},{"type":"tool_use","id":"t3","name":"Bash","input":{"command":"cargo build"}},{"type":"tool_use","id":"t4","name":"Write","input":{"file_path":"/elsewhere/x.txt","content":"x"}}]}}"#,
    "\n",
    r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"..."},{"type":"tool_result","tool_use_id":"t2","content":"..."},{"type":"tool_result","tool_use_id":"t3","is_error":true,"content":"error: could not compile\nmore"},{"type":"tool_result","tool_use_id":"t4","content":"ok"}]}}"#,
    "\n",
    "not json\n",
    r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Done.\nTwo lines."}]}}"#,
    "\n",
    r#"{"type":"result","subtype":"success","is_error":false,"result":"Done.","num_turns":2,"duration_ms":1500,"total_cost_usd":0.01234,"usage":{"input_tokens":1200,"output_tokens":34}}"#,
    "\n",
);

#[test]
fn human_format_prints_one_readable_line_per_event_and_a_summary() {
    let output = run(&["normalize", "--format", "human"], STREAM.as_bytes());
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    let expected = [
        "reasoning look first",
        "read      src/app.py:4-9",
        "search    \"foo\" in src",
        "$ cargo build  (failed: error: could not compile)",
        "write     /elsewhere/x.txt",
        "warning   not json  (non_json)",
        "agent     Done.",
        "          Two lines.",
        "── success · 2 turns · tokens 1,200 in, 34 out · $0.0123 · 1.5s · \
         1 agent, 1 reasoning, 1 read, 1 write, 1 search, 1 command, 1 warning · session s1",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected, "{text}");
}

#[test]
fn no_colour_unless_asked_for_when_stdout_is_not_a_terminal() {
    let plain = run(&["normalize", "--format", "human"], STREAM.as_bytes());
    assert!(!plain.stdout.contains(&0x1b));
    let never = run(
        &["normalize", "--format", "human", "--color", "never"],
        STREAM.as_bytes(),
    );
    assert_eq!(never.stdout, plain.stdout);
    let always = run(
        &["normalize", "--format", "human", "--color", "always"],
        STREAM.as_bytes(),
    );
    let text = String::from_utf8(always.stdout).unwrap();
    assert!(
        text.contains("\x1b[2mreasoning look first\x1b[0m"),
        "{text}"
    );
    assert!(
        text.contains("\x1b[31m(failed: error: could not compile)\x1b[0m"),
        "{text}"
    );
}

#[test]
fn jsonl_is_the_default_when_stdout_is_not_a_terminal() {
    let default = run(&["normalize"], STREAM.as_bytes());
    let jsonl = run(&["normalize", "--format", "jsonl"], STREAM.as_bytes());
    assert_eq!(default.stdout, jsonl.stdout);
    let text = String::from_utf8(default.stdout).unwrap();
    assert!(
        text.lines().all(|l| l.starts_with(r#"{"kind":""#)),
        "{text}"
    );
}

#[test]
fn backends_lists_each_backend_with_its_capabilities() {
    let output = run(&["backends"], b"");
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l == r#"{"exit_codes":false,"name":"claude","orchestration_source":"none"}"#),
        "{text}"
    );
}
