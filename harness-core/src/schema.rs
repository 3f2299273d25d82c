//! The JSON Schema of the output lines, derived from the serde types that write them (the
//! `schema` feature): what `harness schema` prints and the fixtures are validated against.

use serde_json::Value;

use crate::event::Event;
use crate::outcome::OutcomeLine;

/// The JSON Schema (draft 2020-12) of the lines the `harness` CLI writes (`harness schema`):
/// each line is one of the `oneOf` alternatives, an event (`$defs/Event`, J1-J10) or the
/// closing outcome line (`$defs/OutcomeLine`, `"kind": "outcome"`, J9).
///
/// It describes what is written: a field that may be absent is optional and never `null`;
/// only `range.end`, plan items (copied as given) and a live run's `exit_code` may be
/// `null` (J5, J10, O1). Unknown fields are allowed (J10).
///
/// ```
/// let schema = harness_agents_core::schema::lines();
/// assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
/// assert!(schema["$defs"]["Event"].is_object());
/// assert!(schema["$defs"]["OutcomeLine"].is_object());
/// ```
pub fn lines() -> Value {
    use schemars::generate::SchemaSettings;

    let mut generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let event = generator.subschema_for::<Event>();
    let outcome = generator.subschema_for::<OutcomeLine<'static>>();
    let definitions = generator.take_definitions(true);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "harness output line",
        "description": "One line of `harness run` / `harness normalize --format jsonl`: \
            an event, or the closing outcome line (SPEC J1-J10).",
        "oneOf": [event, outcome],
        "$defs": definitions,
    })
}
