//! The live runner: opencode's command line for a `RunRequest`, handed to the shared process
//! driver of `harness-core` (P14).

use harness_core::{Launch, PromptInput, option};

/// How opencode is started live: the request's binary, else `$OPENCODE_BIN`, else `opencode`,
/// installed by `npm install -g opencode-ai`; `run --format=json --thinking [--model=MODEL]
/// [permission flags] [extra args] -- PROMPT` (P14). The prompt is the last argument, after a
/// `--` that ends the options: `opencode run` takes its message as positional words and never
/// reads it from standard input. `--thinking` makes opencode print its reasoning parts (P2).
/// The agent works in the directory it is started in.
pub const LAUNCH: Launch = Launch::new("opencode", "OPENCODE_BIN", "npm install -g opencode-ai")
    .prompt(PromptInput::AfterDoubleDash)
    .leading(&["run", "--format=json", "--thinking"])
    .model_flag("--model");

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
    use super::*;
    use crate::OpencodeHarness;
    use harness_core::{Harness, RunRequest};
    use std::path::Path;

    #[test]
    fn the_command_line_holds_the_options_in_order_and_never_the_prompt() {
        let mut request = RunRequest::new("--auto");
        request.model = Some("-anthropic/claude-sonnet-4-5".into());
        request.permission_mode = Some("plan".into());
        request.extra_args = vec!["--pure".into(), "--variant".into(), "high".into()];
        assert_eq!(
            OpencodeHarness.args(&request, Path::new("/work/project")),
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
            OpencodeHarness.args(&RunRequest::default(), Path::new("/p")),
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
