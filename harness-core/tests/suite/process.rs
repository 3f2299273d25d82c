//! The live-run driver (`harness_agents_core::process`): spawning, the prompt, both pipes, the
//! timeout and the stop signal, conversations, transcripts, and the processes a run leaves
//! behind, against scripted agents (`/bin/sh` scripts written per test).

use std::collections::BTreeMap;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;
#[cfg(any(target_os = "linux", target_os = "android"))]
use harness_agents_core::process::die_with_parent;
use harness_agents_core::process::{
    Conversation, ProcessSpec, Reply, absolute_cwd, choose_binary, spawn, spawn_conversation,
};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{
    Event, EventBody, Kind, Normalizer, Outcome, RunError, RunItem, RunRequest, RunStream, Status,
    StopSignal,
};
use tokio::process::Command;

#[test]
fn the_binary_is_the_requests_then_the_backends_variable_then_its_default() {
    let mut request = RunRequest::default();
    assert_eq!(
        choose_binary(&request, None, "claude"),
        PathBuf::from("claude")
    );
    let empty = Some("".into());
    assert_eq!(
        choose_binary(&request, empty, "claude"),
        PathBuf::from("claude")
    );
    let var = || Some("/opt/claude".into());
    assert_eq!(
        choose_binary(&request, var(), "claude"),
        PathBuf::from("/opt/claude")
    );
    request.binary = Some("/bin/fake".into());
    assert_eq!(
        choose_binary(&request, var(), "claude"),
        PathBuf::from("/bin/fake")
    );
}

#[test]
fn a_relative_working_directory_is_made_absolute() {
    let mut request = RunRequest::default();
    assert_eq!(absolute_cwd(&request), None);
    request.cwd = Some("sub/dir".into());
    let expected = std::env::current_dir().unwrap().join("sub/dir");
    assert_eq!(absolute_cwd(&request), Some(expected));
}

/// Stdout lines become agent events; stderr lines warnings; a line `END` makes it a success.
#[derive(Default)]
pub(super) struct Echo {
    ended: bool,
    lines: u64,
    errs: u64,
    counts: BTreeMap<Kind, u64>,
}

impl Echo {
    fn emit(&mut self, event: Event, out: &mut Vec<Event>) {
        *self.counts.entry(event.kind()).or_insert(0) += 1;
        out.push(event);
    }
}

impl Normalizer for Echo {
    fn push_line(&mut self, line: &[u8], out: &mut Vec<Event>) {
        self.lines += 1;
        if line == b"END" {
            self.ended = true;
            return;
        }
        let text = String::from_utf8_lossy(line).into();
        self.emit(
            Event::new(EventBody::Agent { text }).at_line(self.lines),
            out,
        );
    }
    fn push_stderr(&mut self, line: &[u8], out: &mut Vec<Event>) {
        self.errs += 1;
        let message = String::from_utf8_lossy(line).into_owned();
        let body = EventBody::Warning {
            message,
            source: harness_agents_core::WarningSource::Stderr,
        };
        self.emit(Event::new(body).at_line(self.errs), out);
    }
    fn finish_each(&mut self, emit: &mut dyn FnMut(Event)) -> Outcome {
        let mut outcome = Outcome::empty();
        if self.ended {
            outcome.status = Status::Success;
        } else {
            let message = "stream ended without a result".to_string();
            let out = &mut Vec::new();
            self.emit(Event::new(EventBody::Error { message }), out);
            out.drain(..).for_each(emit);
        }
        outcome.counts = self.counts.clone();
        outcome
    }
    fn end_turn(&mut self) -> Outcome {
        Outcome::empty()
    }
    fn last_disposition(&self) -> harness_agents_core::Disposition {
        harness_agents_core::Disposition::Emitted
    }
    fn session_id(&self) -> Option<&str> {
        None
    }
    fn cwd(&self) -> Option<&str> {
        None
    }
    fn pending_tool_uses(&self) -> Vec<harness_agents_core::PendingToolUse> {
        Vec::new()
    }
}

pub(super) struct Dir(pub(super) PathBuf);

impl Dir {
    pub(super) fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("harness-process-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    pub(super) fn script(&self, body: &str) -> PathBuf {
        let path = self.0.join("agent");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn spec(program: PathBuf) -> ProcessSpec {
    ProcessSpec {
        program,
        install_hint: Some("install it".into()),
        ..ProcessSpec::default()
    }
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

pub(super) async fn collect(stream: RunStream) -> (Vec<Event>, Outcome) {
    let items: Vec<RunItem> = tokio::time::timeout(Duration::from_secs(60), stream.collect())
        .await
        .expect("hang guard");
    let mut events = Vec::new();
    let mut outcome = None;
    for item in items {
        assert!(outcome.is_none(), "the outcome is the last item");
        match item {
            RunItem::Event(e) => events.push(e),
            RunItem::Outcome(o) => outcome = Some(o),
        }
    }
    (events, outcome.expect("an outcome"))
}

pub(super) fn texts(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| match &e.body {
            EventBody::Agent { text } => format!("out:{text}"),
            EventBody::Warning { message, .. } => format!("err:{message}"),
            EventBody::Error { message } => format!("error:{message}"),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Polls until `pid` no longer exists (a zombie still has its /proc entry).
pub(super) async fn gone(pid: &str) {
    gone_path(&Path::new("/proc").join(pid.trim())).await;
}

/// Polls until `proc`, an entry under /proc, no longer exists.
async fn gone_path(proc: &Path) {
    tokio::time::timeout(Duration::from_secs(60), async {
        while proc.exists() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the process is still there");
}

/// Polls until `pid` has written nothing for a while (it waits on a full pipe), or a
/// minute has passed. Only makes a test sharper: a process slow to run returns early.
async fn blocked(pid: &str) {
    let io = Path::new("/proc").join(pid.trim()).join("io");
    let written = || {
        let text = std::fs::read_to_string(&io).unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("wchar:"))
            .and_then(|n| n.trim().parse::<u64>().ok())
    };
    let (mut last, mut same) = (written(), 0);
    for _ in 0..3000 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = written();
        same = if now == last { same + 1 } else { 0 };
        if same == 5 {
            return;
        }
        last = now;
    }
}

pub(super) async fn read_when_written(path: &Path) -> String {
    tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            if let Ok(text) = std::fs::read_to_string(path) {
                if text.ends_with('\n') {
                    return text;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the file was never written")
}

#[test]
fn stdout_and_stderr_lines_become_events_then_the_outcome_with_the_exit_code() {
    let dir = Dir::new("basic");
    let agent = dir.script("echo one; echo warn >&2; printf 'END\\nlast'; exit 3");
    runtime().block_on(async {
        let (events, outcome) =
            collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
        let mut texts = texts(&events);
        texts.sort();
        assert_eq!(texts, ["err:warn", "out:last", "out:one"]);
        assert_eq!(outcome.exit_code, Some(Some(3)));
        assert_eq!(outcome.status, Status::Success);
    });
}

#[test]
fn the_prompt_reaches_stdin_exactly_and_stdin_is_closed() {
    let dir = Dir::new("stdin");
    let copy = dir.0.join("prompt");
    let agent = dir.script(&format!("cat > '{}'; echo END", copy.display()));
    let prompt = "--dangerously-skip-permissions\nline two\r\n\u{e9}".to_string();
    runtime().block_on(async {
        let mut spec = spec(agent);
        spec.stdin = prompt.clone().into_bytes();
        let (_, outcome) = collect(spawn(spec, Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.status, Status::Success);
    });
    assert_eq!(std::fs::read_to_string(copy).unwrap(), prompt);
}

fn spawn_error(spec: ProcessSpec) -> RunError {
    runtime().block_on(async {
        match spawn(spec, Box::new(Echo::default())) {
            Ok(_) => panic!("spawned"),
            Err(err) => err,
        }
    })
}

/// A path that does not exist says so, with no install hint.
#[test]
fn a_missing_path_is_binary_not_found_saying_it_does_not_exist() {
    let missing = PathBuf::from("/nonexistent/harness-agent");
    let err = spawn_error(spec(missing.clone()));
    let RunError::BinaryNotFound { binary, install } = &err else {
        panic!("{err:?}")
    };
    assert_eq!((binary, install), (&missing, &None));
    assert_eq!(err.to_string(), "/nonexistent/harness-agent does not exist");
}

#[test]
fn a_name_not_on_path_gets_the_install_hint_only_when_it_is_the_backends_default() {
    let default = "harness-test-no-such-agent";
    let request = RunRequest::default();
    let unset = "HARNESS_TEST_UNSET_BINARY_VARIABLE";
    let spec = ProcessSpec::for_request(request, unset, default, vec![], "install it");
    assert_eq!(spec.install_hint.as_deref(), Some("install it"));
    let err = spawn_error(spec);
    assert!(matches!(err, RunError::BinaryNotFound { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "harness-test-no-such-agent was not found on PATH; install it with `install it`"
    );

    let mut request = RunRequest::default();
    request.binary = Some("harness-test-other-agent".into());
    let spec = ProcessSpec::for_request(request, unset, default, vec![], "install it");
    assert_eq!(spec.install_hint, None);
    assert_eq!(
        spawn_error(spec).to_string(),
        "harness-test-other-agent was not found on PATH"
    );

    let mut request = RunRequest::default();
    request.binary = Some(PathBuf::from("/opt").join(default));
    let spec = ProcessSpec::for_request(request, unset, default, vec![], "install it");
    assert_eq!(spec.install_hint, None);
}

#[test]
fn a_file_without_execute_permission_is_binary_not_executable() {
    let dir = Dir::new("noexec");
    let agent = dir.script("echo END");
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = spawn_error(spec(agent.clone()));
    assert!(
        matches!(err, RunError::BinaryNotExecutable { .. }),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("{} is not executable", agent.display())
    );
}

#[test]
fn a_script_whose_interpreter_is_missing_is_not_reported_as_missing_itself() {
    let dir = Dir::new("interp");
    let agent = dir.0.join("agent");
    std::fs::write(&agent, "#!/nonexistent/interpreter\n").unwrap();
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = spawn_error(spec(agent.clone()));
    let RunError::Io { binary, source } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(binary, &agent);
    assert_eq!(source.kind(), io::ErrorKind::NotFound);
}

/// A caller that died before the death signal was set would never send
/// it, so a child whose parent is not the caller does not start.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[test]
fn a_child_whose_parent_is_not_the_caller_does_not_start() {
    runtime().block_on(async {
        let mut command = Command::new("true");
        let init = rustix::process::Pid::from_raw(1).unwrap();
        assert_ne!(rustix::process::getpid(), init);
        die_with_parent(&mut command, 1);
        let err = command.spawn().unwrap_err();
        assert_eq!(
            err.raw_os_error(),
            Some(rustix::io::Errno::SRCH.raw_os_error())
        );
    });
}

/// The death signal is tied to the thread that forks, so a run started
/// from a thread that then ends must go on (the driver forks on a thread of its own).
#[test]
fn the_agent_outlives_the_thread_that_started_it() {
    let dir = Dir::new("thread");
    let go = dir.0.join("go");
    let agent = dir.script(&format!(
        "while [ ! -e '{g}' ]; do sleep 0.02; done; echo one; echo END",
        g = go.display()
    ));
    let runtime = runtime();
    let handle = runtime.handle().clone();
    let (stream, task) = std::thread::spawn(move || {
        let _entered = handle.enter();
        let stream = spawn(spec(agent), Box::new(Echo::default()));
        (stream, std::fs::read_link("/proc/thread-self").unwrap())
    })
    .join()
    .unwrap();
    // The thread's entry goes after the kernel has sent any parent-death signal it causes.
    runtime.block_on(gone_path(&Path::new("/proc").join(task)));
    std::fs::write(&go, "").unwrap();
    let (events, outcome) = runtime.block_on(collect(stream.unwrap()));
    assert_eq!(texts(&events), ["out:one"]);
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

/// A consumer that stops reading must not hold back the timeout.
#[test]
fn a_timeout_kills_the_agent_while_the_consumer_is_not_reading() {
    unread_consumer(|spec| {
        spec.timeout = Some(Duration::from_secs(1));
        None
    });
}

/// Nor the stop signal.
#[test]
fn a_stop_signal_kills_the_agent_while_the_consumer_is_not_reading() {
    unread_consumer(|spec| {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        spec.stop = Some(StopSignal::new(async move {
            let _ = rx.await;
        }));
        Some(tx)
    });
}

/// Runs an agent that prints lines forever without reading the stream; fires the stop
/// signal `setup` returns, if any, once the agent runs; expects the agent killed anyway,
/// then everything (the error saying why included) once the stream is read.
fn unread_consumer(
    setup: impl FnOnce(&mut ProcessSpec) -> Option<futures::channel::oneshot::Sender<()>>,
) {
    let dir = Dir::new("unread");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "echo $$ > '{p}.tmp'; mv '{p}.tmp' '{p}'; while :; do echo line; done",
        p = pid.display()
    ));
    runtime().block_on(async {
        let mut spec = spec(agent);
        let stop = setup(&mut spec);
        let expected = match spec.timeout {
            Some(_) => "error:the run timed out after 1 second; its process group was killed",
            None => "error:the run was stopped; its process group was killed",
        };
        let stream = spawn(spec, Box::new(Echo::default())).unwrap();
        let pid = read_when_written(&pid).await;
        if let Some(stop) = stop {
            // Nothing reads the stream: once every buffer is full, the agent waits.
            blocked(&pid).await;
            stop.send(()).unwrap();
        }
        gone(&pid).await;
        let (events, outcome) = collect(stream).await;
        let texts = texts(&events);
        let errors: Vec<&str> = texts
            .iter()
            .map(String::as_str)
            .filter(|t| t.starts_with("error:"))
            .collect();
        assert_eq!(errors, [expected, "error:stream ended without a result"]);
        assert_eq!(outcome.status, Status::Incomplete);
        assert_eq!(outcome.exit_code, Some(None));
    });
}

/// A timeout after the agent's terminal line keeps the status that line
/// gave (O1): the answer is known; the timeout is an `error` event and a null exit code.
#[test]
fn a_timeout_after_the_terminal_line_keeps_its_status() {
    let dir = Dir::new("late-timeout");
    let printed = dir.0.join("printed");
    let agent = dir.script(&format!(
        "echo one; echo END; echo > '{p}'; exec sleep 1000",
        p = printed.display()
    ));
    // The fake must have printed its lines before the deadline: on a machine too slow
    // for that within a second, try again with more time.
    for secs in [1, 5, 30] {
        let _ = std::fs::remove_file(&printed);
        let mut spec = spec(agent.clone());
        spec.timeout = Some(Duration::from_secs(secs));
        let (events, outcome) = runtime()
            .block_on(async { collect(spawn(spec, Box::new(Echo::default())).unwrap()).await });
        if !printed.exists() {
            continue;
        }
        let unit = if secs == 1 { "second" } else { "seconds" };
        assert_eq!(
            texts(&events),
            [
                "out:one".to_string(),
                format!(
                    "error:the run timed out after {secs} {unit}; its process group was killed"
                )
            ]
        );
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(outcome.exit_code, Some(None));
        assert_eq!(outcome.counts.get(&Kind::Error), Some(&1));
        return;
    }
    panic!("the agent never printed its lines before the deadline");
}

#[test]
fn a_missing_working_directory_is_not_reported_as_a_missing_binary() {
    runtime().block_on(async {
        let mut spec = spec(PathBuf::from("sh"));
        spec.cwd = Some(PathBuf::from("/nonexistent/dir"));
        let Err(err) = spawn(spec, Box::new(Echo::default())) else {
            panic!("ran in a missing directory");
        };
        assert!(matches!(err, RunError::WorkingDirectory { .. }), "{err:?}");
    });
}

#[test]
fn a_child_killed_by_a_signal_gives_events_so_far_end_of_input_events_and_a_null_exit_code() {
    let dir = Dir::new("killed");
    let agent = dir.script("echo one; kill -9 $$");
    runtime().block_on(async {
        let (events, outcome) =
            collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
        assert_eq!(
            texts(&events),
            ["out:one", "error:stream ended without a result"]
        );
        assert_eq!(outcome.exit_code, Some(None));
        assert_eq!(outcome.status, Status::Incomplete);
    });
}

#[test]
fn a_timeout_kills_the_whole_process_group_and_says_so() {
    let dir = Dir::new("timeout");
    let pids = dir.0.join("pids");
    let agent = dir.script(&format!(
        "echo started; sleep 1000 & echo $! > '{p}.tmp'; echo $$ >> '{p}.tmp'; mv '{p}.tmp' '{p}'; wait",
        p = pids.display()
    ));
    runtime().block_on(async {
        let mut spec = spec(agent);
        spec.timeout = Some(Duration::from_millis(1500));
        let (events, outcome) = collect(spawn(spec, Box::new(Echo::default())).unwrap()).await;
        // Under load the deadline may be seen before the first line is read: the timeout
        // is reported when it fires, so only the errors' order is fixed.
        let mut texts = texts(&events);
        assert!(texts.contains(&"out:started".to_string()), "{texts:?}");
        texts.retain(|t| t != "out:started");
        assert_eq!(
            texts,
            [
                "error:the run timed out after 1.5 seconds; its process group was killed",
                "error:stream ended without a result",
            ]
        );
        assert_eq!(outcome.status, Status::Incomplete);
        assert_eq!(outcome.exit_code, Some(None));
        assert_eq!(outcome.counts.get(&Kind::Error), Some(&2));
        let pids = read_when_written(&pids).await;
        for pid in pids.lines() {
            gone(pid).await;
        }
    });
}

#[test]
fn a_stop_signal_kills_the_group_and_the_stream_still_ends_with_the_outcome() {
    let dir = Dir::new("stop");
    let agent = dir.script("echo started; exec sleep 1000");
    runtime().block_on(async {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let mut spec = spec(agent);
        spec.stop = Some(StopSignal::new(async move {
            let _ = rx.await;
        }));
        let mut stream = spawn(spec, Box::new(Echo::default())).unwrap();
        let first = stream.next().await;
        assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
        tx.send(()).unwrap();
        let (events, outcome) = collect(stream).await;
        assert_eq!(
            texts(&events),
            [
                "error:the run was stopped; its process group was killed",
                "error:stream ended without a result",
            ]
        );
        assert_eq!(outcome.exit_code, Some(None));
    });
}

#[test]
fn the_first_event_arrives_before_the_child_exits() {
    let dir = Dir::new("live");
    let go = dir.0.join("go");
    let agent = dir.script(&format!(
        "echo first; while [ ! -e '{g}' ]; do sleep 0.02; done; echo END",
        g = go.display()
    ));
    runtime().block_on(async {
        let mut stream = spawn(spec(agent), Box::new(Echo::default())).unwrap();
        let first = tokio::time::timeout(Duration::from_secs(60), stream.next())
            .await
            .expect("hang guard");
        let Some(RunItem::Event(first)) = first else {
            panic!("{first:?}")
        };
        assert_eq!(texts(&[first]), ["out:first"]);
        std::fs::write(&go, "").unwrap();
        let (_, outcome) = collect(stream).await;
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(outcome.exit_code, Some(Some(0)));
    });
}

#[test]
fn dropping_the_stream_kills_and_reaps_the_child() {
    let dir = Dir::new("drop");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "echo $$ > '{p}.tmp'; mv '{p}.tmp' '{p}'; echo started; exec sleep 1000",
        p = pid.display()
    ));
    runtime().block_on(async {
        let mut stream = spawn(spec(agent), Box::new(Echo::default())).unwrap();
        let first = stream.next().await;
        assert!(matches!(first, Some(RunItem::Event(_))), "{first:?}");
        drop(stream);
        let pid = read_when_written(&pid).await;
        gone(&pid).await;
    });
}

#[test]
fn a_stderr_flood_while_stdout_is_written_loses_no_line() {
    let dir = Dir::new("flood");
    let agent = dir.script("seq 100000 >&2 & seq 100000; wait; echo END");
    runtime().block_on(async {
        let (events, outcome) =
            collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.counts.get(&Kind::Warning), Some(&100_000));
        assert_eq!(outcome.counts.get(&Kind::Agent), Some(&100_000));
        assert_eq!(events.len(), 200_000);
        let err_lines: Vec<u64> = events
            .iter()
            .filter(|e| e.kind() == Kind::Warning)
            .filter_map(|e| e.line)
            .collect();
        assert_eq!(err_lines, (1..=100_000).collect::<Vec<_>>());
    });
}

#[test]
fn a_line_of_tens_of_megabytes_arrives_whole() {
    let dir = Dir::new("long");
    let agent = dir.script("head -c 40000000 /dev/zero | tr '\\0' a; echo; echo END");
    runtime().block_on(async {
        let (events, outcome) =
            collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.status, Status::Success);
        let [event] = &events[..] else {
            panic!("{} events", events.len())
        };
        let EventBody::Agent { text } = &event.body else {
            panic!("{event:?}")
        };
        assert_eq!(text.len(), 40_000_000);
        assert!(text.bytes().all(|b| b == b'a'));
    });
}

#[test]
fn something_left_holding_the_pipes_after_the_child_exits_is_killed() {
    let dir = Dir::new("linger");
    let pid = dir.0.join("pid");
    let agent = dir.script(&format!(
        "sleep 1000 & echo $! > '{p}.tmp'; mv '{p}.tmp' '{p}'; echo END; exit 0",
        p = pid.display()
    ));
    runtime().block_on(async {
        let (_, outcome) = collect(spawn(spec(agent), Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.exit_code, Some(Some(0)));
        assert_eq!(outcome.status, Status::Success);
        let pid = read_when_written(&pid).await;
        gone(&pid).await;
    });
}

/// A conversation for the tests: records each agent line as `<LINE` and what it writes
/// as `>LINE`; answers `ask N` with `answer N`, closes the agent's input on `bye`, and
/// writes `cancel` when the run is cut short.
struct Chat {
    grace: Duration,
}

impl Chat {
    fn say(reply: &mut Reply, text: &str) {
        reply.record.push(format!(">{text}").into_bytes());
        reply
            .write
            .extend_from_slice(format!("{text}\n").as_bytes());
    }
}

impl Conversation for Chat {
    fn open(&mut self) -> Reply {
        let mut reply = Reply::default();
        Chat::say(&mut reply, "hello");
        reply
    }
    fn line(&mut self, line: &[u8]) -> Reply {
        let line = String::from_utf8_lossy(line).into_owned();
        let mut reply = Reply::default();
        reply.record = vec![format!("<{line}").into_bytes()];
        if let Some(n) = line.strip_prefix("ask ") {
            Chat::say(&mut reply, &format!("answer {n}"));
        } else if line == "bye" {
            reply.close = true;
        }
        reply
    }
    fn stop(&mut self) -> (Reply, Duration) {
        let mut reply = Reply::default();
        Chat::say(&mut reply, "cancel");
        (reply, self.grace)
    }
}

/// A conversation answers the agent's lines as they come, the normalizer
/// reads what it records (both directions, in order), the transcript saves exactly that,
/// and closing the agent's input lets it end.
#[test]
fn a_conversation_answers_each_line_and_the_transcript_holds_what_the_normalizer_read() {
    let dir = Dir::new("conversation");
    let agent = dir.script(
        "read hello; echo \"got $hello\"; echo 'ask 1'; read a; echo \"got $a\"; \
         echo 'ask 2'; read b; echo \"got $b\"; echo bye; read rest || echo eof; echo END",
    );
    let transcript = dir.0.join("transcript");
    runtime().block_on(async {
        let mut spec = spec(agent);
        spec.transcript = Some(transcript.clone());
        let conversation = Box::new(Chat {
            grace: Duration::from_secs(30),
        });
        let stream = spawn_conversation(spec, Box::new(Echo::default()), conversation);
        let (events, outcome) = collect(stream.unwrap()).await;
        let expected = [
            ">hello",
            "<got hello",
            "<ask 1",
            ">answer 1",
            "<got answer 1",
            "<ask 2",
            ">answer 2",
            "<got answer 2",
            "<bye",
            "<eof",
            "<END",
        ];
        let mut out: Vec<String> = expected.iter().map(|l| format!("out:{l}")).collect();
        // The test normalizer ends only on a bare `END`; it read `<END`.
        out.push("error:stream ended without a result".into());
        assert_eq!(texts(&events), out);
        // TR2, TR3: the header, then what the normalizer read, as standard output records.
        let saved = std::fs::read_to_string(&transcript).unwrap();
        let header = "{\"harness_transcript\":1,\"started\":false}\n";
        assert_eq!(
            saved,
            format!(
                "{header}{}",
                expected.map(|l| format!("out {l}\n")).concat()
            )
        );
        assert_eq!(outcome.exit_code, Some(Some(0)));
    });
}

/// A timeout asks the conversation what to write (a cancel), and an
/// agent that ends by itself within the time given is not killed.
#[test]
fn a_timeout_in_a_conversation_writes_its_cancel_and_the_agent_may_end_by_itself() {
    let dir = Dir::new("conversation-cancel");
    let agent = dir.script("read hello; echo waiting; read c; echo \"got $c\"; exit 3");
    runtime().block_on(async {
        let mut spec = spec(agent);
        spec.timeout = Some(Duration::from_millis(500));
        let conversation = Box::new(Chat {
            grace: Duration::from_secs(30),
        });
        let stream = spawn_conversation(spec, Box::new(Echo::default()), conversation);
        let (events, outcome) = collect(stream.unwrap()).await;
        let texts = texts(&events);
        assert_eq!(
            texts,
            [
                "out:>hello",
                "out:<waiting",
                "error:the run timed out after 0.5 seconds; its process group was killed",
                "out:>cancel",
                "out:<got cancel",
                "error:stream ended without a result",
            ]
        );
        assert_eq!(outcome.exit_code, Some(Some(3)));
        assert_eq!(outcome.counts.get(&Kind::Error), Some(&2));
    });
}

/// An agent that ignores the cancel is killed when the time given ends.
#[test]
fn an_agent_that_ignores_the_cancel_is_killed_when_its_time_is_up() {
    let dir = Dir::new("conversation-ignore");
    let agent = dir.script("read hello; echo waiting; exec sleep 1000");
    runtime().block_on(async {
        let (tx, rx) = futures::channel::oneshot::channel::<()>();
        let mut spec = spec(agent);
        spec.stop = Some(StopSignal::new(async move {
            let _ = rx.await;
        }));
        let conversation = Box::new(Chat {
            grace: Duration::from_millis(200),
        });
        let mut stream = spawn_conversation(spec, Box::new(Echo::default()), conversation).unwrap();
        let mut seen = Vec::new();
        while let Some(RunItem::Event(event)) = stream.next().await {
            let waiting = texts(std::slice::from_ref(&event)) == ["out:<waiting"];
            seen.push(event);
            if waiting {
                break;
            }
        }
        tx.send(()).unwrap();
        let (events, outcome) = collect(stream).await;
        seen.extend(events);
        assert_eq!(
            texts(&seen),
            [
                "out:>hello",
                "out:<waiting",
                "error:the run was stopped; its process group was killed",
                "out:>cancel",
                "error:stream ended without a result",
            ]
        );
        assert_eq!(outcome.exit_code, Some(None));
    });
}

/// A transcript that cannot be created stops the run before it starts.
#[test]
fn a_transcript_that_cannot_be_created_is_an_error() {
    runtime().block_on(async {
        let mut spec = spec(PathBuf::from("sh"));
        spec.transcript = Some(PathBuf::from("/nonexistent/dir/transcript"));
        let Err(err) = spawn(spec, Box::new(Echo::default())) else {
            panic!("ran without its transcript");
        };
        assert!(matches!(err, RunError::Transcript { .. }), "{err:?}");
        assert!(
            err.to_string()
                .starts_with("cannot write the transcript /nonexistent/dir/transcript: "),
            "{err}"
        );
    });
}

/// Without a conversation, the transcript holds its header, then the
/// agent's standard output and standard error lines as the normalizer read them, in that
/// order (TR2-TR4); it replays to the live run's events.
#[test]
fn the_transcript_of_a_plain_run_holds_its_header_then_its_stdout_and_stderr_lines() {
    let dir = Dir::new("transcript");
    let agent = dir.script("echo one; echo two >&2; printf 'three\\r\\nEND'");
    let transcript = dir.0.join("t");
    let mut config = harness_agents_core::NormalizerConfig::with_cwd("/repo");
    config.started = true;
    let live = runtime().block_on(async {
        let mut spec = spec(agent);
        spec.transcript = Some(transcript.clone());
        spec.header = Header::new("echo", &config);
        let (events, outcome) = collect(spawn(spec, Box::new(Echo::default())).unwrap()).await;
        assert_eq!(outcome.status, Status::Success);
        assert_eq!(events.len(), 3);
        events
    });
    let saved = std::fs::read(&transcript).unwrap();
    let mut lines = saved.split_inclusive(|b| *b == b'\n');
    let header = lines.next().unwrap();
    assert_eq!(
        header,
        b"{\"harness_transcript\":1,\"backend\":\"echo\",\"cwd\":\"/repo\",\"started\":true}\n"
    );
    let rest: Vec<&[u8]> = lines.collect();
    let of = |tag: &[u8]| -> Vec<Vec<u8>> {
        rest.iter()
            .filter_map(|l| l.strip_prefix(tag))
            .map(|l| l.to_vec())
            .collect()
    };
    assert_eq!(
        of(b"out "),
        [b"one\n".to_vec(), b"three\r\n".to_vec(), b"END\n".to_vec()]
    );
    assert_eq!(of(b"err "), [b"two\n".to_vec()]);
    assert_eq!(rest.len(), 4);
    // Replayed alone, in the order it was read: the live run's events.
    let parsed = Header::parse(header.trim_ascii_end()).unwrap().unwrap();
    assert_eq!(parsed.config(), config);
    let mut normalizer = Echo::default();
    let mut offline = Vec::new();
    replay(&saved[header.len()..], &mut normalizer, &mut offline).unwrap();
    assert_eq!(offline, live);
}
