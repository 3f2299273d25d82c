//! The conformance kit (`harness_agents_core::testkit`) on the Codex backend: the same properties as
//! for Claude (no panic, chunk invariance, line numbers, order, accounting, settling, counts),
//! on hostile lines in the Codex vocabulary and on generated turns whose items start, update
//! and complete interleaved, some never completing. Each generated turn knows what the SPEC
//! says it must produce: a completed item's events (X3-X6), one `unresolved_tool_use` per item
//! started and never completed, by start order (X8), one `plan` per distinct plan (X5).

use harness_agents_codex::CodexHarness;
use harness_agents_core::testkit::{self, Trace, tool_use_id, unknown_reason};
use harness_agents_core::{EventBody, Kind, Status, UnknownReason};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::config;

const TYPES: &[&str] = &[
    "thread.started",
    "turn.started",
    "item.started",
    "item.updated",
    "item.completed",
    "turn.completed",
    "turn.failed",
    "error",
    "mystery",
];
const KEYS: &[&str] = &[
    "type",
    "thread_id",
    "item",
    "id",
    "text",
    "command",
    "exit_code",
    "status",
    "completed",
    "failed",
    "changes",
    "path",
    "kind",
    "items",
    "usage",
    "input_tokens",
    "error",
    "message",
    "server",
    "tool",
    "agent_message",
    "reasoning",
    "command_execution",
    "file_change",
    "todo_list",
    "mcp_tool_call",
    "web_search",
];

/// One item's lines and what they must give.
#[derive(Debug, Clone)]
struct ItemPlan {
    id: String,
    kind: &'static str,
    /// The item as each of its lines carries it: started?, updated?, completed?.
    phases: Vec<(&'static str, Value)>,
    /// The kinds its completion gives, in order (X3-X6).
    kinds: Vec<Kind>,
}

/// A generated turn: its lines (items interleaved) and what they must give.
#[derive(Debug, Clone)]
struct Turn {
    lines: Vec<String>,
    items: Vec<ItemPlan>,
    /// Ids of the items started and never completed (not `todo_list`), by start (X8).
    unresolved: Vec<String>,
    plans: usize,
    warnings: usize,
    /// `None`: no terminal line; `Some(failed)`.
    terminal: Option<bool>,
}

/// X4: the kinds a command line gives: shlex words, classified.
fn command_kinds(command: &str) -> Vec<Kind> {
    let argv = shlex::split(command).unwrap_or_else(|| vec![command.to_string()]);
    testkit::shell_kinds(&argv)
}

fn item(n: usize, pick: usize, step: usize) -> ItemPlan {
    let id = format!("item_{n}");
    let commands = [
        "/bin/bash -lc 'cat README.md'",
        "/bin/bash -lc 'rg -n foo src | head'",
        "bash -lc 'cargo test'",
        "ls -la src",
        "/bin/bash -lc \"echo 'x' > y\"",
        "",
        "/bin/bash -lc 'cd web && sed -n 1,20p a.rs && ls'",
    ];
    let (kind, body, kinds): (&'static str, Value, Vec<Kind>) = match pick % 8 {
        0 => {
            let command = commands[step % commands.len()];
            (
                "command_execution",
                json!({"command": command, "aggregated_output": "", "exit_code": 0}),
                command_kinds(command),
            )
        }
        1 => ("agent_message", json!({"text": "hello"}), vec![Kind::Agent]),
        2 => ("reasoning", json!({"text": "hmm"}), vec![Kind::Reasoning]),
        3 => {
            let changes: Vec<Value> = (0..=step % 3)
                .map(|i| json!({"path": format!("src/f{i}.rs"), "kind": "update"}))
                .collect();
            let n = changes.len();
            (
                "file_change",
                json!({"changes": changes}),
                vec![Kind::Write; n],
            )
        }
        4 => ("todo_list", json!({}), vec![]),
        5 => (
            "mcp_tool_call",
            json!({"server": "s", "tool": "t"}),
            vec![Kind::Unknown],
        ),
        6 => ("web_search", json!({"query": "q"}), vec![Kind::Unknown]),
        // An unknown item is not a tool use: its `unknown_item` carries no tool fields (J3).
        _ => ("mystery_item", json!({}), vec![]),
    };
    let with = |status: &str, plan_done: bool| {
        let mut value = body.clone();
        value["id"] = json!(id);
        value["type"] = json!(kind);
        value["status"] = json!(status);
        if kind == "todo_list" {
            value["items"] =
                json!([{"text": "a", "completed": plan_done}, {"text": "b", "completed": false}]);
        }
        value
    };
    // Which of started / updated / completed the item gets (at least one).
    let shape = [0b111, 0b101, 0b001, 0b110, 0b100, 0b011, 0b010][step % 7];
    let mut phases = Vec::new();
    if shape & 0b100 != 0 {
        phases.push(("item.started", with("in_progress", false)));
    }
    if shape & 0b010 != 0 {
        phases.push(("item.updated", with("in_progress", step % 2 == 0)));
    }
    if shape & 0b001 != 0 {
        phases.push(("item.completed", with("completed", true)));
    }
    ItemPlan {
        id,
        kind,
        phases,
        kinds,
    }
}

fn build(picks: Vec<(usize, usize)>, order: Vec<usize>, noise: Vec<usize>, end: usize) -> Turn {
    let items: Vec<ItemPlan> = picks
        .iter()
        .enumerate()
        .map(|(n, &(pick, step))| item(n, pick, step))
        .collect();
    let mut lines = vec![
        json!({"type": "thread.started", "thread_id": "th-1"}).to_string(),
        json!({"type": "turn.started"}).to_string(),
    ];
    // Interleave the items' lines: `order` names which item speaks next.
    let mut next = vec![0usize; items.len()];
    let mut start_order: Vec<(usize, usize)> = Vec::new();
    let mut warnings = 0;
    let mut turn_plans: std::collections::HashMap<String, Value> = Default::default();
    let mut plans = 0;
    let mut noise = noise.into_iter();
    let mut speak = |i: usize, next: &mut Vec<usize>, lines: &mut Vec<String>| {
        let Some((phase, item)) = items[i].phases.get(next[i]) else {
            return;
        };
        if next[i] == 0 && *phase != "item.completed" {
            start_order.push((lines.len(), i));
        }
        next[i] += 1;
        if items[i].kind == "todo_list" && turn_plans.get(&items[i].id) != Some(&item["items"]) {
            turn_plans.insert(items[i].id.clone(), item["items"].clone());
            plans += 1;
        }
        lines.push(json!({"type": phase, "item": item}).to_string());
    };
    for &o in &order {
        if !items.is_empty() {
            speak(o % items.len(), &mut next, &mut lines);
        }
        match noise.next().unwrap_or(0) % 8 {
            1 => lines.push(String::new()),
            2 => {
                warnings += 1;
                lines.push(json!({"type": "error", "message": "Reconnecting... 1/5"}).to_string());
            }
            3 => {
                warnings += 1;
                lines.push("Reading additional input from stdin...".to_string());
            }
            _ => {}
        }
    }
    for i in 0..items.len() {
        for _ in next[i]..items[i].phases.len() {
            speak(i, &mut next, &mut lines);
        }
    }
    let unresolved = start_order
        .iter()
        .map(|&(_, i)| &items[i])
        .filter(|item| item.kind != "todo_list")
        .filter(|item| item.phases.last().is_none_or(|p| p.0 != "item.completed"))
        .map(|item| item.id.clone())
        .collect();
    let terminal = match end % 3 {
        0 => {
            lines.push(json!({"type": "turn.completed", "usage": {"input_tokens": 5}}).to_string());
            Some(false)
        }
        1 => {
            lines.push(json!({"type": "turn.failed", "error": {"message": "boom"}}).to_string());
            Some(true)
        }
        _ => None,
    };
    Turn {
        lines,
        items,
        unresolved,
        plans,
        warnings,
        terminal,
    }
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        prop::collection::vec((0usize..8, 0usize..42), 0..8),
        prop::collection::vec(any::<usize>(), 0..24),
        prop::collection::vec(any::<usize>(), 0..24),
        0usize..3,
    )
        .prop_map(|(picks, order, noise, end)| build(picks, order, noise, end))
}

fn check_turn(turn: &Turn, trace: &Trace) -> Result<(), TestCaseError> {
    for item in &turn.items {
        let completed = item.phases.last().is_some_and(|p| p.0 == "item.completed");
        let about: Vec<&harness_agents_core::Event> = trace.about(&item.id).collect();
        if !completed {
            let expected = usize::from(item.kind != "todo_list" && !item.phases.is_empty());
            prop_assert_eq!(about.len(), expected, "X8: {:?}", item);
            continue;
        }
        if matches!(item.kind, "agent_message" | "reasoning" | "todo_list") {
            prop_assert!(about.is_empty());
            continue;
        }
        let kinds: Vec<Kind> = about.iter().map(|e| e.kind()).collect();
        prop_assert_eq!(&kinds, &item.kinds, "X4/X6: {:?}", item);
        for event in &about {
            if let EventBody::Unknown { reason, .. } = &event.body {
                prop_assert_eq!(*reason, UnknownReason::UnknownTool);
            }
        }
    }
    let unresolved: Vec<&str> = trace
        .events
        .iter()
        .filter(|e| unknown_reason(e) == Some(UnknownReason::UnresolvedToolUse))
        .filter_map(tool_use_id)
        .collect();
    prop_assert_eq!(
        unresolved,
        turn.unresolved
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
    );
    let count = |kind| trace.of_kind(kind).count();
    let completed = |kind: &str| {
        turn.items
            .iter()
            .filter(|i| i.kind == kind && i.phases.last().is_some_and(|p| p.0 == "item.completed"))
            .count()
    };
    prop_assert_eq!(count(Kind::Agent), completed("agent_message"), "X3");
    prop_assert_eq!(count(Kind::Reasoning), completed("reasoning"), "X3");
    prop_assert_eq!(count(Kind::Plan), turn.plans, "X5");
    let unknown_items = trace
        .events
        .iter()
        .filter(|e| unknown_reason(e) == Some(UnknownReason::UnknownItem))
        .count();
    prop_assert_eq!(unknown_items, completed("mystery_item"), "X6");
    prop_assert_eq!(count(Kind::Warning), turn.warnings, "X7, S2");
    let (status, errors) = match turn.terminal {
        None => (Status::Incomplete, 1),
        Some(true) => (Status::Error, 1),
        Some(false) => (Status::Success, 0),
    };
    prop_assert_eq!(trace.outcome.status, status, "O3");
    prop_assert_eq!(count(Kind::Error), errors, "X7, S9");
    prop_assert_eq!(trace.outcome.session_id.as_deref(), Some("th-1"), "X1");
    Ok(())
}

// Generated turns produce what the SPEC says, satisfy every kit property, and are chunk
// invariant (S1, S6).
harness_agents_core::generated_runs!(
    CodexHarness,
    config(),
    turn(),
    |turn| turn.lines,
    check_turn
);

#[test]
fn the_kit_holds_on_every_recording() {
    let checked =
        fixtures::check_kit_on_recordings(&CodexHarness, &config(), &fixtures::CODEX_FOLDERS);
    assert!(checked >= 100, "only {checked} streams found");
}

harness_agents_core::conformance_kit!(CodexHarness, config(), types: TYPES, keys: KEYS);
