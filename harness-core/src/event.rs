//! The normalized event: one vocabulary for every backend (SPEC §1, §2).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One normalized event.
///
/// The common fields (`line`, `stream`, `parent_tool_use_id`) sit beside the kind-specific body,
/// which is flattened into the same JSON object and tagged by `"kind"` (J1). Optional fields that
/// are not known are omitted from the JSON, never written as `null` (J10).
///
/// ```
/// use harness_agents_core::{Event, EventBody};
///
/// let event = Event::new(EventBody::Agent { text: "hi".into() }).at_line(3);
/// assert_eq!(
///     serde_json::to_string(&event).unwrap(),
///     r#"{"kind":"agent","text":"hi","line":3}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(
    feature = "schema",
    schemars(
        description = "One normalized event: the common fields beside the kind-specific \
        fields, in one object tagged \"kind\" (SPEC J1-J10). Absent optional fields are \
        omitted, never null; unknown fields may be added later and are to be ignored."
    )
)]
#[non_exhaustive]
pub struct Event {
    /// What happened, with the fields of that kind.
    #[serde(flatten)]
    pub body: EventBody,
    /// The 1-based line the event comes from (J2); absent for end-of-input events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u64", range(min = 1)))]
    pub line: Option<u64>,
    /// `Some(Stream::Stderr)` for events made from standard error (J2); absent for stdout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Stream"))]
    pub stream: Option<Stream>,
    /// The sub-agent's tool use this event was produced inside (J4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub parent_tool_use_id: Option<String>,
}

impl Event {
    /// An event with the given body and no common fields set.
    pub fn new(body: EventBody) -> Self {
        Event {
            body,
            line: None,
            stream: None,
            parent_tool_use_id: None,
        }
    }

    /// Sets `line`.
    #[must_use]
    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    /// Sets `parent_tool_use_id` (an empty string counts as none, J4).
    #[must_use]
    pub fn with_parent(mut self, parent: Option<String>) -> Self {
        self.parent_tool_use_id = parent.filter(|p| !p.is_empty());
        self
    }

    /// The kind of this event.
    pub fn kind(&self) -> Kind {
        self.body.kind()
    }
}

/// The stream an event was read from, when it was not standard output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Stream {
    /// Standard error.
    Stderr,
}

/// The fields every event made from one tool use carries (J3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolRef {
    /// The backend's name for the tool (`"Read"`, `"Bash"`, `"command_execution"`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub tool: Option<String>,
    /// The tool use's id, when it has a string id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub tool_use_id: Option<String>,
}

/// How a tool use ended (J6).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolStatus {
    /// Whether the tool use succeeded.
    pub success: bool,
    /// The failure text the backend gave, cut to 1,000 characters; only when `success` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub error: Option<String>,
}

/// A range of lines, 1-based and inclusive (J5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct LineRange {
    /// The first line read.
    #[cfg_attr(feature = "schema", schemars(range(min = 1)))]
    pub start: u64,
    /// The last line read; `None` (written as `null`) when the read runs to the end of the file.
    pub end: Option<u64>,
}

/// One entry of a `plan` event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PlanItem {
    /// The entry's text, copied as given (`null` when missing).
    pub text: Value,
    /// Whether it is done, copied as given (`null` when missing).
    pub completed: Value,
}

/// One event a started tool use is expected to give (L1): its kind and the fields its input
/// already decides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Expected {
    /// The kind of the final event (`read`, `write`, `search`, `list`, `command`, `skill`).
    pub kind: Kind,
    /// The path it will carry, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub path: Option<String>,
    /// The lines a read will cover, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "LineRange"))]
    pub range: Option<LineRange>,
    /// The pattern a search looks for, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub query: Option<String>,
    /// A skill's name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub name: Option<String>,
}

impl Expected {
    /// What a tool's final event says of itself: its kind and identifying fields; `None` for
    /// events that are not about a tool's work (`agent`, `warning`, `unknown`...).
    pub fn of(body: &EventBody) -> Option<Expected> {
        let mut expected = Expected::new(body.kind());
        match body {
            EventBody::Read { path, range, .. } => {
                expected.path = Some(path.clone());
                expected.range = *range;
            }
            EventBody::Write { path, .. } => expected.path = Some(path.clone()),
            EventBody::Search { query, path, .. } => {
                expected.query = query.clone();
                expected.path = path.clone();
            }
            EventBody::List { path, .. } => expected.path = path.clone(),
            EventBody::Command { .. } => {}
            EventBody::Skill { name, path, .. } => {
                expected.name = Some(name.clone());
                expected.path = Some(path.clone());
            }
            _ => return None,
        }
        Some(expected)
    }

    /// An expected event of this kind with no field known yet.
    pub fn new(kind: Kind) -> Self {
        Expected {
            kind,
            path: None,
            range: None,
            query: None,
            name: None,
        }
    }
}

/// The kind-specific part of an event, tagged `"kind"` in JSON (SPEC §1).
///
/// An `agent` event's text is an [`Arc<str>`]: the outcome's `final_output` is usually the same
/// text, and the two share one copy however large it is (S7). It reads as a `&str` (`&*text`)
/// and is written to JSON as a plain string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EventBody {
    /// Text the agent said, one per assistant message.
    Agent {
        /// The message's text blocks joined with a blank line.
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        text: Arc<str>,
    },
    /// The agent's visible thinking, one per assistant message.
    Reasoning {
        /// The message's thinking blocks joined with a blank line.
        text: String,
    },
    /// A file was read.
    Read {
        /// The file, resolved and normalized (C14a).
        path: String,
        /// The lines read, when the tool use named them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "LineRange"))]
        range: Option<LineRange>,
        /// The whole shell command, when the read was reclassified from one (J3, C15).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        command: Option<String>,
        /// Success and error text.
        #[serde(flatten)]
        status: ToolStatus,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// A file was created or changed.
    Write {
        /// The file, resolved and normalized (C14a).
        path: String,
        /// The kind of change, when the backend reports one (`add`, `update`, `delete`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        change: Option<String>,
        /// Success and error text.
        #[serde(flatten)]
        status: ToolStatus,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// File contents or names were searched.
    Search {
        /// The pattern searched for, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        query: Option<String>,
        /// Where it searched, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        path: Option<String>,
        /// The whole shell command, when reclassified from one (J3, C15).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        command: Option<String>,
        /// Success and error text.
        #[serde(flatten)]
        status: ToolStatus,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// A directory was listed.
    List {
        /// The directory, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        path: Option<String>,
        /// The whole shell command, when reclassified from one (J3, C15).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        command: Option<String>,
        /// Success and error text.
        #[serde(flatten)]
        status: ToolStatus,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// A shell command ran.
    Command {
        /// The command as the agent gave it.
        command: String,
        /// The exit code, when the backend reports one (never for Claude Code, C16): an
        /// integer, kept as the backend wrote it, whether it fits an `i64` or only a `u64` (X4).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "i64"))]
        exit_code: Option<serde_json::Number>,
        /// Success and error text.
        #[serde(flatten)]
        status: ToolStatus,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// A skill was invoked.
    Skill {
        /// The skill's name.
        name: String,
        /// Where the skill's definition lives (`<workspace>/skills/<name>/SKILL.md`).
        path: String,
        /// Success and error text.
        #[serde(flatten)]
        status: ToolStatus,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// The agent's plan changed.
    Plan {
        /// The plan's entries.
        items: Vec<PlanItem>,
    },
    /// Something the caller should see; the run goes on.
    Warning {
        /// What happened.
        message: String,
        /// Where it came from (J7).
        source: WarningSource,
    },
    /// The run reported a failure.
    Error {
        /// The failure.
        message: String,
    },
    /// Input this harness cannot map, kept so the stream stays lossless.
    Unknown {
        /// Why it could not be mapped (J8).
        reason: UnknownReason,
        /// The original JSON (J8 says which).
        raw: Value,
        /// Tool name and id, when the input is about one tool use.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// A tool use began (L1): emitted only when the normalizer's `started` setting is on, on
    /// the line that records the use. Its final events follow when its result arrives; a
    /// `started` event never replaces them and is not counted in the outcome's `counts`.
    Started {
        /// The shell command, when the tool runs one (J3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        command: Option<String>,
        /// The events the result will give when the tool succeeds, as far as the tool use's
        /// input decides them, in order, each with the fields already known (for a shell
        /// command, one per part of its classification, or one `command`); empty, and omitted,
        /// when the tool is one the backend does not map.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        expect: Vec<Expected>,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
    /// The agent asks whether it may use a tool (I4): only in a session, which waits for the
    /// caller's answer. Counted in the outcome's `counts`.
    Permission {
        /// The request's id, which the caller's answer names (the agent's own request id).
        id: String,
        /// The decisions the agent accepts, in the order allow, allow_always, deny.
        options: Vec<Decision>,
        /// The file the tool would work on, when its input names one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        path: Option<String>,
        /// The shell command, when the tool runs one (J3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "String"))]
        command: Option<String>,
        /// The events the tool use would give, as a `started` event has them (for a shell
        /// command, its classification); omitted when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        expect: Vec<Expected>,
        /// The tool's input as the agent gave it, so the caller decides on all of it (an
        /// edit's new text, say), not only on the fields above; absent when the agent sent none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "schema", schemars(with = "Value"))]
        input: Option<Value>,
        /// Tool name and id.
        #[serde(flatten)]
        tool: ToolRef,
    },
}

/// A caller's decision on a permission request (I2, I4): one of the `options` of a
/// `permission` event, and the `decision` of the answer that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Allow this use of the tool.
    Allow,
    /// Allow this use and the same again for the rest of the session.
    AllowAlways,
    /// Refuse it.
    Deny,
}

impl Decision {
    /// Every decision, in the order the SPEC lists them.
    pub const ALL: [Decision; 3] = [Decision::Allow, Decision::AllowAlways, Decision::Deny];

    /// The decision's name as written in JSON: `allow`, `allow_always`, `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::AllowAlways => "allow_always",
            Decision::Deny => "deny",
        }
    }

    /// The decision named `name`, if any.
    pub fn from_name(name: &str) -> Option<Decision> {
        Decision::ALL.into_iter().find(|d| d.as_str() == name)
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl EventBody {
    /// The tool fields (J3) of an event about one tool use, a `started` one included; `None`
    /// for the kinds that are about no tool use.
    pub fn tool(&self) -> Option<&ToolRef> {
        match self {
            EventBody::Read { tool, .. }
            | EventBody::Write { tool, .. }
            | EventBody::Search { tool, .. }
            | EventBody::List { tool, .. }
            | EventBody::Command { tool, .. }
            | EventBody::Skill { tool, .. }
            | EventBody::Started { tool, .. }
            | EventBody::Permission { tool, .. }
            | EventBody::Unknown { tool, .. } => Some(tool),
            EventBody::Agent { .. }
            | EventBody::Reasoning { .. }
            | EventBody::Plan { .. }
            | EventBody::Warning { .. }
            | EventBody::Error { .. } => None,
        }
    }

    /// The kind of this body.
    pub fn kind(&self) -> Kind {
        match self {
            EventBody::Agent { .. } => Kind::Agent,
            EventBody::Reasoning { .. } => Kind::Reasoning,
            EventBody::Read { .. } => Kind::Read,
            EventBody::Write { .. } => Kind::Write,
            EventBody::Search { .. } => Kind::Search,
            EventBody::List { .. } => Kind::List,
            EventBody::Command { .. } => Kind::Command,
            EventBody::Skill { .. } => Kind::Skill,
            EventBody::Plan { .. } => Kind::Plan,
            EventBody::Warning { .. } => Kind::Warning,
            EventBody::Error { .. } => Kind::Error,
            EventBody::Started { .. } => Kind::Started,
            EventBody::Permission { .. } => Kind::Permission,
            EventBody::Unknown { .. } => Kind::Unknown,
        }
    }
}

/// The event kinds, without their fields (used for counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Kind {
    /// See [`EventBody::Agent`].
    Agent,
    /// See [`EventBody::Reasoning`].
    Reasoning,
    /// See [`EventBody::Read`].
    Read,
    /// See [`EventBody::Write`].
    Write,
    /// See [`EventBody::Search`].
    Search,
    /// See [`EventBody::List`].
    List,
    /// See [`EventBody::Command`].
    Command,
    /// See [`EventBody::Skill`].
    Skill,
    /// See [`EventBody::Plan`].
    Plan,
    /// See [`EventBody::Warning`].
    Warning,
    /// See [`EventBody::Error`].
    Error,
    /// See [`EventBody::Unknown`].
    Unknown,
    /// See [`EventBody::Started`] (L1; opt-in, never counted).
    Started,
    /// See [`EventBody::Permission`] (I4; only in a session).
    Permission,
}

impl Kind {
    /// Every kind, in the order of SPEC §1.
    pub const ALL: [Kind; 14] = [
        Kind::Agent,
        Kind::Reasoning,
        Kind::Read,
        Kind::Write,
        Kind::Search,
        Kind::List,
        Kind::Command,
        Kind::Skill,
        Kind::Plan,
        Kind::Warning,
        Kind::Error,
        Kind::Unknown,
        Kind::Started,
        Kind::Permission,
    ];

    /// The kind's name as written in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Agent => "agent",
            Kind::Reasoning => "reasoning",
            Kind::Read => "read",
            Kind::Write => "write",
            Kind::Search => "search",
            Kind::List => "list",
            Kind::Command => "command",
            Kind::Skill => "skill",
            Kind::Plan => "plan",
            Kind::Warning => "warning",
            Kind::Error => "error",
            Kind::Unknown => "unknown",
            Kind::Started => "started",
            Kind::Permission => "permission",
        }
    }
}

/// Where a warning came from (J7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum WarningSource {
    /// A line of standard error (S4).
    Stderr,
    /// A stdout line that is not JSON (S2).
    NonJson,
    /// A rate limit was hit (C6).
    RateLimit,
    /// The backend's stream reported a recoverable problem (X6, X7).
    Stream,
    /// A session's command line it could not use (I2).
    Input,
}

/// Why input became an `unknown` event (J8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UnknownReason {
    /// A top-level `type` this backend does not know (C8, X7).
    UnknownType,
    /// A `system` line with a subtype this backend does not know (C1).
    UnknownSystemSubtype,
    /// Valid JSON that is not an event object with a string `type` (S3).
    NotAnEvent,
    /// A message whose `content` has the wrong shape (C2, C5).
    MalformedMessage,
    /// A content block this backend does not know (C2).
    UnknownBlock,
    /// A tool with no mapping (C14, X6).
    UnknownTool,
    /// A tool use whose fields do not fit its mapping (C13, X4, X6).
    MalformedToolUse,
    /// A tool result with no recorded use (C12).
    UnpairedResult,
    /// A tool result whose id matched more than one pending use (C11).
    AmbiguousToolUseId,
    /// A tool use that never got its result before the end of input (S9, X8).
    UnresolvedToolUse,
    /// A Codex item type this backend does not know (X2, X6).
    UnknownItem,
}
