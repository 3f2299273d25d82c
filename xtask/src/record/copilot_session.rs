//! `cargo xtask record --backend copilot-session`: sessions of the GitHub Copilot CLI through
//! its ACP mode (`copilot --acp`, CP15-CP18 of `docs/copilot.md`), each driven through
//! `CopilotHarness::session` by the scripted caller of [`super::acp_session`], against the
//! OpenAI chat-completions stand-in of the Copilot corpus ([`super::chat`]), in the same HOME,
//! project and environment as `--backend copilot` ([`super::copilot`]).
//!
//! Scenarios live in `fixtures/copilot-session/scenarios/NAME.json`, in the form of
//! [`super::acp_session::Scenario`] with `"agent": "copilot"` and `from` naming a scenario of
//! `fixtures/copilot/scenarios/` (its files and environment; its turns unless the session
//! gives its own). Recordings (`NAME.jsonl`, the session's transcript lines, A1; `NAME.stderr`;
//! `NAME.cmd`) go to `fixtures/copilot-session/` and are compared with the hand-reviewed
//! `NAME.expected.jsonl`. The same pieces let `--backend acp` record one-shot transcripts of
//! `copilot --acp` (`fixtures/acp/c*`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Result;
use serde_json::Value;

use super::{Options, acp_session, copilot, shared};

/// Copilot's ACP arguments after its binary, as the session and the `acp` backend start it.
pub const COMMAND: [&str; 2] = ["--acp", "--no-auto-update"];

/// Entry point of `cargo xtask record --backend copilot-session`.
pub(super) fn record(options: &Options) -> Result<()> {
    acp_session::record_in(options, "copilot-session")
}

/// The recorded Copilot release, installed once into the record cache.
pub(super) fn binary() -> Result<PathBuf> {
    copilot::install(&super::cache_dir(), copilot::COPILOT_VERSION)
}

/// What a run against the stand-in needs: the agent's environment and a stop that ends the
/// stand-in and returns what it noticed.
pub(super) type Prepared = (BTreeMap<String, String>, Box<dyn FnOnce() -> Vec<String>>);

/// Makes `/home/copilot` anew for the Copilot scenario `corpus` (a scenario of
/// `fixtures/copilot/scenarios/`, as JSON, its turns already the session's) and starts its
/// stand-in. The scenario's permission mode and arguments are not used: the ACP scenario
/// gives its own.
pub(super) fn prepare(corpus: Value, binary: &Path) -> Result<Prepared> {
    let inner: copilot::Scenario = serde_json::from_value(corpus)?;
    let setup = copilot::prepare(&inner, binary, None)?;
    let (server, api) = (setup.server, setup.api);
    Ok((setup.env, Box::new(move || shared::stop(server, &api))))
}
