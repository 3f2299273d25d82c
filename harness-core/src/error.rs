//! Errors. Decoding never fails (it turns bad input into events); only live runs can.

use std::path::PathBuf;

/// Why a live run could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The backend has no live runner.
    #[error("the {backend} backend cannot run a live process")]
    Unsupported {
        /// The backend's name.
        backend: String,
    },
    /// The agent's binary was not found.
    #[error("{} was not found; install it with `{install}`", binary.display())]
    BinaryNotFound {
        /// The binary that was looked for.
        binary: PathBuf,
        /// How to install it.
        install: String,
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
}
