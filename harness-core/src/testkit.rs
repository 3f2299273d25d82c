//! The conformance kit: what every backend's normalizer must satisfy, stated once, checked with
//! proptest (feature `testkit`).
//!
//! A backend's test suite drives its normalizer through [`trace`] (or [`check_stream`], which
//! runs every check below on the trace) with inputs from the strategies here or its own
//! generators. The properties hold for any backend, whatever the input:
//!
//! - **no panic** (S8) on arbitrary bytes, lines and JSON values, including the O4 queries
//!   (`session_id`, `cwd`, `pending_tool_uses`) asked after every line;
//! - **chunk invariance** (S1, S6): the same bytes split at arbitrary points before
//!   [`LineSplitter`] give the same events and outcome ([`check_chunking`]);
//! - **line numbers** (J2): an event made while reading stdout line `n` carries `line == n`,
//!   except `agent` and `reasoning`, which carry the last line that added text to their
//!   message (at most `n`); stderr events carry their stderr line; the end-of-input events
//!   (S9, X8) carry none;
//! - **order** (S6, C4): stdout events other than `agent` and `reasoning` come out in
//!   non-decreasing `line` order;
//! - **accounting**: every stdout line has a [`Disposition`], blank exactly when the line is
//!   JSON whitespace (S1); `Emitted` exactly when the line itself produced an event; a rule
//!   named for every `Consumed` line;
//! - **settling** (C9, S9, X8): events about a pending tool use come out only on the line
//!   that settles it; after `finish()` nothing is pending, and every use still pending just
//!   before it gives exactly one `unresolved_tool_use` event, in the order
//!   [`Normalizer::pending_tool_uses`] listed them, with its tool and thread; the closing
//!   `error` of S9 comes exactly when no terminal line arrived;
//! - **counts** (O1): the outcome's `counts` equal the events emitted;
//! - after `finish()`, further lines and a second `finish()` add nothing.
//!
//! Properties that need to know what a stream holds (every resolved use yields its events
//! exactly once, the number of messages...) belong to the backend's generators, which know
//! what they generated.
//!
//! ```
//! use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson};
//! use harness_agents_core::testkit::{check_stream, Input};
//! use harness_agents_core::{Backend, Normalizer, NormalizerConfig};
//!
//! /// A backend whose every line is consumed by its rule Q1.
//! #[derive(Default)]
//! struct Quiet;
//! impl Decoder for Quiet {
//!     fn line(&mut self, _: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
//!         out.consumed_by("Q1");
//!         Ok(())
//!     }
//! }
//! struct QuietBackend;
//! impl Backend for QuietBackend {
//!     fn name(&self) -> &'static str {
//!         "quiet"
//!     }
//!     fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
//!         Box::new(Driver::<Quiet>::new(config))
//!     }
//! }
//! let input = Input::stdout([b"".to_vec(), b"{}".to_vec()]);
//! let trace = check_stream(&QuietBackend, &NormalizerConfig::default(), &input).unwrap();
//! // S9: no terminal line, so the one end-of-input error.
//! assert_eq!(trace.events.len(), 1);
//! ```

use std::collections::BTreeMap;
use std::ops::Range;

pub use proptest;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{Map, Value};

use crate::backend::text::{is_blank, strip_cr};
use crate::event::{Event, EventBody, Kind, Stream, UnknownReason};
use crate::lines::LineSplitter;
use crate::normalizer::{Disposition, Normalizer, NormalizerConfig, PendingToolUse};
use crate::outcome::{Outcome, Status};
use crate::registry::Backend;

/// The message of the `error` a stream without a terminal line ends with (S9).
pub const NO_RESULT: &str = "stream ended without a result";

/// The input of one run: stdout lines, then stderr lines (S10).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Input {
    /// Standard output, one entry per line, without `\n`.
    pub stdout: Vec<Vec<u8>>,
    /// Standard error, one entry per line, without `\n`.
    pub stderr: Vec<Vec<u8>>,
}

impl Input {
    /// Standard output only.
    pub fn stdout(lines: impl IntoIterator<Item = Vec<u8>>) -> Self {
        Input {
            stdout: lines.into_iter().collect(),
            stderr: Vec::new(),
        }
    }

    /// Text lines on standard output only.
    pub fn text<S: AsRef<str>>(lines: impl IntoIterator<Item = S>) -> Self {
        Input::stdout(lines.into_iter().map(|l| l.as_ref().as_bytes().to_vec()))
    }
}

/// What one stdout line did.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The line's 1-based number (J2).
    pub line: u64,
    /// Whether the line is JSON whitespace only, after one trailing `\r` (S1).
    pub blank: bool,
    /// The events pushed while reading it, as indices into [`Trace::events`].
    pub events: Range<usize>,
    /// The tool uses pending before it.
    pub pending_before: Vec<PendingToolUse>,
    /// The tool uses pending after it.
    pub pending_after: Vec<PendingToolUse>,
    /// What the normalizer says became of it.
    pub disposition: Disposition,
}

/// Everything a run did, line by line.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Every event, in the order it was emitted.
    pub events: Vec<Event>,
    /// One step per stdout line.
    pub steps: Vec<Step>,
    /// The events of each stderr line.
    pub stderr_steps: Vec<Range<usize>>,
    /// The tool uses pending just before `finish()`.
    pub pending_at_end: Vec<PendingToolUse>,
    /// The events `finish()` emitted.
    pub finish_events: Range<usize>,
    /// The tool uses pending after `finish()` (must be none).
    pub pending_after_finish: Vec<PendingToolUse>,
    /// The outcome.
    pub outcome: Outcome,
}

impl Trace {
    /// The events of one kind.
    pub fn of_kind(&self, kind: Kind) -> impl Iterator<Item = &Event> + '_ {
        self.events.iter().filter(move |e| e.kind() == kind)
    }

    /// The events carrying this `tool_use_id`.
    pub fn about(&self, id: &str) -> impl Iterator<Item = &Event> + '_ {
        let id = id.to_string();
        self.events
            .iter()
            .filter(move |e| tool_use_id(e) == Some(id.as_str()))
    }
}

/// The `tool_use_id` of an event, when it carries one (J3).
pub fn tool_use_id(event: &Event) -> Option<&str> {
    event.body.tool()?.tool_use_id.as_deref()
}

/// The `unknown` reason of an event, when it is one.
pub fn unknown_reason(event: &Event) -> Option<UnknownReason> {
    match &event.body {
        EventBody::Unknown { reason, .. } => Some(*reason),
        _ => None,
    }
}

fn is_message(event: &Event) -> bool {
    matches!(event.kind(), Kind::Agent | Kind::Reasoning)
}

fn is_started(event: &Event) -> bool {
    event.kind() == Kind::Started
}

/// Runs `input` through a fresh normalizer of `backend`, asking the O4 queries after every
/// line, and records what each line did. Panics only when the normalizer does.
pub fn trace(backend: &dyn Backend, config: &NormalizerConfig, input: &Input) -> Trace {
    let mut normalizer = backend.normalizer(config.clone());
    trace_with(normalizer.as_mut(), input)
}

/// [`trace`] with a normalizer already made (it must be fresh).
pub fn trace_with(normalizer: &mut dyn Normalizer, input: &Input) -> Trace {
    let mut events = Vec::new();
    let mut steps = Vec::with_capacity(input.stdout.len());
    let mut pending = normalizer.pending_tool_uses();
    for (i, line) in input.stdout.iter().enumerate() {
        let start = events.len();
        normalizer.push_line(line, &mut events);
        let after = normalizer.pending_tool_uses();
        let _ = (normalizer.session_id(), normalizer.cwd());
        steps.push(Step {
            line: i as u64 + 1,
            blank: is_blank(strip_cr(line)),
            events: start..events.len(),
            pending_before: std::mem::replace(&mut pending, after.clone()),
            pending_after: after,
            disposition: normalizer.last_disposition(),
        });
    }
    let mut stderr_steps = Vec::with_capacity(input.stderr.len());
    for line in &input.stderr {
        let start = events.len();
        normalizer.push_stderr(line, &mut events);
        stderr_steps.push(start..events.len());
    }
    let pending_at_end = normalizer.pending_tool_uses();
    let start = events.len();
    let outcome = normalizer.finish(&mut events);
    let finish_events = start..events.len();
    let pending_after_finish = normalizer.pending_tool_uses();
    Trace {
        events,
        steps,
        stderr_steps,
        pending_at_end,
        finish_events,
        pending_after_finish,
        outcome,
    }
}

/// Runs `input` and checks every property of this module that a single run can show.
pub fn check_stream(
    backend: &dyn Backend,
    config: &NormalizerConfig,
    input: &Input,
) -> Result<Trace, TestCaseError> {
    let trace = trace(backend, config, input);
    check_counts(&trace)?;
    check_lines(&trace, input)?;
    check_order(&trace)?;
    check_accounting(&trace)?;
    check_settling(&trace)?;
    check_after_finish(backend, config, input)?;
    check_started(backend, config, input, &trace)?;
    Ok(trace)
}

/// L1 and conservation, on the same input with `started` events on:
///
/// - the events other than `started` are exactly those of the run without them (`off`);
/// - every `started` event comes on the line that records its use: that line adds one pending
///   use with its id per `started` event, and every use a line adds is announced so;
/// - every recorded use leaves through an event: a line that settles pending uses of an id
///   emits at least one event of its own (unless every one of them is of a tool the backend
///   names in [`Backend::eventless_tools`]), events naming a pending id settle it (checked by
///   [`check_settling`]), and each use still pending at the end gets its own
///   `unresolved_tool_use` naming it (also [`check_settling`]).
///
/// A backend that silently drops a pending use, for example when its id is reused, fails it.
pub fn check_started(
    backend: &dyn Backend,
    config: &NormalizerConfig,
    input: &Input,
    off: &Trace,
) -> Result<(), TestCaseError> {
    let mut config = config.clone();
    config.started = true;
    let on = trace(backend, &config, input);
    let finals: Vec<&Event> = on.events.iter().filter(|e| !is_started(e)).collect();
    let expected: Vec<&Event> = off.events.iter().collect();
    prop_assert_eq!(
        finals,
        expected,
        "L1: started events changed the other events"
    );
    prop_assert_eq!(
        &on.outcome,
        &off.outcome,
        "L1: started events changed the outcome"
    );
    check_settling(&on)?;
    for step in &on.steps {
        let events = &on.events[step.events.clone()];
        let mut ids: Vec<&str> = step
            .pending_before
            .iter()
            .chain(&step.pending_after)
            .map(|p| p.id.as_str())
            .chain(events.iter().filter_map(tool_use_id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            let before = multiplicity(&step.pending_before, id);
            let after = multiplicity(&step.pending_after, id);
            let started = events
                .iter()
                .filter(|e| is_started(e) && tool_use_id(e) == Some(id))
                .count();
            prop_assert_eq!(
                started,
                after.saturating_sub(before),
                "L1: line {} recorded {} use(s) of {} but announced {}",
                step.line,
                after.saturating_sub(before),
                id,
                started
            );
            let eventless = step.pending_before.iter().filter(|p| p.id == id).all(|p| {
                p.tool
                    .as_deref()
                    .is_some_and(|t| backend.eventless_tools().contains(&t))
            });
            if after < before && !eventless {
                let left = events
                    .iter()
                    .any(|e| !is_started(e) && e.line == Some(step.line));
                prop_assert!(
                    left,
                    "conservation: line {} settled {} without an event",
                    step.line,
                    id
                );
            }
        }
    }
    for event in &on.events[on.finish_events.clone()] {
        prop_assert!(!is_started(event), "L1: a started event at the end");
    }
    Ok(())
}

/// Every property of the kit on one recorded stream: [`check_stream`] on its lines, and
/// [`check_chunking`] on its bytes.
pub fn check_recording(
    backend: &dyn Backend,
    config: &NormalizerConfig,
    stdout: &[u8],
    stderr: &[u8],
) -> Result<(), TestCaseError> {
    let input = Input {
        stdout: split_lines(stdout),
        stderr: split_lines(stderr),
    };
    check_stream(backend, config, &input)?;
    check_chunking(backend, config, stdout, &[7, 1, 4096])
}

/// The kinds of events a shell command's argv gives by C15 and X4, straight from the
/// classifier (an oracle for generated streams, independent of the backends' mapping): one per
/// part when every part is a read, search or listing, else one `command`.
pub fn shell_kinds(argv: &[String]) -> Vec<Kind> {
    use harness_agents_codex_shell::ParsedCommand;

    if argv.is_empty() {
        return vec![Kind::Command];
    }
    let parts = harness_agents_codex_shell::classify(argv);
    let kinds: Vec<Kind> = parts
        .iter()
        .filter_map(|part| match part.parsed {
            ParsedCommand::Read { .. } => Some(Kind::Read),
            ParsedCommand::ListFiles { .. } => Some(Kind::List),
            ParsedCommand::Search { .. } => Some(Kind::Search),
            ParsedCommand::Unknown { .. } => None,
        })
        .collect();
    if kinds.is_empty() || kinds.len() != parts.len() {
        vec![Kind::Command]
    } else {
        kinds
    }
}

/// Each value as one line of compact JSON.
pub fn json_lines(values: &[Value]) -> Vec<Vec<u8>> {
    values
        .iter()
        .map(|v| serde_json::to_vec(v).unwrap_or_default())
        .collect()
}

/// Lines as the CLI splits them (S1).
pub fn split_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut lines = Vec::new();
    let mut splitter = LineSplitter::new();
    splitter.push(bytes, |l| lines.push(l.to_vec()));
    splitter.finish(|l| lines.push(l.to_vec()));
    lines
}

/// The events and outcome of `stdout` lines, then `stderr` lines (S10), then the end of input,
/// through a fresh normalizer.
pub fn normalize_lines(
    normalizer: &mut dyn Normalizer,
    stdout: &[&[u8]],
    stderr: &[&[u8]],
) -> (Vec<Event>, Outcome) {
    let mut events = Vec::new();
    for line in stdout {
        normalizer.push_line(line, &mut events);
    }
    for line in stderr {
        normalizer.push_stderr(line, &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    (events, outcome)
}

/// The [`Disposition`] of each line, in order, through a fresh normalizer.
pub fn dispositions(normalizer: &mut dyn Normalizer, lines: &[&str]) -> Vec<Disposition> {
    let mut events = Vec::new();
    lines
        .iter()
        .map(|line| {
            normalizer.push_line(line.as_bytes(), &mut events);
            normalizer.last_disposition()
        })
        .collect()
}

/// Instantiates the kit's generic properties for a backend as proptest tests, 128 cases each:
/// hostile lines in its vocabulary, arbitrary stdout and stderr lines, arbitrary bytes whole and
/// in chunks, arbitrary JSON values. Each runs [`check_stream`] (every property, `started`
/// events and conservation included) or [`check_chunking`].
///
/// ```ignore
/// harness_agents_core::conformance_kit!(MyHarness, my_config(), types: TYPES, keys: KEYS);
/// ```
#[macro_export]
macro_rules! conformance_kit {
    ($backend:expr, $config:expr, types: $types:expr, keys: $keys:expr $(,)?) => {
        mod conformance_kit {
            use super::*;
            use $crate::testkit::proptest::prelude::*;
            use $crate::testkit::{self as kit, Input};

            $crate::testkit::proptest::proptest! {
                #![proptest_config(ProptestConfig::with_cases(128))]

                /// S8 and every kit property on hostile lines in the backend's vocabulary.
                #[test]
                fn hostile_lines(lines in kit::hostile_lines($types, $keys, 24)) {
                    kit::check_stream(&$backend, &$config, &Input::stdout(lines))?;
                }

                /// S8, S4: arbitrary stdout and stderr lines.
                #[test]
                fn arbitrary_lines(
                    stdout in prop::collection::vec(kit::any_line(80), 0..12),
                    stderr in prop::collection::vec(kit::any_line(24), 0..4),
                ) {
                    kit::check_stream(&$backend, &$config, &Input { stdout, stderr })?;
                }

                /// S1, S6, S8: arbitrary bytes, whole or in chunks.
                #[test]
                fn arbitrary_bytes_in_chunks(
                    bytes in kit::any_bytes(512),
                    chunks in kit::chunk_sizes(),
                ) {
                    kit::check_chunking(&$backend, &$config, &bytes, &chunks)?;
                }

                /// S8: any JSON value as a line.
                #[test]
                fn arbitrary_json_values(values in prop::collection::vec(kit::json_value($keys), 0..8)) {
                    kit::check_stream(&$backend, &$config, &Input::stdout(kit::json_lines(&values)))?;
                }
            }
        }
    };
}

/// The two properties of a backend's generated runs, in one line: each run from `$strategy`
/// (whose text lines are `$lines`, an expression of `$run`) satisfies every kit property and
/// `$check(&run, &trace)`, what the backend's rules say it gives; and it gives the same events
/// however its bytes, the lines joined by `\n`, are split (S1, S6).
///
/// ```ignore
/// harness_agents_core::generated_runs!(MyHarness, my_config(), turn(), |turn| turn.lines, check_turn);
/// ```
#[macro_export]
macro_rules! generated_runs {
    ($backend:expr, $config:expr, $strategy:expr, |$run:ident| $lines:expr, $check:expr $(,)?) => {
        mod generated_runs {
            use super::*;
            use $crate::testkit::proptest::prelude::*;
            use $crate::testkit::{self as kit, Input};

            $crate::testkit::proptest::proptest! {
                #![proptest_config(ProptestConfig::with_cases(128))]

                /// Generated runs give what the rules say, and satisfy every kit property.
                #[test]
                fn produce_what_the_rules_say($run in $strategy) {
                    let trace = kit::check_stream(&$backend, &$config, &Input::text(&$lines))?;
                    $check(&$run, &trace)?;
                }

                /// S1, S6: a generated run gives the same events however its bytes are split.
                #[test]
                fn are_chunk_invariant($run in $strategy, chunks in kit::chunk_sizes()) {
                    let bytes = $lines.join("\n").into_bytes();
                    kit::check_chunking(&$backend, &$config, &bytes, &chunks)?;
                }
            }
        }
    };
}

/// O1: the outcome's `counts` equal the events emitted, kind by kind.
pub fn check_counts(trace: &Trace) -> Result<(), TestCaseError> {
    let mut tally: BTreeMap<Kind, u64> = BTreeMap::new();
    for event in trace.events.iter().filter(|e| !is_started(e)) {
        *tally.entry(event.kind()).or_insert(0) += 1;
    }
    prop_assert_eq!(
        &trace.outcome.counts,
        &tally,
        "O1: counts != events emitted"
    );
    Ok(())
}

/// J2, S4: the line (and stream) every event carries, by where it was made.
pub fn check_lines(trace: &Trace, input: &Input) -> Result<(), TestCaseError> {
    for step in &trace.steps {
        for event in &trace.events[step.events.clone()] {
            prop_assert_eq!(event.stream, None, "stdout line {}: {:?}", step.line, event);
            let Some(line) = event.line else {
                return Err(TestCaseError::fail(format!(
                    "J2: stdout line {} made an event without a line: {event:?}",
                    step.line
                )));
            };
            if is_message(event) {
                prop_assert!(
                    (1..=step.line).contains(&line),
                    "J2: line {} flushed a message from line {}",
                    step.line,
                    line
                );
            } else {
                prop_assert_eq!(line, step.line, "J2: {:?}", event);
            }
        }
    }
    for (i, range) in trace.stderr_steps.iter().enumerate() {
        let events = &trace.events[range.clone()];
        let expected = usize::from(!is_blank(strip_cr(&input.stderr[i])));
        prop_assert_eq!(events.len(), expected, "S4: stderr line {}", i + 1);
        for event in events {
            prop_assert_eq!(event.stream, Some(Stream::Stderr));
            prop_assert_eq!(event.line, Some(i as u64 + 1));
            prop_assert_eq!(event.kind(), Kind::Warning);
        }
    }
    let last = trace.steps.len() as u64;
    for event in &trace.events[trace.finish_events.clone()] {
        prop_assert_eq!(event.stream, None);
        if is_message(event) {
            prop_assert!(event.line.is_some_and(|l| (1..=last).contains(&l)));
        } else {
            prop_assert_eq!(event.line, None, "J2: end-of-input event {:?}", event);
        }
    }
    Ok(())
}

/// S6: stdout events other than `agent` and `reasoning` in non-decreasing `line` order.
pub fn check_order(trace: &Trace) -> Result<(), TestCaseError> {
    let mut previous = 0;
    for event in &trace.events {
        if event.stream.is_some() || is_message(event) {
            continue;
        }
        if let Some(line) = event.line {
            prop_assert!(
                line >= previous,
                "S6: line {} after line {}: {:?}",
                line,
                previous,
                event
            );
            previous = line;
        }
    }
    Ok(())
}

/// Accounting: every stdout line's disposition agrees with what it did.
pub fn check_accounting(trace: &Trace) -> Result<(), TestCaseError> {
    for step in &trace.steps {
        // A message flushed by this line carries an earlier line (C4, J2): not its own.
        // A `started` event announces a use the line recorded: not a final event (L1).
        let own = trace.events[step.events.clone()]
            .iter()
            .any(|e| e.line == Some(step.line) && !is_started(e));
        let disposition = step.disposition;
        prop_assert_eq!(
            step.blank,
            disposition == Disposition::Blank,
            "S1: line {} is {:?}",
            step.line,
            disposition
        );
        if step.blank {
            prop_assert!(
                step.events.is_empty(),
                "S1: blank line {} emitted",
                step.line
            );
        }
        match disposition {
            Disposition::Emitted => {
                prop_assert!(own, "line {} says Emitted but made no event", step.line);
            }
            Disposition::Deferred | Disposition::Consumed(_) | Disposition::Blank => {
                prop_assert!(
                    !own,
                    "line {} made an event but says {:?}",
                    step.line,
                    disposition
                );
            }
            // A terminal line may also report an error (C7, X7).
            Disposition::Outcome => {}
        }
        if let Disposition::Consumed(rule) = disposition {
            let mut chars = rule.chars();
            let named = chars.next().is_some_and(|c| c.is_ascii_uppercase())
                && chars.clone().next().is_some()
                && chars.all(|c| c.is_ascii_alphanumeric());
            prop_assert!(
                named,
                "line {}: consumed by no rule ({:?})",
                step.line,
                rule
            );
        }
    }
    Ok(())
}

fn multiplicity(pending: &[PendingToolUse], id: &str) -> usize {
    pending.iter().filter(|p| p.id == id).count()
}

/// C9, S9, X8: events about a pending use only when it is settled; everything settled at the
/// end, once, in order.
pub fn check_settling(trace: &Trace) -> Result<(), TestCaseError> {
    for step in &trace.steps {
        for event in &trace.events[step.events.clone()] {
            let Some(id) = tool_use_id(event).filter(|_| !is_started(event)) else {
                continue;
            };
            prop_assert_ne!(
                unknown_reason(event),
                Some(UnknownReason::UnresolvedToolUse),
                "S9: unresolved before the end"
            );
            let before = multiplicity(&step.pending_before, id);
            if before > 0 {
                prop_assert!(
                    multiplicity(&step.pending_after, id) < before,
                    "C9: line {} emitted {:?} about pending use {} without settling it",
                    step.line,
                    event,
                    id
                );
            }
        }
    }
    prop_assert!(
        trace.pending_after_finish.is_empty(),
        "S9: still pending after finish: {:?}",
        trace.pending_after_finish
    );
    let finish = &trace.events[trace.finish_events.clone()];
    let unresolved: Vec<(Option<&str>, Option<&str>, Option<&str>)> = finish
        .iter()
        .filter(|e| unknown_reason(e) == Some(UnknownReason::UnresolvedToolUse))
        .map(|e| {
            let tool = match &e.body {
                EventBody::Unknown { tool, .. } => tool.tool.as_deref(),
                _ => None,
            };
            (tool_use_id(e), tool, e.parent_tool_use_id.as_deref())
        })
        .collect();
    let pending: Vec<(Option<&str>, Option<&str>, Option<&str>)> = trace
        .pending_at_end
        .iter()
        .map(|p| {
            let thread = p.thread.as_deref().filter(|t| !t.is_empty());
            (Some(p.id.as_str()), p.tool.as_deref(), thread)
        })
        .collect();
    prop_assert_eq!(
        unresolved,
        pending,
        "S9/X8: unresolved events != pending uses"
    );
    let others: Vec<&Event> = finish
        .iter()
        .filter(|e| !is_message(e) && unknown_reason(e) != Some(UnknownReason::UnresolvedToolUse))
        .collect();
    if trace.outcome.status == Status::Incomplete {
        prop_assert_eq!(others.len(), 1, "S9: {:?}", others);
        prop_assert_eq!(
            &others[0].body,
            &EventBody::Error {
                message: NO_RESULT.to_string()
            }
        );
        prop_assert!(finish.last() == Some(others[0]), "S9: the error comes last");
    } else {
        prop_assert!(others.is_empty(), "S9: {:?}", others);
    }
    Ok(())
}

/// After `finish()`, lines and a second `finish()` add no events and change nothing.
pub fn check_after_finish(
    backend: &dyn Backend,
    config: &NormalizerConfig,
    input: &Input,
) -> Result<(), TestCaseError> {
    let mut normalizer = backend.normalizer(config.clone());
    let mut events = Vec::new();
    for line in &input.stdout {
        normalizer.push_line(line, &mut events);
    }
    let outcome = normalizer.finish(&mut events);
    let emitted = events.len();
    for line in input.stdout.iter().take(4) {
        normalizer.push_line(line, &mut events);
        normalizer.push_stderr(line, &mut events);
    }
    let again = normalizer.finish(&mut events);
    prop_assert_eq!(events.len(), emitted, "events after finish");
    prop_assert_eq!(again, outcome, "a second finish changed the outcome");
    Ok(())
}

/// The events and outcome of `bytes` read in chunks of the given sizes (cycled; the rest in
/// one chunk when `chunks` is empty), split by [`LineSplitter`], stdout only.
pub fn normalize_chunked(
    backend: &dyn Backend,
    config: &NormalizerConfig,
    bytes: &[u8],
    chunks: &[usize],
) -> (Vec<Event>, Outcome) {
    let mut normalizer = backend.normalizer(config.clone());
    let mut events = Vec::new();
    let mut splitter = LineSplitter::new();
    let mut rest = bytes;
    let mut sizes = chunks.iter().cycle();
    while !rest.is_empty() {
        let size = sizes
            .next()
            .copied()
            .unwrap_or(rest.len())
            .clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        splitter.push(chunk, |line| normalizer.push_line(line, &mut events));
        rest = tail;
    }
    splitter.finish(|line| normalizer.push_line(line, &mut events));
    let outcome = normalizer.finish(&mut events);
    (events, outcome)
}

/// S1, S6: the same bytes, whole or split into chunks, give the same events and outcome.
pub fn check_chunking(
    backend: &dyn Backend,
    config: &NormalizerConfig,
    bytes: &[u8],
    chunks: &[usize],
) -> Result<(), TestCaseError> {
    let whole = normalize_chunked(backend, config, bytes, &[]);
    let split = normalize_chunked(backend, config, bytes, chunks);
    prop_assert_eq!(&whole.0, &split.0, "S6: events depend on chunking");
    prop_assert_eq!(&whole.1, &split.1, "S6: outcome depends on chunking");
    let bytewise = normalize_chunked(backend, config, bytes, &[1]);
    prop_assert_eq!(&whole.0, &bytewise.0, "S6: events differ fed byte by byte");
    Ok(())
}

// ---- strategies ----

/// Any bytes, with line ends, `\r`, braces and quotes made likely.
pub fn any_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => any::<u8>(),
        1 => prop::sample::select(b"\n\r{}[]\":, \t\\".to_vec()),
    ];
    prop::collection::vec(byte, 0..max)
}

/// One line of any bytes but `\n`.
pub fn any_line(max: usize) -> impl Strategy<Value = Vec<u8>> {
    any_bytes(max).prop_map(|mut bytes| {
        bytes.retain(|&b| b != b'\n');
        bytes
    })
}

/// Chunk sizes for [`check_chunking`].
pub fn chunk_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..48, 1..8)
}

/// Any JSON value, with keys drawn from `keys` (and a few others) so objects look like the
/// backend's and reach deep into its decoding.
pub fn json_value(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        6 => prop::sample::select(keys),
        1 => prop::sample::select(&["", "id", "type", "\u{0}", "é"][..]),
    ]
    .prop_map(str::to_string);
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(keys).prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key.clone(), inner), 0..6)
                .prop_map(|fields| Value::Object(fields.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An event-like object: `"type"` from `types` (now and then of another JSON type), other
/// fields from [`json_value`], serialized as one line.
pub fn event_line(
    types: &'static [&'static str],
    keys: &'static [&'static str],
) -> impl Strategy<Value = Vec<u8>> {
    let kind = prop_oneof![
        8 => prop::sample::select(types).prop_map(Value::from),
        1 => json_value(keys),
    ];
    let fields = prop::collection::vec((prop::sample::select(keys), json_value(keys)), 0..5);
    (kind, fields).prop_map(|(kind, fields)| {
        let mut object = Map::new();
        for (key, value) in fields {
            object.insert(key.to_string(), value);
        }
        object.insert("type".to_string(), kind);
        serde_json::to_vec(&Value::Object(object)).unwrap_or_default()
    })
}

/// Blank lines (S1) and near-blank ones that are not.
const ODD_LINES: &[&[u8]] = &[
    b"",
    b"  ",
    b"\r",
    b" \t\r",
    b"\x0c",
    b"\xef\xbb\xbf{}",
    b"\xc2\xa0",
];

/// Lines of a hostile stream: event-like objects, any JSON, any bytes, blank lines.
pub fn hostile_lines(
    types: &'static [&'static str],
    keys: &'static [&'static str],
    max_lines: usize,
) -> impl Strategy<Value = Vec<Vec<u8>>> {
    let line = prop_oneof![
        6 => event_line(types, keys),
        2 => json_value(keys).prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        2 => any_line(64),
        1 => prop::sample::select(ODD_LINES).prop_map(<[u8]>::to_vec),
    ];
    prop::collection::vec(line, 0..max_lines)
}
