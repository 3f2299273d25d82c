//! The live launch: builds Claude Code's command line from a `RunRequest` and hands it to the
//! shared process driver of `harness-core`.

use harness_agents_core::backend::option;
use harness_agents_core::{Launch, Versions};

/// The Claude Code releases the recordings cover: `fixtures/claude/` is recorded with 2.1.332, and
/// `fixtures/claude-2.1.197/` keeps an older release's recordings; `claude --version` prints the
/// version. `cargo xtask record` installs the recorded release by default.
pub const VERSIONS: Versions = Versions::new("2.1.332").older(&["2.1.197"]);

/// How Claude Code is started live: the request's binary, else `$CLAUDE_BIN`, else `claude`,
/// installed by `npm install -g @anthropic-ai/claude-code`; `--print --output-format
/// stream-json --verbose [--model=MODEL] [--resume=ID] [--session-id=ID] [--permission-mode=MODE] [extra args]`. The prompt is
/// not among the arguments: it goes to standard input, so text starting with `-` can never be
/// read as an option.
pub const LAUNCH: Launch = Launch::new(
    "claude",
    "CLAUDE_BIN",
    "npm install -g @anthropic-ai/claude-code",
)
.leading(&["--print", "--output-format", "stream-json", "--verbose"])
.model_flag("--model")
.resume_flag("--resume")
.session_id_flag("--session-id");

/// How a Claude Code session starts: the run's launch with stream-json input and permission
/// requests asked on standard input (`--permission-prompt-tool stdio`); the prompts are
/// written to standard input as the session goes (CS5).
pub const SESSION_LAUNCH: Launch = LAUNCH.leading(&[
    "--print",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-prompt-tool",
    "stdio",
]);

/// The flag a `permission_mode` stands for: Claude Code's own `--permission-mode`, as one word.
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    vec![option("--permission-mode", mode)]
}

#[cfg(test)]
mod tests {
    use harness_agents_core::{Backend, RunRequest};

    use super::*;

    #[test]
    fn a_session_id_chosen_up_front_goes_as_one_session_id_word() {
        let mut request = RunRequest::default();
        request.session_id = Some("5e55a0e0-0000-4000-8000-000000000002".into());
        let args = SESSION_LAUNCH.args(&request, "/p".as_ref(), Vec::new());
        assert_eq!(
            args.last().map(String::as_str),
            Some("--session-id=5e55a0e0-0000-4000-8000-000000000002")
        );
        assert!(crate::ClaudeHarness.takes_session_id());
        // Without one, no flag.
        let args = SESSION_LAUNCH.args(&RunRequest::default(), "/p".as_ref(), Vec::new());
        assert!(!args.iter().any(|a| a.starts_with("--session-id")));
    }
}
