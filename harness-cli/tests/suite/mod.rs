//! The binary's tests by concern, and the helpers they share to run it.

mod acp;
mod acp_agent;
mod backends;
mod classify;
mod copilot;
mod format;
mod gemini;
mod library;
mod normalize;
mod options;
mod pi;
mod run;
mod run_codex;
mod run_opencode;
mod schema;
mod session;
mod sessions;
mod tidy;
mod transcript;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The built `harness` binary.
pub fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

/// Runs `harness` with `args`, feeding `stdin`.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_with_env(args, &[], stdin)
}

/// Runs `harness` with `args` and the variables `env` (none of the colour variables
/// `NO_COLOR`, `CLICOLOR`, `CLICOLOR_FORCE` but those given), feeding `stdin`.
pub fn run_with_env(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut command = harness();
    for name in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    let mut child = command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    output
}

/// Waits (at most a minute) until `path` holds a complete file written by the fake.
pub fn read_when_written(path: &Path) -> String {
    for _ in 0..3000 {
        if let Ok(text) = std::fs::read_to_string(path) {
            return text;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{} was never written", path.display());
}

/// Waits (at most a minute) until the process is gone: not running, not a zombie.
pub fn assert_gone(pid: &str) {
    let proc = Path::new("/proc").join(pid.trim());
    for _ in 0..3000 {
        if !proc.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("process {pid} is still there");
}
