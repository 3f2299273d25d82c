//! The README of every library crate, run as doc tests against the crates under their published
//! names (`harness_agents`, `harness_agents_core`, ...), exactly as a consumer writes them
//! (issue 17 item 4). The workspace's own crates cannot: they depend on each other under the
//! folders' names (`harness_core`), and a crate may not depend on one package under two names.
//!
//! The workspace README's library examples are here too, for the same reason.
//!
//! `cargo test -p readmes --doc` runs them. Nothing else lives here.

/// The workspace README.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct Workspace;

/// `harness/README.md` (the `harness-agents` facade).
#[cfg(doctest)]
#[doc = include_str!("../../harness/README.md")]
struct Facade;

/// `harness-core/README.md` (`harness-agents-core`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-core/README.md")]
struct Core;

/// `harness-codex-shell/README.md` (`harness-agents-codex-shell`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-codex-shell/README.md")]
struct CodexShell;

/// `harness-claude/README.md` (`harness-agents-claude`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-claude/README.md")]
struct Claude;

/// `harness-codex/README.md` (`harness-agents-codex`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-codex/README.md")]
struct Codex;

/// `harness-opencode/README.md` (`harness-agents-opencode`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-opencode/README.md")]
struct Opencode;

/// `harness-gemini/README.md` (`harness-agents-gemini`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-gemini/README.md")]
struct Gemini;

/// `harness-acp/README.md` (`harness-agents-acp`).
#[cfg(doctest)]
#[doc = include_str!("../../harness-acp/README.md")]
struct Acp;
