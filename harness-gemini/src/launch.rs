//! The live launch: builds Gemini CLI's command line from a `RunRequest` (G12) and hands it to
//! the shared process driver of `harness-core`.

use harness_agents_core::backend::option;
use harness_agents_core::{Launch, Versions};

/// The Gemini CLI releases the recordings cover: `fixtures/gemini/` is recorded with 0.61.0;
/// `gemini --version` prints the version. `cargo xtask record` installs the recorded release by
/// default.
pub const VERSIONS: Versions = Versions::new("0.61.0");

/// How Gemini CLI is started live: the request's binary, else `$GEMINI_BIN`, else `gemini`,
/// installed by `npm install -g @google/gemini-cli`; `--output-format=stream-json --skip-trust
/// [--model=MODEL] [--resume=ID] [--approval-mode=MODE] [extra args]` (G12), the prompt on
/// standard input; `--resume` continues a stored session of the same directory (G14).
/// Without `--prompt` and with standard input not a terminal, Gemini CLI runs headless and
/// takes all of its standard input as the prompt, so no prompt can be read as an option.
/// `--skip-trust` is always given: the caller chose the directory, and an untrusted one would
/// otherwise end the run at once (exit status 55).
pub const LAUNCH: Launch = Launch::new("gemini", "GEMINI_BIN", "npm install -g @google/gemini-cli")
    .leading(&["--output-format=stream-json", "--skip-trust"])
    .model_flag("--model")
    .resume_flag("--resume");

/// The `--approval-mode` a `permission_mode` stands for (G12): Claude Code's names map to the
/// Gemini CLI mode that allows about as much; any other value (Gemini's own `default`,
/// `auto_edit`, `yolo`, `plan`, or anything else) is passed as given, for Gemini CLI to accept
/// or reject.
pub(crate) fn approval_mode(mode: &str) -> &str {
    match mode {
        "acceptEdits" => "auto_edit",
        "bypassPermissions" => "yolo",
        other => other,
    }
}

/// The flag a `permission_mode` stands for (G12): `--approval-mode`, as one word.
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    vec![option("--approval-mode", approval_mode(mode))]
}

/// How Gemini CLI is started for a session (G13): its ACP mode, `--acp --skip-trust
/// [--model=MODEL] [--approval-mode=MODE] [extra args]`, the same binary as [`LAUNCH`].
/// Prompts, answers and resume go through ACP (`harness_agents_acp::open_session`); its
/// `--resume` flag is for the headless mode, and `session/load` continues a stored session.
pub const SESSION_LAUNCH: Launch =
    Launch::new("gemini", "GEMINI_BIN", "npm install -g @google/gemini-cli")
        .leading(&["--acp", "--skip-trust"])
        .model_flag("--model");

#[cfg(test)]
mod tests {
    use std::path::Path;

    use harness_agents_core::{Backend, RunRequest};

    use crate::GeminiHarness;

    #[test]
    fn g14_a_resumed_run_passes_the_id_to_resume_as_one_word() {
        let mut request = RunRequest::new("--resume=latest");
        request.resume = Some("-1".into());
        request.model = Some("gemini-2.5-pro".into());
        request.permission_mode = Some("bypassPermissions".into());
        assert_eq!(
            GeminiHarness.args(&request, Path::new("/p")),
            [
                "--output-format=stream-json",
                "--skip-trust",
                "--model=gemini-2.5-pro",
                "--resume=-1",
                "--approval-mode=yolo"
            ]
        );
    }
}
