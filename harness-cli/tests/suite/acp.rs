//! `harness run --backend acp --agent CMD` against the fake ACP agent of
//! `fixtures/fake-agent/acp`, and `harness normalize` on the ACP recordings of
//! `fixtures/acp/` (named or detected).

use std::process::Stdio;

use super::harness;

fn agent() -> String {
    fixtures::root()
        .join("fake-agent/acp")
        .display()
        .to_string()
}

/// A12, A1: the CLI drives the agent, prints its events, saves the transcript, and
/// `harness normalize` on that transcript prints the same lines (the outcome's exit code
/// aside, which only a live run has).
#[test]
fn run_drives_an_acp_agent_and_its_transcript_normalizes_to_the_same_events() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("t.jsonl");
    let output = harness()
        .args(["run", "--backend", "acp", "--format", "jsonl", "--cwd"])
        .arg(dir.path())
        .arg("--agent")
        .arg(format!("sh '{}'", agent()))
        .arg("--transcript")
        .arg(&transcript)
        .arg("Read notes.txt")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let live = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = live.lines().collect();
    assert_eq!(lines.len(), 6, "{live}");
    assert!(
        lines[1].starts_with(r#"{"kind":"agent","text":"Let me look.","line":8"#),
        "{}",
        lines[1]
    );
    assert!(lines[5].ends_with(r#","exit_code":0}"#), "{}", lines[5]);
    let offline = harness()
        .args(["normalize", "--format", "jsonl"])
        .arg(&transcript)
        .output()
        .unwrap();
    assert!(offline.status.success());
    let offline = String::from_utf8(offline.stdout).unwrap();
    assert_eq!(offline, live.replace(r#","exit_code":0}"#, "}"));
}

#[test]
fn acp_without_an_agent_is_a_usage_error() {
    let output = harness()
        .args(["run", "--backend", "acp", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "harness: the acp backend needs the agent's command (`--agent 'gemini --acp'`)\n"
    );
}

#[test]
fn an_agent_command_that_cannot_be_split_is_a_usage_error() {
    let output = harness()
        .args(["run", "--backend", "acp", "--agent", "gemini '--acp", "hi"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot split 'gemini '--acp' into words"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A1: every ACP recording is detected as `acp` and gives its expected events.
#[test]
fn auto_detects_every_acp_recording_and_gives_its_expected_events() {
    let mut checked = 0;
    for fixture in fixtures::streams("acp").unwrap() {
        let mut cmd = harness();
        cmd.arg("normalize").arg(&fixture.stream);
        if let Some(stderr) = &fixture.stderr {
            cmd.arg("--stderr").arg(stderr);
        }
        let output = cmd.output().unwrap();
        assert!(output.status.success(), "{}", fixture.name);
        let expected = std::fs::read_to_string(&fixture.expected).unwrap();
        let actual = String::from_utf8(output.stdout).unwrap();
        assert!(
            fixtures::compare(&expected, &actual).is_ok(),
            "{}",
            fixture.name
        );
        assert!(
            String::from_utf8_lossy(&output.stderr)
                .starts_with("harness: detected an acp stream (line 1)"),
            "{}: {}",
            fixture.name,
            String::from_utf8_lossy(&output.stderr)
        );
        checked += 1;
    }
    assert_eq!(checked, 34);
}

#[test]
fn backends_lists_acp_without_exit_codes_and_with_a_plan() {
    let output = harness().arg("backends").output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    // The line also says which known ACP agents are installed (suite::backends).
    assert!(
        text.lines()
            .last()
            .is_some_and(|l| super::backends::reports(
                l,
                r#"{"exit_codes":false,"name":"acp","orchestration_source":"plan"}"#
            )),
        "{text}"
    );
}
