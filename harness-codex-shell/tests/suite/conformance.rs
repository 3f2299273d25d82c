//! Every row of the conformance corpus (`fixtures/shell/cases.jsonl`): the parts Codex gives,
//! and for `bash -lc` rows the event paths (SPEC B2, C15).

use harness_agents_codex_shell::{classify, parse_command};
use serde_json::Value;

/// One row of the corpus.
pub struct Row {
    pub line: usize,
    pub argv: Vec<String>,
    pub expected: Value,
    pub event_paths: Option<Vec<Option<String>>>,
}

/// All rows of the corpus.
pub fn rows() -> Vec<Row> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/shell/cases.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            let row: Value = serde_json::from_str(line).unwrap();
            Row {
                line: index + 1,
                argv: serde_json::from_value(row["argv"].clone()).unwrap(),
                expected: row["expected"].clone(),
                event_paths: row
                    .get("event_paths")
                    .map(|paths| serde_json::from_value(paths.clone()).unwrap()),
            }
        })
        .collect()
}

#[test]
fn corpus_has_every_row() {
    assert_eq!(rows().len(), 380);
}

#[test]
fn every_row_gives_the_parts_codex_gives() {
    let mut failures = Vec::new();
    for row in rows() {
        let actual = serde_json::to_value(parse_command(&row.argv)).unwrap();
        if actual != row.expected {
            failures.push(format!(
                "line {}: {:?}\n  expected {}\n  actual   {}",
                row.line, row.argv, row.expected, actual
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_row_gives_the_event_paths() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for row in rows() {
        let Some(expected) = row.event_paths else {
            continue;
        };
        checked += 1;
        let actual: Vec<Option<String>> = classify(&row.argv)
            .into_iter()
            .map(|part| part.event_path)
            .collect();
        if actual != expected {
            failures.push(format!(
                "line {}: {:?}\n  expected {:?}\n  actual   {:?}",
                row.line, row.argv, expected, actual
            ));
        }
    }
    assert_eq!(checked, 153);
    assert!(
        failures.is_empty(),
        "{} rows differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
