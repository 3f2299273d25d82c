//! The outcome of a run: session id, metrics, final output, how it ended (SPEC §7).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::event::Kind;

/// How a run ended (O1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// A terminal line arrived and no failure was reported.
    Success,
    /// The run reported a failure.
    Error,
    /// No terminal line arrived.
    Incomplete,
    /// A session's turn the caller stopped (I2, I3).
    Interrupted,
}

/// Usage and timing figures the backend reported (O2, O3). Absent figures are omitted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Metrics {
    /// Input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub input_tokens: Option<Number>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub output_tokens: Option<Number>,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub cache_read_input_tokens: Option<Number>,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub cache_creation_input_tokens: Option<Number>,
    /// Output tokens spent on reasoning (Codex).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub reasoning_output_tokens: Option<Number>,
    /// Total cost in US dollars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub total_cost_usd: Option<Number>,
    /// Time spent in the model's API, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub duration_api_ms: Option<Number>,
    /// Wall time, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub duration_ms: Option<Number>,
    /// Number of turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Number"))]
    pub num_turns: Option<Number>,
    /// In a session's turn outcome (I3): the figures cover the session so far, as the backend
    /// reports them, not this turn alone. Written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cumulative: bool,
}

/// Adds two JSON numbers: exactly when both are integers that fit, else as floats.
pub fn add_numbers(a: &Number, b: &Number) -> Number {
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        if let Some(sum) = x.checked_add(y) {
            return Number::from(sum);
        }
    }
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        if let Some(sum) = x.checked_add(y) {
            return Number::from(sum);
        }
    }
    let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
    Number::from_f64(sum).unwrap_or_else(|| Number::from(0))
}

/// What the run came to, given once at the end (O1). The CLI writes it as its last line,
/// tagged `"kind": "outcome"` (J9).
///
/// `final_output` is an [`Arc<str>`]: when it is the text of the last `agent` event, the event
/// and the outcome share one copy however large it is (S7). It reads as a `&str`
/// (`final_output.as_deref()`) and is written to JSON as a plain string.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[non_exhaustive]
pub struct Outcome {
    /// The session id (S5, X1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub session_id: Option<String>,
    /// How the run ended.
    pub status: Status,
    /// The agent's final answer, when the backend reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub final_output: Option<Arc<str>>,
    /// Output conforming to a requested JSON schema (Claude's `structured_output`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "Value"))]
    pub structured_output: Option<Value>,
    /// Usage and timing.
    pub metrics: Metrics,
    /// How many events of each kind were emitted (kinds with at least one).
    #[cfg_attr(feature = "schema", schemars(schema_with = "counts_schema"))]
    pub counts: BTreeMap<Kind, u64>,
    /// For a live run: `Some(Some(code))` when the child exited, `Some(None)` (written `null`)
    /// when a signal ended it. Absent when normalizing a recording.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "deserialize_present"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "Option<i32>"))]
    pub exit_code: Option<Option<i32>>,
    /// The `metrics` figures the harness computed rather than read from the agent (names of
    /// `metrics` fields, e.g. `"total_cost_usd"` priced from a table): a stored session has no
    /// closing report, so its tokens are summed per message and its cost priced (see
    /// `docs/sessions.md`). Absent when every figure was reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub computed: Vec<String>,
    /// In a session, the turn this outcome closes (1, 2, ...; I3). Absent for a run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "u32", range(min = 1)))]
    pub turn: Option<u32>,
}

/// `counts`: an object whose keys are event kinds and whose values are counts.
#[cfg(feature = "schema")]
fn counts_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let kind = generator.subschema_for::<Kind>();
    let count = generator.subschema_for::<u64>();
    schemars::json_schema!({
        "type": "object",
        "propertyNames": kind,
        "additionalProperties": count,
    })
}

fn deserialize_present<'de, D>(deserializer: D) -> Result<Option<Option<i32>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<i32>::deserialize(deserializer).map(Some)
}

impl Outcome {
    /// An outcome with nothing reported yet: `incomplete`, no metrics, no counts.
    pub fn empty() -> Self {
        Outcome {
            session_id: None,
            status: Status::Incomplete,
            final_output: None,
            structured_output: None,
            metrics: Metrics::default(),
            counts: BTreeMap::new(),
            exit_code: None,
            computed: Vec::new(),
            turn: None,
        }
    }
}

/// The outcome as the CLI's closing line: the outcome's fields plus `"kind": "outcome"` (J9).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct OutcomeLine<'a> {
    /// Always `"outcome"`.
    #[cfg_attr(feature = "schema", schemars(extend("const" = "outcome")))]
    pub kind: &'static str,
    /// The outcome.
    #[serde(flatten)]
    pub outcome: &'a Outcome,
}

impl<'a> OutcomeLine<'a> {
    /// Wraps an outcome for writing.
    pub fn new(outcome: &'a Outcome) -> Self {
        OutcomeLine {
            kind: "outcome",
            outcome,
        }
    }
}
