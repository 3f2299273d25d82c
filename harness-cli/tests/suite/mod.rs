mod classify;
mod format;
mod library;
mod normalize;
mod run;
mod run_codex;
mod schema;

use std::process::{Command, Output, Stdio};

/// The built `harness` binary.
pub fn harness() -> Command {
    Command::new(env!("CARGO_BIN_EXE_harness"))
}

/// Runs `harness` with `args`, feeding `stdin`.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    use std::io::Write;
    let mut child = harness()
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
