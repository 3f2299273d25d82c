//! Load (SPEC I6): 50 concurrent Claude Code sessions of 20 turns each, against the scripted
//! session agent `fixtures/fake-agent/claude-session`, leave no agent process, file descriptor
//! or thread behind. This test binary holds this one test, so the process's descriptors and
//! threads are its alone to count.

use std::path::Path;
use std::time::{Duration, Instant};

use fixtures::live::{Fake, drive_session, runtime};
use harness_agents_claude::ClaudeHarness;
use harness_agents_core::session::{EndReason, SessionItem};
use harness_agents_core::{Backend, RunRequest, Status};

const SESSIONS: usize = 50;
const TURNS: usize = 20;

fn entries(dir: &str) -> usize {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .count()
}

fn request(fake: &Fake) -> RunRequest {
    let pid = fake.path("pid");
    fake.request("", &[("FAKE_PID", pid.as_path())])
}

/// One session of `turns` turns: each ends `success`, then the session ends by its input.
async fn session(fake: &Fake, turns: usize) {
    let session = ClaudeHarness
        .session(request(fake))
        .await
        .unwrap_or_else(|e| panic!("the session starts: {e}"));
    for _ in 0..turns {
        session
            .prompt("plain")
            .unwrap_or_else(|e| panic!("open: {e}"));
    }
    session.end_input().unwrap_or_else(|e| panic!("open: {e}"));
    let items = drive_session(session, |_, _| {}).await;
    let ends: Vec<_> = items
        .iter()
        .filter_map(|item| match item {
            SessionItem::TurnEnd(outcome) => Some((outcome.turn, outcome.status)),
            _ => None,
        })
        .collect();
    let expected: Vec<_> = (1..=turns)
        .map(|turn| (u32::try_from(turn).ok(), Status::Success))
        .collect();
    assert_eq!(ends, expected);
    match items.last() {
        Some(SessionItem::Ended(end)) => {
            assert_eq!(end.reason, EndReason::Caller);
            assert_eq!(end.outcome.exit_code, Some(Some(0)));
        }
        other => panic!("the session's end, not {other:?}"),
    }
}

fn assert_gone(pid_file: &Path) {
    let pid =
        std::fs::read_to_string(pid_file).unwrap_or_else(|e| panic!("the fake wrote its pid: {e}"));
    let proc = Path::new("/proc").join(pid.trim());
    let deadline = Instant::now() + Duration::from_secs(10);
    while proc.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !proc.exists(),
        "the agent {} outlived its session",
        pid.trim()
    );
}

#[test]
fn i6_fifty_sessions_of_twenty_turns_leave_no_process_descriptor_or_thread() {
    // A first session starts what lives as long as the process by design: the thread that
    // forks every agent, tokio's child-signal pipe. Counting starts after it.
    let warm = Fake::new("claude-session");
    runtime().block_on(session(&warm, 1));
    let (fds, threads) = (entries("/proc/self/fd"), entries("/proc/self/task"));

    let fakes: Vec<Fake> = (0..SESSIONS).map(|_| Fake::new("claude-session")).collect();
    let rt = runtime();
    rt.block_on(futures::future::join_all(
        fakes.iter().map(|fake| session(fake, TURNS)),
    ));
    drop(rt);

    for fake in &fakes {
        assert_gone(&fake.path("pid"));
    }
    assert_eq!(entries("/proc/self/fd"), fds, "file descriptors left open");
    assert_eq!(entries("/proc/self/task"), threads, "threads left running");
}
