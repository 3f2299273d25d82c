//! Live Pi sessions (SPEC section 8, PR1-PR7 of `docs/pi.md`) against
//! `fixtures/fake-agent/pi-rpc`, a script that speaks `pi --mode rpc`: the caller's commands
//! (I2), turn ends (I3), interrupts, faults (I6), resume (I5), the transcript (I7). Each test
//! compares every item of the session.

use std::path::Path;
use std::time::{Duration, Instant};

use fixtures::live::{Fake, agent_said as agent, ended, run_session, turn_end};
use harness_agents_core::session::{SessionHandle, SessionItem};
use harness_agents_core::transcript::{Header, replay};
use harness_agents_core::{Backend, RunRequest};
use harness_agents_pi::PiHarness;
use serde_json::{Value, json};

/// A session request for the fake in its folder, logging what it reads to `log`.
fn request(fake: &Fake) -> RunRequest {
    let (log, argv, pid) = (fake.path("log"), fake.path("argv"), fake.path("pid"));
    fake.request(
        "",
        &[
            ("FAKE_LOG", log.as_path()),
            ("FAKE_ARGV", argv.as_path()),
            ("FAKE_PID", pid.as_path()),
        ],
    )
}

fn fake() -> Fake {
    Fake::new("pi-rpc")
}

/// Runs a session of `request`, sending `prompts` first, reacting with `react`.
fn session(
    request: RunRequest,
    prompts: &[&str],
    end_input: bool,
    react: impl FnMut(&SessionHandle, &SessionItem),
) -> Vec<Value> {
    run_session(&PiHarness, request, prompts, end_input, react)
}

/// What the fake read on its standard input, one JSON value a line.
fn log(fake: &Fake) -> Vec<Value> {
    std::fs::read_to_string(fake.path("log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn prompt(id: u32, text: &str) -> Value {
    json!({"id": format!("harness-prompt-{id}"), "type": "prompt", "message": text})
}

fn get_state(id: &str) -> Value {
    json!({"id": id, "type": "get_state"})
}

#[test]
fn i1_i2_i3_pr2_prompts_run_one_at_a_time_in_order_each_with_its_outcome() {
    let fake = fake();
    let mut request = request(&fake);
    request.model = Some("anthropic/claude-sonnet-4-5".into());
    request.permission_mode = Some("bypassPermissions".into());
    let items = session(request, &["plain", "plain"], true, |_, _| {});
    assert_eq!(
        items,
        [
            agent("plain 1", 5),
            turn_end(1, "success", json!({"agent": 1}), Some("plain 1")),
            agent("plain 2", 11),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended("Caller", Some(0), json!({"agent": 2})),
        ]
    );
    // PR2: the second prompt went out when the first turn had ended; PR7: the `get_state`
    // that names the session went out as it opened.
    assert_eq!(
        log(&fake),
        [
            get_state("harness-state-1"),
            prompt(2, "plain"),
            prompt(3, "plain")
        ]
    );
    // PR1: rpc mode, values as the next word, no prompt in argv.
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        [
            "--mode",
            "rpc",
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--tools",
            "read,bash,edit,write,grep,find,ls"
        ]
    );
    assert_gone(&fake.path("pid"));
}

#[test]
fn pr2_the_outcome_names_the_session_from_pis_state() {
    let fake = fake();
    let items = fixtures::live::runtime().block_on(async {
        let session = PiHarness.session(request(&fake)).await.expect("starts");
        session.prompt("plain").expect("open");
        session.end_input().expect("open");
        fixtures::live::drive_session(session, |_, _| {}).await
    });
    let ids: Vec<Option<&str>> = items
        .iter()
        .filter_map(|item| match item {
            SessionItem::TurnEnd(outcome) => Some(outcome.session_id.as_deref()),
            SessionItem::Ended(end) => Some(end.outcome.session_id.as_deref()),
            SessionItem::Event(_) => None,
        })
        .collect();
    let id = Some("019b0000-0000-7000-8000-000000000001");
    assert_eq!(ids, [id, id]);
}

/// PR7: the session names Pi's id for it as it opens, before any prompt (I8): Pi's own for a
/// new session, the resumed one's with `--session`; nothing is asked of the model for it.
#[test]
fn i8_pr7_the_session_names_pis_id_before_any_prompt() {
    for (resume, id) in [
        (None, "019b0000-0000-7000-8000-000000000001"),
        (Some("019b-stored"), "019b-stored"),
    ] {
        let fake = fake();
        let mut request = request(&fake);
        request.resume = resume.map(str::to_string);
        let (named, items) = fixtures::live::named_session(&PiHarness, request);
        assert_eq!(named.as_deref(), Some(id));
        assert_eq!(items, [ended("Caller", Some(0), json!({}))]);
        assert_eq!(log(&fake), [get_state("harness-state-1")]);
        assert_gone(&fake.path("pid"));
    }
}

/// Runs a session of `request` that sends `prompt`, interrupts at once (the turn is running:
/// the fake waits for the abort), then sends `follow_up` after the first turn's end.
fn interrupted(request: RunRequest, prompt: &str, follow_up: Option<&str>) -> Vec<Value> {
    let follow_up = follow_up.map(str::to_string);
    let items = fixtures::live::runtime().block_on(async {
        let session = PiHarness.session(request).await.expect("starts");
        session.prompt(prompt).expect("open");
        session.interrupt().expect("open");
        if follow_up.is_none() {
            session.end_input().expect("open");
        }
        fixtures::live::drive_session(session, |handle, item| {
            if let (SessionItem::TurnEnd(outcome), Some(text)) = (item, &follow_up)
                && outcome.turn == Some(1)
            {
                handle.prompt(text.clone()).expect("open");
                handle.end_input().expect("open");
            }
        })
        .await
    });
    fixtures::live::session_json(&items)
}

fn aborted_tool(line: u64) -> Value {
    json!({"kind": "command", "command": "sleep 100", "success": false,
           "error": "Command aborted", "tool": "bash", "tool_use_id": "call_1", "line": line})
}

fn aborted_request(line: u64) -> Value {
    json!({"kind": "error", "message": "the model request ended with stopReason aborted",
           "line": line})
}

#[test]
fn i2_pr4_interrupt_mid_tool_aborts_the_turn_and_a_follow_up_runs() {
    let fake = fake();
    let items = interrupted(request(&fake), "tool", Some("plain"));
    assert_eq!(
        items,
        [
            aborted_tool(6),
            aborted_request(7),
            turn_end(1, "interrupted", json!({"command": 1, "error": 1}), None),
            agent("plain 2", 14),
            turn_end(2, "success", json!({"agent": 1}), Some("plain 2")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 1, "command": 1, "error": 1})
            ),
        ]
    );
    assert_eq!(
        log(&fake),
        [
            get_state("harness-state-1"),
            prompt(2, "tool"),
            json!({"id": "harness-abort-3", "type": "abort"}),
            prompt(4, "plain"),
        ]
    );
    assert_gone(&fake.path("pid"));
}

#[test]
fn i6_pr5_close_while_a_turn_runs_aborts_it_and_ends_the_session() {
    let fake = fake();
    let items = fixtures::live::runtime().block_on(async {
        let session = PiHarness.session(request(&fake)).await.expect("starts");
        session.prompt("tool").expect("open");
        session.prompt("plain").expect("open");
        session.close().expect("open");
        fixtures::live::session_json(&fixtures::live::drive_session(session, |_, _| {}).await)
    });
    assert_eq!(
        items,
        [
            aborted_tool(6),
            aborted_request(7),
            turn_end(1, "interrupted", json!({"command": 1, "error": 1}), None),
            ended("Caller", Some(0), json!({"command": 1, "error": 1})),
        ]
    );
    // The queued prompt never went out.
    assert_eq!(log(&fake).len(), 3);
    assert_gone(&fake.path("pid"));
}

#[test]
fn i6_an_agent_that_dies_mid_turn_ends_the_turn_and_the_session_with_an_error() {
    let fake = fake();
    let items = session(request(&fake), &["die", "plain"], false, |_, _| {});
    let counts = json!({"agent": 1, "error": 2});
    assert_eq!(
        items,
        [
            agent("dying", 5),
            json!({"kind": "error", "message": "stream ended without a result"}),
            json!({"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"}),
            turn_end(1, "error", counts.clone(), None),
            ended("AgentExited", Some(3), counts),
        ]
    );
    assert_eq!(log(&fake), [get_state("harness-state-1"), prompt(2, "die")]);
}

#[test]
fn pr3_a_retried_request_keeps_the_turn_and_one_pi_gives_up_on_ends_it_failed() {
    let fake = fake();
    let items = session(
        request(&fake),
        &["retry", "fatal", "refuse", "plain"],
        true,
        |_, _| {},
    );
    assert_eq!(
        items,
        [
            json!({"kind": "error", "message": "500 {\"type\":\"error\"}", "line": 5}),
            json!({"kind": "warning", "source": "stream", "line": 8,
                   "message": "retrying the failed model request (1 of 3) in 2000 ms: 500"}),
            agent("retried 1", 11),
            turn_end(
                1,
                "success",
                json!({"agent": 1, "error": 1, "warning": 1}),
                Some("retried 1")
            ),
            json!({"kind": "error", "message": "401 invalid x-api-key", "line": 18}),
            turn_end(2, "error", json!({"error": 1}), None),
            json!({"kind": "error", "line": 22,
                   "message": "pi refused the `prompt` command: No API key found for anthropic"}),
            turn_end(3, "error", json!({"error": 1}), None),
            agent("plain 4", 26),
            turn_end(4, "success", json!({"agent": 1}), Some("plain 4")),
            ended(
                "Caller",
                Some(0),
                json!({"agent": 2, "error": 3, "warning": 1})
            ),
        ]
    );
    assert_eq!(
        log(&fake),
        [
            get_state("harness-state-1"),
            prompt(2, "retry"),
            get_state("harness-probe-3"),
            prompt(4, "fatal"),
            get_state("harness-probe-5"),
            prompt(6, "refuse"),
            prompt(7, "plain"),
        ]
    );
}

#[test]
fn i5_pr1_a_resumed_session_names_the_stored_session_as_the_next_word() {
    let fake = fake();
    let mut request = request(&fake);
    request.resume = Some("-019b".into());
    let items = session(request, &["plain"], true, |_, _| {});
    assert_eq!(items.len(), 3, "{items:?}");
    assert_eq!(
        fake.argv().lines().collect::<Vec<_>>(),
        ["--mode", "rpc", "--session", "-019b"]
    );
}

#[test]
fn i7_the_transcript_replays_to_the_sessions_events() {
    let fake = fake();
    let mut request = request(&fake);
    let transcript = fake.path("transcript");
    request.transcript = Some(transcript.clone());
    let items = session(request, &["plain", "retry", "fatal"], true, |_, _| {});
    let live: Vec<Value> = items
        .into_iter()
        .filter(|i| i.get("kind").is_some())
        .collect();
    assert_eq!(live.len(), 5, "{live:?}");
    let text = std::fs::read(&transcript).expect("the transcript");
    let first = text.split(|b| *b == b'\n').next().expect("a header");
    let header = Header::parse(first)
        .expect("a header line")
        .expect("a valid header");
    assert!(
        header.session,
        "I7: the header says the stream is a session's"
    );
    let mut normalizer = PiHarness.normalizer(header.config());
    let mut events = Vec::new();
    replay(&text[..], normalizer.as_mut(), &mut events).expect("replays");
    normalizer.finish(&mut events);
    let replayed: Vec<Value> = events
        .iter()
        .map(|e| serde_json::to_value(e).expect("serializes"))
        .collect();
    assert_eq!(replayed, live);
}

/// The process whose pid the fake wrote is gone.
fn assert_gone(pid_file: &Path) {
    let pid =
        std::fs::read_to_string(pid_file).unwrap_or_else(|e| panic!("the fake wrote its pid: {e}"));
    let proc = Path::new("/proc").join(pid.trim());
    let deadline = Instant::now() + Duration::from_secs(5);
    while proc.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !proc.exists(),
        "the agent {} outlived its session",
        pid.trim()
    );
}
