//! Output formats: `--format human` and `--color` on `harness normalize` (the same printer
//! serves `harness run`).

use std::process::Stdio;

use super::{run, run_with_env};

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
        "── success · 2 turns · tokens 1,200 in, 34 out · $0.01234 · 1.5s · \
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
    // Each line also says whether the backend's agent is installed (suite::backends).
    assert!(
        text.lines().any(|l| super::backends::reports(
            l,
            r#"{"exit_codes":false,"name":"claude","orchestration_source":"none"}"#
        )),
        "{text}"
    );
}

/// A Claude stream whose every free-text field tries to act on the terminal: an OSC title, a
/// CSI clear screen and erase line, CR, U+009B (the one-character CSI), DEL, a bidi override,
/// and newlines followed by forged event lines.
fn hostile_stream() -> Vec<u8> {
    let lines = [
        r#"{"type":"system","subtype":"init","cwd":"/repo","session_id":"s\u001b]0;t\u0007"}"#,
        concat!(
            r#"{"type":"assistant","message":{"id":"m1","content":["#,
            r#"{"type":"thinking","thinking":"plan\u001b[2J\n── success · forged"},"#,
            r#"{"type":"text","text":"hi\u001b]0;pwned\u0007 there\u001b[2J\rX\u009b31mred\u007f\u202e\nread      /etc/shadow\r\nok"},"#,
            r#"{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"src/a\u001b[1A\n.py"}},"#,
            r#"{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"echo \u001b[2K\nagent     forged"}},"#,
            r#"{"type":"tool_use","id":"t3","name":"Grep","input":{"pattern":"a\u0008\u0008b\"","path":"src"}},"#,
            r#"{"type":"tool_use","id":"t4","name":"WebFetch","input":{"url":"https://x/\u009b2J"}}]}}"#,
        ),
        concat!(
            r#"{"type":"user","message":{"content":["#,
            r#"{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"bad\u001b[31m\u0000"},"#,
            r#"{"type":"tool_result","tool_use_id":"t2","content":"ok"},"#,
            r#"{"type":"tool_result","tool_use_id":"t3","content":"ok"},"#,
            r#"{"type":"tool_result","tool_use_id":"t4","content":"ok"}]}}"#,
        ),
        r#"{"type":"system","subtype":"compact\u001b[2J"}"#,
        r#"{"type":"result","subtype":"error_during_execution","is_error":true,"result":"boom\u001b[H\nerror     forged","num_turns":1}"#,
    ];
    let mut stream = lines.join("\n").into_bytes();
    // A non-JSON line with raw escape bytes, C1 in UTF-8, and a lone CR inside.
    stream.extend_from_slice(b"\nplain \x1b]0;title\x07 li\rne \xc2\x9b2J\x7f\n");
    stream
}

#[test]
fn control_characters_are_shown_never_obeyed() {
    let dir = std::env::temp_dir().join(format!("harness-cli-escapes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = dir.join("run.stderr");
    std::fs::write(&err, b"err \x1b[2J\xc2\x9b line\x1b[K\n").unwrap();
    let output = run(
        &[
            "normalize",
            "--format",
            "human",
            "--color",
            "never",
            "--stderr",
            err.to_str().unwrap(),
        ],
        &hostile_stream(),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8(output.stdout).unwrap();
    let expected = [
        r"reasoning plan\e[2J",
        r"          ── success · forged",
        r"agent     hi\e]0;pwned\u{7} there\e[2J\rX\u{9b}31mred\u{7f}\u{202e}",
        r"          read      /etc/shadow",
        r"          ok",
        r"read      src/a\e[1A\n.py  (failed: bad\e[31m\u{0})",
        r"$ echo \e[2K",
        r"          agent     forged",
        r#"search    "a\u{8}\u{8}b"" in src"#,
        r"unknown   unknown_tool WebFetch  https://x/\u{9b}2J",
        r"unknown   unknown_system_subtype  system/compact\e[2J",
        r"error     boom\e[H",
        r"          error     forged",
        r"warning   plain \e]0;title\u{7} li\rne \u{9b}2J\u{7f}  (non_json)",
        r"warning   err \e[2J\u{9b} line\e[K  (stderr)",
        "── error · 1 turn · 1 agent, 1 reasoning, 1 read, 1 search, 1 command, 2 warning, \
         1 error, 2 unknown · session s\\e]0;t\\u{7}",
    ];
    assert_eq!(text.lines().collect::<Vec<_>>(), expected, "{text}");
    // Nothing that can act on a terminal is left: no C0 but the line ends, no DEL, no C1.
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
        .collect();
    assert!(bad.is_empty(), "{bad:?} in {text}");
    // Every line that is not an event's first starts with the indentation.
    for line in text.lines() {
        let starts_event = [
            "reasoning ",
            "agent ",
            "read ",
            "$ ",
            "search ",
            "unknown ",
            "error ",
            "warning ",
            "── ",
        ]
        .iter()
        .any(|l| line.starts_with(l));
        assert!(starts_event || line.starts_with("          "), "{line:?}");
    }
}

#[test]
fn jsonl_keeps_the_text_exactly() {
    let output = run(&["normalize", "--format", "jsonl"], &hostile_stream());
    let text = String::from_utf8(output.stdout).unwrap();
    let agent: serde_json::Value = serde_json::from_str(
        text.lines()
            .find(|l| l.starts_with(r#"{"kind":"agent""#))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        agent["text"],
        "hi\u{1b}]0;pwned\u{7} there\u{1b}[2J\rX\u{9b}31mred\u{7f}\u{202e}\nread      /etc/shadow\r\nok"
    );
}

#[test]
fn unknown_names_what_it_was() {
    let claude = concat!(
        r#"{"type":"system","subtype":"api_retry","attempt":1}"#,
        "\n",
        r#"{"type":"control_response","response":{"subtype":"success"}}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"w","name":"WebSearch","input":{"query":"rust serde"}},{"type":"tool_use","id":"f","name":"WebFetch","input":{"url":"https://example.com/a","prompt":"sum"}},{"type":"image","source":{}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"w","content":"r"},{"type":"tool_result","tool_use_id":"f","content":"r"},{"type":"tool_result","tool_use_id":"lost","content":"r"}]}}"#,
        "\n",
        r#"["a list"]"#,
        "\n",
    );
    let output = run(&["normalize", "--format", "human"], claude.as_bytes());
    let text = String::from_utf8(output.stdout).unwrap();
    let unknown: Vec<&str> = text.lines().filter(|l| l.starts_with("unknown")).collect();
    assert_eq!(
        unknown,
        [
            "unknown   unknown_system_subtype  system/api_retry",
            "unknown   unknown_type  control_response",
            "unknown   unknown_block  image",
            "unknown   unknown_tool WebSearch  rust serde",
            "unknown   unknown_tool WebFetch  https://example.com/a",
            "unknown   unpaired_result  result of lost",
            r#"unknown   not_an_event  ["a list"]"#,
        ],
        "{text}"
    );
    let codex = concat!(
        r#"{"type":"thread.started","thread_id":"t"}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"ws","type":"web_search","query":"codex exec json"}}"#,
        "\n",
        r#"{"type":"item.completed","item":{"id":"x","type":"brand_new_item"}}"#,
        "\n",
    );
    let output = run(&["normalize", "--format", "human"], codex.as_bytes());
    let text = String::from_utf8(output.stdout).unwrap();
    let unknown: Vec<&str> = text.lines().filter(|l| l.starts_with("unknown")).collect();
    assert_eq!(
        unknown,
        [
            "unknown   unknown_tool web_search  web_search: codex exec json",
            "unknown   unknown_item  brand_new_item",
        ],
        "{text}"
    );
}

#[test]
fn sub_agent_lines_keep_the_columns_aligned() {
    let stream = concat!(
        r#"{"type":"system","subtype":"init","cwd":"/repo","session_id":"s1"}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"task1","name":"Task","input":{"description":"explore","prompt":"look"}}]}}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"text","text":"Reading.\nTwo lines."},{"type":"tool_use","id":"r2","name":"Read","input":{"file_path":"/repo/src/b.rs"}}]},"parent_tool_use_id":"task1"}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"r2","content":"x"}]},"parent_tool_use_id":"task1"}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"task1","content":"done"}]}}"#,
        "\n",
        r#"{"type":"assistant","message":{"id":"m3","content":[{"type":"text","text":"Main."},{"type":"tool_use","id":"r3","name":"Read","input":{"file_path":"/repo/src/c.rs"}}]}}"#,
        "\n",
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"r3","content":"x"}]}}"#,
        "\n",
    );
    let output = run(&["normalize", "--format", "human"], stream.as_bytes());
    let text = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = text.lines().take(6).collect();
    assert_eq!(
        lines,
        [
            "│ agent   Reading.",
            "│         Two lines.",
            "│ read    src/b.rs",
            "unknown   unknown_tool Task  explore",
            "agent     Main.",
            "read      src/c.rs",
        ],
        "{text}"
    );
    // The text column is the same, counted in characters.
    let column = |l: &str| l.chars().position(|c| c == 'R' || c == 's' || c == 'M');
    assert_eq!(column(lines[0]), column(lines[4]));
}

/// Runs `harness ARGS` with a terminal (a pty, through `script`) as stdin and stdout, in the
/// environment `env` (`KEY=VALUE` words for `env`), feeding `stdin`; returns what the terminal
/// showed.
pub fn on_a_terminal(env: &[&str], args: &[&str], stdin: &[u8]) -> String {
    use std::io::Write;
    let mut command = vec![
        "env".to_string(),
        "-u".to_string(),
        "NO_COLOR".to_string(),
        "-u".to_string(),
        "CLICOLOR".to_string(),
        "-u".to_string(),
        "CLICOLOR_FORCE".to_string(),
        "-u".to_string(),
        "CI".to_string(),
    ];
    command.extend(env.iter().map(|s| s.to_string()));
    command.push(env!("CARGO_BIN_EXE_harness").to_string());
    command.extend(args.iter().map(|s| s.to_string()));
    let line = command
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let mut child = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).unwrap();
    drop(input);
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

const SMALL: &str = concat!(
    r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"thinking","thinking":"hm"}]}}"#,
    "\n",
);

#[test]
fn colour_follows_term_clicolor_and_clicolor_force() {
    let args = ["normalize", "--format", "human", "-"];
    let coloured = |text: &str| text.contains("\x1b[2mreasoning hm\x1b[0m");
    // A terminal that supports colour gets it.
    let shown = on_a_terminal(&["TERM=xterm-256color"], &args, SMALL.as_bytes());
    assert!(coloured(&shown), "{shown:?}");
    // TERM=dumb, CLICOLOR=0 and NO_COLOR turn it off on a terminal.
    for env in ["TERM=dumb", "CLICOLOR=0", "NO_COLOR=1"] {
        let shown = on_a_terminal(&["TERM=xterm-256color", env], &args, SMALL.as_bytes());
        assert!(!shown.contains('\x1b'), "{env}: {shown:?}");
        assert!(shown.contains("reasoning hm"), "{env}: {shown:?}");
    }
    // CLICOLOR_FORCE turns it on in a pipe; --color never still wins.
    let forced = run_with_env(&args, &[("CLICOLOR_FORCE", "1")], SMALL.as_bytes());
    assert!(coloured(&String::from_utf8_lossy(&forced.stdout)));
    let mut never = args.to_vec();
    never.extend(["--color", "never"]);
    let never = run_with_env(&never, &[("CLICOLOR_FORCE", "1")], SMALL.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&never.stdout).lines().next(),
        Some("reasoning hm")
    );
}
