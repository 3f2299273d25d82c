//! The live launch: builds Codex's command line from a `RunRequest` and hands it to the shared
//! process driver of `harness-core`.

use harness_agents_core::backend::option;
use harness_agents_core::{Launch, Versions};

/// The `--sandbox` value (or other flags) a `permission_mode` stands for.
///
/// Claude Code's mode names map to the Codex sandbox that allows about as much, so one request
/// can go to either backend; any other value (Codex's own `read-only`, `workspace-write`,
/// `danger-full-access`, or anything else) is passed to `--sandbox` as given, for Codex to
/// accept or reject.
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    let sandbox = match mode {
        // Codex's own default: no flag.
        "default" => return Vec::new(),
        "plan" => "read-only",
        "acceptEdits" => "workspace-write",
        "bypassPermissions" => "danger-full-access",
        other => other,
    };
    vec![option("--sandbox", sandbox)]
}

/// The Codex CLI releases the recordings cover: `fixtures/codex/` is recorded with 0.171.0, and
/// `fixtures/codex-0.163.0/` keeps an older release's recordings; `codex --version` prints the
/// version. `cargo xtask record` installs the recorded release by default.
pub const VERSIONS: Versions = Versions::new("0.171.0").older(&["0.163.0"]);

/// How Codex is started live: the request's binary, else `$CODEX_BIN`, else `codex`, installed
/// by `npm install -g @openai/codex`; `exec --json --skip-git-repo-check --cd=DIR
/// [--model=MODEL] [--sandbox=MODE] [extra args] [resume -- ID] -`. The prompt is not among
/// the arguments: the final `-` makes Codex read it from standard input, so text starting with
/// `-` can never be read as an option. A stored session is continued with `exec`'s `resume`
/// subcommand (X10), which takes the session id as a positional argument, after a `--` so an
/// id that starts with `-` stays an id; `exec`'s options before it apply to the resumed run.
pub const LAUNCH: Launch = Launch::new("codex", "CODEX_BIN", "npm install -g @openai/codex")
    .leading(&["exec", "--json", "--skip-git-repo-check"])
    .dir_flag("--cd")
    .model_flag("--model")
    .resume_subcommand("resume")
    .trailing(&["-"]);

/// How a Codex session is started (XA14 of `docs/codex-app-server.md`): the same binary as
/// [`LAUNCH`], as `codex app-server [extra args]`. The directory, the model, the permission
/// mode and the thread to resume go in the `thread/start` or `thread/resume` request, not on
/// the command line; the prompts go in `turn/start` requests.
pub const SESSION_LAUNCH: Launch =
    Launch::new("codex", "CODEX_BIN", "npm install -g @openai/codex").leading(&["app-server"]);

#[cfg(test)]
mod tests {
    use std::path::Path;

    use harness_agents_core::{Backend, RunRequest};

    use crate::CodexHarness;

    #[test]
    fn x10_a_resumed_run_is_execs_resume_subcommand_with_the_id_after_a_double_dash() {
        let mut request = RunRequest::new("-m evil");
        request.resume = Some("-019a".into());
        request.model = Some("gpt-5.5".into());
        request.permission_mode = Some("plan".into());
        request.extra_args = vec!["--ephemeral".into()];
        assert_eq!(
            CodexHarness.args(&request, Path::new("/p")),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--cd=/p",
                "--model=gpt-5.5",
                "--sandbox=read-only",
                "--ephemeral",
                "resume",
                "--",
                "-019a",
                "-"
            ]
        );
        request.resume = None;
        let args = CodexHarness.args(&request, Path::new("/p"));
        assert!(!args.iter().any(|a| a == "resume"), "{args:?}");
    }
}
