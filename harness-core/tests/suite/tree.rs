//! What a run leaves behind: nothing. A scripted agent starts a `sleep` in a session of its own
//! (`setsid`, as opencode starts its tools), outside the agent's process group; however the run
//! ends (its end, a timeout, the stop signal, the stream dropped), that process is killed, and
//! the processes of another run that is still going are not.

use std::path::Path;
use std::time::Duration;

use futures::StreamExt;
use harness_agents_core::process::{RunTree, spawn};
use harness_agents_core::{RunItem, Status, StopSignal};

use super::process::{Dir, Echo, collect, gone, read_when_written, runtime, spec};

/// A script line that starts `sleep 1000` in a new session, its output detached, and writes
/// its pid to `pid` (whole: written aside, then renamed).
fn setsid_sleep(pid: &Path, command: &str) -> String {
    format!(
        "setsid {command} >/dev/null 2>&1 </dev/null & echo $! > '{p}.tmp'; mv '{p}.tmp' '{p}'",
        p = pid.display()
    )
}

/// The session id of `pid` (field 6 of `/proc/PID/stat`).
fn session(pid: &str) -> Option<String> {
    let text = std::fs::read_to_string(Path::new("/proc").join(pid.trim()).join("stat")).ok()?;
    let after = text.rsplit_once(')')?.1;
    after.split_whitespace().nth(3).map(str::to_string)
}

/// Whether `pid` is alive (not gone, not a zombie).
fn alive(pid: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(Path::new("/proc").join(pid.trim()).join("stat")) else {
        return false;
    };
    let state = text.rsplit_once(')').map(|(_, rest)| rest.trim_start());
    !state.is_some_and(|s| s.starts_with('Z'))
}

/// Waits until the sleep has left this process's session (else the test proves nothing).
async fn left_the_session(pid: &str) {
    let mine = session(&std::process::id().to_string());
    for _ in 0..3000 {
        let its = session(pid);
        assert!(its.is_some(), "{pid} is not running");
        if its != mine {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{pid} did not start a session of its own");
}

/// I6: an agent that ends normally, having started a process in another session.
#[test]
fn a_process_the_agent_left_in_another_session_is_killed_when_the_run_ends() {
    let dir = Dir::new("tree-end");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!("{}; echo END", setsid_sleep(&pid, "sleep 1000")));
    runtime().block_on(async {
        let (_, outcome) = collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.status, Status::Success);
        let pid = read_when_written(&pid).await;
        gone(&pid).await;
    });
}

/// I6: a timeout kills what the agent started in another session at once, with the agent.
#[test]
fn a_timeout_kills_what_the_agent_started_in_another_session() {
    let dir = Dir::new("tree-timeout");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "{}; echo started; exec sleep 1000",
        setsid_sleep(&pid, "sleep 1000")
    ));
    runtime().block_on(async {
        let mut spec = spec(agent);
        spec.timeout = Some(Duration::from_millis(1500));
        let stream = spawn(spec, Box::new(Echo::default())).unwrap();
        let pid_text = read_when_written(&pid).await;
        left_the_session(&pid_text).await;
        let (_, outcome) = collect(stream).await;
        assert_eq!(outcome.status, Status::Incomplete);
        gone(&pid_text).await;
    });
}

/// I6: the stop signal (the CLI's SIGINT, SIGTERM, SIGHUP) too.
#[test]
fn a_stop_signal_kills_what_the_agent_started_in_another_session() {
    let dir = Dir::new("tree-stop");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "{}; echo started; exec sleep 1000",
        setsid_sleep(&pid, "sleep 1000")
    ));
    runtime().block_on(async {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let mut spec = spec(agent);
        spec.stop = Some(StopSignal::new(async move {
            let _ = rx.await;
        }));
        let mut stream = spawn(spec, Box::new(Echo::default())).unwrap();
        let first = stream.next().await;
        assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
        let pid = read_when_written(&pid).await;
        left_the_session(&pid).await;
        tx.send(()).unwrap();
        let (_, outcome) = collect(stream).await;
        assert_eq!(outcome.status, Status::Incomplete);
        gone(&pid).await;
    });
}

/// Dropping the stream, too.
#[test]
fn dropping_the_stream_kills_what_the_agent_started_in_another_session() {
    let dir = Dir::new("tree-drop");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "{}; echo started; exec sleep 1000",
        setsid_sleep(&pid, "sleep 1000")
    ));
    runtime().block_on(async {
        let mut stream = spawn(spec(agent), Box::new(Echo::default())).unwrap();
        let first = stream.next().await;
        assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
        let pid = read_when_written(&pid).await;
        left_the_session(&pid).await;
        drop(stream);
        gone(&pid).await;
    });
}

/// A descendant that clears its environment (so carries no mark) is still found through
/// its parent while that lives.
#[test]
fn a_descendant_without_the_mark_is_found_through_its_parent() {
    let dir = Dir::new("tree-env");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "{}; echo started; exec sleep 1000",
        setsid_sleep(&pid, "env -i sleep 1000")
    ));
    runtime().block_on(async {
        let mut spec = spec(agent);
        spec.timeout = Some(Duration::from_millis(1000));
        let stream = spawn(spec, Box::new(Echo::default())).unwrap();
        let pid_text = read_when_written(&pid).await;
        let (_, outcome) = collect(stream).await;
        assert_eq!(outcome.status, Status::Incomplete);
        gone(&pid_text).await;
    });
}

/// Runs of one process end independently: one ending kills its own processes, never those
/// of a run still going.
#[test]
fn a_run_that_ends_leaves_another_runs_processes_alone() {
    let dir = Dir::new("tree-two");
    let (long_pid, short_pid, go) = (dir.0.join("long"), dir.0.join("short"), dir.0.join("go"));
    let long = dir.0.join("long-agent");
    std::fs::write(
        &long,
        format!(
            "#!/bin/sh\n{}; echo started; while [ ! -e '{g}' ]; do sleep 0.02; done; echo END\n",
            setsid_sleep(&long_pid, "sleep 1000"),
            g = go.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&long, std::fs::Permissions::from_mode(0o755)).unwrap();
    let short = dir.script(&format!(
        "{}; echo END",
        setsid_sleep(&short_pid, "sleep 1000")
    ));
    runtime().block_on(async {
        let mut long_run = spawn(spec(long), Box::new(Echo::default())).unwrap();
        let first = long_run.next().await;
        assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
        let long_pid = read_when_written(&long_pid).await;
        let (_, outcome) = collect(spawn(spec(short), Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.status, Status::Success);
        let short_pid = read_when_written(&short_pid).await;
        gone(&short_pid).await;
        assert!(alive(&long_pid), "the other run's process was killed");
        std::fs::write(&go, "").unwrap();
        let (_, outcome) = collect(long_run).await;
        assert_eq!(outcome.status, Status::Success);
        gone(&long_pid).await;
    });
}

/// The piece sessions reuse: a tree marks a command, and kill finds what it started, twice
/// over harmlessly.
#[test]
fn a_run_tree_kills_every_marked_process_and_only_those() {
    let dir = Dir::new("tree-api");
    let (mine, other) = (dir.0.join("mine"), dir.0.join("other"));
    runtime().block_on(async {
        let mut trees = Vec::new();
        for pid in [&mine, &other] {
            let mut tree = RunTree::new();
            let mut command = tokio::process::Command::new("sh");
            command
                .arg("-c")
                .arg(setsid_sleep(pid, "sleep 1000"))
                .process_group(0);
            tree.mark(&mut command);
            let mut child = command.spawn().unwrap();
            tree.set_leader(child.id());
            child.wait().await.unwrap();
            trees.push(tree);
        }
        assert_ne!(trees[0].mark_var().0, trees[1].mark_var().0);
        let (mine, other) = (
            read_when_written(&mine).await,
            read_when_written(&other).await,
        );
        assert_eq!(trees[0].kill(), 1);
        gone(&mine).await;
        assert!(alive(&other), "another tree's process was killed");
        assert_eq!(trees[0].kill(), 0);
        assert_eq!(trees[1].kill(), 1);
        gone(&other).await;
    });
}
