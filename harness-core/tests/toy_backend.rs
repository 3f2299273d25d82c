//! A toy backend, whole, as a new contributor writes one (ARCHITECTURE.md, "Adding a backend"):
//! a decoder of its vocabulary, its `Backend` impl (a name, the decoder's driver, how its lines
//! are recognized), and the conformance kit in one line. The
//! driver does the rest: line numbers, counts, warnings, finish-once, the S9 error.
//!
//! Its vocabulary, one JSON object per line:
//! `{"type":"say","text":T}` an `agent` event (T1); `{"type":"read","id":I,"path":P}` a read
//! that starts (T2) and `{"type":"done","id":I,"ok":B}` its result (T3); `{"type":"end"}` the
//! terminal line (T4); anything else `unknown` (T5).

use harness_agents_core::backend::{Decoder, Driver, Emitter, NotJson, has_type, parse_value};
use harness_agents_core::testkit::{self, Input};
use harness_agents_core::{
    Backend, EventBody, Normalizer, NormalizerConfig, PendingToolUse, ToolRef, ToolStatus,
    UnknownReason,
};
use serde_json::{Value, json};

/// The toy's decoder. `Keep` chooses how it keeps pending reads: every one (right), or one per
/// id, where a reused id silently replaces the earlier read (the bug the kit must catch).
#[derive(Default)]
struct Toy<const KEEP_ALL: bool> {
    /// Each pending read and its path.
    pending: Vec<(PendingToolUse, String)>,
}

fn tool(id: &str) -> ToolRef {
    ToolRef {
        tool: Some("read".into()),
        tool_use_id: Some(id.into()),
    }
}

fn read(id: &str, path: &str, success: bool) -> EventBody {
    EventBody::Read {
        path: path.into(),
        range: None,
        command: None,
        status: ToolStatus {
            success,
            error: None,
        },
        tool: tool(id),
    }
}

impl<const KEEP_ALL: bool> Decoder for Toy<KEEP_ALL> {
    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        let value = parse_value(line)?;
        let field = |key: &str| value.get(key).and_then(Value::as_str);
        match (field("type"), field("id")) {
            (Some("say"), _) if field("text").is_some() => {
                let text = field("text").unwrap_or_default().into();
                out.emit(EventBody::Agent { text });
            }
            (Some("read"), Some(id)) => {
                let path = field("path").unwrap_or(".").to_string();
                out.started_from(tool(id), &[read(id, &path, true)], None);
                if !KEEP_ALL {
                    self.pending.retain(|(p, _)| p.id != id);
                }
                self.pending
                    .push((PendingToolUse::new(id, Some("read")), path));
                out.defer();
            }
            (Some("done"), Some(id)) => {
                let ok = value.get("ok") == Some(&json!(true));
                match self.pending.iter().position(|(p, _)| p.id == id) {
                    Some(i) => {
                        let (tool_use, path) = self.pending.remove(i);
                        out.emit(read(&tool_use.id, &path, ok));
                    }
                    None => out.emit(EventBody::Unknown {
                        reason: UnknownReason::UnpairedResult,
                        raw: value.clone(),
                        tool: tool(id),
                    }),
                }
            }
            (Some("end"), _) => {
                if value.get("failed") == Some(&json!(true)) {
                    out.fail();
                }
                out.terminal();
            }
            _ => out.emit(EventBody::Unknown {
                reason: UnknownReason::UnknownType,
                raw: value.clone(),
                tool: ToolRef::default(),
            }),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        for (tool_use, _) in std::mem::take(&mut self.pending) {
            let raw = json!({"id": tool_use.id});
            out.unresolved(tool_use, raw);
        }
    }

    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.pending.iter().map(|(p, _)| p.clone()).collect()
    }
}

/// The toy backend: its name, its decoder's driver, and the line types only it prints; every
/// other method keeps the trait's default.
struct ToyHarness<const KEEP_ALL: bool>;

impl<const KEEP_ALL: bool> Backend for ToyHarness<KEEP_ALL> {
    fn name(&self) -> &'static str {
        "toy"
    }

    fn normalizer(&self, config: NormalizerConfig) -> Box<dyn Normalizer> {
        Box::new(Driver::<Toy<KEEP_ALL>>::new(config))
    }

    fn recognizes(&self, line: &Value) -> bool {
        has_type(line, &["say", "read"])
    }
}

const TYPES: &[&str] = &["say", "read", "done", "end"];
const KEYS: &[&str] = &["type", "id", "path", "text", "ok", "failed"];

harness_agents_core::conformance_kit!(ToyHarness::<true>, NormalizerConfig::default(), types: TYPES, keys: KEYS);

fn lines(values: &[Value]) -> Input {
    Input::stdout(testkit::json_lines(values))
}

#[test]
fn the_toy_gives_its_events_and_the_driver_its_bookkeeping() {
    let input = lines(&[
        json!({"type": "say", "text": "hi"}),
        json!({"type": "read", "id": "r1", "path": "/a"}),
        json!({"type": "done", "id": "r1", "ok": true}),
        json!({"type": "end"}),
    ]);
    let trace = testkit::check_stream(&ToyHarness::<true>, &NormalizerConfig::default(), &input)
        .unwrap_or_else(|e| panic!("{e}"));
    let events: Vec<Value> = trace
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap_or_default())
        .collect();
    assert_eq!(
        events,
        [
            json!({"kind": "agent", "text": "hi", "line": 1}),
            json!({"kind": "read", "path": "/a", "success": true, "tool": "read", "tool_use_id": "r1", "line": 3}),
        ]
    );
    assert_eq!(trace.outcome.status, harness_agents_core::Status::Success);
}

#[test]
fn the_kit_fails_a_backend_that_drops_a_pending_use_whose_id_was_reused() {
    let input = lines(&[
        json!({"type": "read", "id": "r1", "path": "/a"}),
        json!({"type": "read", "id": "r1", "path": "/b"}),
        json!({"type": "done", "id": "r1", "ok": true}),
        json!({"type": "end"}),
    ]);
    let config = NormalizerConfig::default();
    assert!(testkit::check_stream(&ToyHarness::<true>, &config, &input).is_ok());
    let error = testkit::check_stream(&ToyHarness::<false>, &config, &input)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        error.contains("L1: line 2 recorded 0 use(s) of r1 but announced 1"),
        "{error}"
    );
}
