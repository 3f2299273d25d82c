//! The live runner: builds Gemini CLI's command line from a `RunRequest` (G12) and hands it to
//! the shared process driver of `harness-core`.

use std::path::Path;

use harness_core::{Launch, PromptInput, RunRequest, option};

/// The environment variable naming the `gemini` binary when the request names none.
pub const GEMINI_BIN: &str = "GEMINI_BIN";

/// How to install Gemini CLI, for the error a missing binary gives.
pub const INSTALL: &str = "npm install -g @google/gemini-cli";

/// How Gemini CLI is started live: `$GEMINI_BIN` or `gemini`, the prompt on standard input.
/// Without `--prompt` and with standard input not a terminal, Gemini CLI runs headless and
/// takes all of its standard input as the prompt, so no prompt can be read as an option.
pub const LAUNCH: Launch = Launch {
    env_var: GEMINI_BIN,
    program: "gemini",
    install: INSTALL,
    prompt: PromptInput::Stdin,
};

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

/// The arguments after the binary (G12). The prompt is not among them: it goes to standard
/// input. `--skip-trust` is always given: the caller chose the directory, and an untrusted one
/// would otherwise end the run at once (exit status 55).
pub(crate) fn args(request: &RunRequest, _dir: &Path) -> Vec<String> {
    let mut args = vec![
        option("--output-format", "stream-json"),
        "--skip-trust".to_string(),
    ];
    // `--name=value`, one word: a value starting with `-` is never read as an option.
    if let Some(model) = &request.model {
        args.push(option("--model", model));
    }
    if let Some(mode) = &request.permission_mode {
        args.push(option("--approval-mode", approval_mode(mode)));
    }
    args.extend(request.extra_args.iter().cloned());
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn g12_the_command_line_holds_the_options_in_order_and_never_the_prompt() {
        let mut request = RunRequest::new("--yolo");
        request.model = Some("-gemini-2.5-pro".into());
        request.permission_mode = Some("bypassPermissions".into());
        request.extra_args = vec!["--debug".into()];
        assert_eq!(
            args(&request, Path::new("/work/project")),
            [
                "--output-format=stream-json",
                "--skip-trust",
                "--model=-gemini-2.5-pro",
                "--approval-mode=yolo",
                "--debug"
            ]
        );
        assert_eq!(
            args(&RunRequest::default(), Path::new("/p")),
            ["--output-format=stream-json", "--skip-trust"]
        );
        assert_eq!(LAUNCH.prompt, PromptInput::Stdin);
    }

    #[test]
    fn g12_claude_permission_modes_map_to_an_approval_mode_and_others_pass_as_given() {
        for (mode, expected) in [
            ("default", "default"),
            ("plan", "plan"),
            ("acceptEdits", "auto_edit"),
            ("bypassPermissions", "yolo"),
            ("auto_edit", "auto_edit"),
            ("yolo", "yolo"),
            ("no-such-mode", "no-such-mode"),
        ] {
            assert_eq!(approval_mode(mode), expected, "{mode}");
        }
    }
}
