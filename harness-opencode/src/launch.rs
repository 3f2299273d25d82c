//! The live launch: opencode's command line for a `RunRequest`, handed to the shared process
//! driver of `harness-core` (P14).

use harness_agents_core::backend::option;
use harness_agents_core::{Launch, PromptInput, Versions};

/// The opencode releases the recordings cover: `fixtures/opencode/` is recorded with 1.18.33;
/// `opencode --version` prints the version. `cargo xtask record` installs the recorded release by
/// default.
pub const VERSIONS: Versions = Versions::new("1.18.33");

/// How opencode is started live: the request's binary, else `$OPENCODE_BIN`, else `opencode`,
/// installed by `npm install -g opencode-ai`; `run --format=json --thinking [--model=MODEL]
/// [--session=ID] [permission flags] [extra args] -- PROMPT` (P14); `--session` continues a
/// stored session (P15). The prompt is the last argument, after a
/// `--` that ends the options: `opencode run` takes its message as positional words and never
/// reads it from standard input. `--thinking` makes opencode print its reasoning parts (P2).
/// The agent works in the directory it is started in.
pub const LAUNCH: Launch = Launch::new("opencode", "OPENCODE_BIN", "npm install -g opencode-ai")
    .prompt(PromptInput::AfterDoubleDash)
    .leading(&["run", "--format=json", "--thinking"])
    .model_flag("--model")
    .resume_flag("--session");

/// The flags a `permission_mode` stands for (P14).
///
/// opencode's permissions are its agents' settings; `opencode run` rejects every permission
/// that would ask. Claude Code's names map to what allows about as much: `plan` is opencode's
/// read-only `plan` agent, `bypassPermissions` is `--auto` (approve what is not explicitly
/// denied), `default` and `acceptEdits` are opencode's default `build` agent (which edits
/// without asking). Any other value names an opencode agent (`build`, `plan`, or one of the
/// project's own).
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    match mode {
        "default" | "acceptEdits" => Vec::new(),
        "bypassPermissions" => vec!["--auto".to_string()],
        "plan" => vec![option("--agent", "plan")],
        agent => vec![option("--agent", agent)],
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use harness_agents_core::{Backend, RunRequest};

    use crate::OpencodeHarness;

    #[test]
    fn p15_a_resumed_run_names_the_session_as_one_word() {
        let mut request = RunRequest::new("--session=other");
        request.resume = Some("-ses_1".into());
        request.model = Some("anthropic/claude-sonnet-4-5".into());
        request.permission_mode = Some("plan".into());
        assert_eq!(
            OpencodeHarness.args(&request, Path::new("/p")),
            [
                "run",
                "--format=json",
                "--thinking",
                "--model=anthropic/claude-sonnet-4-5",
                "--session=-ses_1",
                "--agent=plan"
            ]
        );
    }
}
