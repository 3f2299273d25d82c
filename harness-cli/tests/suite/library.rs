//! The library's live run, as an orchestrator uses it: pick the backend by name from the
//! registry, `Backend::run` it against the fake `claude` of `fixtures/fake-agent/`, consume the
//! stream.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use futures::StreamExt;
use harness_agents_core::{
    EventBody, Registry, RunError, RunItem, RunRequest, Status, WarningSource,
};

use super::run::fake_claude;

/// A registry as the CLI builds it.
fn registry() -> Registry {
    harness_agents::registry()
}

/// Runs `body` on a current-thread runtime in its own thread; fails (not hangs) after a minute.
fn guarded<T: Send + 'static>(body: impl Future<Output = T> + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = tx.send(runtime.block_on(body));
    });
    rx.recv_timeout(Duration::from_secs(60))
        .expect("hang guard")
}

#[test]
fn harness_run_yields_the_first_event_while_the_agent_is_still_running() {
    let dir = std::env::temp_dir().join(format!("harness-library-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let stream_file = dir.join("stream.jsonl");
    let go = dir.join("go");
    // A rejected rate limit is a warning at once (C6); the fake then waits for `go`.
    std::fs::write(
        &stream_file,
        concat!(
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected"}}"#,
            "\n",
            r#"{"type":"system","subtype":"init","cwd":"/p","session_id":"s"}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text","text":"hi"}]}}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"result":"hi","num_turns":1}"#,
            "\n",
        ),
    )
    .unwrap();
    let request = {
        let mut request = RunRequest::default();
        request.prompt = "hello".into();
        request.cwd = Some(dir.clone());
        request.binary = Some(fake_claude());
        request.env = BTreeMap::from([
            ("FAKE_STREAM".to_string(), stream_file.display().to_string()),
            ("FAKE_GO".to_string(), go.display().to_string()),
        ]);
        request
    };

    let go_file = go.clone();
    let (first, go_existed, rest) = guarded(async move {
        let registry = registry();
        let harness = registry.get("claude").unwrap();
        let mut stream = harness.run(request).await.unwrap();
        let first = stream.next().await;
        // The fake is blocked until `go` exists: this event came while it was running.
        let go_existed = Path::new(&go_file).exists();
        std::fs::write(&go_file, "").unwrap();
        let rest: Vec<RunItem> = stream.collect().await;
        (first, go_existed, rest)
    });
    let _ = std::fs::remove_dir_all(&dir);

    assert!(!go_existed);
    let Some(RunItem::Event(first)) = first else {
        panic!("expected an event first, got {first:?}");
    };
    assert!(
        matches!(
            first.body,
            EventBody::Warning {
                source: WarningSource::RateLimit,
                ..
            }
        ),
        "{first:?}"
    );
    assert_eq!(first.line, Some(1));
    let [RunItem::Event(agent), RunItem::Outcome(outcome)] = rest.as_slice() else {
        panic!("expected the agent's text, then the outcome: {rest:?}");
    };
    assert_eq!(agent.body, EventBody::Agent { text: "hi".into() });
    assert_eq!(outcome.status, Status::Success);
    assert_eq!(outcome.session_id.as_deref(), Some("s"));
    assert_eq!(outcome.exit_code, Some(Some(0)));
}

#[test]
fn harness_run_through_the_registry_names_a_missing_binary() {
    let request = {
        let mut request = RunRequest::default();
        request.prompt = "hello".into();
        request.binary = Some("/nonexistent/claude".into());
        request
    };
    let error = guarded(async move {
        let registry = registry();
        let harness = registry.get("claude").unwrap();
        harness.run(request).await.err()
    });
    let Some(RunError::BinaryNotFound { binary, install }) = &error else {
        panic!("expected BinaryNotFound, got {error:?}");
    };
    assert_eq!(binary, Path::new("/nonexistent/claude"));
    // A path named explicitly: no install hint.
    assert_eq!(install, &None);
}
