//! The conformance kit (`harness_agents_core::testkit`) on the opencode backend: every property (no
//! panic, chunk invariance, line numbers, order, accounting, settling, counts, L1 and
//! conservation) on hostile lines of opencode's vocabulary, and on every recording.

use harness_agents_opencode::OpencodeHarness;

use super::config;

const TYPES: &[&str] = &[
    "step_start",
    "step_finish",
    "text",
    "reasoning",
    "tool_use",
    "error",
    "mystery",
];
const KEYS: &[&str] = &[
    "type",
    "sessionID",
    "part",
    "messageID",
    "text",
    "synthetic",
    "tool",
    "callID",
    "state",
    "status",
    "completed",
    "running",
    "input",
    "output",
    "metadata",
    "exit",
    "filePath",
    "offset",
    "limit",
    "command",
    "workdir",
    "pattern",
    "path",
    "todos",
    "content",
    "patchText",
    "name",
    "reason",
    "tool-calls",
    "stop",
    "tokens",
    "cost",
    "error",
    "data",
    "message",
    "read",
    "bash",
    "todowrite",
];

harness_agents_core::conformance_kit!(OpencodeHarness, config(), types: TYPES, keys: KEYS);

#[test]
fn the_kit_holds_on_every_recording() {
    let checked = fixtures::check_kit_on_recordings(&OpencodeHarness, &config(), &["opencode"]);
    assert_eq!(checked, 46);
}

mod generated {
    //! Generated runs: steps of reasoning, text and tool parts in any order, each step closed by
    //! a `step_finish` (the last one `stop`, or none, or an `error` line instead). Each run
    //! knows what the P rules say it gives: one `reasoning` and one `agent` per stretch of
    //! text between tools (P3), each tool's event kinds (P6), the status (P10, P13) and the
    //! number of steps (P11).

    use harness_agents_core::testkit::Trace;
    use harness_agents_core::{Kind, Status};
    use harness_agents_opencode::OpencodeHarness;
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::config;

    /// One part of a step, as generated.
    #[derive(Debug, Clone)]
    enum Part {
        Text(bool),
        Reasoning(bool),
        Tool(usize),
    }

    /// A tool use and the kinds it gives.
    fn tool(pick: usize, id: &str) -> (Value, Vec<Kind>) {
        let (tool, status, input, extra, kinds): (&str, &str, Value, Value, Vec<Kind>) =
            match pick % 9 {
                0 => (
                    "read",
                    "completed",
                    json!({"filePath": "a.rs"}),
                    json!({}),
                    vec![Kind::Read],
                ),
                1 => (
                    "read",
                    "error",
                    json!({"filePath": "/x"}),
                    json!({"error": "no"}),
                    vec![Kind::Read],
                ),
                2 => (
                    "bash",
                    "completed",
                    json!({"command": "cat a && rg x"}),
                    json!({"metadata": {"exit": 0}}),
                    vec![Kind::Read, Kind::Search],
                ),
                3 => (
                    "bash",
                    "completed",
                    json!({"command": "make"}),
                    json!({"metadata": {"exit": 2}, "output": "boom"}),
                    vec![Kind::Command],
                ),
                4 => (
                    "apply_patch",
                    "completed",
                    json!({"patchText": "*** Add File: a\n*** Delete File: b"}),
                    json!({}),
                    vec![Kind::Write, Kind::Write],
                ),
                5 => (
                    "todowrite",
                    "completed",
                    json!({"todos": [{"content": "x", "status": "pending"}]}),
                    json!({}),
                    vec![Kind::Plan],
                ),
                6 => (
                    "glob",
                    "completed",
                    json!({"pattern": "*"}),
                    json!({}),
                    vec![Kind::Search],
                ),
                7 => (
                    "task",
                    "completed",
                    json!({"prompt": "p"}),
                    json!({}),
                    vec![Kind::Unknown],
                ),
                _ => (
                    "edit",
                    "completed",
                    json!({"filePath": "a"}),
                    json!({}),
                    vec![Kind::Write],
                ),
            };
        let mut state = json!({"status": status, "input": input});
        if let (Some(state), Some(extra)) = (state.as_object_mut(), extra.as_object()) {
            state.extend(extra.clone());
        }
        let line = json!({"type": "tool_use", "sessionID": "ses_g", "part": {
            "type": "tool", "tool": tool, "callID": id, "state": state}});
        (line, kinds)
    }

    #[derive(Debug, Clone)]
    struct Run {
        lines: Vec<String>,
        kinds: Vec<Kind>,
        status: Status,
        steps: usize,
    }

    fn build(steps: Vec<Vec<Part>>, end: usize) -> Run {
        let mut lines = Vec::new();
        let mut kinds = Vec::new();
        let count = steps.len();
        let mut finished = 0;
        for (s, parts) in steps.into_iter().enumerate() {
            let message = format!("msg_{s}");
            lines.push(json!({"type": "step_start", "sessionID": "ses_g", "part": {"type": "step-start", "messageID": message}}).to_string());
            let (mut reasoning, mut text) = (false, false);
            let flush = |kinds: &mut Vec<Kind>, reasoning: &mut bool, text: &mut bool| {
                if *reasoning {
                    kinds.push(Kind::Reasoning);
                }
                if *text {
                    kinds.push(Kind::Agent);
                }
                (*reasoning, *text) = (false, false);
            };
            for (p, part) in parts.into_iter().enumerate() {
                match part {
                    Part::Text(empty) | Part::Reasoning(empty) => {
                        let is_text = matches!(part, Part::Text(_));
                        let kind = if is_text { "text" } else { "reasoning" };
                        let body = if empty { "" } else { "words" };
                        if !empty {
                            if is_text {
                                text = true
                            } else {
                                reasoning = true
                            }
                        }
                        lines.push(json!({"type": kind, "sessionID": "ses_g", "part": {"type": kind, "messageID": message, "text": body}}).to_string());
                    }
                    Part::Tool(pick) => {
                        flush(&mut kinds, &mut reasoning, &mut text);
                        let (line, tool_kinds) = tool(pick, &format!("call_{s}_{p}"));
                        lines.push(line.to_string());
                        kinds.extend(tool_kinds);
                    }
                }
            }
            flush(&mut kinds, &mut reasoning, &mut text);
            let last = s + 1 == count;
            if !last || end == 0 {
                let reason = if last { "stop" } else { "tool-calls" };
                lines.push(json!({"type": "step_finish", "sessionID": "ses_g", "part": {"type": "step-finish", "messageID": message, "reason": reason, "tokens": {"input": 1, "output": 1, "reasoning": 0, "cache": {"read": 0, "write": 0}}, "cost": 0}}).to_string());
                finished += 1;
            }
        }
        let status = match end {
            0 if count > 0 => Status::Success,
            1 => {
                lines.push(json!({"type": "error", "sessionID": "ses_g", "error": {"name": "APIError", "data": {"message": "down"}}}).to_string());
                kinds.push(Kind::Error);
                Status::Error
            }
            _ => {
                kinds.push(Kind::Error); // S9
                Status::Incomplete
            }
        };
        Run {
            lines,
            kinds,
            status,
            steps: finished,
        }
    }

    fn part() -> impl Strategy<Value = Part> {
        prop_oneof![
            any::<bool>().prop_map(Part::Text),
            any::<bool>().prop_map(Part::Reasoning),
            (0usize..9).prop_map(Part::Tool),
        ]
    }

    fn run() -> impl Strategy<Value = Run> {
        (
            prop::collection::vec(prop::collection::vec(part(), 0..6), 1..5),
            0usize..3,
        )
            .prop_map(|(steps, end)| build(steps, end))
    }

    fn check(run: &Run, trace: &Trace) -> Result<(), TestCaseError> {
        let kinds: Vec<Kind> = trace.events.iter().map(|e| e.kind()).collect();
        prop_assert_eq!(&kinds, &run.kinds);
        prop_assert_eq!(trace.outcome.status, run.status);
        let turns = trace
            .outcome
            .metrics
            .num_turns
            .as_ref()
            .and_then(|n| n.as_u64());
        prop_assert_eq!(turns, (run.steps > 0).then_some(run.steps as u64));
        Ok(())
    }

    // Generated runs give what the P rules say, satisfy every kit property, and are chunk
    // invariant (S1, S6).
    harness_agents_core::generated_runs!(OpencodeHarness, config(), run(), |run| run.lines, check);
}
