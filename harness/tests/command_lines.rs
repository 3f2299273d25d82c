//! Every backend's live command line, side by side: what `harness run` starts for a request
//! (Claude Code: `docs/cli.md`, "Running a live agent"; Codex: the `CodexHarness` docs;
//! opencode: P14; Gemini CLI: G12; Pi: PI15; Copilot: CP14). The prompt is never among the arguments, and
//! every value that may start with `-` goes as one `--name=value` word, or, for Pi, whose
//! parser takes no such word, as the word after its flag, which Pi never reads as an option.

#![cfg(all(
    feature = "claude",
    feature = "codex",
    feature = "opencode",
    feature = "gemini"
))]
#![allow(clippy::unwrap_used)] // Test helpers may fail loudly.

use std::path::Path;

use harness_agents::{PromptInput, RunRequest};

/// The arguments `backend` gives `request` run in `/work/project`.
fn args(backend: &str, request: &RunRequest) -> Vec<String> {
    let registry = harness_agents::registry();
    let backend = registry.get(backend).unwrap();
    backend.args(request, Path::new("/work/project"))
}

#[test]
fn a_request_with_every_option_gives_each_backends_flags_in_order_and_never_the_prompt() {
    let mut request = RunRequest::new("--dangerously-skip-permissions");
    request.model = Some("-m".into());
    request.permission_mode = Some("plan".into());
    request.extra_args = vec!["--extra".into(), "1".into()];
    let expected: [(&str, &[&str]); 4] = [
        (
            "claude",
            &[
                "--print",
                "--output-format",
                "stream-json",
                "--verbose",
                "--model=-m",
                "--permission-mode=plan",
                "--extra",
                "1",
            ],
        ),
        (
            "codex",
            &[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--cd=/work/project",
                "--model=-m",
                "--sandbox=read-only",
                "--extra",
                "1",
                "-",
            ],
        ),
        (
            "opencode",
            &[
                "run",
                "--format=json",
                "--thinking",
                "--model=-m",
                "--agent=plan",
                "--extra",
                "1",
            ],
        ),
        (
            "gemini",
            &[
                "--output-format=stream-json",
                "--skip-trust",
                "--model=-m",
                "--approval-mode=plan",
                "--extra",
                "1",
            ],
        ),
    ];
    for (backend, expected) in expected {
        assert_eq!(args(backend, &request), expected, "{backend}");
    }
}

#[test]
fn a_bare_request_gives_only_each_backends_own_flags() {
    let request = RunRequest::new("hi");
    let expected: [(&str, &[&str]); 4] = [
        (
            "claude",
            &["--print", "--output-format", "stream-json", "--verbose"],
        ),
        (
            "codex",
            &[
                "exec",
                "--json",
                "--skip-git-repo-check",
                "--cd=/work/project",
                "-",
            ],
        ),
        ("opencode", &["run", "--format=json", "--thinking"]),
        ("gemini", &["--output-format=stream-json", "--skip-trust"]),
    ];
    for (backend, expected) in expected {
        assert_eq!(args(backend, &request), expected, "{backend}");
    }
}

/// Claude Code's permission mode names work with every backend, mapped to the setting that
/// allows about as much; any other value is passed on for the agent to accept or reject.
#[test]
fn permission_modes_map_to_each_backends_setting() {
    // claude, codex, opencode, gemini
    let table: [(&str, [&[&str]; 4]); 9] = [
        (
            "default",
            [
                &["--permission-mode=default"],
                &[],
                &[],
                &["--approval-mode=default"],
            ],
        ),
        (
            "plan",
            [
                &["--permission-mode=plan"],
                &["--sandbox=read-only"],
                &["--agent=plan"],
                &["--approval-mode=plan"],
            ],
        ),
        (
            "acceptEdits",
            [
                &["--permission-mode=acceptEdits"],
                &["--sandbox=workspace-write"],
                &[],
                &["--approval-mode=auto_edit"],
            ],
        ),
        (
            "bypassPermissions",
            [
                &["--permission-mode=bypassPermissions"],
                &["--sandbox=danger-full-access"],
                &["--auto"],
                &["--approval-mode=yolo"],
            ],
        ),
        (
            "read-only",
            [
                &["--permission-mode=read-only"],
                &["--sandbox=read-only"],
                &["--agent=read-only"],
                &["--approval-mode=read-only"],
            ],
        ),
        (
            "danger-full-access",
            [
                &["--permission-mode=danger-full-access"],
                &["--sandbox=danger-full-access"],
                &["--agent=danger-full-access"],
                &["--approval-mode=danger-full-access"],
            ],
        ),
        (
            "build",
            [
                &["--permission-mode=build"],
                &["--sandbox=build"],
                &["--agent=build"],
                &["--approval-mode=build"],
            ],
        ),
        (
            "yolo",
            [
                &["--permission-mode=yolo"],
                &["--sandbox=yolo"],
                &["--agent=yolo"],
                &["--approval-mode=yolo"],
            ],
        ),
        (
            "-x",
            [
                &["--permission-mode=-x"],
                &["--sandbox=-x"],
                &["--agent=-x"],
                &["--approval-mode=-x"],
            ],
        ),
    ];
    let registry = harness_agents::registry();
    for (mode, flags) in table {
        for (backend, expected) in ["claude", "codex", "opencode", "gemini"]
            .into_iter()
            .zip(flags)
        {
            let backend = registry.get(backend).unwrap();
            assert_eq!(
                backend.permission_args(mode),
                expected,
                "{} {mode}",
                backend.name()
            );
        }
    }
}

#[test]
fn only_opencode_and_copilot_take_their_prompt_as_an_argument() {
    let registry = harness_agents::registry();
    for name in registry.names() {
        let prompt = registry.get(name).unwrap().launch().map(|l| l.prompt);
        let expected = match name {
            "opencode" => Some(PromptInput::AfterDoubleDash),
            // One `--prompt=PROMPT` word: Copilot reads no prompt from standard input (CP14).
            "copilot" => Some(PromptInput::Flag("--prompt")),
            // `acp` has no fixed command line: it runs the caller's agent command and sends
            // the prompt in a `session/prompt` request (A12).
            "acp" => None,
            _ => Some(PromptInput::Stdin),
        };
        assert_eq!(prompt, expected, "{name}");
    }
}

/// PI15: Pi takes each value as the word after its flag, whatever it starts with; the
/// permission mode is the tool list Pi gets.
#[cfg(feature = "pi")]
#[test]
fn pi_takes_its_values_as_the_next_word_and_its_tools_from_the_permission_mode() {
    let mut request = RunRequest::new("--dangerously-skip-permissions");
    request.model = Some("-m".into());
    request.permission_mode = Some("plan".into());
    request.extra_args = vec!["--extra".into(), "1".into()];
    assert_eq!(
        args("pi", &request),
        [
            "--mode",
            "json",
            "--model",
            "-m",
            "--tools",
            "read,grep,find,ls",
            "--extra",
            "1"
        ]
    );
    assert_eq!(args("pi", &RunRequest::new("hi")), ["--mode", "json"]);
    let pi = harness_agents::registry();
    let pi = pi.get("pi").unwrap();
    for (mode, tools) in [
        ("default", "read,grep,find,ls"),
        ("plan", "read,grep,find,ls"),
        ("acceptEdits", "read,edit,write,grep,find,ls"),
        ("bypassPermissions", "read,bash,edit,write,grep,find,ls"),
        ("read,bash", "read,bash"),
        ("-x", "-x"),
    ] {
        assert_eq!(pi.permission_args(mode), ["--tools", tools], "{mode}");
    }
}

/// CP14: Copilot's values are `--name=value` words, the prompt the last one, and the
/// permission mode its tool rules.
#[cfg(feature = "copilot")]
#[test]
fn copilot_takes_one_word_values_and_its_tool_rules_from_the_permission_mode() {
    let mut request = RunRequest::new("--allow-all-tools");
    request.model = Some("-m".into());
    request.resume = Some("-s".into());
    request.permission_mode = Some("acceptEdits".into());
    request.extra_args = vec!["--silent".into()];
    assert_eq!(
        args("copilot", &request),
        [
            "--output-format",
            "json",
            "--no-auto-update",
            "--model=-m",
            "--resume=-s",
            "--allow-tool=write",
            "--silent"
        ]
    );
    let registry = harness_agents::registry();
    let copilot = registry.get("copilot").unwrap();
    for (mode, flags) in [
        ("default", &[][..]),
        ("plan", &["--deny-tool=write", "--deny-tool=shell"][..]),
        ("acceptEdits", &["--allow-tool=write"][..]),
        ("bypassPermissions", &["--allow-all-tools"][..]),
        ("shell(git:*)", &["--allow-tool=shell(git:*)"][..]),
    ] {
        assert_eq!(copilot.permission_args(mode), flags, "{mode}");
    }
}
