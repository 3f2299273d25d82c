//! The live runner: builds Codex's command line from a `RunRequest` and hands it to the shared
//! process driver of `harness-core`.

use std::path::Path;

use harness_core::{Launch, PromptInput, RunRequest, option};

/// The environment variable naming the `codex` binary when the request names none.
pub const CODEX_BIN: &str = "CODEX_BIN";

/// How to install Codex, for the error a missing binary gives.
pub const INSTALL: &str = "npm install -g @openai/codex";

/// The `--sandbox` value (or other flags) a `permission_mode` stands for.
///
/// Claude Code's mode names map to the Codex sandbox that allows about as much, so one request
/// can go to either backend; any other value (Codex's own `read-only`, `workspace-write`,
/// `danger-full-access`, or anything else) is passed to `--sandbox` as given, for Codex to
/// accept or reject.
fn permission_args(mode: &str) -> Vec<String> {
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

/// How Codex is started live: `$CODEX_BIN` or `codex`, the prompt on standard input (the
/// final `-` of its arguments says so).
pub const LAUNCH: Launch = Launch {
    env_var: CODEX_BIN,
    program: "codex",
    install: INSTALL,
    prompt: PromptInput::Stdin,
};

/// The arguments after the binary, for an agent working in `dir`. The prompt is not among
/// them: the final `-` makes Codex read it from standard input, so text starting with `-` can
/// never be read as an option.
pub(crate) fn args(request: &RunRequest, dir: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check"]
        .map(String::from)
        .into();
    // `--name=value`, one word: a value starting with `-` is never read as an option.
    args.push(option("--cd", &dir.display().to_string()));
    if let Some(model) = &request.model {
        args.push(option("--model", model));
    }
    if let Some(mode) = &request.permission_mode {
        args.extend(permission_args(mode));
    }
    args.extend(request.extra_args.iter().cloned());
    args.push("-".to_string());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_holds_the_options_in_order_then_dash_and_never_the_prompt() {
        let mut request = RunRequest::new("--dangerously-bypass-approvals-and-sandbox");
        request.model = Some("-gpt-5.5".into());
        request.permission_mode = Some("workspace-write".into());
        request.extra_args = vec!["--ephemeral".into(), "-c".into(), "x=1".into()];
        assert_eq!(
            args(&request, Path::new("/work/project")),
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
            args(&bare, Path::new("/p")),
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
