//! The live launch: builds Pi's command line from a `RunRequest` (PI15) and hands it to the
//! shared process driver of `harness-core`.

use harness_agents_core::{Launch, RunRequest, Versions};

/// The Pi releases the recordings cover: `fixtures/pi/` is recorded with 0.73.1; `pi
/// --version` prints the version. `cargo xtask record` installs the recorded release by
/// default.
pub const VERSIONS: Versions = Versions::new("0.73.1");

/// How Pi is started live: the request's binary, else `$PI_BIN`, else `pi`, installed by
/// `npm install -g @mariozechner/pi-coding-agent`; `--mode json [--model MODEL] [--tools
/// LIST] [extra args]` (PI15), the prompt on standard input. With standard input not a
/// terminal, Pi reads all of it as the prompt, so no prompt can be read as an option. The
/// agent works in the directory it is started in. A resumed run adds `--session ID` (PI15).
///
/// Pi's parser takes the value of its own options only as the next word (`--model=M` would
/// be an unknown flag, passed to extensions), and it takes that word whatever it starts with,
/// so the model and the tool list go as two words each (`PiHarness`'s `Backend::args`): a
/// value starting with `-` is still never read as an option.
pub const LAUNCH: Launch = Launch::new(
    "pi",
    "PI_BIN",
    "npm install -g @mariozechner/pi-coding-agent",
)
.leading(&["--mode", "json"])
.resume_flag("--session");

/// How a Pi session is started (PR1): `pi --mode rpc`, the same options as a run (the
/// request's arguments are built as a run's are, with this launch's leading words), the prompts
/// and commands on standard input.
pub const SESSION_LAUNCH: Launch = Launch::new(
    "pi",
    "PI_BIN",
    "npm install -g @mariozechner/pi-coding-agent",
)
.leading(&["--mode", "rpc"])
.resume_flag("--session");

/// Pi's tools that only read: `plan` and `default` allow these alone (PI15).
const READ_ONLY: &str = "read,grep,find,ls";
/// Every built-in tool but `bash`: `acceptEdits` (PI15).
const EDITS: &str = "read,edit,write,grep,find,ls";
/// Every built-in tool: `bypassPermissions` (PI15).
const ALL: &str = "read,bash,edit,write,grep,find,ls";

/// The tool list a `permission_mode` stands for (PI15). Pi never asks before it uses a tool:
/// what it may do is which tools it has (`--tools`). Claude Code's modes map to the tools that
/// run without asking there, since a headless run cannot answer a question: `default` and
/// `plan` the read-only ones, `acceptEdits` those and the editing ones, `bypassPermissions`
/// all seven. Any other value is a tool list of Pi's own (`read,bash`), passed as given.
pub(crate) fn tools(mode: &str) -> &str {
    match mode {
        "default" | "plan" => READ_ONLY,
        "acceptEdits" => EDITS,
        "bypassPermissions" => ALL,
        list => list,
    }
}

/// The flags a `permission_mode` stands for: `--tools LIST`, two words.
pub(crate) fn permission_args(mode: &str) -> Vec<String> {
    vec!["--tools".to_string(), tools(mode).to_string()]
}

/// Pi's arguments for `request`, never the prompt: `launch`'s leading ones, `--model
/// MODEL`, `--session ID` when it resumes, the permission mode's `--tools LIST`, then the
/// request's extra arguments. Every value is the next word (Pi reads no `--name=value`).
pub(crate) fn args(launch: &Launch, request: &RunRequest) -> Vec<String> {
    let mut args: Vec<String> = launch.leading.iter().map(|a| a.to_string()).collect();
    if let Some(model) = &request.model {
        args.extend(["--model".to_string(), model.clone()]);
    }
    if let Some(id) = &request.resume {
        args.extend(["--session".to_string(), id.clone()]);
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
    fn pi15_values_go_as_the_next_word_and_the_prompt_never_does() {
        let mut request = RunRequest::new("--tools bash");
        request.model = Some("-m".into());
        request.permission_mode = Some("plan".into());
        request.extra_args = vec!["--thinking".into(), "high".into()];
        request.resume = Some("-019b".into());
        assert_eq!(
            args(&LAUNCH, &request),
            [
                "--mode",
                "json",
                "--model",
                "-m",
                "--session",
                "-019b",
                "--tools",
                "read,grep,find,ls",
                "--thinking",
                "high"
            ]
        );
        assert_eq!(args(&LAUNCH, &RunRequest::new("x")), ["--mode", "json"]);
        assert_eq!(
            args(&SESSION_LAUNCH, &RunRequest::new("x")),
            ["--mode", "rpc"]
        );
        assert!(LAUNCH.resumes() && SESSION_LAUNCH.resumes());
        assert_eq!(tools("bypassPermissions"), ALL);
        assert_eq!(tools("acceptEdits"), EDITS);
        assert_eq!(tools("default"), READ_ONLY);
        assert_eq!(tools("read,bash"), "read,bash");
    }
}
