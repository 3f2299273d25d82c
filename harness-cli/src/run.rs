//! `harness run`: drive a live agent and print its events as they happen, then the outcome.
//!
//! Exit status: 0 when the outcome is `success`, 1 when it is `error` or `incomplete`, 2 for
//! usage errors, 127 when the agent's binary is missing, 130 after Ctrl-C (SIGINT) and 143
//! after SIGTERM: the agent's process group is killed, and the outcome is still printed.

use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use futures::{FutureExt, StreamExt};
use harness_core::{Harness, RunError, RunItem, RunRequest, Status, StopSignal};
use tokio::signal::unix::{SignalKind, signal};

use crate::format::Printer;

/// Runs `request` on `harness`, printing with `printer`; returns the process's exit status.
pub fn run<W: Write>(harness: &dyn Harness, request: RunRequest, printer: Printer<W>) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("harness: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(drive(harness, request, printer))
}

async fn drive<W: Write>(
    harness: &dyn Harness,
    mut request: RunRequest,
    mut printer: Printer<W>,
) -> ExitCode {
    // Signals are caught from before the agent starts, so none is lost to the default action.
    let (mut interrupt, mut terminate) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) {
        (Ok(i), Ok(t)) => (i, t),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("harness: cannot catch signals: {e}");
            return ExitCode::from(1);
        }
    };
    let caught = Arc::new(AtomicI32::new(0));
    let flag = Arc::clone(&caught);
    request.stop = Some(StopSignal::new(async move {
        let code = tokio::select! {
            _ = interrupt.recv() => 130,
            _ = terminate.recv() => 143,
        };
        flag.store(code, Ordering::SeqCst);
    }));
    if printer.is_human() {
        printer.base = request
            .cwd
            .as_ref()
            .and_then(|cwd| std::path::absolute(cwd).ok())
            .or_else(|| std::env::current_dir().ok())
            .map(|p| p.display().to_string());
    }

    let mut stream = match harness.run(request).await {
        Ok(stream) => stream,
        Err(e) => {
            eprintln!("harness: {e}");
            return ExitCode::from(match e {
                RunError::BinaryNotFound { .. } => 127,
                RunError::Unsupported { .. } | RunError::WorkingDirectory { .. } => 2,
                RunError::Io { .. } => 1,
            });
        }
    };

    let mut status = Status::Incomplete;
    loop {
        // Flush only when the agent has nothing more ready, so bursts are written in one go.
        let item = match stream.next().now_or_never() {
            Some(item) => item,
            None => {
                if let Err(e) = printer.flush() {
                    return output_failed(&e);
                }
                stream.next().await
            }
        };
        let written = match &item {
            Some(RunItem::Event(event)) => printer.event(event),
            Some(RunItem::Outcome(outcome)) => {
                status = outcome.status;
                printer.outcome(outcome)
            }
            None => break,
        };
        if let Err(e) = written {
            // Dropping the stream stops the agent.
            return output_failed(&e);
        }
    }
    if let Err(e) = printer.flush() {
        return output_failed(&e);
    }
    match caught.load(Ordering::SeqCst) {
        0 if status == Status::Success => ExitCode::SUCCESS,
        0 => ExitCode::from(1),
        signal => ExitCode::from(u8::try_from(signal).unwrap_or(1)),
    }
}

/// A closed pipe (`harness run ... | head`) ends quietly; other write errors are reported.
fn output_failed(e: &io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        ExitCode::SUCCESS
    } else {
        eprintln!("harness: cannot write output: {e}");
        ExitCode::from(1)
    }
}
