//! The live runner: builds Codex's command line from a `RunRequest` and hands it to the shared
//! process driver of `harness-core`.

use harness_core::{Launch, option};

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

/// How Codex is started live: the request's binary, else `$CODEX_BIN`, else `codex`, installed
/// by `npm install -g @openai/codex`; `exec --json --skip-git-repo-check --cd=DIR
/// [--model=MODEL] [--sandbox=MODE] [extra args] -`. The prompt is not among the arguments:
/// the final `-` makes Codex read it from standard input, so text starting with `-` can never
/// be read as an option.
pub const LAUNCH: Launch = Launch::new("codex", "CODEX_BIN", "npm install -g @openai/codex")
    .leading(&["exec", "--json", "--skip-git-repo-check"])
    .dir_flag("--cd")
    .model_flag("--model")
    .trailing(&["-"]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CodexHarness;
    use harness_core::{Harness, RunRequest};
    use std::path::Path;

    #[test]
    fn the_command_line_holds_the_options_in_order_then_dash_and_never_the_prompt() {
        let mut request = RunRequest::new("--dangerously-bypass-approvals-and-sandbox");
        request.model = Some("-gpt-5.5".into());
        request.permission_mode = Some("workspace-write".into());
        request.extra_args = vec!["--ephemeral".into(), "-c".into(), "x=1".into()];
        assert_eq!(
            CodexHarness.args(&request, Path::new("/work/project")),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--cd=/work/project",
                "--model=-gpt-5.5",
                "--sandbox=workspace-write",
                "--ephemeral",
                "-c",
                "x=1",
                "-"
            ]
        );
        let bare = RunRequest::default();
        assert_eq!(
            CodexHarness.args(&bare, Path::new("/p")),
            ["exec", "--json", "--skip-git-repo-check", "--cd=/p", "-"]
        );
    }

    #[test]
    fn claude_permission_modes_map_to_a_sandbox_and_other_values_pass_as_given() {
        let cases: [(&str, &[&str]); 7] = [
            ("default", &[]),
            ("plan", &["--sandbox=read-only"]),
            ("acceptEdits", &["--sandbox=workspace-write"]),
            ("bypassPermissions", &["--sandbox=danger-full-access"]),
            ("read-only", &["--sandbox=read-only"]),
            ("danger-full-access", &["--sandbox=danger-full-access"]),
            ("no-such-mode", &["--sandbox=no-such-mode"]),
        ];
        for (mode, expected) in cases {
            assert_eq!(permission_args(mode), expected, "{mode}");
        }
    }
}
