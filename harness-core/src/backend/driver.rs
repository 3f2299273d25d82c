//! The one normalizer every backend gets: a [`Driver`] around the backend's [`Decoder`].
//!
//! The driver owns every invariant that is not about a backend's vocabulary: line numbers (J2),
//! blank lines and the trailing `\r` (S1), non-JSON and standard-error warnings (S2, S4), each
//! line's [`Disposition`], the event counts (O1), the `started` switch (L1), finish-once, and the
//! `stream ended without a result` error (S9). A backend writes only its decoding and mapping.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::ledger::Ledger;
use crate::event::{Decision, Event, EventBody, Expected, Kind, ToolRef, UnknownReason};
use crate::normalizer::{Disposition, Normalizer, NormalizerConfig, PendingToolUse};
use crate::outcome::{Metrics, Outcome, Status};

/// A stdout line that is not JSON (S2): the driver turns it into a `warning` with source
/// `non_json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotJson;

/// Parses a line into a `serde_json::Value`, the SPEC's definition of a JSON line (S2).
///
/// ```
/// use harness_agents_core::backend::{NotJson, parse_value};
///
/// assert!(parse_value(br#"{"type":"x"}"#).is_ok());
/// assert_eq!(parse_value(b"[1e400]"), Err(NotJson));
/// ```
pub fn parse_value(line: &[u8]) -> Result<Value, NotJson> {
    serde_json::from_slice(line).map_err(|_| NotJson)
}

/// JSON the decoder already checked (a line, or a piece of one) parsed again into a `Value`,
/// for an event that carries it as `raw` (J8); `null` should that ever fail, never a panic.
///
/// ```
/// use harness_agents_core::backend::reparse;
///
/// assert_eq!(reparse(br#"{"a":1}"#)["a"], 1);
/// assert_eq!(reparse("{"), serde_json::Value::Null);
/// ```
pub fn reparse(json: impl AsRef<[u8]>) -> Value {
    serde_json::from_slice(json.as_ref()).unwrap_or(Value::Null)
}

/// The `raw` of an `unknown` event about one tool use (J8): `{"tool_use": U, "tool_result":
/// R}`, the line or block that recorded the use and the one that carried its result (`null`
/// for the one that did not come), built by moving both values in (`json!` would copy each).
///
/// ```
/// use harness_agents_core::backend::tool_raw;
/// use serde_json::{Value, json};
///
/// let raw = tool_raw(json!({"id": "t1"}), Value::Null);
/// assert_eq!(raw, json!({"tool_use": {"id": "t1"}, "tool_result": null}));
/// ```
pub fn tool_raw(tool_use: Value, tool_result: Value) -> Value {
    let mut raw = serde_json::Map::new();
    raw.insert("tool_use".to_string(), tool_use);
    raw.insert("tool_result".to_string(), tool_result);
    Value::Object(raw)
}

/// Adds a reported figure to the outcome's sum of it (O1 metrics): a number only; a figure
/// that is absent or of another type leaves the sum as it is ([`add_numbers`]).
///
/// ```
/// use harness_agents_core::backend::add_figure;
/// use harness_agents_core::backend::json::Loose;
///
/// let mut sum = None;
/// add_figure(&mut sum, Some(&Loose::Number(2.into())));
/// add_figure(&mut sum, Some(&Loose::Str("3".into())));
/// add_figure(&mut sum, None);
/// add_figure(&mut sum, Some(&Loose::Number(5.into())));
/// assert_eq!(sum, Some(7.into()));
/// ```
///
/// [`add_numbers`]: crate::outcome::add_numbers
pub fn add_figure(sum: &mut Option<serde_json::Number>, figure: Option<&super::json::Loose<'_>>) {
    if let Some(super::json::Loose::Number(n)) = figure {
        *sum = Some(match sum {
            Some(s) => crate::outcome::add_numbers(s, n),
            None => n.clone(),
        });
    }
}

/// Whether `line`'s top-level `type` is one of `types`: [`crate::Backend::recognizes`] for a
/// backend whose line types no other backend prints.
///
/// ```
/// use harness_agents_core::backend::has_type;
/// use serde_json::json;
///
/// assert!(has_type(&json!({"type": "say"}), &["say", "read"]));
/// assert!(!has_type(&json!({"type": "error"}), &["say", "read"]));
/// assert!(!has_type(&json!({"kind": "say"}), &["say"]));
/// ```
pub fn has_type(line: &Value, types: &[&str]) -> bool {
    let kind = line.get("type").and_then(Value::as_str);
    kind.is_some_and(|kind| types.contains(&kind))
}

/// The deepest nesting `serde_json`'s default reader takes: 128 levels are refused (S2).
const MAX_DEPTH: usize = 127;

/// How deep arrays and objects nest in `value` (a scalar is 0).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// J11: an `unknown` event whose `raw` would nest deeper than 127 levels in the written line
/// (the event object being level 1) carries `raw` as a string instead, the compact JSON text
/// of the value, so every line can be read back.
fn fit_depth(event: &mut Event) {
    if let EventBody::Unknown { raw, .. } = &mut event.body {
        if 1 + depth(raw) > MAX_DEPTH {
            *raw = Value::String(raw.to_string());
        }
    }
}

/// What a backend adds to the outcome: its figures. The driver adds what every backend tracks
/// the same way (the session id, the status, the final answer, through the [`Emitter`]) and
/// the counts (O1), the live runner the exit code.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Summary {
    /// The agent's structured output (O1).
    pub structured_output: Option<Value>,
    /// Usage and timing figures (O2, O3).
    pub metrics: Metrics,
    /// The names of the `metrics` figures computed rather than reported (the outcome's
    /// `computed`).
    pub computed: Vec<String>,
}

impl Summary {
    /// A summary of these figures.
    pub fn new(metrics: Metrics) -> Self {
        Summary {
            structured_output: None,
            metrics,
            computed: Vec::new(),
        }
    }
}

/// A backend's decoding: one line in, events out through an [`Emitter`]. Wrapped in a
/// [`Driver`], it is a [`Normalizer`].
///
/// One method is required, [`Decoder::line`]; the rest have defaults. A decoder starts as its
/// `Default` and takes what it needs from the caller's settings in [`Decoder::configure`]. It
/// never does I/O and never fails: a line it cannot read is an event the SPEC names, or
/// [`NotJson`].
///
/// ```
/// use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson, parse_value};
/// use harness_agents_core::{EventBody, Normalizer, NormalizerConfig, Status};
///
/// /// Each line `{"say": TEXT}` is an `agent` event; `{"done": true}` ends the run.
/// #[derive(Default)]
/// struct Echo;
///
/// impl Decoder for Echo {
///     fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
///         let value = parse_value(line)?;
///         if let Some(text) = value.get("say").and_then(|t| t.as_str()) {
///             out.emit(EventBody::Agent { text: text.into() });
///         } else if value.get("done").is_some() {
///             out.terminal();
///         } else {
///             out.consumed_by("E1");
///         }
///         Ok(())
///     }
/// }
///
/// let mut normalizer = Driver::<Echo>::new(NormalizerConfig::default());
/// let mut events = Vec::new();
/// normalizer.push_line(br#"{"say":"hi"}"#, &mut events);
/// normalizer.push_line(b"oops", &mut events); // S2: a non_json warning, made by the driver
/// normalizer.push_line(br#"{"done":true}"#, &mut events);
/// let outcome = normalizer.finish(&mut events);
/// assert_eq!(events.len(), 2);
/// assert_eq!(events[1].line, Some(2));
/// assert_eq!(outcome.status, Status::Success);
/// ```
pub trait Decoder: Default + Send + Sized + 'static {
    /// Whether the format ends with a terminal line. A stored session (a transcript) has none:
    /// the driver then adds no S9 error at its end, and its status is `success` unless the
    /// decoder reports a failure ([`Emitter::fail`]).
    const EXPECTS_TERMINAL: bool = true;

    /// Takes what the decoder needs from the caller's settings (working directory, workspace)
    /// before the first line; nothing by default.
    fn configure(&mut self, config: &NormalizerConfig) {
        let _ = config;
    }

    /// A decoder for one stream, with the caller's settings: its `Default`, configured.
    fn new(config: &NormalizerConfig) -> Self {
        let mut decoder = Self::default();
        decoder.configure(config);
        decoder
    }

    /// Decodes one stdout line: never blank, its trailing `\r` already dropped (S1). Events go
    /// through `out`; a line that is not JSON returns [`NotJson`] (S2) and emits nothing.
    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson>;

    /// Decodes one line the exact way alone, without the decoder's fast path: what its fast
    /// path must agree with (S2). [`Decoder::line`] by default; a decoder with a fast path
    /// gives its reference path here, and [`ExactOnly`] makes a decoder of it for tests.
    fn exact_line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        self.line(line, out)
    }

    /// End of input (S9): emits what is still pending (messages being assembled, tool uses
    /// without a result as `unresolved_tool_use`), one event at a time, freeing each as it goes.
    /// Called once. The driver then adds the S9 error when no terminal line arrived.
    fn end(&mut self, out: &mut Emitter<'_>) {
        let _ = out;
    }

    /// The backend's figures for the outcome, at any time; none by default. The session id,
    /// the failure and the final answer go through the [`Emitter`] as the lines say them.
    fn summary(&self) -> Summary {
        Summary::default()
    }

    /// The backend's figures for the turn of a session that just ended (I3). By default the
    /// figures of [`Decoder::summary`], which cover the session so far, marked
    /// `cumulative`; a decoder that can tell a turn's own figures gives them here (and starts
    /// the next turn's).
    fn turn_summary(&mut self) -> Summary {
        let mut summary = self.summary();
        summary.metrics.cumulative = true;
        summary
    }

    /// The working directory the stream itself named (O4); the driver falls back to the
    /// configured one.
    fn cwd(&self) -> Option<&str> {
        None
    }

    /// The tool uses still waiting for their results, in the order they were recorded (O4).
    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        Vec::new()
    }
}

/// A decoder that reads every line through `D`'s [`Decoder::exact_line`], its fast path
/// turned off, and is `D` in everything else: the reference a fast path is tested against.
///
/// ```
/// use harness_agents_core::backend::{Decoder, Driver, Emitter, ExactOnly, NotJson};
/// use harness_agents_core::{EventBody, Normalizer, NormalizerConfig};
///
/// #[derive(Default)]
/// struct Shouts;
/// impl Decoder for Shouts {
///     fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
///         let text = String::from_utf8_lossy(line).to_uppercase();
///         out.emit(EventBody::Agent { text: text.into() });
///         Ok(())
///     }
///     fn exact_line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
///         let text = String::from_utf8_lossy(line).to_string();
///         out.emit(EventBody::Agent { text: text.into() });
///         Ok(())
///     }
/// }
///
/// let mut exact = Driver::<ExactOnly<Shouts>>::new(NormalizerConfig::default());
/// let mut events = Vec::new();
/// exact.push_line(b"hi", &mut events);
/// assert!(matches!(&events[0].body, EventBody::Agent { text } if &**text == "hi"));
/// ```
#[derive(Debug, Default)]
pub struct ExactOnly<D>(pub D);

impl<D: Decoder> Decoder for ExactOnly<D> {
    const EXPECTS_TERMINAL: bool = D::EXPECTS_TERMINAL;

    fn configure(&mut self, config: &NormalizerConfig) {
        self.0.configure(config);
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        self.0.exact_line(line, out)
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.0.end(out);
    }

    fn summary(&self) -> Summary {
        self.0.summary()
    }

    fn cwd(&self) -> Option<&str> {
        self.0.cwd()
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.0.pending_tool_uses()
    }
}

/// What every decoder tracks the same way, kept by the driver for the outcome (O1, O4).
#[derive(Debug, Default)]
struct Facts {
    /// The first session id the stream named (S5).
    session_id: Option<String>,
    /// Whether the run reported a failure.
    failed: bool,
    /// The agent's final answer so far. One field, so its type can change in one place.
    final_output: Option<Arc<str>>,
    /// Whether the current turn of a session reported a failure (I3).
    turn_failed: bool,
    /// Whether the current turn of a session set the final answer (I3).
    turn_answered: bool,
}

/// Where a decoder's events go, with the bookkeeping of the line being read and the outcome's
/// shared facts (session id, failure, final answer).
pub struct Emitter<'a> {
    ledger: &'a mut Ledger,
    facts: &'a mut Facts,
    sink: &'a mut dyn FnMut(Event),
    /// The current stdout line; `None` at end of input (J2).
    line: Option<u64>,
    started: bool,
}

impl Emitter<'_> {
    /// The current stdout line's number (J2); `None` at end of input.
    pub fn line(&self) -> Option<u64> {
        self.line
    }

    /// Emits an event of the current line (`line` set, J2; none at end of input).
    pub fn emit(&mut self, body: EventBody) {
        self.emit_in(body, None);
    }

    /// Emits an event of the current line made inside sub-agent `parent` (J4).
    pub fn emit_in(&mut self, body: EventBody, parent: Option<String>) {
        let mut event = Event::new(body).with_parent(parent);
        if let Some(line) = self.line {
            event = event.at_line(line);
            self.ledger.mark_emitted();
        }
        self.event(event);
    }

    /// Emits an event the decoder assembled over earlier lines (a message, C4, P3, G3), on
    /// `line`, the last line that added to it (J2): no line when `None`. It does not count as
    /// the current line's own event.
    pub fn emit_at(&mut self, body: EventBody, line: Option<u64>) {
        self.emit_at_in(body, line, None);
    }

    /// [`Emitter::emit_at`] for an event made inside sub-agent `parent` (J4).
    pub fn emit_at_in(&mut self, body: EventBody, line: Option<u64>, parent: Option<String>) {
        let mut event = Event::new(body).with_parent(parent);
        if let Some(line) = line {
            event = event.at_line(line);
        }
        self.event(event);
    }

    /// Emits an `unknown` event of the current line that names no tool use (S3, J8): `raw` is
    /// what the backend could not map.
    pub fn unknown(&mut self, reason: UnknownReason, raw: Value) {
        self.unknown_of(reason, raw, ToolRef::default());
    }

    /// [`Emitter::unknown`] about the tool use `tool` (an unpaired result, a malformed or
    /// unknown tool).
    pub fn unknown_of(&mut self, reason: UnknownReason, raw: Value, tool: ToolRef) {
        self.emit(EventBody::Unknown { reason, raw, tool });
    }

    /// [`Emitter::unknown`] made inside sub-agent `parent` (J4).
    pub fn unknown_in(&mut self, reason: UnknownReason, raw: Value, parent: Option<String>) {
        let tool = ToolRef::default();
        self.emit_in(EventBody::Unknown { reason, raw, tool }, parent);
    }

    /// Says the run failed ([`Emitter::fail`]) with an `error` event of the current line.
    pub fn error(&mut self, message: String) {
        self.fail();
        self.emit(EventBody::Error { message });
    }

    /// Emits an event made whole by the decoder, such as a message the line completed, whose
    /// `line` is an earlier one (C4). It does not count as the current line's own event.
    pub fn event(&mut self, mut event: Event) {
        fit_depth(&mut event);
        self.ledger.count(&event);
        (self.sink)(event);
    }

    /// Whether `started` events are wanted (L1); a decoder may skip the work of making one.
    pub fn wants_started(&self) -> bool {
        self.started
    }

    /// L1: a tool use was recorded on the current line; emitted only when `started` events are
    /// wanted, and never counted.
    pub fn started(
        &mut self,
        tool: ToolRef,
        command: Option<String>,
        expect: Vec<Expected>,
        parent: Option<String>,
    ) {
        if !self.started {
            return;
        }
        let body = EventBody::Started {
            command,
            expect,
            tool,
        };
        let mut event = Event::new(body).with_parent(parent);
        if let Some(line) = self.line {
            event = event.at_line(line);
        }
        (self.sink)(event);
    }

    /// L1, from the events the tool use would give on success (made by the backend's own tool
    /// map): their `command` and what each is expected to be.
    ///
    /// ```
    /// # use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson};
    /// # use harness_agents_core::{EventBody, Kind, Normalizer, NormalizerConfig, ToolRef, ToolStatus};
    /// # #[derive(Default)]
    /// # struct Reads;
    /// # impl Decoder for Reads {
    /// #     fn line(&mut self, _: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
    /// let tool = ToolRef { tool: Some("read".into()), tool_use_id: Some("t1".into()) };
    /// let status = ToolStatus { success: true, error: None };
    /// let would_be = [EventBody::Read { path: "/a".into(), range: None, command: None, status, tool: tool.clone() }];
    /// out.started_from(tool, &would_be, None);
    /// #         out.defer();
    /// #         Ok(())
    /// #     }
    /// # }
    /// # let mut config = NormalizerConfig::default();
    /// # config.started = true;
    /// # let mut normalizer = Driver::<Reads>::new(config);
    /// # let mut events = Vec::new();
    /// # normalizer.push_line(b"{}", &mut events);
    /// # let EventBody::Started { expect, .. } = &events[0].body else { panic!() };
    /// # assert_eq!(expect[0].kind, Kind::Read);
    /// # assert_eq!(expect[0].path.as_deref(), Some("/a"));
    /// ```
    pub fn started_from(&mut self, tool: ToolRef, would_be: &[EventBody], parent: Option<String>) {
        if !self.started {
            return;
        }
        let (command, expect) = foresee(would_be);
        self.started(tool, command, expect, parent);
    }

    /// Emits a `permission` event of the current line (I4): the agent's request `id` to use
    /// `tool` with `input`, offering `options`. `would_be` is what the tool use would give on
    /// success, as for [`Emitter::started_from`]: it names the command and its classification,
    /// or the file a file tool works on. Unlike `started`, it is always emitted and counted.
    pub fn permission(&mut self, request: PermissionRequest, parent: Option<String>) {
        let PermissionRequest {
            id,
            options,
            tool,
            input,
            would_be,
        } = request;
        let (command, expect) = foresee(&would_be);
        let path = match &command {
            Some(_) => None,
            None => expect.first().and_then(|e| e.path.clone()),
        };
        let body = EventBody::Permission {
            id,
            options,
            path,
            command,
            expect,
            input,
            tool,
        };
        self.emit_in(body, parent);
    }

    /// The stream named its session id (S5, O4): the first one named is the outcome's.
    pub fn session_id(&mut self, id: &str) {
        if self.facts.session_id.is_none() {
            self.facts.session_id = Some(id.to_string());
        }
    }

    /// The session id named so far.
    pub fn current_session_id(&self) -> Option<&str> {
        self.facts.session_id.as_deref()
    }

    /// The run reported a failure: the outcome's status is `error`. Otherwise it is `success`
    /// when a terminal line arrived ([`Emitter::terminal`]), else `incomplete` (O1).
    pub fn fail(&mut self) {
        self.facts.failed = true;
        self.facts.turn_failed = true;
    }

    /// The agent's final answer so far (O1), replacing any earlier one; `None` clears it. Give
    /// an `Arc::clone` of the last `agent` event's text rather than a copy (S7).
    pub fn final_output(&mut self, text: Option<Arc<str>>) {
        self.facts.final_output = text;
        self.facts.turn_answered = true;
    }

    /// S9, O4: a tool use still pending at the end of input, as an `unknown` event with reason
    /// `unresolved_tool_use` (in its sub-agent thread, J4), its `raw` what the stream said of it.
    pub fn unresolved(&mut self, tool_use: PendingToolUse, raw: Value) {
        let body = EventBody::Unknown {
            reason: UnknownReason::UnresolvedToolUse,
            raw,
            tool: ToolRef {
                tool: tool_use.tool,
                tool_use_id: Some(tool_use.id),
            },
        };
        self.emit_in(body, tool_use.thread);
    }

    /// The current line fed pending state that produces events later.
    pub fn defer(&mut self) {
        self.ledger.defer();
    }

    /// The current line is terminal: it fed the outcome (O1, S9).
    pub fn terminal(&mut self) {
        self.ledger.terminal();
    }

    /// Names the rule that consumes the current line when it yields nothing else.
    pub fn consumed_by(&mut self, rule: &'static str) {
        self.ledger.consumed_by(rule);
    }
}

/// A permission request as a backend read it, for [`Emitter::permission`].
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionRequest {
    /// The agent's id of the request, which the caller's answer names.
    pub id: String,
    /// The decisions the agent accepts.
    pub options: Vec<Decision>,
    /// The tool's name and its use's id.
    pub tool: ToolRef,
    /// The tool's input as the agent gave it.
    pub input: Option<Value>,
    /// What the tool use would give on success (the backend's mapping of it); empty when the
    /// backend does not map the tool.
    pub would_be: Vec<EventBody>,
}

/// The shell command and the expected events of a tool use, from what it would give: the
/// fields a `started` or a `permission` event carries.
fn foresee(would_be: &[EventBody]) -> (Option<String>, Vec<Expected>) {
    let command = would_be.iter().find_map(|body| match body {
        EventBody::Command { command, .. }
        | EventBody::Read {
            command: Some(command),
            ..
        }
        | EventBody::Search {
            command: Some(command),
            ..
        }
        | EventBody::List {
            command: Some(command),
            ..
        } => Some(command.clone()),
        _ => None,
    });
    let expect = would_be.iter().filter_map(Expected::of).collect();
    (command, expect)
}

/// The normalizer of a backend: its [`Decoder`] with the core's bookkeeping.
///
/// A backend names it (`pub type ClaudeNormalizer = Driver<ClaudeDecoder>;`) and hands it out
/// from [`crate::Backend::normalizer`].
#[derive(Debug)]
pub struct Driver<D> {
    decoder: D,
    ledger: Ledger,
    facts: Facts,
    config: NormalizerConfig,
    turn: TurnStart,
}

/// Where the current turn of a session started: the counts and terminal lines before it.
#[derive(Debug, Default)]
struct TurnStart {
    counts: BTreeMap<Kind, u64>,
    terminals: u64,
}

impl<D: Decoder> Driver<D> {
    /// A normalizer for one stream, with the caller's settings.
    pub fn new(config: NormalizerConfig) -> Self {
        Driver {
            decoder: D::new(&config),
            ledger: Ledger::default(),
            facts: Facts::default(),
            config,
            turn: TurnStart::default(),
        }
    }

    /// A normalizer around a decoder made by the caller (one that needs more than the
    /// [`NormalizerConfig`], such as a transcript's sub-agent thread).
    pub fn with_decoder(decoder: D, config: NormalizerConfig) -> Self {
        Driver {
            decoder,
            ledger: Ledger::default(),
            facts: Facts::default(),
            config,
            turn: TurnStart::default(),
        }
    }

    /// The backend's decoder.
    pub fn decoder(&self) -> &D {
        &self.decoder
    }

    fn outcome(&self) -> Outcome {
        let summary = self.decoder.summary();
        let status = if self.facts.failed {
            Status::Error
        } else if self.ledger.terminals() > 0 || !D::EXPECTS_TERMINAL {
            Status::Success
        } else {
            Status::Incomplete
        };
        Outcome {
            session_id: self.facts.session_id.clone(),
            status,
            final_output: self.facts.final_output.clone(),
            structured_output: summary.structured_output,
            metrics: summary.metrics,
            counts: self.ledger.counts().clone(),
            exit_code: None,
            computed: summary.computed,
            turn: None,
        }
    }
}

impl<D: Decoder> Normalizer for Driver<D> {
    fn push_line(&mut self, line: &[u8], out: &mut Vec<Event>) {
        let Some(line) = self.ledger.begin_line(line) else {
            return;
        };
        let number = self.ledger.line();
        let mut sink = |event| out.push(event);
        let mut emitter = Emitter {
            ledger: &mut self.ledger,
            facts: &mut self.facts,
            sink: &mut sink,
            line: Some(number),
            started: self.config.started,
        };
        if self.decoder.line(line, &mut emitter) == Err(NotJson) {
            let event = self.ledger.non_json(line);
            out.push(event);
        }
        self.ledger.end_line();
    }

    fn push_stderr(&mut self, line: &[u8], out: &mut Vec<Event>) {
        out.extend(self.ledger.stderr(line));
    }

    fn finish_each(&mut self, emit: &mut dyn FnMut(Event)) -> Outcome {
        if self.ledger.finish() {
            let mut emitter = Emitter {
                ledger: &mut self.ledger,
                facts: &mut self.facts,
                sink: emit,
                line: None,
                started: self.config.started,
            };
            self.decoder.end(&mut emitter);
            if self.ledger.terminals() == 0 && D::EXPECTS_TERMINAL {
                let event = self.ledger.ended_without_result();
                emit(event);
            }
        }
        self.outcome()
    }

    fn end_turn(&mut self) -> Outcome {
        let summary = self.decoder.turn_summary();
        let terminals = self.ledger.terminals();
        let status = if self.facts.turn_failed {
            Status::Error
        } else if terminals > self.turn.terminals || !D::EXPECTS_TERMINAL {
            Status::Success
        } else {
            Status::Incomplete
        };
        let counts = self.ledger.counts();
        let turn_counts = counts
            .iter()
            .filter_map(|(kind, &n)| {
                let before = self.turn.counts.get(kind).copied().unwrap_or(0);
                (n > before).then_some((*kind, n - before))
            })
            .collect();
        let outcome = Outcome {
            session_id: self.facts.session_id.clone(),
            status,
            final_output: if self.facts.turn_answered {
                self.facts.final_output.clone()
            } else {
                None
            },
            structured_output: summary.structured_output,
            metrics: summary.metrics,
            counts: turn_counts,
            exit_code: None,
            computed: summary.computed,
            turn: None,
        };
        self.turn = TurnStart {
            counts: counts.clone(),
            terminals,
        };
        self.facts.turn_failed = false;
        self.facts.turn_answered = false;
        outcome
    }

    fn last_disposition(&self) -> Disposition {
        self.ledger.disposition()
    }

    fn session_id(&self) -> Option<&str> {
        self.facts.session_id.as_deref()
    }

    fn cwd(&self) -> Option<&str> {
        self.decoder.cwd().or(self.config.cwd.as_deref())
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.decoder.pending_tool_uses()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::outcome::Status;

    /// Each line is an object: `session` names a session id, `answer` sets the final answer
    /// (`null` clears it), `failed` reports a failure, `open` records a tool use, `end` is
    /// terminal.
    #[derive(Default)]
    struct Says {
        open: Vec<PendingToolUse>,
    }

    impl Decoder for Says {
        fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
            let value = parse_value(line)?;
            if let Some(id) = value.get("session").and_then(Value::as_str) {
                out.session_id(id);
            }
            if let Some(answer) = value.get("answer") {
                out.final_output(answer.as_str().map(Arc::from));
            }
            if value.get("failed").is_some() {
                out.fail();
            }
            if let Some(id) = value.get("open").and_then(Value::as_str) {
                self.open.push(PendingToolUse::new(id, Some("t")));
            }
            if value.get("end").is_some() {
                out.terminal();
            }
            out.consumed_by("F1");
            Ok(())
        }

        fn end(&mut self, out: &mut Emitter<'_>) {
            for tool_use in std::mem::take(&mut self.open) {
                out.unresolved(tool_use, Value::Null);
            }
        }
    }

    fn run(lines: &[Value]) -> (Vec<Event>, Outcome) {
        let mut driver = Driver::<Says>::new(NormalizerConfig::default());
        let mut events = Vec::new();
        for line in lines {
            driver.push_line(line.to_string().as_bytes(), &mut events);
        }
        let outcome = driver.finish(&mut events);
        (events, outcome)
    }

    #[test]
    fn the_driver_keeps_the_first_session_id_the_failure_and_the_last_answer() {
        let (events, outcome) = run(&[
            json!({"session": "s1", "answer": "first"}),
            json!({"session": "s2", "answer": "last"}),
            json!({"end": true}),
        ]);
        assert!(events.is_empty());
        assert_eq!(outcome.session_id.as_deref(), Some("s1"));
        assert_eq!(outcome.final_output.as_deref(), Some("last"));
        assert_eq!(outcome.status, Status::Success);

        let (_, outcome) = run(&[
            json!({"answer": "x"}),
            json!({"answer": null, "failed": true}),
            json!({"end": true}),
        ]);
        assert_eq!(outcome.session_id, None);
        assert_eq!(outcome.final_output, None);
        assert_eq!(outcome.status, Status::Error);
    }

    #[test]
    fn i3_each_turn_has_its_own_counts_status_and_answer() {
        let mut driver = Driver::<Says>::new(NormalizerConfig::default());
        let mut events = Vec::new();
        let mut push = |driver: &mut Driver<Says>, line: Value| {
            driver.push_line(line.to_string().as_bytes(), &mut events);
        };
        push(&mut driver, json!({"session": "s1", "open": "u1"}));
        push(&mut driver, json!({"answer": "one", "end": true}));
        driver.push_stderr(b"note", &mut Vec::new());
        let first = driver.end_turn();
        assert_eq!(first.session_id.as_deref(), Some("s1"));
        assert_eq!(first.status, Status::Success);
        assert_eq!(first.final_output.as_deref(), Some("one"));
        assert_eq!(first.counts, BTreeMap::from([(Kind::Warning, 1)]));
        assert!(
            first.metrics.cumulative,
            "the default figures cover the session"
        );
        assert_eq!(first.turn, None);

        // A turn that fails, says nothing and ends: its own status, no answer of its own.
        push(&mut driver, json!({"failed": true, "end": true}));
        let second = driver.end_turn();
        assert_eq!(second.status, Status::Error);
        assert_eq!(second.final_output, None);
        assert_eq!(second.counts, BTreeMap::new());

        // A turn cut short before its terminal line: incomplete, and the failure was the
        // previous turn's.
        push(&mut driver, json!({"answer": "three"}));
        let third = driver.end_turn();
        assert_eq!(third.status, Status::Incomplete);
        assert_eq!(third.final_output.as_deref(), Some("three"));

        // The session's outcome covers every turn; the tool use left open is resolved at the
        // end of input, not at a turn's end (J2 numbering goes on).
        let mut end = Vec::new();
        let outcome = driver.finish(&mut end);
        assert_eq!(outcome.status, Status::Error);
        assert_eq!(outcome.counts.get(&Kind::Unknown), Some(&1));
        assert_eq!(outcome.counts.get(&Kind::Warning), Some(&1));
        assert!(!outcome.metrics.cumulative);
    }

    #[test]
    fn s9_an_unresolved_use_is_an_unknown_naming_it() {
        let (events, _) = run(&[json!({"open": "u1"})]);
        let events: Vec<Value> = events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap_or_default())
            .collect();
        assert_eq!(
            events,
            [
                json!({"kind": "unknown", "reason": "unresolved_tool_use", "raw": null, "tool": "t", "tool_use_id": "u1"}),
                json!({"kind": "error", "message": "stream ended without a result"}),
            ]
        );
    }
}
