//! The conformance kit (`harness_agents_core::testkit`) on the Claude backend, and generators of
//! well-formed random Claude sessions that know what the SPEC says they must produce.
//!
//! A generated session has messages split over several lines with the same id (thinking,
//! text, redacted thinking and tool uses in any mix), tool uses of every mapped tool, unknown
//! and malformed ones, results arriving in any order (some late, some missing, some twice,
//! some interrupted or failed), results for uses never made, sub-agents, and noise between
//! the lines (system, rate-limit and stream lines, blank and non-JSON lines, unknown types).
//! Each session carries its [`Expect`]: every resolved use yields exactly the events its tool
//! maps to (C9, C14, C15), with its success and thread; every use left without a result
//! yields one `unresolved_tool_use` (S9); one `agent` / `reasoning` per message with text
//! (C3, C4); and so on.
//!
//! The sessions are built from a choice sequence (a vector of numbers proptest shrinks toward
//! zeros and shorter, and zero always picks the simplest option), so a failing case shrinks to
//! a small session.

use std::collections::BTreeMap;

use harness_agents_claude::ClaudeHarness;
use harness_agents_core::testkit::{self, Input, Trace, tool_use_id, unknown_reason};
use harness_agents_core::{EventBody, Kind, NormalizerConfig, Status, UnknownReason};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The Claude wire vocabulary, for the hostile generators.
const TYPES: &[&str] = &[
    "assistant",
    "user",
    "result",
    "system",
    "rate_limit_event",
    "stream_event",
    "mystery",
];
const KEYS: &[&str] = &[
    "type",
    "subtype",
    "message",
    "content",
    "id",
    "name",
    "input",
    "tool_use",
    "tool_result",
    "tool_use_id",
    "tool_use_result",
    "text",
    "thinking",
    "redacted_thinking",
    "is_error",
    "parent_tool_use_id",
    "session_id",
    "init",
    "cwd",
    "result",
    "errors",
    "usage",
    "modelUsage",
    "structured_output",
    "file",
    "filePath",
    "startLine",
    "numLines",
    "interrupted",
    "rate_limit_info",
    "status",
    "file_path",
    "offset",
    "limit",
    "command",
    "pattern",
    "path",
    "skill",
    "Read",
    "Bash",
    "Grep",
    "Skill",
    "Agent",
];

fn config() -> NormalizerConfig {
    let mut config = NormalizerConfig::default();
    config.cwd = Some("/work".into());
    config
}

// ---- the choice sequence ----

/// Numbers drawn in order; past the end every draw is 0 (the simplest choice).
struct Draw {
    data: Vec<u32>,
    pos: usize,
}

impl Draw {
    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        let v = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        if n == 0 { 0 } else { v as usize % n }
    }

    /// True with about `percent` % chance; false on 0.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) >= 100 - percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

// ---- what a session must produce ----

/// What one recorded tool use must produce.
#[derive(Debug, Clone)]
struct UseExpect {
    id: String,
    tool: String,
    thread: Option<String>,
    /// The kinds of its events when resolved, in order (C14, C15); empty for
    /// `StructuredOutput`.
    kinds: Vec<Kind>,
    /// Its `unknown` reason, for tools that map to one.
    reason: Option<UnknownReason>,
    /// How its result arrives.
    fate: Fate,
    /// C10: false when the result is an error or the use was interrupted.
    success: bool,
}

/// How a tool use's result arrives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Once, with the next user line of its thread.
    Now,
    /// Once, some turns later.
    Late,
    /// Twice: the second is unpaired (C12).
    Twice,
    /// Never: unresolved at the end (S9).
    Missing,
}

/// What the SPEC says a session must produce.
#[derive(Debug, Clone, Default)]
struct Expect {
    uses: Vec<UseExpect>,
    /// The `agent` texts and `reasoning` texts, one per message that has any (C3, C4).
    agent: Vec<String>,
    reasoning: Vec<String>,
    /// Results that pair with no use: duplicates and orphans (C12).
    unpaired: usize,
    /// Orphan results recovered as reads (C12).
    recovered: usize,
    /// Tool uses without a string id, emitted at once (C13).
    idless: usize,
    /// Warnings: non-JSON lines (S2) and rate limits (C6).
    warnings: usize,
    /// Unknown events made by whole lines or blocks: unknown types (C8), system subtypes (C1),
    /// not-an-event lines (S3), unknown blocks (C2).
    unknown_lines: usize,
    /// Whether a `result` line ends the session, and whether it reports an error (C7).
    result: Option<bool>,
    session_id: Option<String>,
}

/// A generated session: its lines and what they must produce.
#[derive(Debug, Clone)]
struct Session {
    lines: Vec<String>,
    expect: Expect,
}

// ---- building sessions ----

struct Builder<'d> {
    draw: &'d mut Draw,
    lines: Vec<String>,
    expect: Expect,
    next: usize,
    /// Results deferred to a later turn, per thread.
    late: BTreeMap<Option<String>, Vec<usize>>,
}

/// A tool use block and what it must give.
fn tool_template(draw: &mut Draw, id: &str) -> (Value, String, Vec<Kind>, Option<UnknownReason>) {
    let bash_commands = [
        "cat src/lib.rs",
        "rg -n foo src",
        "ls -la",
        "cargo test",
        "cd web && rg useState src | head -n 5",
        "cat a.rs && cat b.rs",
        "echo hi > out.txt",
        "sed -n 1,20p README.md",
        "git status",
        "grep -rn TODO . && ls src",
    ];
    let (name, input): (&str, Value) = match draw.below(16) {
        0 => ("Read", json!({"file_path": "src/lib.rs"})),
        1 => (
            "Read",
            json!({"file_path": "/abs/a.rs", "offset": draw.below(50), "limit": draw.below(9)}),
        ),
        2 => ("Write", json!({"file_path": "out.txt", "content": "x"})),
        3 => (
            "Edit",
            json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"}),
        ),
        4 => ("MultiEdit", json!({"file_path": "../b.rs", "edits": []})),
        5 => ("NotebookEdit", json!({"notebook_path": "n.ipynb"})),
        6 => ("Grep", json!({"pattern": "fn main", "path": "src"})),
        7 => ("Glob", json!({"pattern": "**/*.rs"})),
        8 => ("LS", json!({"path": "src"})),
        9 | 10 => ("Bash", json!({"command": *draw.pick(&bash_commands)})),
        11 => ("Skill", json!({"skill": "pdf"})),
        12 => ("StructuredOutput", json!({"answer": 42})),
        13 => (
            *draw.pick(&["Agent", "Task", "WebFetch", "TodoWrite"]),
            json!({"prompt": "p"}),
        ),
        14 => ("Read", json!({"file_path": 7})),
        _ => ("Bash", json!({"command": ""})),
    };
    let block = json!({"type": "tool_use", "id": id, "name": name, "input": input});
    let (kinds, reason) = match name {
        "Read" if input["file_path"].is_string() => (vec![Kind::Read], None),
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => (vec![Kind::Write], None),
        "Grep" | "Glob" => (vec![Kind::Search], None),
        "LS" => (vec![Kind::List], None),
        "Skill" => (vec![Kind::Skill], None),
        "StructuredOutput" => (vec![], None),
        "Bash" if input["command"] != "" => (bash_kinds(input["command"].as_str()), None),
        "Read" | "Bash" => (vec![Kind::Unknown], Some(UnknownReason::MalformedToolUse)),
        _ => (vec![Kind::Unknown], Some(UnknownReason::UnknownTool)),
    };
    (block, name.to_string(), kinds, reason)
}

/// C15: the kinds a Bash command gives, as the shared classifier decides.
fn bash_kinds(command: Option<&str>) -> Vec<Kind> {
    testkit::shell_kinds(&["bash", "-lc", command.unwrap_or_default()].map(String::from))
}

impl Builder<'_> {
    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}_{}", self.next)
    }

    /// One assistant message of `thread`, over one or more lines; returns its tool uses.
    fn message(&mut self, thread: &Option<String>) -> Vec<usize> {
        let with_id = !self.draw.chance(10);
        let message_id = self.id("msg");
        let blocks = 1 + self.draw.below(if with_id { 6 } else { 1 });
        let mut agent = Vec::new();
        let mut reasoning = Vec::new();
        let mut uses = Vec::new();
        let mut line_blocks: Vec<Value> = Vec::new();
        for b in 0..blocks {
            let block = match self.draw.below(9) {
                0 | 1 => {
                    let text = self.text();
                    if !text.is_empty() {
                        agent.push(text.clone());
                    }
                    json!({"type": "text", "text": text})
                }
                2 | 3 => {
                    let text = self.text();
                    if !text.is_empty() {
                        reasoning.push(text.clone());
                    }
                    json!({"type": "thinking", "thinking": text, "signature": "sig"})
                }
                4 => json!({"type": "redacted_thinking", "data": "xx"}),
                5 if self.draw.chance(20) => {
                    self.expect.unknown_lines += 1;
                    json!({"type": "image", "source": {}})
                }
                5 if self.draw.chance(10) => {
                    self.expect.idless += 1;
                    json!({"type": "tool_use", "name": "Read", "input": {"file_path": "x"}})
                }
                _ => {
                    let id = self.id("toolu");
                    let (block, tool, kinds, reason) = tool_template(self.draw, &id);
                    let fate = match self.draw.below(10) {
                        0..=5 => Fate::Now,
                        6 => Fate::Late,
                        7 => Fate::Twice,
                        _ => Fate::Missing,
                    };
                    uses.push(self.expect.uses.len());
                    self.expect.uses.push(UseExpect {
                        id,
                        tool,
                        thread: thread.clone(),
                        kinds,
                        reason,
                        fate,
                        success: true,
                    });
                    block
                }
            };
            line_blocks.push(block);
            // Mostly one block per line, as Claude Code prints them.
            if b + 1 == blocks || !self.draw.chance(20) {
                let id = if with_id {
                    json!(message_id)
                } else {
                    Value::Null
                };
                let line = json!({
                    "type": "assistant",
                    "message": {"id": id, "role": "assistant", "content": std::mem::take(&mut line_blocks)},
                    "parent_tool_use_id": thread,
                    "session_id": "sess",
                });
                self.push(line.to_string());
            }
        }
        if !agent.is_empty() {
            self.expect.agent.push(agent.join("\n\n"));
        }
        if !reasoning.is_empty() {
            self.expect.reasoning.push(reasoning.join("\n\n"));
        }
        uses
    }

    fn text(&mut self) -> String {
        let texts = [
            "",
            "Let me look.",
            "Done: all tests pass.",
            "日本語 ✓",
            "a\nb",
        ];
        let text = self.draw.pick(&texts).to_string();
        if self.draw.chance(30) {
            format!("{text} #{}", self.next)
        } else {
            text
        }
    }

    /// Pushes a line, with noise before it now and then.
    fn push(&mut self, line: String) {
        while self.draw.chance(15) {
            let noise = self.noise();
            self.lines.push(noise);
        }
        self.lines.push(line);
    }

    /// A line that flushes nothing and resolves nothing (C1, C6, C8, S1-S3).
    fn noise(&mut self) -> String {
        match self.draw.below(10) {
            0 => json!({"type": "system", "subtype": "status", "status": "compacting"}).to_string(),
            1 => json!({"type": "system", "subtype": "init", "cwd": "/work/sub", "session_id": "late"})
                .to_string(),
            2 => json!({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}})
                .to_string(),
            3 => {
                self.expect.warnings += 1;
                json!({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected", "rateLimitType": "five_hour", "resetsAt": 1}})
                    .to_string()
            }
            4 => json!({"type": "stream_event", "event": {"type": "message_start"}}).to_string(),
            5 => String::new(),
            6 => " \t\r".to_string(),
            7 => {
                self.expect.warnings += 1;
                "npm WARN something".to_string()
            }
            8 => {
                self.expect.unknown_lines += 1;
                json!({"type": "mystery_event", "x": 1}).to_string()
            }
            _ => {
                self.expect.unknown_lines += 1;
                "[1,2,3]".to_string()
            }
        }
    }

    /// The result blocks of some uses, in user lines of `thread`.
    fn results(&mut self, thread: &Option<String>, mut due: Vec<usize>) {
        // Any order.
        for i in (1..due.len()).rev() {
            let j = self.draw.below(i + 1);
            due.swap(i, j);
        }
        let mut blocks: Vec<(Value, Option<Value>)> = Vec::new();
        for u in due {
            let id = self.expect.uses[u].id.clone();
            let is_error = self.draw.chance(20);
            let interrupted = !is_error && self.draw.chance(10);
            let content = if is_error { "boom: failed" } else { "ok" };
            let block = json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error});
            self.expect.uses[u].success = !is_error && !interrupted;
            // An interruption travels in the line's `tool_use_result`, which counts only on a
            // line with exactly one result (C10).
            let tur = interrupted.then(|| json!({"interrupted": true}));
            if self.expect.uses[u].fate == Fate::Twice {
                self.expect.unpaired += 1;
                blocks.push((block.clone(), tur.clone()));
            }
            blocks.push((block, tur));
        }
        if self.draw.chance(10) {
            // A result for a use never made: unpaired, or recovered as a read (C12).
            let id = self.id("orphan");
            let block = json!({"type": "tool_result", "tool_use_id": id, "content": "x"});
            if self.draw.chance(50) {
                self.expect.recovered += 1;
                let file = json!({"file": {"filePath": "src/x.rs", "startLine": 1, "numLines": 3}});
                blocks.push((block, Some(file)));
            } else {
                self.expect.unpaired += 1;
                blocks.push((block, None));
            }
        }
        while !blocks.is_empty() {
            let (first, tur) = blocks.remove(0);
            let mut content = vec![first];
            if tur.is_none() {
                while !blocks.is_empty() && blocks[0].1.is_none() && self.draw.chance(40) {
                    content.push(blocks.remove(0).0);
                }
            }
            let mut line = json!({
                "type": "user",
                "message": {"role": "user", "content": content},
                "parent_tool_use_id": thread,
                "session_id": "sess",
            });
            if let Some(tur) = tur {
                line["tool_use_result"] = tur;
            }
            self.push(line.to_string());
        }
    }

    /// Turns of one thread: messages, sub-agents, results.
    fn turns(&mut self, thread: Option<String>, count: usize, depth: usize) {
        for turn in 0..count {
            let uses = self.message(&thread);
            // A sub-agent runs under one of this message's uses (C4, J4, C17).
            if depth == 0 && !uses.is_empty() && self.draw.chance(25) {
                let u = uses[self.draw.below(uses.len())];
                let parent = self.expect.uses[u].id.clone();
                let n = 1 + self.draw.below(2);
                self.turns(Some(parent), n, depth + 1);
            }
            let mut due: Vec<usize> = Vec::new();
            let last = turn + 1 == count;
            for &u in &uses {
                match self.expect.uses[u].fate {
                    Fate::Now | Fate::Twice => due.push(u),
                    Fate::Late if last => due.push(u),
                    Fate::Late => self.late.entry(thread.clone()).or_default().push(u),
                    Fate::Missing => {}
                }
            }
            if !due.is_empty() || self.draw.chance(30) {
                if self.draw.chance(50) {
                    due.extend(self.late.remove(&thread).unwrap_or_default());
                }
                self.results(&thread, due);
            }
        }
        let rest = self.late.remove(&thread).unwrap_or_default();
        if !rest.is_empty() {
            self.results(&thread, rest);
        }
    }
}

fn build(data: Vec<u32>) -> Session {
    let mut draw = Draw { data, pos: 0 };
    let mut b = Builder {
        draw: &mut draw,
        lines: Vec::new(),
        expect: Expect::default(),
        next: 0,
        late: BTreeMap::new(),
    };
    if !b.draw.chance(10) {
        b.push(
            json!({"type": "system", "subtype": "init", "cwd": "/work", "session_id": "sess"})
                .to_string(),
        );
    }
    let turns = 1 + b.draw.below(8);
    b.turns(None, turns, 0);
    if !b.draw.chance(15) {
        let is_error = b.draw.chance(20);
        b.expect.result = Some(is_error);
        let subtype = if is_error {
            "error_max_turns"
        } else {
            "success"
        };
        b.push(json!({"type": "result", "subtype": subtype, "is_error": is_error, "result": "fin", "session_id": "sess"}).to_string());
    }
    b.expect.session_id = first_session_id(&b.lines);
    let Builder { lines, expect, .. } = b;
    Session { lines, expect }
}

/// S5: the first non-empty string `session_id` of an object line.
fn first_session_id(lines: &[String]) -> Option<String> {
    lines.iter().find_map(|l| {
        let v: Value = serde_json::from_str(l).ok()?;
        v.get("session_id")?
            .as_str()
            .filter(|s| !s.is_empty())
            .map(String::from)
    })
}

fn session() -> impl Strategy<Value = Session> {
    prop::collection::vec(any::<u32>(), 0..800).prop_map(build)
}

/// Checks a session's trace against what it must produce.
fn check_expect(session: &Session, trace: &Trace) -> Result<(), TestCaseError> {
    let expect = &session.expect;
    let finish = trace.finish_events.clone();
    for u in &expect.uses {
        let about: Vec<(usize, &harness_agents_core::Event)> = trace
            .events
            .iter()
            .enumerate()
            .filter(|(_, e)| tool_use_id(e) == Some(u.id.as_str()))
            .filter(|(_, e)| unknown_reason(e) != Some(UnknownReason::UnpairedResult))
            .collect();
        if u.fate == Fate::Missing {
            // S9: one unresolved event at the end, nothing before.
            prop_assert_eq!(about.len(), 1, "S9: {:?}: {:?}", u, about);
            let (i, event) = about[0];
            prop_assert!(finish.contains(&i));
            prop_assert_eq!(
                unknown_reason(event),
                Some(UnknownReason::UnresolvedToolUse)
            );
            prop_assert_eq!(event.parent_tool_use_id.as_ref(), u.thread.as_ref(), "J4");
            continue;
        }
        // C9, at most once: exactly the events its tool maps to, on one line.
        let kinds: Vec<Kind> = about.iter().map(|(_, e)| e.kind()).collect();
        prop_assert_eq!(&kinds, &u.kinds, "C14/C15: {:?}", u);
        let lines: Vec<Option<u64>> = about.iter().map(|(_, e)| e.line).collect();
        prop_assert!(lines.windows(2).all(|w| w[0] == w[1]), "{:?}", lines);
        for (_, event) in &about {
            prop_assert!(
                event.line.is_some(),
                "a resolved use ends up unresolved: {:?}",
                u
            );
            prop_assert_eq!(event.parent_tool_use_id.as_ref(), u.thread.as_ref(), "J4");
            match &event.body {
                EventBody::Unknown { reason, tool, .. } => {
                    prop_assert_eq!(Some(*reason), u.reason);
                    prop_assert_eq!(tool.tool.as_deref(), Some(u.tool.as_str()), "J3");
                }
                EventBody::Read { status, tool, .. }
                | EventBody::Write { status, tool, .. }
                | EventBody::Search { status, tool, .. }
                | EventBody::List { status, tool, .. }
                | EventBody::Command { status, tool, .. }
                | EventBody::Skill { status, tool, .. } => {
                    prop_assert_eq!(status.success, u.success, "C10: {:?}", u);
                    // C10a: every generated result has content, so a failure carries it.
                    prop_assert_eq!(status.error.is_some(), !u.success);
                    prop_assert_eq!(tool.tool.as_deref(), Some(u.tool.as_str()), "J3");
                }
                other => prop_assert!(false, "not a tool event: {:?}", other),
            }
        }
    }
    let count = |kind| trace.of_kind(kind).count();
    let unpaired = trace
        .events
        .iter()
        .filter(|e| unknown_reason(e) == Some(UnknownReason::UnpairedResult))
        .count();
    prop_assert_eq!(unpaired, expect.unpaired, "C12: unpaired results");
    let recovered = trace
        .events
        .iter()
        .filter(|e| tool_use_id(e).is_some_and(|id| id.starts_with("orphan")))
        .filter(|e| e.kind() == Kind::Read)
        .count();
    prop_assert_eq!(recovered, expect.recovered, "C12: recovered reads");
    let idless = trace
        .events
        .iter()
        .filter(|e| unknown_reason(e) == Some(UnknownReason::MalformedToolUse))
        .filter(|e| tool_use_id(e).is_none())
        .count();
    prop_assert_eq!(idless, expect.idless, "C13: uses without an id");

    // C3, C4: one agent and one reasoning per message with text, with the joined texts.
    let texts = |kind| -> Vec<String> {
        let mut texts: Vec<String> = trace
            .of_kind(kind)
            .filter_map(|e| match &e.body {
                EventBody::Agent { text } => Some(text.to_string()),
                EventBody::Reasoning { text } => Some(text.clone()),
                _ => None,
            })
            .collect();
        texts.sort();
        texts
    };
    let mut agent = expect.agent.clone();
    agent.sort();
    let mut reasoning = expect.reasoning.clone();
    reasoning.sort();
    prop_assert_eq!(texts(Kind::Agent), agent, "C3/C4: agent messages");
    prop_assert_eq!(texts(Kind::Reasoning), reasoning, "C3/C4: reasoning");

    prop_assert_eq!(count(Kind::Warning), expect.warnings, "S2/C6: warnings");
    let line_unknowns = trace
        .events
        .iter()
        .filter(|e| {
            matches!(
                unknown_reason(e),
                Some(
                    UnknownReason::UnknownType
                        | UnknownReason::UnknownSystemSubtype
                        | UnknownReason::NotAnEvent
                        | UnknownReason::UnknownBlock
                        | UnknownReason::MalformedMessage
                )
            )
        })
        .count();
    prop_assert_eq!(
        line_unknowns,
        expect.unknown_lines,
        "C1/C2/C8/S3: unknown lines"
    );
    prop_assert_eq!(count(Kind::Plan), 0, "C17: Claude never plans");

    // C7, S9, O1: the end.
    let (status, errors) = match expect.result {
        None => (Status::Incomplete, 1),
        Some(true) => (Status::Error, 1),
        Some(false) => (Status::Success, 0),
    };
    prop_assert_eq!(trace.outcome.status, status);
    prop_assert_eq!(count(Kind::Error), errors);
    prop_assert_eq!(
        trace.outcome.session_id.as_ref(),
        expect.session_id.as_ref(),
        "S5"
    );
    if expect.result.is_some() {
        prop_assert_eq!(trace.outcome.final_output.as_deref(), Some("fin"));
    }
    Ok(())
}

fn bytes_of(lines: &[String]) -> Vec<u8> {
    let mut bytes = lines.join("\n").into_bytes();
    bytes.push(b'\n');
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Generated sessions produce what the SPEC says, and satisfy every kit property.
    #[test]
    fn generated_sessions_produce_what_the_spec_says(session in session()) {
        let input = Input::text(&session.lines);
        let trace = testkit::check_stream(&ClaudeHarness, &config(), &input)?;
        check_expect(&session, &trace)?;
    }

    /// S1, S6: a generated session gives the same events however its bytes are split.
    #[test]
    fn generated_sessions_are_chunk_invariant(session in session(), chunks in testkit::chunk_sizes()) {
        testkit::check_chunking(&ClaudeHarness, &config(), &bytes_of(&session.lines), &chunks)?;
    }
}

/// The generators themselves: a session of zeros is the simplest one, and the default
/// strategy reaches every feature the expectations count.
#[test]
fn generator_reaches_every_feature() {
    let simplest = build(Vec::new());
    assert!(!simplest.lines.is_empty());
    let mut seen = Expect::default();
    let mut fates = std::collections::BTreeSet::new();
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    for _ in 0..300 {
        let Ok(tree) = session().new_tree(&mut runner) else {
            continue;
        };
        let s = tree.current();
        seen.unpaired += s.expect.unpaired;
        seen.recovered += s.expect.recovered;
        seen.idless += s.expect.idless;
        seen.warnings += s.expect.warnings;
        seen.unknown_lines += s.expect.unknown_lines;
        for u in &s.expect.uses {
            fates.insert(format!("{:?}", u.fate));
            if u.thread.is_some() {
                fates.insert("sub-agent".into());
            }
            if u.kinds.len() > 1 {
                fates.insert("reclassified".into());
            }
        }
    }
    assert!(seen.unpaired > 0 && seen.recovered > 0 && seen.idless > 0);
    assert!(seen.warnings > 0 && seen.unknown_lines > 0);
    assert_eq!(
        fates.into_iter().collect::<Vec<_>>(),
        [
            "Late",
            "Missing",
            "Now",
            "Twice",
            "reclassified",
            "sub-agent"
        ]
    );
}

#[test]
fn the_kit_holds_on_every_recording() {
    let mut config = NormalizerConfig::default();
    config.cwd = Some("/home/dev/project".into());
    let checked =
        fixtures::check_kit_on_recordings(&ClaudeHarness, &config, &fixtures::CLAUDE_FOLDERS);
    assert!(checked >= 49 + 47 + 9, "only {checked} streams found");
}

harness_agents_core::conformance_kit!(ClaudeHarness, config(), types: TYPES, keys: KEYS);
