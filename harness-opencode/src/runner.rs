//! The live runner: opencode's command line for a `RunRequest`, handed to the shared process
//! driver of `harness-core` (P14).

use std::path::Path;

use harness_core::{Launch, PromptInput, RunRequest, option};

/// The environment variable naming the `opencode` binary when the request names none.
pub const OPENCODE_BIN: &str = "OPENCODE_BIN";

/// How to install opencode, for the error a missing binary gives.
pub const INSTALL: &str = "npm install -g opencode-ai";

/// How opencode is started live: `$OPENCODE_BIN` or `opencode`, the prompt as the last
/// argument after a `--` that ends the options (`opencode run` takes its message as
/// positional words and never reads it from standard input).
pub const LAUNCH: Launch = Launch {
    env_var: OPENCODE_BIN,
    program: "opencode",
    install: INSTALL,
    prompt: PromptInput::AfterDoubleDash,
};

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

/// The arguments after the binary, never the prompt: `run --format=json --thinking
/// [--model=MODEL] [permission flags] [extra args]`. The core then adds `--` and the prompt.
/// `--thinking` makes opencode print its reasoning parts (P2). The agent runs in `dir`, its
/// project directory (opencode takes the directory it is started in).
pub fn args(request: &RunRequest, dir: &Path) -> Vec<String> {
    let _ = dir;
    let mut args: Vec<String> = ["run", "--format=json", "--thinking"]
        .map(String::from)
        .into();
    if let Some(model) = &request.model {
        args.push(option("--model", model));
    }
    if let Some(mode) = &request.permission_mode {
        args.extend(permission_args(mode));
    }
    args.extend(request.extra_args.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_holds_the_options_in_order_and_never_the_prompt() {
        let mut request = RunRequest::new("--auto");
        request.model = Some("-anthropic/claude-sonnet-4-5".into());
        request.permission_mode = Some("plan".into());
        request.extra_args = vec!["--pure".into(), "--variant".into(), "high".into()];
        assert_eq!(
            args(&request, Path::new("/work/project")),
            [
                "run",
                "--format=json",
                "--thinking",
                "--model=-anthropic/claude-sonnet-4-5",
                "--agent=plan",
                "--pure",
                "--variant",
                "high",
            ]
        );
        assert_eq!(
            args(&RunRequest::default(), Path::new("/p")),
            ["run", "--format=json", "--thinking"]
        );
    }

    #[test]
    fn permission_modes_map_to_opencode_agents_and_auto() {
        let cases: [(&str, &[&str]); 6] = [
            ("default", &[]),
            ("acceptEdits", &[]),
            ("plan", &["--agent=plan"]),
            ("bypassPermissions", &["--auto"]),
            ("build", &["--agent=build"]),
            ("-x", &["--agent=-x"]),
        ];
        for (mode, expected) in cases {
            assert_eq!(permission_args(mode), expected, "{mode}");
        }
    }
}
