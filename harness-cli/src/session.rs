//! `harness session`: a conversation with an agent (SPEC section 8).
//!
//! Standard input carries the caller's commands (I2), one JSON object a line, read on a thread
//! of its own and handed to the session as they come; the session's items are printed as `run`
//! prints its own, each turn closing with its outcome line (I3). When standard input is a
//! terminal it is a chat for a person instead: a line is a prompt, a permission request is
//! answered by the next line (`y`, `a`, `n`), Ctrl-C interrupts the running turn (twice within
//! two seconds closes the session), Ctrl-D ends the input.
//!
//! Exit status: 0 when the session ended by its input or `close`, 1 when the agent failed or
//! died or a turn ran out of time, the statuses of `run` when the agent cannot start (2 also
//! for a backend without sessions or one that cannot resume), and 128 + N when a signal N
//! stopped it (in the chat, Ctrl-C does not stop it).

use std::collections::VecDeque;
use std::io::{self, BufRead, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use harness_agents_core::session::{EndReason, SessionHandle, SessionItem};
use harness_agents_core::{Backend, Decision, EventBody, RunRequest, StopSignal};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::{mpsc, oneshot};

use crate::format::Printer;
use crate::run::{
    STOPPING, catch, caught, live_runtime, output_failed, show_paths_from, start_failed,
};

/// How many items may wait for the output thread.
const QUEUE: usize = 64;

/// Two Ctrl-C within this long close the chat's session.
const TWICE: Duration = Duration::from_secs(2);

/// The permission requests a chat's person has not answered yet, oldest first.
type Waiting = Arc<Mutex<VecDeque<String>>>;

/// Runs a session of `request` on `harness`, printing with `printer`; returns the exit status.
pub fn run<W: Write + Send + 'static>(
    harness: &dyn Backend,
    request: RunRequest,
    printer: Printer<W>,
) -> ExitCode {
    let runtime = match live_runtime() {
        Ok(runtime) => runtime,
        Err(code) => return code,
    };
    runtime.block_on(drive(harness, request, printer, io::stdin().is_terminal()))
}

async fn drive<W: Write + Send + 'static>(
    harness: &dyn Backend,
    mut request: RunRequest,
    mut printer: Printer<W>,
    chat: bool,
) -> ExitCode {
    // In the chat, Ctrl-C belongs to the person: it interrupts, it does not stop.
    let stopping: Vec<(SignalKind, u8)> = STOPPING
        .iter()
        .copied()
        .filter(|(kind, _)| !(chat && *kind == SignalKind::interrupt()))
        .collect();
    let signals = match catch(&stopping) {
        Ok(signals) => signals,
        Err(e) => {
            eprintln!("harness: cannot catch signals: {e}");
            return ExitCode::from(1);
        }
    };
    request.stop = Some(StopSignal::new(caught(signals.clone(), 1)));
    show_paths_from(&mut printer, &request);
    let mut session = match harness.session(request).await {
        Ok(session) => session,
        Err(e) => return start_failed(&e),
    };
    let waiting = Waiting::default();
    read_commands(session.handle(), chat.then(|| waiting.clone()));
    if chat {
        eprintln!(
            "harness: a session with {}: type a prompt; Ctrl-C interrupts the turn, Ctrl-D ends",
            harness.name()
        );
        if let Err(e) = interrupt_on_ctrl_c(session.handle()) {
            eprintln!("harness: cannot catch Ctrl-C: {e}");
            return ExitCode::from(1);
        }
    }

    let (items, pending) = mpsc::channel(QUEUE);
    let (done, written) = oneshot::channel();
    let asks = chat.then_some(waiting);
    let output = std::thread::Builder::new()
        .name("harness-output".into())
        .spawn(move || {
            let _ = done.send(write_all(printer, pending, asks));
        });
    if let Err(e) = output {
        eprintln!("harness: cannot start the output thread: {e}");
        return ExitCode::from(1);
    }
    let forward = async move {
        loop {
            tokio::select! {
                item = session.next() => match item {
                    Some(item) => {
                        if items.send(item).await.is_err() {
                            break;
                        }
                    }
                    None => break,
                },
                () = items.closed() => break,
            }
        }
        // Dropping the session stops the agent (when the output failed before it ended).
        drop(session);
        drop(items);
        written.await
    };
    let written = tokio::select! {
        written = forward => written,
        () = caught(signals.clone(), 2) => return ExitCode::from(signals.borrow().code),
    };
    let signal = signals.borrow().code;
    let stopped = (signal != 0).then(|| ExitCode::from(signal));
    match written {
        Ok(Ok(reason)) => stopped.unwrap_or(match reason {
            Some(EndReason::Caller) => ExitCode::SUCCESS,
            _ => ExitCode::from(1),
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

/// Reads the caller's lines on a thread of their own and hands each to the session: as a
/// command (I2), or in the chat (`waiting` given) as a prompt or the answer to the oldest
/// permission request waiting. The end of input ends the session's input.
fn read_commands(handle: SessionHandle, waiting: Option<Waiting>) {
    let reader = move || {
        let stdin = io::stdin();
        let mut input = stdin.lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let sent = match &waiting {
                None => handle.send_line(text),
                Some(waiting) => chat_line(&handle, waiting, text),
            };
            if sent.is_err() {
                return;
            }
        }
        let _ = handle.end_input();
    };
    // Never joined: a thread blocked on the terminal must not keep `harness` from exiting.
    if let Err(e) = std::thread::Builder::new()
        .name("harness-input".into())
        .spawn(reader)
    {
        eprintln!("harness: cannot read standard input: {e}");
    }
}

/// One line a person typed: the answer to the oldest request waiting, else a prompt.
fn chat_line(
    handle: &SessionHandle,
    waiting: &Waiting,
    text: &[u8],
) -> Result<(), harness_agents_core::session::SessionGone> {
    let text = String::from_utf8_lossy(text);
    let text = text.trim();
    let oldest = waiting
        .lock()
        .map(|w| w.front().cloned())
        .unwrap_or_default();
    if let Some(id) = oldest {
        let decision = match text.to_ascii_lowercase().as_str() {
            "y" | "yes" => Decision::Allow,
            "a" | "always" => Decision::AllowAlways,
            "n" | "no" => Decision::Deny,
            _ => {
                eprintln!("allow? [y]es / [a]lways / [n]o");
                return Ok(());
            }
        };
        if let Ok(mut waiting) = waiting.lock() {
            waiting.pop_front();
        }
        return handle.answer(id, decision, None);
    }
    if text.is_empty() {
        return Ok(());
    }
    handle.prompt(text)
}

/// Ctrl-C interrupts the running turn; a second one within [`TWICE`] closes the session.
fn interrupt_on_ctrl_c(handle: SessionHandle) -> io::Result<()> {
    let mut interrupts = signal(SignalKind::interrupt())?;
    tokio::spawn(async move {
        let mut last: Option<Instant> = None;
        while interrupts.recv().await.is_some() {
            let now = Instant::now();
            let twice = last.is_some_and(|at| now.duration_since(at) < TWICE);
            last = Some(now);
            let sent = if twice {
                eprintln!("harness: closing the session");
                handle.close()
            } else {
                eprintln!("harness: interrupting the turn (Ctrl-C again to close the session)");
                handle.interrupt()
            };
            if sent.is_err() {
                return;
            }
        }
    });
    Ok(())
}

/// Writes every item it is given, flushing when none is ready; in the chat (`asks` given) a
/// permission request asks its question and waits in `asks` for the person's answer. Returns
/// why the session ended (`None` when its end never came).
fn write_all<W: Write>(
    mut printer: Printer<W>,
    mut items: mpsc::Receiver<SessionItem>,
    asks: Option<Waiting>,
) -> io::Result<Option<EndReason>> {
    let mut reason = None;
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
            SessionItem::Event(event) => {
                printer.event(&event)?;
                if let (Some(asks), EventBody::Permission { id, .. }) = (&asks, &event.body) {
                    printer.flush()?;
                    if let Ok(mut asks) = asks.lock() {
                        asks.push_back(id.clone());
                    }
                    eprintln!("allow? [y]es / [a]lways / [n]o");
                }
            }
            SessionItem::TurnEnd(outcome) => {
                if let Some(asks) = &asks {
                    // The turn's requests went with it.
                    if let Ok(mut asks) = asks.lock() {
                        asks.clear();
                    }
                }
                printer.outcome(&outcome)?;
            }
            SessionItem::Ended(end) => reason = Some(end.reason),
        }
    }
    printer.flush()?;
    Ok(reason)
}
