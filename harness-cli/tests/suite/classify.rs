//! `harness classify` end to end (SPEC B1a): the three input modes, and the whole
//! shell conformance corpus through standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// Runs the built `harness classify` with `args`, feeding `stdin`.
fn classify(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_harness"))
        .arg("classify")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

/// The stdout lines of a successful run, each parsed as JSON.
fn lines(output: &Output) -> Vec<Value> {
    assert!(
        output.status.success(),
        "harness classify failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// The rows of the shell corpus: (argv, expected).
fn corpus() -> Vec<(Value, Value)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/shell/cases.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let row: Value = serde_json::from_str(line).unwrap();
            (row["argv"].clone(), row["expected"].clone())
        })
        .collect()
}

#[test]
fn script_argument_is_classified_as_bash_lc() {
    let output = classify(&["cd web && rg -n foo src | head -n 5"], b"");
    assert_eq!(
        lines(&output),
        [json!([{"type": "search", "cmd": "rg -n foo src", "query": "foo", "path": "src"}])]
    );
}

#[test]
fn script_argument_prints_null_for_absent_values() {
    let output = classify(&["ls -la"], b"");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "[{\"type\":\"list_files\",\"cmd\":\"ls -la\",\"path\":null}]\n"
    );
}

#[test]
fn argv_option_classifies_that_argv_hyphens_included() {
    let output = classify(&["--argv", "rg", "-n", "--files", "-g", "*.rs"], b"");
    assert_eq!(
        lines(&output),
        [json!([{"type": "list_files", "cmd": "rg -n --files -g '*.rs'", "path": null}])]
    );
}

#[test]
fn argv_option_takes_a_shell_wrapper_too() {
    let output = classify(&["--argv", "/bin/zsh", "-lc", "cat README.md"], b"");
    assert_eq!(
        lines(&output),
        [
            json!([{"type": "read", "cmd": "cat README.md", "name": "README.md", "path": "README.md"}])
        ]
    );
}

#[test]
fn stdin_reproduces_every_corpus_row() {
    let rows = corpus();
    let mut input = String::new();
    for (argv, _) in &rows {
        input.push_str(&argv.to_string());
        input.push('\n');
    }
    let output = lines(&classify(&[], input.as_bytes()));
    assert_eq!(output.len(), rows.len());
    for ((argv, expected), actual) in rows.iter().zip(&output) {
        assert_eq!(actual, expected, "argv {argv}");
    }
}

#[test]
fn stdin_takes_scripts_as_json_strings() {
    let output = classify(&[], b"\"cat a.rs; cat b.rs\"\n\"git status\"\n");
    assert_eq!(
        lines(&output),
        [
            json!([
                {"type": "read", "cmd": "cat a.rs", "name": "a.rs", "path": "a.rs"},
                {"type": "read", "cmd": "cat b.rs", "name": "b.rs", "path": "b.rs"}
            ]),
            json!([{"type": "unknown", "cmd": "git status"}]),
        ]
    );
}

#[test]
fn stdin_reports_a_bad_line_and_goes_on() {
    let input = b"[\"ls\"]\n\n   \nnot json\n42\n[\"cat\", 1]\n\xff\xfe\n\"cd x\"\r\n";
    let output = lines(&classify(&[], input));
    assert_eq!(output.len(), 6, "{output:?}");
    assert_eq!(
        output[0],
        json!([{"type": "list_files", "cmd": "ls", "path": null}])
    );
    for bad in &output[1..5] {
        assert!(bad["error"].is_string(), "{bad}");
        assert_eq!(bad.as_object().unwrap().len(), 1, "{bad}");
    }
    // `cd` alone: Codex gives an empty list.
    assert_eq!(output[5], json!([]));
}

#[test]
fn stdin_empty_prints_nothing() {
    let output = classify(&[], b"");
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
}
