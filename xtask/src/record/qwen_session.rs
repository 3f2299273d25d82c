//! `cargo xtask record --backend qwen-session`: sessions of Qwen Code through its ACP mode
//! (`qwen --acp`, QW13-QW16 of `docs/qwen.md`), each driven through `QwenHarness::session` by
//! the scripted caller of [`super::acp_session`], against the chat-completions stand-in of the
//! Qwen corpus ([`super::chat`]), in the same HOME, project, settings and environment as
//! `--backend qwen` ([`super::qwen`]).
//!
//! Scenarios live in `fixtures/qwen-session/scenarios/NAME.json`, in the form of
//! [`super::acp_session::Scenario`] with `"agent": "qwen"` and `from` naming a scenario of
//! `fixtures/qwen/scenarios/` (its files, settings and environment; its turns unless the
//! session gives its own). Recordings (`NAME.jsonl`, the session's transcript lines, A1;
//! `NAME.stderr`; `NAME.cmd`) go to `fixtures/qwen-session/` and are compared with the
//! hand-reviewed `NAME.expected.jsonl`. The same pieces let `--backend acp` record one-shot
//! transcripts of `qwen --acp` (`fixtures/acp/q*`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::{Value, json};

use super::{Options, acp_session, qwen, shared};

/// Qwen's ACP arguments after its binary, as the session and the `acp` backend start it.
pub const COMMAND: [&str; 1] = ["--acp"];

/// Entry point of `cargo xtask record --backend qwen-session`.
pub(super) fn record(options: &Options) -> Result<()> {
    acp_session::record_in(options, "qwen-session")
}

/// The recorded Qwen Code release, installed once into the record cache.
pub(super) fn binary() -> Result<PathBuf> {
    qwen::install(&super::cache_dir(), qwen::QWEN_VERSION)
}

/// What a run against the stand-in needs: the agent's environment and a stop that ends the
/// stand-in and returns what it noticed.
pub(super) type Prepared = (BTreeMap<String, String>, Box<dyn FnOnce() -> Vec<String>>);

/// Makes `/home/qwen` anew for the Qwen scenario `corpus` (a scenario of
/// `fixtures/qwen/scenarios/`, as JSON, its turns already the session's) and starts its
/// stand-in. The scenario's permission mode and arguments are not used: the ACP scenario
/// gives its own. Qwen's bundled skills are turned off (`skills.disabledLevels`): in ACP mode
/// each `available_commands_update` carries every skill's whole text (about 550 KB for the
/// 16 bundled ones), which would make every transcript that large and shows nothing the A
/// rules read.
pub(super) fn prepare(mut corpus: Value) -> Result<Prepared> {
    if let Some(map) = corpus.as_object_mut() {
        let settings = map.entry("settings").or_insert_with(|| json!({}));
        settings["skills"] = json!({"disabledLevels": ["bundled"]});
    }
    let inner: qwen::Scenario = serde_json::from_value(corpus)?;
    let setup = qwen::prepare(&inner, None)?;
    let (server, api) = (setup.server, setup.api);
    Ok((setup.env, Box::new(move || shared::stop(server, &api))))
}

/// Whether a transcript line is Qwen's `available_commands_update`, which it sends whenever its
/// command list is ready, at no fixed place among the turn's messages.
fn is_commands_update(line: &str) -> bool {
    line.contains(r#""sessionUpdate":"available_commands_update""#)
}

/// `events` (JSON lines normalized from the transcript `raw`) with each `line` counted
/// without the `available_commands_update` lines before it. Those are session state (A8, no
/// event), and where Qwen sends them varies from run to run, shifting every later line
/// number; counted without them, two runs of a scenario compare line for line.
pub(super) fn steady_lines(events: &str, raw: &str) -> String {
    let mut skipped = Vec::new();
    let mut count = 0;
    for line in raw.lines() {
        if is_commands_update(line) {
            count += 1;
        }
        skipped.push(count);
    }
    events
        .lines()
        .map(|text| {
            let Ok(mut event) = serde_json::from_str::<Value>(text) else {
                return format!(
                    "{text}
"
                );
            };
            // Standard error's lines are counted apart (J2).
            let stderr = event.get("stream").is_some();
            if let Some(n) = event.get("line").and_then(Value::as_u64)
                && !stderr
                && n >= 1
            {
                let before = skipped.get(n as usize - 1).copied().unwrap_or(count);
                event["line"] = json!(n - before);
            }
            format!("{event}\n")
        })
        .collect()
}

/// [`super::shared::against_expected`] for Qwen's transcripts: with `check` or an expected
/// file, the events are compared with it with their lines counted steadily
/// ([`steady_lines`]) and the process group numbers of failed shell commands' reports
/// neutralized ([`qwen::without_pgid`]: they differ in every run); otherwise the events are
/// written to `NAME.unreviewed.jsonl`.
pub(super) fn against_expected(
    (dir, out, name): (&Path, &Path, &str),
    check: bool,
    old_raw: &str,
    (events, raw): (&str, &str),
    unreviewed: &mut usize,
) -> Result<Vec<String>> {
    let expected_path = dir.join(format!("{name}.expected.jsonl"));
    if !expected_path.exists() {
        let events = (events, raw);
        return shared::against_expected(dir, out, name, check, old_raw, events, unreviewed);
    }
    let expected = shared::without_stderr(&qwen::without_pgid(&super::read(&expected_path)));
    let events = shared::without_stderr(&qwen::without_pgid(events));
    Ok(super::drift::event_drift(
        &steady_lines(&expected, old_raw),
        old_raw,
        &steady_lines(&events, raw),
        raw,
    )
    .into_iter()
    .map(|p| format!("expected: {p}"))
    .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn every_committed_qwen_session_scenario_is_qwens_and_has_its_recording() {
        let dir = fixtures::root().join("qwen-session");
        let names = super::super::scenario_names(&[], &dir.join("scenarios")).unwrap();
        assert!(names.len() >= 7, "{} scenarios", names.len());
        for name in &names {
            let path = dir.join(format!("scenarios/{name}.json"));
            let scenario: acp_session::Scenario =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(scenario.agent, super::super::acp::Agent::Qwen, "{name}");
            for file in ["jsonl", "expected.jsonl", "cmd"] {
                let path = dir.join(format!("{name}.{file}"));
                assert!(path.exists(), "{}", path.display());
            }
        }
    }

    #[test]
    fn lines_are_counted_without_the_command_list_updates() {
        let update = r#"{"from":"agent","message":{"params":{"update":{"sessionUpdate":"available_commands_update"}}}}"#;
        let early = format!("a\n{update}\nb\nc\n");
        let late = format!("a\nb\n{update}\nc\n");
        let events = |line: u64| {
            format!(
                "{{\"kind\":\"agent\",\"text\":\"x\",\"line\":{line}}}\n{{\"kind\":\"warning\",\"line\":1,\"stream\":\"stderr\"}}\n"
            )
        };
        let steady = "{\"kind\":\"agent\",\"line\":3,\"text\":\"x\"}\n{\"kind\":\"warning\",\"line\":1,\"stream\":\"stderr\"}\n";
        assert_eq!(steady_lines(&events(4), &early), steady);
        assert_eq!(steady_lines(&events(4), &late), steady);
        assert_ne!(steady_lines(&events(3), &late), steady);
    }
}
