//! The live launch: builds Qwen Code's command line from a `RunRequest` (QW12) and hands it
//! to the shared process driver of `harness-core`.

use harness_agents_core::backend::option;
use harness_agents_core::{Launch, Versions};

/// The Qwen Code releases the recordings cover: `fixtures/qwen/` is recorded with 0.24.4;
/// `qwen --version` prints the version. `cargo xtask record` installs the recorded release by
/// default.
pub const VERSIONS: Versions = Versions::new("0.24.4");

/// How Qwen Code is started live: the request's binary, else `$QWEN_BIN`, else `qwen`,
/// installed by `npm install -g @qwen-code/qwen-code`; `--output-format stream-json
/// [--model=MODEL] [--resume=UUID] [--approval-mode=MODE] [extra args]` (QW12), each value
/// in one word with its flag, so none is read as an option; the prompt on standard input,
/// which Qwen reads whole as the prompt when it is not a terminal, so no prompt can be read
/// as an option either. The agent works in the directory it is started in.
pub const LAUNCH: Launch = Launch::new("qwen", "QWEN_BIN", "npm install -g @qwen-code/qwen-code")
    .leading(&["--output-format", "stream-json"])
    .model_flag("--model")
    .resume_flag("--resume");

/// How Qwen Code is started for a session (QW13): its ACP mode, `--acp [--model=MODEL]
/// [--approval-mode=MODE] [extra args]`, the same binary as [`LAUNCH`]. Prompts, answers,
/// interrupts and resume go through ACP (`harness_agents_acp::open_session`): Qwen's
/// `--resume` flag belongs to its headless mode, and a stored session is continued with
/// `session/resume`, which Qwen advertises.
pub const SESSION_LAUNCH: Launch =
    Launch::new("qwen", "QWEN_BIN", "npm install -g @qwen-code/qwen-code")
        .leading(&["--acp"])
        .model_flag("--model");

/// Qwen's `--approval-mode` for a permission mode (QW12): Claude Code's names translated
/// (`acceptEdits` is `auto-edit`, `bypassPermissions` is `yolo`; `default` and `plan` are
/// Qwen's own names too); any other value is passed as one of Qwen's (`auto`, `yolo`, ...).
pub fn approval_mode(mode: &str) -> &str {
    match mode {
        "acceptEdits" => "auto-edit",
        "bypassPermissions" => "yolo",
        other => other,
    }
}

/// The flags a `permission_mode` stands for: `--approval-mode=MODE`, one word.
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    vec![option("--approval-mode", approval_mode(mode))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_agents_core::RunRequest;
    use std::path::Path;

    #[test]
    fn qw12_flags_and_never_the_prompt() {
        let mut request = RunRequest::new("--yolo");
        request.model = Some("-m".into());
        request.permission_mode = Some("acceptEdits".into());
        request.resume = Some("0b0e6c52-1111-4222-8333-444455556666".into());
        request.extra_args = vec!["--include-partial-messages".into()];
        let permission = permission_args("acceptEdits");
        assert_eq!(
            LAUNCH.args(&request, Path::new("/p"), permission),
            [
                "--output-format",
                "stream-json",
                "--model=-m",
                "--resume=0b0e6c52-1111-4222-8333-444455556666",
                "--approval-mode=auto-edit",
                "--include-partial-messages"
            ]
        );
        assert_eq!(approval_mode("bypassPermissions"), "yolo");
        assert_eq!(approval_mode("plan"), "plan");
        assert_eq!(approval_mode("default"), "default");
        assert_eq!(permission_args("auto"), ["--approval-mode=auto"]);
    }

    #[test]
    fn qw13_a_session_is_qwen_acp_and_never_its_resume_flag() {
        let mut request = RunRequest::new("--yolo");
        request.model = Some("qwen3-coder-plus".into());
        request.resume = Some("0b0e6c52-1111-4222-8333-444455556666".into());
        request.extra_args = vec!["--debug".into()];
        assert_eq!(
            SESSION_LAUNCH.args(&request, Path::new("/p"), permission_args("plan")),
            [
                "--acp",
                "--model=qwen3-coder-plus",
                "--approval-mode=plan",
                "--debug"
            ]
        );
    }
}
