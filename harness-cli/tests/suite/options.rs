//! Command-line options and prompts: `--timeout` values, and what `run -`,
//! `normalize` and `classify` say when they wait for a terminal (item 13).

use super::format::on_a_terminal;
use super::run;

#[test]
fn timeout_takes_units_and_plain_seconds() {
    // A missing binary ends the run after the options were accepted: anything but a usage
    // error (2) means the timeout parsed.
    for timeout in ["10m", "90s", "90", "1.5", "1h30m", "1h 30m"] {
        let output = run(
            &[
                "run",
                "--timeout",
                timeout,
                "--binary",
                "/nonexistent/agent",
                "hi",
            ],
            b"",
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_ne!(output.status.code(), Some(2), "{timeout}: {stderr}");
        assert!(!stderr.contains("--timeout"), "{timeout}: {stderr}");
    }
}

#[test]
fn bad_timeouts_get_a_plain_message() {
    let cases = [
        (
            "1e20",
            "'1e20' is not a duration: give seconds (90) or a duration with units (90s, 10m, 1h30m)",
        ),
        ("-1", "'-1' is negative: the timeout must be more than 0"),
        (
            "-0.5s",
            "'-0.5s' is negative: the timeout must be more than 0",
        ),
        ("0", "the timeout must be more than 0"),
        ("0s", "the timeout must be more than 0"),
        (
            "99999999999999999999999",
            "'99999999999999999999999' seconds is too long a timeout",
        ),
        (
            "99999999999999999999999h",
            "'99999999999999999999999h' is too long a timeout",
        ),
        (
            "inf",
            "'inf' is not a duration: give seconds (90) or a duration with units (90s, 10m, 1h30m)",
        ),
        (
            "ten",
            "'ten' is not a duration: give seconds (90) or a duration with units (90s, 10m, 1h30m)",
        ),
    ];
    for (timeout, message) in cases {
        let output = run(&["run", "--timeout", timeout, "hi"], b"");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{timeout}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert_eq!(
            first,
            format!("error: invalid value '{timeout}' for '--timeout <DURATION>': {message}"),
        );
        assert!(!stderr.contains("-- "), "{timeout}: {stderr}");
        assert!(!stderr.contains("float"), "{timeout}: {stderr}");
    }
}

#[test]
fn a_terminal_on_stdin_is_told_what_is_read() {
    let shown = on_a_terminal(&[], &["classify"], b"\"ls\"\n");
    assert!(
        shown.contains(
            "harness: reading commands from standard input, one JSON string (a script) or array \
             (an argv) per line; end with Ctrl-D (or give a SCRIPT or --argv)"
        ),
        "{shown:?}"
    );
    assert!(
        shown.contains(r#"[{"type":"list_files","cmd":"ls","path":null}]"#),
        "{shown:?}"
    );

    let shown = on_a_terminal(&[], &["normalize", "--format", "jsonl"], b"");
    assert!(
        shown.contains(
            "harness: reading a recorded stream from standard input, one JSON line at a time; \
             end with Ctrl-D (or give a FILE, or pipe one in)"
        ),
        "{shown:?}"
    );

    let shown = on_a_terminal(
        &[],
        &["run", "--binary", "/nonexistent/agent", "-"],
        b"hello\n",
    );
    assert!(
        shown.contains(
            "harness: reading the prompt from standard input; end it with Ctrl-D (or give it \
             as an argument)"
        ),
        "{shown:?}"
    );
}

#[test]
fn nothing_is_said_when_stdin_is_a_pipe_or_not_read() {
    for args in [&["classify"][..], &["normalize"], &["classify", "ls"]] {
        let output = run(args, b"");
        assert!(output.stderr.is_empty(), "{args:?}: {output:?}");
    }
    // With a file to read, a terminal on stdin is not mentioned.
    let shown = on_a_terminal(&[], &["classify", "ls"], b"");
    assert!(!shown.contains("reading"), "{shown:?}");
}

#[test]
fn an_unknown_backend_names_auto_where_it_may_be_given() {
    // The registered backends, in the registry's order, as the binary lists them.
    let known = harness_agents::registry()
        .names()
        .collect::<Vec<_>>()
        .join(", ");
    let output = run(&["normalize", "--backend", "no-such-agent"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("harness: unknown backend 'no-such-agent' (known: auto, {known})\n")
    );
    let output = run(&["run", "--backend", "no-such-agent", "hi"], b"");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!("harness: unknown backend 'no-such-agent' (known: {known})\n")
    );
}
