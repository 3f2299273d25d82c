//! The live runner: builds Claude Code's command line from a `RunRequest` and hands it to the
//! shared process driver of `harness-core`.

use harness_core::process::{self, ProcessSpec};
use harness_core::{RunError, RunRequest, RunStream};

use crate::ClaudeNormalizer;

/// The environment variable naming the `claude` binary when the request names none.
pub const CLAUDE_BIN: &str = "CLAUDE_BIN";

/// How to install Claude Code, for the error a missing binary gives.
pub const INSTALL: &str = "npm install -g @anthropic-ai/claude-code";

/// The arguments after the binary. The prompt is not among them: it goes to standard input,
/// so text starting with `-` can never be read as an option.
pub(crate) fn args(request: &RunRequest) -> Vec<String> {
    let mut args: Vec<String> = ["--print", "--output-format", "stream-json", "--verbose"]
        .map(String::from)
        .into();
    if let Some(model) = &request.model {
        args.extend(["--model".to_string(), model.clone()]);
    }
    if let Some(mode) = &request.permission_mode {
        args.extend(["--permission-mode".to_string(), mode.clone()]);
    }
    args.extend(request.extra_args.iter().cloned());
    args
}

/// Starts `claude` for `request` and streams its normalized events, then the outcome.
pub(crate) fn run(request: RunRequest) -> Result<RunStream, RunError> {
    let mut config = request.normalizer.clone();
    if config.cwd.is_none() {
        config.cwd = process::absolute_cwd(&request)
            .or_else(|| std::env::current_dir().ok())
            .map(|p| p.display().to_string());
    }
    let args = args(&request);
    let spec = ProcessSpec::for_request(request, CLAUDE_BIN, "claude", args, INSTALL);
    process::spawn(spec, Box::new(ClaudeNormalizer::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_holds_the_options_in_order_and_never_the_prompt() {
        let request = RunRequest {
            prompt: "--dangerously-skip-permissions".into(),
            model: Some("opus".into()),
            permission_mode: Some("plan".into()),
            extra_args: vec!["--max-turns".into(), "3".into()],
            ..RunRequest::default()
        };
        assert_eq!(
            args(&request),
            [
                "--print",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model",
                "opus",
                "--permission-mode",
                "plan",
                "--max-turns",
                "3"
            ]
        );
    }
}
