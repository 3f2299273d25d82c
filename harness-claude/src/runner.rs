//! The live runner: builds Claude Code's command line from a `RunRequest` and hands it to the
//! shared process driver of `harness-core`.

use harness_core::{Launch, PromptInput, RunRequest, option};

/// The environment variable naming the `claude` binary when the request names none.
pub const CLAUDE_BIN: &str = "CLAUDE_BIN";

/// How to install Claude Code, for the error a missing binary gives.
pub const INSTALL: &str = "npm install -g @anthropic-ai/claude-code";

/// How Claude Code is started live: `$CLAUDE_BIN` or `claude`, the prompt on standard input.
pub const LAUNCH: Launch = Launch {
    env_var: CLAUDE_BIN,
    program: "claude",
    install: INSTALL,
    prompt: PromptInput::Stdin,
};

/// The arguments after the binary. The prompt is not among them: it goes to standard input,
/// so text starting with `-` can never be read as an option.
pub(crate) fn args(request: &RunRequest) -> Vec<String> {
    let mut args: Vec<String> = ["--print", "--output-format", "stream-json", "--verbose"]
        .map(String::from)
        .into();
    // `--name=value`, one word: a value starting with `-` is never read as an option.
    if let Some(model) = &request.model {
        args.push(option("--model", model));
    }
    if let Some(mode) = &request.permission_mode {
        args.push(option("--permission-mode", mode));
    }
    args.extend(request.extra_args.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_holds_the_options_in_order_and_never_the_prompt() {
        let mut request = RunRequest::new("--dangerously-skip-permissions");
        request.model = Some("-opus".into());
        request.permission_mode = Some("plan".into());
        request.extra_args = vec!["--max-turns".into(), "3".into()];
        assert_eq!(
            args(&request),
            [
                "--print",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model=-opus",
                "--permission-mode=plan",
                "--max-turns",
                "3"
            ]
        );
    }
}
