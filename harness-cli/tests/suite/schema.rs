//! `harness schema`: the JSON Schema (draft 2020-12) of the output lines. Every expected file in
//! `fixtures/` must validate against it, line by line, and lines that break J1-J10 must not.
//!
//! The schema is one document whose `oneOf` is an event (`$defs/Event`) or the outcome line
//! (`$defs/OutcomeLine`). To check that each line is the right one of the two, events are
//! validated against the same document narrowed to `$defs/Event`, the last line against it
//! narrowed to `$defs/OutcomeLine`, and every line against the whole.

use jsonschema::Validator;
use serde_json::{Value, json};

use super::run;

/// The schema `harness schema` prints.
fn printed_schema() -> Value {
    let output = run(&["schema"], b"");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A draft 2020-12 validator for `schema`.
fn validator(schema: &Value) -> Validator {
    jsonschema::draft202012::new(schema).unwrap()
}

/// The whole schema, and the schema narrowed to events and to the outcome line.
struct Validators {
    line: Validator,
    event: Validator,
    outcome: Validator,
}

fn validators() -> Validators {
    let schema = printed_schema();
    let narrowed = |def: &str| {
        let mut one = schema.clone();
        one.as_object_mut().unwrap().remove("oneOf");
        one["$ref"] = json!(format!("#/$defs/{def}"));
        validator(&one)
    };
    Validators {
        line: validator(&schema),
        event: narrowed("Event"),
        outcome: narrowed("OutcomeLine"),
    }
}

/// Every error `validator` finds in `line`, as text.
fn errors(validator: &Validator, line: &Value) -> Vec<String> {
    validator.iter_errors(line).map(|e| e.to_string()).collect()
}

#[test]
fn the_schema_is_draft_2020_12_with_an_event_or_an_outcome_per_line() {
    let schema = printed_schema();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(
        schema["oneOf"],
        json!([{"$ref": "#/$defs/Event"}, {"$ref": "#/$defs/OutcomeLine"}])
    );
    // It is itself a valid draft 2020-12 schema.
    jsonschema::meta::validate(&schema).unwrap();
    // The event's alternatives are exactly the kinds of SPEC §1, each a `const`.
    let kinds: Vec<&str> = schema["$defs"]["Event"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["properties"]["kind"]["const"].as_str().unwrap())
        .collect();
    let all: Vec<&str> = harness_agents_core::Kind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(kinds, all);
}

#[test]
fn every_expected_line_in_the_fixtures_validates_against_the_schema() {
    let v = validators();
    let mut files = 0;
    let mut lines = 0;
    let mut failures = Vec::new();
    // Every registered backend's recordings, under its name, and the other folders of the
    // backends that have more than one.
    let registry = harness_agents::registry();
    let mut folders: Vec<&str> = registry.names().collect();
    for folder in fixtures::CLAUDE_FOLDERS
        .into_iter()
        .chain(fixtures::CODEX_FOLDERS)
    {
        if !folders.contains(&folder) {
            folders.push(folder);
        }
    }
    for folder in folders {
        let dir = fixtures::root().join(folder);
        let mut paths: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".expected.jsonl"))
            .collect();
        paths.sort();
        for path in paths {
            files += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            let parsed: Vec<Value> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let (outcome, events) = parsed.split_last().unwrap();
            let checks = events
                .iter()
                .enumerate()
                .map(|(i, e)| (i + 1, &v.event, e))
                .chain([(parsed.len(), &v.outcome, outcome)]);
            for (number, narrowed, line) in checks {
                lines += 1;
                let mut problems = errors(narrowed, line);
                problems.extend(errors(&v.line, line));
                if !problems.is_empty() {
                    failures.push(format!(
                        "{}:{number}: {}",
                        path.display(),
                        problems.join("; ")
                    ));
                }
            }
        }
    }
    assert!(files >= 100, "only {files} expected files found");
    assert!(lines >= 400, "only {lines} lines checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lines_that_break_the_json_rules_are_rejected() {
    let v = validators();
    // Each is valid but for one thing; the first proves the base lines pass.
    let read = json!({"kind": "read", "path": "/a", "range": {"start": 1, "end": null},
        "success": true, "tool": "Read", "line": 2});
    let outcome = json!({"kind": "outcome", "status": "success", "metrics": {},
        "counts": {"read": 1}, "exit_code": null});
    assert!(v.event.is_valid(&read) && v.line.is_valid(&read));
    assert!(v.outcome.is_valid(&outcome) && v.line.is_valid(&outcome));
    // Unknown fields are allowed (J10).
    assert!(
        v.line
            .is_valid(&json!({"kind": "agent", "text": "hi", "new_field": 1}))
    );

    let with = |base: &Value, key: &str, value: Value| {
        let mut line = base.clone();
        line[key] = value;
        line
    };
    let without = |base: &Value, key: &str| {
        let mut line = base.clone();
        line.as_object_mut().unwrap().remove(key);
        line
    };
    let bad_events = [
        (
            "a kind that does not exist (J1)",
            with(&read, "kind", json!("reed")),
        ),
        ("no kind (J1)", without(&read, "kind")),
        ("a missing required field", without(&read, "path")),
        ("a missing success (J6)", without(&read, "success")),
        (
            "an optional field written as null (J10)",
            with(&read, "tool", Value::Null),
        ),
        ("a line of 0 (J2)", with(&read, "line", json!(0))),
        (
            "a range without end (J5)",
            with(&read, "range", json!({"start": 1})),
        ),
        ("success as a number (J6)", with(&read, "success", json!(1))),
        (
            "an unknown warning source (J7)",
            json!({"kind": "warning", "message": "m", "source": "elsewhere"}),
        ),
        (
            "an unknown reason (J8)",
            json!({"kind": "unknown", "reason": "odd", "raw": {}}),
        ),
        (
            "an outcome line's kind on an event",
            with(&read, "kind", json!("outcome")),
        ),
    ];
    for (what, line) in &bad_events {
        assert!(
            !v.event.is_valid(line),
            "event schema accepted {what}: {line}"
        );
        let is_outcome_kind = line["kind"] == "outcome";
        if !is_outcome_kind {
            assert!(
                !v.line.is_valid(line),
                "line schema accepted {what}: {line}"
            );
        }
    }
    let bad_outcomes = [
        ("another kind (J9)", with(&outcome, "kind", json!("agent"))),
        ("no counts (O1)", without(&outcome, "counts")),
        (
            "an unknown status (O1)",
            with(&outcome, "status", json!("done")),
        ),
        (
            "a count of a kind that does not exist",
            with(&outcome, "counts", json!({"reed": 1})),
        ),
        (
            "a session id written as null",
            with(&outcome, "session_id", Value::Null),
        ),
    ];
    for (what, line) in &bad_outcomes {
        assert!(
            !v.outcome.is_valid(line),
            "outcome schema accepted {what}: {line}"
        );
        assert!(
            !v.line.is_valid(line),
            "line schema accepted {what}: {line}"
        );
    }
}
