//! The live runner: builds Codex's command line from a `RunRequest` and hands it to the shared
//! process driver of `harness-core`.

use std::path::{Path, PathBuf};

use harness_core::process::{self, ProcessSpec};
use harness_core::{RunError, RunRequest, RunStream};

use crate::CodexNormalizer;

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
    vec!["--sandbox".to_string(), sandbox.to_string()]
}

/// The arguments after the binary, for an agent working in `dir`. The prompt is not among
/// them: the final `-` makes Codex read it from standard input, so text starting with `-` can
/// never be read as an option.
pub(crate) fn args(request: &RunRequest, dir: &Path) -> Vec<String> {
    let mut args: Vec<String> = ["exec", "--json", "--skip-git-repo-check", "-C"]
        .map(String::from)
        .into();
    args.push(dir.display().to_string());
    if let Some(model) = &request.model {
        args.extend(["-m".to_string(), model.clone()]);
    }
    if let Some(mode) = &request.permission_mode {
        args.extend(permission_args(mode));
    }
    args.extend(request.extra_args.iter().cloned());
    args.push("-".to_string());
    args
}

/// Starts `codex` for `request` and streams its normalized events, then the outcome.
///
/// `config.cwd`, when `None`, becomes the run's directory (X9).
pub(crate) fn run(request: RunRequest) -> Result<RunStream, RunError> {
    let mut config = request.normalizer.clone();
    let dir = match process::absolute_cwd(&request) {
        Some(cwd) => cwd,
        None => std::env::current_dir().map_err(|source| RunError::WorkingDirectory {
            cwd: PathBuf::from("."),
            source,
        })?,
    };
    if config.cwd.is_none() {
        config.cwd = Some(dir.display().to_string());
    }
    let args = args(&request, &dir);
    let spec = ProcessSpec::for_request(request, CODEX_BIN, "codex", args, INSTALL);
    process::spawn(spec, Box::new(CodexNormalizer::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_holds_the_options_in_order_then_dash_and_never_the_prompt() {
        let request = RunRequest {
            prompt: "--dangerously-bypass-approvals-and-sandbox".into(),
            model: Some("gpt-5.5".into()),
            permission_mode: Some("workspace-write".into()),
            extra_args: vec!["--ephemeral".into(), "-c".into(), "x=1".into()],
            ..RunRequest::default()
        };
        assert_eq!(
            args(&request, Path::new("/work/project")),
            [
                "exec",
                "--json",
                "--skip-git-repo-check",
                "-C",
                "/work/project",
                "-m",
                "gpt-5.5",
                "--sandbox",
                "workspace-write",
                "--ephemeral",
                "-c",
                "x=1",
                "-"
            ]
        );
        let bare = RunRequest::default();
        assert_eq!(
            args(&bare, Path::new("/p")),
            ["exec", "--json", "--skip-git-repo-check", "-C", "/p", "-"]
        );
    }

    #[test]
    fn claude_permission_modes_map_to_a_sandbox_and_other_values_pass_as_given() {
        let cases: [(&str, &[&str]); 7] = [
            ("default", &[]),
            ("plan", &["--sandbox", "read-only"]),
            ("acceptEdits", &["--sandbox", "workspace-write"]),
            ("bypassPermissions", &["--sandbox", "danger-full-access"]),
            ("read-only", &["--sandbox", "read-only"]),
            ("danger-full-access", &["--sandbox", "danger-full-access"]),
            ("no-such-mode", &["--sandbox", "no-such-mode"]),
        ];
        for (mode, expected) in cases {
            assert_eq!(permission_args(mode), expected, "{mode}");
        }
    }
}
