//! The live run: the agent's command line from a `RunRequest` (A12), started by the shared
//! process driver of `harness-core` with [`AcpClient`] as its conversation (A12-A15).

use std::path::PathBuf;

use harness_agents_core::process::{self, ProcessSpec};
use harness_agents_core::transcript::Header;
use harness_agents_core::{Backend, KnownAgent, RunError, RunRequest, RunStream, Versions};

use crate::{AcpClient, AcpHarness, Permission};

/// The agents known to speak ACP, with the command that starts each as an ACP agent (what
/// `harness backends` lists and looks for; any other is run with `--agent CMD`). `fixtures/acp/`
/// is recorded with Gemini CLI, opencode, Qwen Code and the GitHub Copilot CLI, at the releases
/// of their own backends' recordings.
pub const KNOWN_AGENTS: &[KnownAgent] = &[
    KnownAgent::new(
        "gemini",
        &["gemini", "--acp"],
        "npm install -g @google/gemini-cli",
    )
    .recorded(Versions::new("0.61.0")),
    KnownAgent::new(
        "opencode",
        &["opencode", "acp"],
        "npm install -g opencode-ai",
    )
    .recorded(Versions::new("1.18.33")),
    KnownAgent::new(
        "qwen",
        &["qwen", "--acp"],
        "npm install -g @qwen-code/qwen-code",
    )
    .recorded(Versions::new("0.24.4")),
    KnownAgent::new(
        "copilot",
        &["copilot", "--acp"],
        "npm install -g @github/copilot",
    )
    .recorded(Versions::new("1.0.102")),
    KnownAgent::new(
        "claude-code-acp",
        &["claude-code-acp"],
        "npm install -g @zed-industries/claude-code-acp",
    ),
    KnownAgent::new(
        "codex-acp",
        &["codex-acp"],
        "npm install -g @zed-industries/codex-acp",
    ),
];

/// The agent's command line for a request: `agent` then `extra_args`, or `binary` then
/// `extra_args`; `None` when the request names neither.
pub(crate) fn command_line(request: &RunRequest) -> Option<(PathBuf, Vec<String>)> {
    let mut args = match (&request.agent, &request.binary) {
        (Some(agent), _) if !agent.is_empty() => agent.clone(),
        (_, Some(binary)) => vec![binary.display().to_string()],
        _ => return None,
    };
    let program = PathBuf::from(args.remove(0));
    args.extend(request.extra_args.iter().cloned());
    Some((program, args))
}

/// The live run: the agent's command, [`AcpClient`] as its conversation (A12-A15).
pub(crate) fn spawn(request: RunRequest) -> Result<RunStream, RunError> {
    let Some((program, args)) = command_line(&request) else {
        return Err(RunError::NoAgentCommand {
            backend: AcpHarness.name().to_string(),
        });
    };
    let (dir, config) = process::run_dir(&request)?;
    let policy = Permission::of(request.permission_mode.as_deref());
    let client = AcpClient::new(dir.clone(), request.prompt.clone(), policy);
    let mut spec = ProcessSpec::for_request(request, "", "", Vec::new(), "");
    spec.program = program;
    spec.args = args;
    spec.cwd = Some(dir);
    spec.stdin = Vec::new();
    spec.install_hint = None;
    spec.header = Header::new(AcpHarness.name(), &config);
    process::spawn_conversation(spec, AcpHarness.normalizer(config), Box::new(client))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a12_the_command_is_the_agents_then_the_extra_args() {
        let mut request = RunRequest::new("-p");
        assert_eq!(command_line(&request), None);
        request.binary = Some("/bin/agent".into());
        assert_eq!(
            command_line(&request),
            Some((PathBuf::from("/bin/agent"), vec![]))
        );
        request.agent = Some(vec!["gemini".into(), "--acp".into()]);
        request.extra_args = vec!["--yolo".into()];
        assert_eq!(
            command_line(&request),
            Some((
                PathBuf::from("gemini"),
                vec!["--acp".into(), "--yolo".into()]
            ))
        );
    }
}
