//! `harness run`: drive a live agent and print its events as they happen, then the outcome.
//!
//! Exit status: 0 when the outcome is `success`, 1 when it is `error` or `incomplete`, 2 for
//! usage errors, 126 when the agent's binary is not executable, 127 when it is missing, and
//! 128 + N after a stopping signal N: 129 SIGHUP, 130 SIGINT (Ctrl-C), 131 SIGQUIT, 138 SIGUSR1,
//! 140 SIGUSR2, 143 SIGTERM. On such a signal the agent's process group, and every process it
//! started in another group or session, is killed at once, and the outcome is still printed.
//!
//! Output is written by a thread of its own: a reader that does not keep up (`harness run ... |
//! slow-reader`) slows the run down but never delays a timeout or a signal. After the first
//! signal, whatever is left is printed as the reader takes it; a second signal exits at once.

use std::io::{self, Write};
use std::process::ExitCode;

use futures::StreamExt;
use harness_agents_core::{Backend, RunError, RunItem, RunRequest, Status, StopSignal};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, oneshot, watch};

use crate::format::Printer;

/// How many items may wait for the output thread.
const QUEUE: usize = 64;

/// The signals that stop a run, each with the exit status it gives (128 + its number). They
/// all end `harness` by default; caught, they kill the agent's whole process group, which the
/// agent's parent-death signal alone would not (it reaches the agent, not what it started).
pub(crate) const STOPPING: [(SignalKind, u8); 6] = [
    (SignalKind::hangup(), 129),
    (SignalKind::interrupt(), 130),
    (SignalKind::quit(), 131),
    (SignalKind::user_defined1(), 138),
    (SignalKind::user_defined2(), 140),
    (SignalKind::terminate(), 143),
];

/// Runs `request` on `harness`, printing with `printer`; returns the process's exit status.
pub fn run<W: Write + Send + 'static>(
    harness: &dyn Backend,
    request: RunRequest,
    printer: Printer<W>,
) -> ExitCode {
    let runtime = match live_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(drive(harness, request, printer))
}

/// The runtime a live run or session is driven on; the caller becomes the subreaper of what the
/// agent leaves behind.
pub(crate) fn live_runtime() -> Result<tokio::runtime::Runtime, ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("harness: cannot start the async runtime: {e}");
            ExitCode::from(1)
        })?;
    // Orphans of the run come back to `harness`, which kills and reaps them when the run
    // ends (`process::RunTree`); `harness` has no other children to confuse with them. Without
    // it they are still found and killed, only reaped by init instead.
    let _ = harness_agents_core::process::adopt_orphans();
    Ok(runtime)
}

/// The human view shows paths relative to the agent's directory.
pub(crate) fn show_paths_from<W: Write>(printer: &mut Printer<W>, request: &RunRequest) {
    if printer.is_human() {
        printer.base = request
            .cwd
            .as_ref()
            .and_then(|cwd| std::path::absolute(cwd).ok())
            .or_else(|| std::env::current_dir().ok())
            .map(|p| p.display().to_string());
    }
}

/// The stopping signals caught so far: how many, and the exit status of the first.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Caught {
    pub(crate) count: u32,
    pub(crate) code: u8,
}

/// Catches the stopping signals from now on (so none is lost to its default action), counting
/// them in the returned channel.
pub(crate) fn catch_signals() -> io::Result<watch::Receiver<Caught>> {
    catch(&STOPPING)
}

/// Catches `kinds` from now on, counting them in the returned channel.
pub(crate) fn catch(kinds: &[(SignalKind, u8)]) -> io::Result<watch::Receiver<Caught>> {
    let mut signals = Vec::new();
    for &(kind, code) in kinds {
        signals.push((signal(kind)?, code));
    }
    let (tx, rx) = watch::channel(Caught::default());
    tokio::spawn(async move {
        loop {
            let next = signals.iter_mut().map(|(signal, code)| {
                let code = *code;
                Box::pin(async move { signal.recv().await.map(|()| code) })
            });
            let (Some(code), _, _) = futures::future::select_all(next).await else {
                // The runtime is shutting down.
                return;
            };
            tx.send_modify(|caught| {
                if caught.count == 0 {
                    caught.code = code;
                }
                caught.count += 1;
            });
        }
    });
    Ok(rx)
}

/// Completes once `count` stopping signals have been caught.
pub(crate) async fn caught(mut signals: watch::Receiver<Caught>, count: u32) {
    // An error means the sender is gone: no signal will come any more.
    if signals.wait_for(|c| c.count >= count).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn drive<W: Write + Send + 'static>(
    harness: &dyn Backend,
    mut request: RunRequest,
    mut printer: Printer<W>,
) -> ExitCode {
    let signals = match catch_signals() {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("harness: cannot catch signals: {e}");
            return ExitCode::from(1);
        }
    };
    request.stop = Some(StopSignal::new(caught(signals.clone(), 1)));
    show_paths_from(&mut printer, &request);

    let mut stream = match harness.run(request).await {
        Ok(stream) => stream,
        Err(e) => return start_failed(&e),
    };

    let (items, pending) = mpsc::channel(QUEUE);
    let (done, written) = oneshot::channel();
    let output = std::thread::Builder::new()
        .name("harness-output".into())
        .spawn(move || {
            let _ = done.send(write_all(printer, pending));
        });
    if let Err(e) = output {
        eprintln!("harness: cannot start the output thread: {e}");
        return ExitCode::from(1);
    }
    let forward = async move {
        loop {
            tokio::select! {
                item = stream.next() => match item {
                    Some(item) => {
                        if items.send(item).await.is_err() {
                            break;
                        }
                    }
                    None => break,
                },
                // The output failed: stop waiting for the agent.
                () = items.closed() => break,
            }
        }
        // Dropping the stream stops the agent (when the output failed before it ended).
        drop(stream);
        drop(items);
        written.await
    };
    let written = tokio::select! {
        written = forward => written,
        () = caught(signals.clone(), 2) => {
            // Asked twice: what the reader has not taken yet is dropped.
            return ExitCode::from(signals.borrow().code);
        }
    };
    let signal = signals.borrow().code;
    let stopped = (signal != 0).then(|| ExitCode::from(signal));
    match written {
        Ok(Ok(status)) => stopped.unwrap_or(if status == Status::Success {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }),
        Ok(Err(e)) => {
            let code = output_failed(&e);
            stopped.unwrap_or(code)
        }
        Err(_) => {
            eprintln!("harness: the output thread failed");
            ExitCode::from(1)
        }
    }
}

/// Reports why the agent could not start; the exit status that says so.
pub(crate) fn start_failed(e: &RunError) -> ExitCode {
    eprintln!("harness: {e}");
    ExitCode::from(match e {
        RunError::BinaryNotFound { .. } => 127,
        RunError::BinaryNotExecutable { .. } => 126,
        RunError::Unsupported { .. }
        | RunError::NoSessions { .. }
        | RunError::CannotResume { .. }
        | RunError::NoAgentCommand { .. }
        | RunError::WorkingDirectory { .. } => 2,
        RunError::Io { .. } | RunError::Transcript { .. } => 1,
        // Any other reason (the enum may grow): a failure to run, as `Io`.
        _ => 1,
    })
}

/// Writes every item it is given, flushing when none is ready, so bursts are written in one
/// go; returns the outcome's status (`incomplete` when none came).
fn write_all<W: Write>(
    mut printer: Printer<W>,
    mut items: mpsc::Receiver<RunItem>,
) -> io::Result<Status> {
    let mut status = Status::Incomplete;
    loop {
        let item = match items.try_recv() {
            Ok(item) => item,
            Err(mpsc::error::TryRecvError::Empty) => {
                printer.flush()?;
                match items.blocking_recv() {
                    Some(item) => item,
                    None => break,
                }
            }
            Err(mpsc::error::TryRecvError::Disconnected) => break,
        };
        match item {
            RunItem::Event(event) => printer.event(&event)?,
            RunItem::Outcome(outcome) => {
                status = outcome.status;
                printer.outcome(&outcome)?;
            }
        }
    }
    printer.flush()?;
    Ok(status)
}

/// A closed pipe (`harness run ... | head`) ends quietly; other write errors are reported.
pub(crate) fn output_failed(e: &io::Error) -> ExitCode {
    if e.kind() == io::ErrorKind::BrokenPipe {
        ExitCode::SUCCESS
    } else {
        eprintln!("harness: cannot write output: {e}");
        ExitCode::from(1)
    }
}
