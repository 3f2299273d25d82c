//! The live launch: builds Copilot's command line from a `RunRequest` (CP14) and hands it to
//! the shared process driver of `harness-core`.

use harness_agents_core::{Launch, PromptInput, Versions};

/// The Copilot CLI releases the recordings cover: `fixtures/copilot/` is recorded with
/// 1.0.102; `copilot --version` prints the version. `cargo xtask record` installs the recorded
/// release by default.
pub const VERSIONS: Versions = Versions::new("1.0.102");

/// How the Copilot CLI is started live: the request's binary, else `$COPILOT_BIN`, else
/// `copilot`, installed by `npm install -g @github/copilot`; `--output-format json
/// --no-auto-update [--model=MODEL] [--resume=ID] [permission flags] [extra args]
/// --prompt=PROMPT` (CP14). The prompt is one `--prompt=...` word, so a prompt that starts
/// with `-` is still never read as an option (Copilot reads no prompt from standard input in
/// this mode). The agent works in the directory it is started in; a provider of its own
/// (`COPILOT_PROVIDER_BASE_URL`, or a GitHub token) comes from the environment.
pub const LAUNCH: Launch = Launch::new("copilot", "COPILOT_BIN", "npm install -g @github/copilot")
    .prompt(PromptInput::Flag("--prompt"))
    .leading(&["--output-format", "json", "--no-auto-update"])
    .model_flag("--model")
    .resume_flag("--resume");

/// How the Copilot CLI is started for a session (CP15): the same binary as [`LAUNCH`], in its
/// ACP mode, `--acp --no-auto-update [--model=MODEL] [permission flags] [extra args]`. No
/// prompt and no `--resume` go on its command line: prompts are `session/prompt` requests,
/// and a stored session is reopened with `session/load` (Copilot advertises `loadSession`).
pub const SESSION_LAUNCH: Launch =
    Launch::new("copilot", "COPILOT_BIN", "npm install -g @github/copilot")
        .leading(&["--acp", "--no-auto-update"])
        .model_flag("--model");

/// The flags a `permission_mode` stands for (CP14). Without `--allow-all-tools` Copilot asks
/// before a tool that writes or a shell command it does not know to be read-only, and a
/// headless run answers no (`denied`): that is `default`. `plan` denies every write and shell
/// command, `acceptEdits` allows the writes, `bypassPermissions` everything; any other value
/// is one of Copilot's tool rules (`shell(git:*)`), allowed without asking.
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    let flags: &[&str] = match mode {
        "default" => &[],
        "plan" => &["--deny-tool=write", "--deny-tool=shell"],
        "acceptEdits" => &["--allow-tool=write"],
        "bypassPermissions" => &["--allow-all-tools"],
        rule => return vec![format!("--allow-tool={rule}")],
    };
    flags.iter().map(|f| f.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use harness_agents_core::RunRequest;

    use super::*;

    #[test]
    fn cp14_values_are_one_word_each_and_the_prompt_is_not_among_the_arguments() {
        let mut request = RunRequest::new("--help");
        request.model = Some("-m".into());
        request.resume = Some("-r".into());
        request.extra_args = vec!["--silent".into()];
        let args = LAUNCH.args(&request, "/p".as_ref(), permission_args("plan"));
        assert_eq!(
            args,
            [
                "--output-format",
                "json",
                "--no-auto-update",
                "--model=-m",
                "--resume=-r",
                "--deny-tool=write",
                "--deny-tool=shell",
                "--silent"
            ]
        );
        assert_eq!(LAUNCH.prompt, PromptInput::Flag("--prompt"));
        assert!(permission_args("default").is_empty());
        assert_eq!(permission_args("acceptEdits"), ["--allow-tool=write"]);
        assert_eq!(permission_args("bypassPermissions"), ["--allow-all-tools"]);
        assert_eq!(
            permission_args("shell(git:*)"),
            ["--allow-tool=shell(git:*)"]
        );
    }
}
