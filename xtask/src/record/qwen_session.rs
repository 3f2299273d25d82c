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
use std::path::PathBuf;

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
}
