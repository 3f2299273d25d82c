//! Errors. Decoding never fails (it turns bad input into events); only live runs can.

use std::path::{Path, PathBuf};

/// Why a live run could not start or go on. More reasons may come: match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The backend has no live runner.
    #[error("the {backend} backend cannot run a live process")]
    Unsupported {
        /// The backend's name.
        backend: String,
    },
    /// The backend has no live session (SPEC section 8).
    #[error("the {backend} backend has no sessions")]
    NoSessions {
        /// The backend's name.
        backend: String,
    },
    /// The request asks to resume a stored session (I5) and the backend's agent cannot.
    #[error("the {backend} backend cannot resume a session{}", why.as_deref().map(|w| format!(": {w}")).unwrap_or_default())]
    CannotResume {
        /// The backend's name.
        backend: String,
        /// Why, when more is known than the backend (the agent advertises no `session/load`).
        why: Option<String>,
    },
    /// The backend drives any agent of a protocol and the request named none
    /// (`RunRequest::agent`).
    #[error("the {backend} backend needs the agent's command (`--agent 'gemini --acp'`)")]
    NoAgentCommand {
        /// The backend's name.
        backend: String,
    },
    /// The agent's binary was not found: a name not on `PATH`, or a path that does not exist.
    #[error("{}", not_found(.binary, .install))]
    BinaryNotFound {
        /// The binary that was looked for.
        binary: PathBuf,
        /// How to install it: only when it is the backend's default binary, a name looked up
        /// on `PATH` (installing the agent does not create a binary named otherwise).
        install: Option<String>,
    },
    /// The agent's binary exists but cannot be executed (no execute permission, a directory).
    #[error("{} is not executable", binary.display())]
    BinaryNotExecutable {
        /// The binary that was run.
        binary: PathBuf,
    },
    /// The working directory asked for does not exist or is not a directory.
    #[error("cannot run in {}: {source}", cwd.display())]
    WorkingDirectory {
        /// The directory asked for.
        cwd: PathBuf,
        /// Why it cannot be used.
        #[source]
        source: std::io::Error,
    },
    /// Spawning or talking to the child failed.
    #[error("could not run {}: {source}", binary.display())]
    Io {
        /// The binary that was run.
        binary: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The transcript asked for (`RunRequest::transcript`) could not be created.
    #[error("cannot write the transcript {}: {source}", path.display())]
    Transcript {
        /// The file asked for.
        path: PathBuf,
        /// Why it cannot be created.
        #[source]
        source: std::io::Error,
    },
}

/// The message of [`RunError::BinaryNotFound`]: a path "does not exist"; a name "was not found
/// on PATH", with how to install it when that is known.
fn not_found(binary: &Path, install: &Option<String>) -> String {
    if binary.as_os_str().as_encoded_bytes().contains(&b'/') {
        return format!("{} does not exist", binary.display());
    }
    match install {
        Some(install) => format!(
            "{} was not found on PATH; install it with `{install}`",
            binary.display()
        ),
        None => format!("{} was not found on PATH", binary.display()),
    }
}
