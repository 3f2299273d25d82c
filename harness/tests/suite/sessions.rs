//! Stored sessions against the live streams of the same recorded runs: each
//! scenario under `fixtures/sessions/BACKEND/` holds the live stream (`NAME.jsonl`) and the
//! files the real binary stored (`NAME/`), both from one run of `cargo xtask record --sessions`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use harness_agents::prices::PriceTable;
use harness_agents::sessions::{self, Locations, SessionFiles};
use harness_agents::{Event, EventBody, NormalizerConfig, Outcome, UnknownReason, WarningSource};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/sessions")
}

/// The scenarios recorded with their stored sessions, by name.
fn scenarios(backend: &str) -> Vec<(String, PathBuf)> {
    let dir = root().join(backend);
    let mut names: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), p))
        .collect();
    names.sort();
    names
}

fn live(backend: &str, name: &str) -> (Vec<Event>, Outcome) {
    let text = std::fs::read(root().join(backend).join(format!("{name}.jsonl"))).unwrap();
    let registry = harness_agents::registry();
    let mut config = NormalizerConfig::default();
    config.cwd = Some(
        match backend {
            "claude" => "/home/dev/project",
            "opencode" => "/home/oc/project",
            "gemini" => "/home/gemini/project",
            "pi" => "/home/pi/project",
            "qwen" => "/home/qwen/project",
            "copilot" => "/home/copilot/project",
            _ => "/home/dev2/project",
        }
        .to_string(),
    );
    let mut normalizer = registry.get(backend).unwrap().normalizer(config);
    let mut events = Vec::new();
    for line in text.split(|&b| b == b'\n') {
        normalizer.push_line(line, &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    (events, outcome)
}

/// The sessions a recorded scenario's folder holds: its copy of the agent's folder (Claude
/// Code's configuration folder, Codex's home, ...), read as `--dir AGENT=FOLDER` reads it.
fn stored(backend: &str, dir: &Path) -> Vec<SessionFiles> {
    let mut locations = Locations::default();
    locations.set(
        sessions::history(backend).unwrap().name(),
        &[dir.to_path_buf()],
    );
    sessions::discover(&locations)
}

/// An event as the comparison sees it: without its line number and tool use id (a rollout
/// names a command by its call id, the live stream by an item counter) and, for `unknown`,
/// without `raw` (the stored line is not the live line).
fn neutral(event: &Event) -> Value {
    let mut value = serde_json::to_value(event).unwrap();
    let map = value.as_object_mut().unwrap();
    map.remove("line");
    map.remove("tool_use_id");
    if let EventBody::Unknown { .. } = event.body {
        map.remove("raw");
    }
    value
}

fn sorted(events: &[Event]) -> Vec<String> {
    let mut all: Vec<String> = events.iter().map(|e| neutral(e).to_string()).collect();
    all.sort();
    all
}

/// What the comparison leaves out, on both sides: the S9 error of a stream cut short, and what
/// only one side has a line for (`docs/sessions.md`, "What a stored session cannot say"):
/// Claude Code's `system` notices (the live `api_retry`, `task_started`, hook lines; the
/// transcript's `api_error`), its `rate_limit_event` warnings and the `error` of its `result`
/// line, which a transcript does not store.
fn comparable(backend: &str, events: Vec<Event>) -> Vec<Event> {
    events
        .into_iter()
        .filter(|e| match &e.body {
            EventBody::Error { message } => {
                message != "stream ended without a result" && backend != "claude"
            }
            EventBody::Unknown { reason, .. } => *reason != UnknownReason::UnknownSystemSubtype,
            EventBody::Warning { source, .. } => *source != WarningSource::RateLimit,
            _ => true,
        })
        .collect()
}

#[derive(Debug, Default)]
struct Tally {
    agree: Vec<String>,
    differ: BTreeMap<String, String>,
}

fn check(backend: &str, exceptions: &[&str]) -> Tally {
    let mut tally = Tally::default();
    for (name, dir) in scenarios(backend) {
        let (live_events, live_outcome) = live(backend, &name);
        let mut files = stored(backend, &dir);
        if backend == "opencode" {
            // OS1: a sub-agent's session is a session of its own, which the live stream of
            // its parent does not print (P9).
            files.retain(|f| Some(&f.id) == live_outcome.session_id.as_ref());
        }
        let mut stored_events = Vec::new();
        let mut outcomes = Vec::new();
        for one in &files {
            outcomes.extend(sessions::events(one, &mut |e| stored_events.push(e)).unwrap());
        }
        let mut problems = Vec::new();
        let (want, got) = (
            sorted(&comparable(backend, live_events)),
            sorted(&comparable(backend, stored_events)),
        );
        if want != got {
            problems.push(format!("events: live {want:#?}\nstored {got:#?}"));
        }
        // T10: the answer, when the live run ended with one.
        // (A structured answer, C14's StructuredOutput, is the tool's input: not taken.)
        if backend == "claude"
            && live_outcome.status == harness_agents::Status::Success
            && live_outcome.structured_output.is_none()
        {
            let stored = outcomes.first().and_then(|o| o.final_output.as_deref());
            if stored != live_outcome.final_output.as_deref() {
                problems.push(format!(
                    "final output: live {:?}, stored {stored:?}",
                    live_outcome.final_output
                ));
            }
        }
        // Tokens exactly: the live outcome's against the stored session's.
        let summary: Vec<_> = files
            .iter()
            .map(|f| sessions::summarize(f, &PriceTable::bundled()).unwrap())
            .collect();
        let n = |v: &Option<serde_json::Number>| v.as_ref().and_then(|n| n.as_u64()).unwrap_or(0);
        let m = &live_outcome.metrics;
        let input: u64 = summary.iter().map(|s| s.input_tokens).sum();
        let output: u64 = summary.iter().map(|s| s.output_tokens).sum();
        let cache_read: u64 = summary.iter().map(|s| s.cache_read_input_tokens).sum();
        let cache_write: u64 = summary.iter().map(|s| s.cache_creation_input_tokens).sum();
        let (want_input, want_cache_write) = match backend {
            // O3: Codex's `input_tokens` includes the cached ones; so does Qwen's (QH7).
            "codex" | "qwen" => (n(&m.input_tokens) - n(&m.cache_read_input_tokens), 0),
            _ => (n(&m.input_tokens), n(&m.cache_creation_input_tokens)),
        };
        // OS7: opencode's reasoning tokens are output tokens (billed as such).
        let want_output = match backend {
            "opencode" => n(&m.output_tokens) + n(&m.reasoning_output_tokens),
            _ => n(&m.output_tokens),
        };
        let tokens = (input, output, cache_read, cache_write);
        let mut want_tokens = (
            want_input,
            want_output,
            n(&m.cache_read_input_tokens),
            want_cache_write,
        );
        if backend == "gemini" {
            want_tokens = gemini_tokens_but_routing(&name);
        }
        // CH4: Copilot's stdout has no tokens; its own totals at exit are the reference.
        let copilot = backend == "copilot";
        if copilot {
            want_tokens = copilot_tokens_at_shutdown(&dir);
        }
        if (copilot || live_outcome.metrics.output_tokens.is_some()) && tokens != want_tokens {
            problems.push(format!("tokens: live {want_tokens:?}, stored {tokens:?}"));
        }
        // Cost within the table's precision: the stored figure, and the priced one.
        if let Some(live_cost) = m.total_cost_usd.as_ref().and_then(|c| c.as_f64()) {
            let cost: f64 = summary.iter().filter_map(|s| s.cost_usd).sum();
            let priced: f64 = summary
                .iter()
                .map(|s| {
                    s.models
                        .values()
                        .filter_map(|u| u.usage.cost_usd)
                        .sum::<f64>()
                })
                .sum();
            if (cost - live_cost).abs() > 1e-9 || (priced - live_cost).abs() > 1e-9 {
                problems.push(format!(
                    "cost: live {live_cost}, stored {cost}, priced {priced}"
                ));
            }
        }
        if files.is_empty() {
            problems.push("no stored session".to_string());
        }
        if problems.is_empty() {
            tally.agree.push(name);
        } else {
            tally.differ.insert(name, problems.join("\n"));
        }
    }
    let unexpected: Vec<_> = tally
        .differ
        .iter()
        .filter(|(name, _)| !exceptions.contains(&name.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} of {} {backend} scenarios differ:\n{unexpected:#?}",
        unexpected.len(),
        tally.agree.len() + tally.differ.len()
    );
    let stale: Vec<_> = exceptions
        .iter()
        .filter(|e| !tally.differ.contains_key(**e))
        .collect();
    assert!(stale.is_empty(), "listed as differing but agree: {stale:?}");
    tally
}

/// T1-T9, O2: every recorded Claude Code transcript gives the live stream's events (as a
/// multiset: a sub-agent's file is read after its parent's), its tokens exactly, and its cost.
#[test]
fn claude_transcripts_agree_with_the_live_streams() {
    // n2: WebFetch summarizes the page with a second model call that the transcript does not
    // store as a message (its tokens are in the live total and in `cost-state`'s cost).
    // m: a foreground sub-agent's last message reaches the live stream only as the Agent
    // tool's result; its transcript stores it as a message. u3: the live stream's
    // `control_response` line has no stored counterpart.
    let exceptions = [
        "m_subagent",
        "n2_webfetch_loopback",
        "u3_interrupt_control_request",
    ];
    const AGREE: usize = 46;
    let tally = check("claude", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// R1-R9, O3: every recorded Codex rollout gives the live stream's events and tokens.
#[test]
fn codex_rollouts_agree_with_the_live_streams() {
    // What a rollout does not store: failures and retries of the model API (g*, i7's model
    // warning), a command killed with its process (h5); l1's rollout holds both runs of the
    // resumed session, the live stream only the second.
    let exceptions = [
        "g10_stream_cut",
        "g11_stream_cut_retry_ok",
        "g12_fail_after_tool",
        "g1_http500_no_retry",
        "g2_http500_retries",
        "g4_http429",
        "g8_response_failed",
        "g9_context_length",
        "h5_sigterm_long_command",
        "i7_default_model_fallback",
        "l1_resume_last",
    ];
    const AGREE: usize = 36;
    let tally = check("codex", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// OS1-OS7: every recorded opencode session gives the live stream's events, tokens and cost.
#[test]
fn opencode_sessions_agree_with_the_live_streams() {
    // j05: opencode does not store the context overflow's error (it compacts and goes on);
    // l01's session holds both runs of the resumed session, the live stream only the second.
    let exceptions = ["j05_context_overflow", "l01_resume"];
    const AGREE: usize = 9;
    let tally = check("opencode", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// GS6: the live run's tokens without its routing call's, which the chat does not store: the
/// last `result`'s `stats.models`, every model but the router's, as (input not cached,
/// output, cached, 0).
fn gemini_tokens_but_routing(name: &str) -> (u64, u64, u64, u64) {
    const ROUTER: &str = "gemini-3.5-flash-lite";
    let text =
        std::fs::read_to_string(root().join("gemini").join(format!("{name}.jsonl"))).unwrap();
    let result = text
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["type"] == "result")
        .unwrap_or(Value::Null);
    let mut sums = (0, 0, 0, 0);
    if let Some(models) = result.pointer("/stats/models").and_then(Value::as_object) {
        for (model, stats) in models.iter().filter(|(m, _)| *m != ROUTER) {
            let n = |key: &str| {
                stats[key]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{model} {key}"))
            };
            sums.0 += n("input_tokens") - n("cached");
            sums.1 += n("output_tokens");
            sums.2 += n("cached");
        }
    }
    sums
}

/// GS1-GS7: every recorded Gemini CLI chat gives the live stream's events and its tokens, the
/// routing call's aside.
#[test]
fn gemini_chats_agree_with_the_live_streams() {
    // p, q: a failed model call (an empty answer, HTTP 400) is not stored, only the prompt;
    // u's chat holds both runs of the resumed session, the live stream only the second. r:
    // Gemini CLI stores a message's text without the whitespace that ends it.
    let exceptions = [
        "p_empty_response",
        "q_http_400",
        "r_text_tool_text",
        "u_resume",
    ];
    const AGREE: usize = 6;
    let tally = check("gemini", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// PH1-PH6: every recorded Pi session file gives the live stream's events, tokens and cost.
#[test]
fn pi_sessions_agree_with_the_live_streams() {
    // m2, m4: the live stream's retries (a `warning` each, PI12) have no stored entry; each
    // failed attempt is stored, its error the same. q: the session file holds both runs of the
    // resumed session, the live stream only the second.
    let exceptions = [
        "m2_api_error_then_success",
        "m4_error_after_a_tool",
        "q_resume",
    ];
    const AGREE: usize = 8;
    let tally = check("pi", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// QH1-QH8: every recorded Qwen Code chat gives the live stream's events and tokens.
#[test]
fn qwen_chats_agree_with_the_live_streams() {
    // u: the chat holds both runs of the resumed session, the live stream only the second
    // (the tokens agree: the live `result` counts the whole session, QW12). m5, p: Qwen's own
    // retries (a `warning` each, QW2) are not stored.
    let exceptions = ["m5_stream_error", "p_max_tokens", "u_resume"];
    const AGREE: usize = 12;
    let tally = check("qwen", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// CH4: the tokens Copilot summed up itself when its last process ended: the last
/// `session.shutdown`'s `modelMetrics`, every model's `usage`, as (input neither read from nor
/// written to the cache, output, cache reads, cache writes).
fn copilot_tokens_at_shutdown(dir: &Path) -> (u64, u64, u64, u64) {
    let mut sums = (0, 0, 0, 0);
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir.join("session-state"))
        .unwrap()
        .flatten()
    {
        files.push(entry.path().join("events.jsonl"));
    }
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        let shutdown = text
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["type"] == "session.shutdown")
            .unwrap_or(Value::Null);
        let models = shutdown.pointer("/data/accountingSnapshot/modelMetrics");
        for stats in models
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(_, s)| s)
        {
            let n = |key: &str| stats["usage"][key].as_u64().unwrap();
            let (read, write) = (n("cacheReadTokens"), n("cacheWriteTokens"));
            sums.0 += n("inputTokens") - read - write;
            sums.1 += n("outputTokens");
            sums.2 += read;
            sums.3 += write;
        }
    }
    sums
}

/// CH1-CH6: every recorded Copilot session gives the live stream's events, and its tokens are
/// Copilot's own totals.
#[test]
fn copilot_sessions_agree_with_the_live_streams() {
    // m, m2: a failed model request's `model.call_failure` (a `warning` each, CP11) is
    // ephemeral, never stored; u's file holds both runs of the resumed session, the live
    // stream only the second.
    let exceptions = ["m2_rate_limited_then_ok", "m_api_500", "u_resume"];
    const AGREE: usize = 11;
    let tally = check("copilot", &exceptions);
    assert_eq!(tally.agree.len(), AGREE, "{:?}", tally.agree);
}

/// The agents whose recorded stored sessions the tests below read.
const BACKENDS: [&str; 7] = [
    "claude", "codex", "opencode", "gemini", "pi", "qwen", "copilot",
];

#[test]
fn every_recorded_session_is_found() {
    for backend in BACKENDS {
        for (name, dir) in scenarios(backend) {
            let files = stored(backend, &dir);
            assert!(!files.is_empty(), "{backend}/{name}");
            assert!(files.iter().all(|f| f.backend == backend));
        }
    }
}

/// The lines `harness sessions show` writes for every session of a scenario: its events, then
/// its main file's outcome.
fn shown(backend: &str, dir: &Path) -> Vec<Value> {
    let mut lines = Vec::new();
    for files in stored(backend, dir) {
        let mut events = Vec::new();
        let outcomes = sessions::events(&files, &mut |e| events.push(e)).unwrap();
        lines.extend(events.iter().map(|e| serde_json::to_value(e).unwrap()));
        let outcome = harness_agents::OutcomeLine::new(&outcomes[0]);
        lines.push(serde_json::to_value(outcome).unwrap());
    }
    lines
}

/// Golden files: each recorded session's events and outcome, as reviewed by hand
/// (`NAME.stored.expected.jsonl`). `UPDATE_EXPECT=1` rewrites them; review the diff.
#[test]
fn stored_sessions_give_their_expected_events() {
    let bless = fixtures::update_expect();
    let mut differ = Vec::new();
    for backend in BACKENDS {
        for (name, dir) in scenarios(backend) {
            let got = shown(backend, &dir);
            let path = root()
                .join(backend)
                .join(format!("{name}.stored.expected.jsonl"));
            if bless {
                let text: String = got.iter().map(|v| format!("{v}\n")).collect();
                std::fs::write(&path, text).unwrap();
                continue;
            }
            let want: Vec<Value> = std::fs::read_to_string(&path)
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            if want != got {
                differ.push(format!("{backend}/{name}"));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "differ from their expected files: {differ:?}\n{}",
        fixtures::UPDATE_HINT
    );
}

/// `list`'s tallies read only the lines whose figures count; every recorded session gives the
/// row that decoding all its lines gives.
#[test]
fn a_tally_sums_up_every_recorded_session_as_its_decoding_does() {
    let prices = PriceTable::bundled();
    let mut sessions = 0;
    for backend in BACKENDS {
        for (name, dir) in scenarios(backend) {
            for files in stored(backend, &dir) {
                let tallied = sessions::summarize(&files, &prices).unwrap();
                let decoded = sessions::summarize_decoded(&files, &prices).unwrap();
                assert_eq!(tallied, decoded, "{backend}/{name}");
                sessions += 1;
            }
        }
    }
    assert!(sessions > 90, "{sessions}");
}

/// Lines spliced into a copy of each recorded session's files, each where it changes what a
/// tally could get wrong: a figure on a line it might pass over (a cost or a type spelled with
/// an escape, a repeated key), lines that are not JSON or not objects, a last timestamp on a
/// bookkeeping line, or on a line that is not JSON, or none at all, and no final newline.
const SPLICED: [&str; 15] = [
    r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]},"timestamp":"2027-01-01T00:00:00.000Z"}"#,
    "not json",
    "[1,2]",
    r#"{"type":"attachment","timestamp":"2030-01-01T00:00:00.000Z","attachment":{"x":"\ud800"}}"#,
    r#"{"type":"attachment","timestamp":"2029-01-01T00:00:00.000Z"}"#,
    r#"{"type":"attachment","timestamp":"2029-06-01T00:00:00.000Z","timestamp":7}"#,
    r#"{"type":"file-history-snapshot","totalCostUSD":12.5}"#,
    r#"{"\u0074ype":"assistant","message":{"id":"m-x","model":"claude-sonnet-4-5","usage":{"input_tokens":3,"output_tokens":4}}}"#,
    r#"{"type":"assistant","message":{"id":"m-y","model":"m","usage":{"input_tokens":5}},"type":"attachment"}"#,
    r#"{"type":"attachment","type":"assistant","message":{"id":"m-z","content":[{"type":"tool_use","name":"Zed"},7]}}"#,
    r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":null}}}"#,
    r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch"}}"#,
    r#"{"type":"event_msg","payload":{"type":"\u0074oken_count","info":{"total_token_usage":{"input_tokens":99999,"output_tokens":7}}}}"#,
    r#"{"type":"world_state","timestamp":"2031-01-01T00:00:00.000Z","payload":{"type":"token_count"}"#,
    r#"{"type":"user","message":{"content":"\u0068i"},"timestamp":"2028-01-01T00:00:00.000Z","cwd":"","sessionId":""}"#,
];

/// Copies `dir` into `to`, each `.jsonl` file with `lines` spliced in: before its first line,
/// after its middle one and at its end (without a final newline).
fn splice(dir: &Path, to: &Path, lines: &[&str]) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let (from, into) = (entry.path(), to.join(entry.file_name()));
        if from.is_dir() {
            std::fs::create_dir_all(&into).unwrap();
            splice(&from, &into, lines);
        } else if from.extension().is_some_and(|e| e == "jsonl") {
            let text = std::fs::read_to_string(&from).unwrap();
            let mut all: Vec<&str> = text.lines().collect();
            let middle = all.len() / 2;
            all.splice(middle..middle, lines.iter().copied());
            all.splice(0..0, lines.iter().copied());
            all.extend(lines.iter().copied());
            std::fs::write(&into, all.join("\n")).unwrap();
        } else {
            std::fs::copy(&from, &into).unwrap();
        }
    }
}

#[test]
fn a_tally_reads_unusual_lines_as_decoding_does() {
    let prices = PriceTable::bundled();
    let temp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    // A line longer than the chunks files are read in, with no timestamp: the last timestamp
    // is found before it, reading back; blank lines.
    let long = format!(
        r#"{{"type":"attachment","x":"{}"}}"#,
        "a".repeat(600 * 1024)
    );
    for backend in ["claude", "codex"] {
        for (name, dir) in scenarios(backend) {
            // Each line alone (at the start, the middle, the end), then all of them.
            let sets: Vec<Vec<&str>> = SPLICED
                .iter()
                .map(|line| vec![*line])
                .chain([
                    SPLICED.to_vec(),
                    Vec::new(),
                    vec![SPLICED[3], &long, ""],
                    vec!["", ""],
                ])
                .collect();
            for (n, lines) in sets.iter().enumerate() {
                let to = temp.path().join(format!("{backend}-{name}-{n}"));
                std::fs::create_dir_all(&to).unwrap();
                splice(&dir, &to, lines);
                for files in stored(backend, &to) {
                    let tallied = sessions::summarize(&files, &prices).unwrap();
                    let decoded = sessions::summarize_decoded(&files, &prices).unwrap();
                    assert_eq!(tallied, decoded, "{backend}/{name} with {lines:?}");
                    if backend == "claude" && lines.len() == SPLICED.len() {
                        // The spliced lines count: the last cost is the bookkeeping line's.
                        assert_eq!(tallied.cost_usd, Some(12.5), "{backend}/{name}");
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
