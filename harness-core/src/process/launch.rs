//! Everything about starting an agent live: how a backend's agent starts, as data
//! ([`Launch`], [`PromptInput`]), the one-word option values it passes ([`option`]), and the
//! default [`Backend::run`] that hands them to the process driver, which it belongs to: the
//! always-built trait module names none of it without the `process` feature.

use std::path::Path;

use crate::error::RunError;
use crate::process::{self, ProcessSpec};
use crate::registry::Backend;
use crate::run::{RunRequest, RunStream};

/// How a backend's agent is started live, as data: the core's [`Backend::run`] does the rest
/// (choosing the binary, spawning it in its own process group, the prompt, the pipes, the
/// timeout, the outcome), and [`Backend::args`] builds the command line from it.
///
/// Made with [`Launch::new`] and its `const` setters:
///
/// ```
/// use harness_agents_core::{Launch, PromptInput, RunRequest};
///
/// const LAUNCH: Launch = Launch::new("agent", "AGENT_BIN", "npm install -g agent")
///     .leading(&["exec", "--json"])
///     .dir_flag("--cd")
///     .model_flag("--model")
///     .trailing(&["-"]);
///
/// let mut request = RunRequest::new("hi");
/// request.model = Some("-m".into());
/// request.extra_args = vec!["--fast".into()];
/// let args = LAUNCH.args(&request, "/p".as_ref(), vec!["--sandbox=read-only".into()]);
/// assert_eq!(args, ["exec", "--json", "--cd=/p", "--model=-m", "--sandbox=read-only", "--fast", "-"]);
/// assert_eq!(LAUNCH.prompt, PromptInput::Stdin);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Launch {
    /// The environment variable that names the binary (`"CLAUDE_BIN"`); `RunRequest::binary`
    /// wins over it.
    pub env_var: &'static str,
    /// The binary's name, looked up on `PATH` when neither names one (`"claude"`).
    pub program: &'static str,
    /// How to install it, said when it is not found (`"npm install -g ..."`).
    pub install: &'static str,
    /// Where the prompt goes ([`PromptInput::Stdin`] unless set).
    pub prompt: PromptInput,
    /// The backend's own first arguments (`["exec", "--json"]`).
    pub leading: &'static [&'static str],
    /// The flag naming the agent's directory, given as `FLAG=DIR` after `leading` (Codex's
    /// `--cd`); `None` for agents that work where they are started.
    pub dir_flag: Option<&'static str>,
    /// The flag the request's `model` goes to, as `FLAG=MODEL`; `None` ignores the model.
    pub model_flag: Option<&'static str>,
    /// The last arguments, after `extra_args` (Codex's `-`: the prompt is on standard input).
    pub trailing: &'static [&'static str],
    /// The flag that continues a stored session (I5), given as `FLAG=ID` after the model
    /// flag (Claude Code's `--resume`); `None` when the agent cannot resume this way, and a
    /// request with `resume` is then refused unless `resume_subcommand` is set.
    pub resume_flag: Option<&'static str>,
    /// The flag that names a new session's id, chosen by the caller, given as `FLAG=ID` after
    /// the resume flag (Claude Code's `--session-id`); `None` when the agent takes none, and
    /// [`RunRequest::session_id`] is then ignored ([`Backend::takes_session_id`] says which).
    pub session_id_flag: Option<&'static str>,
    /// The subcommand that continues a stored session (I5) for an agent whose resume is a
    /// subcommand rather than a flag (Codex's `exec ... resume ID -`): given as `WORD -- ID`
    /// after `request.extra_args`, before `trailing`. The id is a positional argument there,
    /// so the `--` keeps one that starts with `-` from being read as an option; `trailing`
    /// follows it as positional words too.
    pub resume_subcommand: Option<&'static str>,
}

impl Launch {
    /// `program` (or the binary `$ENV_VAR` names), installed by `install`, the prompt on
    /// standard input, no arguments of its own yet.
    pub const fn new(program: &'static str, env_var: &'static str, install: &'static str) -> Self {
        Launch {
            env_var,
            program,
            install,
            prompt: PromptInput::Stdin,
            leading: &[],
            dir_flag: None,
            model_flag: None,
            trailing: &[],
            resume_flag: None,
            session_id_flag: None,
            resume_subcommand: None,
        }
    }

    /// Where the prompt goes.
    pub const fn prompt(mut self, prompt: PromptInput) -> Self {
        self.prompt = prompt;
        self
    }

    /// The backend's own first arguments.
    pub const fn leading(mut self, args: &'static [&'static str]) -> Self {
        self.leading = args;
        self
    }

    /// The flag naming the agent's directory.
    pub const fn dir_flag(mut self, flag: &'static str) -> Self {
        self.dir_flag = Some(flag);
        self
    }

    /// The flag the request's model goes to.
    pub const fn model_flag(mut self, flag: &'static str) -> Self {
        self.model_flag = Some(flag);
        self
    }

    /// The flag that continues a stored session.
    pub const fn resume_flag(mut self, flag: &'static str) -> Self {
        self.resume_flag = Some(flag);
        self
    }

    /// The flag that names a new session's id.
    pub const fn session_id_flag(mut self, flag: &'static str) -> Self {
        self.session_id_flag = Some(flag);
        self
    }

    /// The subcommand that continues a stored session, for an agent without a resume flag.
    pub const fn resume_subcommand(mut self, word: &'static str) -> Self {
        self.resume_subcommand = Some(word);
        self
    }

    /// Whether a request with `resume` can start this way: the launch has a resume flag or a
    /// resume subcommand.
    pub const fn resumes(&self) -> bool {
        self.resume_flag.is_some() || self.resume_subcommand.is_some()
    }

    /// The last arguments, after the caller's.
    pub const fn trailing(mut self, args: &'static [&'static str]) -> Self {
        self.trailing = args;
        self
    }

    /// The agent's arguments for `request` run in `dir`, never the prompt: `leading`, the
    /// directory flag, the model flag, the resume flag with `request.resume`, the session id
    /// flag with `request.session_id`, `permission` (the flags the request's permission mode
    /// stands for, [`Backend::permission_args`]), `request.extra_args`, the resume subcommand
    /// with `request.resume` (when there is no resume flag), `trailing`. Values go as one word
    /// ([`option`]), so one starting with `-` is never read as an option; the resume
    /// subcommand's id goes after a `--`.
    ///
    /// ```
    /// use harness_agents_core::{Launch, RunRequest};
    ///
    /// const LAUNCH: Launch = Launch::new("agent", "AGENT_BIN", "npm install -g agent")
    ///     .leading(&["exec"])
    ///     .resume_subcommand("resume")
    ///     .trailing(&["-"]);
    ///
    /// let mut request = RunRequest::new("hi");
    /// request.resume = Some("-id".into());
    /// let args = LAUNCH.args(&request, "/p".as_ref(), vec!["--sandbox=read-only".into()]);
    /// assert_eq!(args, ["exec", "--sandbox=read-only", "resume", "--", "-id", "-"]);
    /// ```
    pub fn args(&self, request: &RunRequest, dir: &Path, permission: Vec<String>) -> Vec<String> {
        let mut args: Vec<String> = self.leading.iter().map(|a| a.to_string()).collect();
        if let Some(flag) = self.dir_flag {
            args.push(option(flag, &dir.display().to_string()));
        }
        if let (Some(flag), Some(model)) = (self.model_flag, &request.model) {
            args.push(option(flag, model));
        }
        if let (Some(flag), Some(id)) = (self.resume_flag, &request.resume) {
            args.push(option(flag, id));
        }
        if let (Some(flag), Some(id)) = (self.session_id_flag, &request.session_id) {
            args.push(option(flag, id));
        }
        args.extend(permission);
        args.extend(request.extra_args.iter().cloned());
        if let (None, Some(word), Some(id)) =
            (self.resume_flag, self.resume_subcommand, &request.resume)
        {
            args.extend([word.to_string(), "--".to_string(), id.clone()]);
        }
        args.extend(self.trailing.iter().map(|a| a.to_string()));
        args
    }
}

/// Where a live run's prompt goes. Every choice keeps it from being read as an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptInput {
    /// The agent's standard input (the default, and the safest).
    Stdin,
    /// The last argument, after a `--` that ends the options.
    AfterDoubleDash,
    /// One argument `FLAG=PROMPT`, after the others (`"--prompt"` gives `--prompt=...`).
    Flag(&'static str),
}

/// `name=value` as one word, so a value that starts with `-` is never read as an option.
///
/// ```
/// assert_eq!(harness_agents_core::backend::option("--model", "-x"), "--model=-x");
/// ```
pub fn option(name: &str, value: &str) -> String {
    format!("{name}={value}")
}

/// [`Backend::run`] by default: the backend's [`Launch`] started with the process driver: the
/// directory, the normalizer (its `cwd` the agent's directory unless the request names
/// another), the binary, the arguments and the prompt's place. Without a launch the backend
/// cannot run live.
pub(crate) fn launch_run<B: Backend + ?Sized>(
    backend: &B,
    request: RunRequest,
) -> Result<RunStream, RunError> {
    match backend.launch() {
        Some(launch) => spawn_launch(backend, launch, request),
        None => Err(RunError::Unsupported {
            backend: backend.name().to_string(),
        }),
    }
}

/// [`launch_run`] with a launch and the process driver.
fn spawn_launch<B: Backend + ?Sized>(
    backend: &B,
    launch: Launch,
    request: RunRequest,
) -> Result<RunStream, RunError> {
    if request.resume.is_some() && !launch.resumes() {
        return Err(RunError::CannotResume {
            backend: backend.name().to_string(),
            why: None,
        });
    }
    let (dir, config) = process::run_dir(&request)?;
    let mut args = backend.args(&request, &dir);
    let prompt = request.prompt.clone();
    let mut spec = ProcessSpec::for_request(
        request,
        launch.env_var,
        launch.program,
        Vec::new(),
        launch.install,
    );
    match launch.prompt {
        PromptInput::Stdin => {}
        PromptInput::AfterDoubleDash => {
            args.extend(["--".to_string(), prompt]);
            spec.stdin = Vec::new();
        }
        PromptInput::Flag(flag) => {
            args.push(option(flag, &prompt));
            spec.stdin = Vec::new();
        }
    }
    spec.args = args;
    spec.header = crate::transcript::Header::new(backend.name(), &config);
    process::spawn(spec, backend.normalizer(config))
}

/// A session's process for a backend whose session agent starts as `launch` describes (its
/// own leading arguments, such as Claude Code's stream-json input): the directory, the
/// normalizer's settings (a session's, I7), the binary, and the arguments
/// ([`Launch::args`] with the backend's [`Backend::permission_args`]). Nothing goes to the
/// agent's standard input here: the session's transport writes the prompts.
///
/// # Errors
///
/// [`RunError::CannotResume`] when the request resumes and `launch` cannot ([`Launch::resumes`]);
/// [`RunError::WorkingDirectory`] when the caller's directory cannot be known.
pub fn session_spec<B: Backend + ?Sized>(
    backend: &B,
    launch: Launch,
    request: RunRequest,
) -> Result<(ProcessSpec, crate::NormalizerConfig), RunError> {
    if request.resume.is_some() && !launch.resumes() {
        return Err(RunError::CannotResume {
            backend: backend.name().to_string(),
            why: None,
        });
    }
    let (dir, mut config) = process::run_dir(&request)?;
    config.session = true;
    let permission = match &request.permission_mode {
        Some(mode) => backend.permission_args(mode),
        None => Vec::new(),
    };
    let args = launch.args(&request, &dir, permission);
    let mut spec = ProcessSpec::for_request(
        request,
        launch.env_var,
        launch.program,
        args,
        launch.install,
    );
    spec.stdin = Vec::new();
    spec.header = crate::transcript::Header::new(backend.name(), &config);
    Ok((spec, config))
}
