//! What a caller drives one stream through: the [`Normalizer`] every backend gives, the
//! settings it takes ([`NormalizerConfig`]), the tool uses it holds ([`PendingToolUse`]) and
//! what became of each line ([`Disposition`]).

use crate::event::Event;
use crate::outcome::Outcome;

/// Settings a normalizer takes before the first line.
///
/// ```
/// let mut config = harness_agents_core::NormalizerConfig::default();
/// config.cwd = Some("/repo".into());
/// config.started = true;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct NormalizerConfig {
    /// The working directory to resolve relative paths against when the stream names none
    /// (C14a, X9): the CLI's `--cwd`.
    pub cwd: Option<String>,
    /// Where skills live (C14a): the CLI's `--workspace`.
    pub workspace: Option<String>,
    /// Emit a `started` event as soon as a tool use is recorded (L1): the CLI's `--started`.
    /// Off by default, so a recorded stream gives exactly the events of the other rules.
    pub started: bool,
    /// The stream is a session's (SPEC section 8): the lines only a session has (permission
    /// requests, answers to the session's control requests) follow the backend's session
    /// rules (such as CS1-CS4 for Claude Code). Off for a run, whose lines follow the run
    /// rules alone, so such a line in a run stays an `unknown` event as the C rules say.
    pub session: bool,
}

impl NormalizerConfig {
    /// Settings that resolve relative paths against `cwd` (C14a, X9), nothing else set.
    ///
    /// ```
    /// let config = harness_agents_core::NormalizerConfig::with_cwd("/repo");
    /// assert_eq!(config.cwd.as_deref(), Some("/repo"));
    /// assert!(config.workspace.is_none() && !config.started);
    /// ```
    pub fn with_cwd(cwd: impl Into<String>) -> Self {
        NormalizerConfig {
            cwd: Some(cwd.into()),
            ..NormalizerConfig::default()
        }
    }
}

/// A tool use still waiting for its result (O4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingToolUse {
    /// The tool use's id.
    pub id: String,
    /// The tool's name, when the use named one.
    pub tool: Option<String>,
    /// The sub-agent thread it belongs to (`None` for the main thread).
    pub thread: Option<String>,
}

impl PendingToolUse {
    /// The use `id` of `tool`, in the main thread.
    ///
    /// ```
    /// let tool_use = harness_agents_core::PendingToolUse::new("t1", Some("read"));
    /// assert_eq!((tool_use.id.as_str(), tool_use.tool.as_deref()), ("t1", Some("read")));
    /// assert_eq!(tool_use.thread, None);
    /// ```
    pub fn new(id: &str, tool: Option<&str>) -> Self {
        PendingToolUse {
            id: id.to_string(),
            tool: tool.map(str::to_string),
            thread: None,
        }
    }
}

/// What became of one stdout line: every non-blank line is accounted for (SPEC: "every input
/// line is accounted for"). Tests use it to prove that no line is silently lost.
///
/// When a line did several things, the first that applies in this order is reported:
/// `Emitted`, `Deferred`, `Outcome`, `Consumed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Disposition {
    /// Only JSON whitespace: skipped (S1).
    #[default]
    Blank,
    /// The line itself produced at least one event (events it merely flushed, such as an
    /// earlier message completed by it, do not count).
    Emitted,
    /// It fed pending state that produces events later: message text being assembled, a
    /// recorded tool use or item.
    Deferred,
    /// A terminal line: it fed the outcome.
    Outcome,
    /// Consumed with no event by the rule named (a SPEC rule id such as `"C8"`).
    Consumed(&'static str),
}

/// A pure, incremental decoder of one backend's output: lines in, events out.
///
/// It never does I/O and never fails: every input line becomes events the SPEC names (S8).
/// Events are appended to `out`, so a caller can reuse one buffer for a whole stream.
pub trait Normalizer: Send {
    /// Feeds one line of standard output, without its `\n` (a trailing `\r` is dropped here, S1).
    /// Line numbers count every call, blank lines included (J2).
    fn push_line(&mut self, line: &[u8], out: &mut Vec<Event>);

    /// Feeds one line of standard error, without its `\n` (S4).
    fn push_stderr(&mut self, line: &[u8], out: &mut Vec<Event>);

    /// Ends the input, handing each end-of-input event (S9) to `emit` as soon as it is made,
    /// and returns the outcome. A stream that ends with a million pending tool uses then never
    /// holds all their `unresolved_tool_use` events at once. Lines pushed after this are
    /// ignored; a second call emits nothing and returns the outcome again.
    fn finish_each(&mut self, emit: &mut dyn FnMut(Event)) -> Outcome;

    /// Ends the input like [`Normalizer::finish_each`], appending the end-of-input events to
    /// `out`.
    fn finish(&mut self, out: &mut Vec<Event>) -> Outcome {
        self.finish_each(&mut |event| out.push(event))
    }

    /// Ends the current turn of a session (I3) and returns its outcome: the counts, status and
    /// final answer of what came since the previous turn's end (or the start), the session id,
    /// and the backend's figures for the turn (marked `cumulative` where it only reports the
    /// session's totals). `turn` is left to the session, which numbers the turns. Unlike
    /// [`Normalizer::finish_each`] it ends nothing: line numbers go on (J2), a tool use without
    /// its result stays pending, and a turn without a terminal line is `incomplete`.
    fn end_turn(&mut self) -> Outcome;

    /// What became of the last stdout line pushed ([`Disposition::Blank`] before any).
    fn last_disposition(&self) -> Disposition;

    /// The session id seen so far (S5, O4).
    fn session_id(&self) -> Option<&str>;

    /// The working directory in effect (O4).
    fn cwd(&self) -> Option<&str>;

    /// The tool uses still waiting for their results, in the order they were recorded (O4).
    fn pending_tool_uses(&self) -> Vec<PendingToolUse>;
}
