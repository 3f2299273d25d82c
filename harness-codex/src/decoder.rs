//! The decoder of `codex exec --json` (S and X rules, O1 and O3).

use std::collections::BTreeMap;
use std::sync::Arc;

use harness_agents_core::backend::json::{self, Loose};
use harness_agents_core::backend::{
    Decoder, Driver, Emitter, NotJson, Recorded, Summary, parse_value, reparse,
};
use harness_agents_core::{
    EventBody, Metrics, NormalizerConfig, PendingToolUse, PlanItem, ToolRef, UnknownReason,
    WarningSource,
};
use serde_json::Number;

use crate::tools::{completed, plan_items_of};
use crate::wire::{Item, ItemField, LineParts};

/// An item started or updated but not completed yet (X2).
#[derive(Debug)]
struct OpenItem {
    /// Its `type`, a string.
    kind: String,
    /// The last recorded item, as written.
    raw: Box<str>,
}

impl OpenItem {
    fn kind(&self) -> &str {
        &self.kind
    }
}

/// The token figures of the last `turn.completed` (O3).
#[derive(Debug, Clone, Default)]
struct Usage {
    input: Option<Number>,
    cached_input: Option<Number>,
    output: Option<Number>,
    reasoning_output: Option<Number>,
}

impl Usage {
    /// The figures of a `turn.completed` `usage` (numbers only).
    fn of(usage: &Option<[Loose<'_>; 4]>) -> Usage {
        let number = |i: usize| match usage.as_ref().map(|u| &u[i]) {
            Some(Loose::Number(n)) => Some(n.clone()),
            _ => None,
        };
        Usage {
            input: number(0),
            cached_input: number(1),
            output: number(2),
            reasoning_output: number(3),
        }
    }
}

/// The Codex normalizer: feed it lines, get events (see the crate docs). The core's [`Driver`]
/// does the bookkeeping; [`CodexDecoder`] the X rules.
pub type CodexNormalizer = Driver<CodexDecoder>;

/// The decoding of `codex exec --json` lines (X rules, O3).
///
/// Its state is the items still open (by latest start), the last plan emitted per open
/// `todo_list` id (X5), and a few figures for the outcome.
#[derive(Debug, Default)]
pub struct CodexDecoder {
    /// Resolves relative paths (X9).
    cwd: Option<String>,

    /// Open items by id, in the order of their latest start (X8).
    open: Recorded<OpenItem>,
    /// The last plan emitted for each `todo_list` id (X5).
    plans: BTreeMap<String, Vec<PlanItem>>,

    terminals: u64,
    usage: Usage,
    /// The last non-empty agent message since the previous terminal line (O1): its event's
    /// text, shared, not a copy (S7).
    answer: Option<Arc<str>>,
}

impl CodexDecoder {
    /// Sets the directory relative paths are resolved against (X9) when the caller gave none:
    /// a rollout names its session's (R1).
    #[cfg(feature = "sessions")]
    pub(crate) fn set_cwd(&mut self, cwd: &str) {
        if self.cwd.is_none() {
            self.cwd = Some(cwd.to_string());
        }
    }

    /// One object line, read through its view; `line` is the line, for the rare events that
    /// carry it (J8).
    fn on_parts(&mut self, parts: &LineParts<'_>, line: &[u8], out: &mut Emitter<'_>) {
        let Some(kind) = parts.kind.as_str() else {
            // S3: no string `type`.
            out.unknown(UnknownReason::NotAnEvent, reparse(line));
            return;
        };
        out.consumed_by(match kind {
            "thread.started" | "turn.started" => "X1",
            _ => "X2",
        });
        match kind {
            "thread.started" => {
                if let Some(id) = parts.thread_id.non_empty_str() {
                    out.session_id(id);
                }
            }
            "turn.started" => {}
            "item.started" => self.on_item(&parts.item, line, Phase::Started, out),
            "item.updated" => self.on_item(&parts.item, line, Phase::Updated, out),
            "item.completed" => self.on_item(&parts.item, line, Phase::Completed, out),
            "turn.completed" => {
                self.terminal(out);
                self.usage = Usage::of(&parts.usage);
            }
            "turn.failed" => {
                self.terminal(out);
                out.fail();
                let message = parts
                    .error_message
                    .non_empty_str()
                    .unwrap_or("turn failed")
                    .to_string();
                out.emit(EventBody::Error { message });
            }
            "error" => {
                let message = parts.message.as_str().unwrap_or_default().to_string();
                let source = WarningSource::Stream;
                out.emit(EventBody::Warning { message, source });
            }
            _ => out.unknown(UnknownReason::UnknownType, reparse(line)),
        }
    }

    /// A `turn.completed` or `turn.failed` line (X7, O1, O3).
    fn terminal(&mut self, out: &mut Emitter<'_>) {
        out.terminal();
        self.terminals += 1;
        out.final_output(self.answer.take());
    }

    /// X2: records, replaces or completes an item.
    fn on_item(&mut self, item: &ItemField<'_>, line: &[u8], phase: Phase, out: &mut Emitter<'_>) {
        let item = match item {
            ItemField::Object(item) if item.view.kind.as_str().is_some() => item,
            ItemField::Object(item) => {
                out.unknown(UnknownReason::UnknownItem, item.value());
                return;
            }
            ItemField::Absent | ItemField::Other => {
                out.unknown(UnknownReason::UnknownItem, reparse(line));
                return;
            }
        };
        let kind = item.view.kind.as_str().unwrap_or_default();
        let id = item.view.id.as_str();
        match phase {
            Phase::Started | Phase::Updated => {
                if let Some(id) = id {
                    // L1: announced when it becomes pending (O4), which a todo_list never is.
                    let was_pending = self.open_kind(id).is_some_and(|k| k != "todo_list");
                    self.record(id, kind, item.text(), phase, out);
                    if !was_pending && out.wants_started() {
                        self.started(item, kind, id, out);
                    }
                }
                if kind == "todo_list" {
                    self.plan(item, id, out);
                }
            }
            Phase::Completed => self.complete(item, kind, id, out),
        }
    }

    /// An `item.completed` line's item, its `type` a string, read by the caller: what
    /// [`Decoder::line`] does for such a line, without the line. A stored rollout (R4) hands
    /// its items here as it reads them, not as text to read again (S7).
    #[cfg(feature = "sessions")]
    pub(crate) fn item_completed(&mut self, item: &Item<'_>, out: &mut Emitter<'_>) {
        out.consumed_by("X2");
        let kind = item.view.kind.as_str().unwrap_or_default();
        self.complete(item, kind, item.view.id.as_str(), out);
    }

    /// X3-X6: a completed item's events; the item is no longer open.
    fn complete(&mut self, item: &Item<'_>, kind: &str, id: Option<&str>, out: &mut Emitter<'_>) {
        out.consumed_by(match kind {
            "agent_message" | "reasoning" => "X3",
            "todo_list" => "X5",
            _ => "X6",
        });
        if let Some(id) = id {
            self.open.remove(id);
        }
        if kind == "todo_list" {
            self.plan(item, id, out);
            // X5: the last plan of an id is kept only until its item completes (S7).
            if let Some(id) = id {
                self.plans.remove(id);
            }
            return;
        }
        for body in completed(item, kind, self.cwd.as_deref()) {
            if let EventBody::Agent { text } = &body {
                self.answer = Some(Arc::clone(text));
            }
            out.emit(body);
        }
    }

    /// The type of the open item with this id.
    fn open_kind(&self, id: &str) -> Option<&str> {
        self.open.get(id).map(OpenItem::kind)
    }

    fn record(&mut self, id: &str, kind: &str, raw: Box<str>, phase: Phase, out: &mut Emitter<'_>) {
        out.defer();
        let record = OpenItem {
            kind: kind.to_string(),
            raw,
        };
        // An update keeps the item's place; a start (again) makes it the latest.
        match phase {
            Phase::Updated if self.open.get(id).is_some() => {
                self.open.replace(id, record);
            }
            _ => self.open.push(id, record),
        }
    }

    /// L1: the `started` event of an item just recorded, from what it would give once
    /// completed. Every item but a `todo_list` (which emits its `plan` at once) is announced,
    /// as every one is pending until it completes (X8, O4).
    fn started(&self, item: &Item<'_>, kind: &str, id: &str, out: &mut Emitter<'_>) {
        if kind == "todo_list" {
            return;
        }
        let would_be = completed(item, kind, self.cwd.as_deref());
        // The final events' tool name (`<server>/<tool>` for MCP, X6), else the item type.
        let name = would_be.iter().find_map(|b| b.tool()?.tool.clone());
        let tool = ToolRef {
            tool: name.or_else(|| Some(kind.to_string())),
            tool_use_id: Some(id.to_string()),
        };
        out.started_from(tool, &would_be, None);
    }

    /// X5: a `plan` event, unless the same id's last plan had the same items.
    fn plan(&mut self, item: &Item<'_>, id: Option<&str>, out: &mut Emitter<'_>) {
        let items = plan_items_of(item);
        if let Some(id) = id {
            if self.plans.get(id) == Some(&items) {
                return;
            }
            self.plans.insert(id.to_string(), items.clone());
        }
        out.emit(EventBody::Plan { items });
    }

    fn metrics(&self) -> Metrics {
        let usage = self.usage.clone();
        let mut metrics = Metrics::default();
        metrics.input_tokens = usage.input;
        metrics.output_tokens = usage.output;
        metrics.cache_read_input_tokens = usage.cached_input;
        metrics.reasoning_output_tokens = usage.reasoning_output;
        metrics.num_turns = (self.terminals > 0).then(|| Number::from(self.terminals));
        metrics
    }
}

/// Which of the three item lines is being read (X2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Started,
    Updated,
    Completed,
}

impl Decoder for CodexDecoder {
    fn configure(&mut self, config: &NormalizerConfig) {
        self.cwd = config.cwd.clone();
    }

    fn line(&mut self, line: &[u8], out: &mut Emitter<'_>) -> Result<(), NotJson> {
        // The core's entry point: a borrowed view, fast then exact, which exists exactly when
        // the line parses into a `Value` (S2); read in place, as the view is large.
        let mut parts = None;
        json::read_line_into::<LineParts<'_>>(line, &mut parts, false)?;
        match &parts {
            Some(parts) => self.on_parts(parts, line, out),
            // S3: valid JSON that is not an object.
            None => out.unknown(UnknownReason::NotAnEvent, parse_value(line)?),
        }
        Ok(())
    }

    fn end(&mut self, out: &mut Emitter<'_>) {
        self.plans.clear();
        // One item at a time, its memory freed as its event goes out (S7, X8).
        while let Some((id, open)) = self.open.pop_first() {
            let kind = open.kind().to_string();
            if kind == "todo_list" {
                continue;
            }
            let tool = ToolRef {
                tool: Some(kind),
                tool_use_id: Some(id),
            };
            out.emit(EventBody::Unknown {
                reason: UnknownReason::UnresolvedToolUse,
                raw: reparse(open.raw.as_bytes()),
                tool,
            });
        }
    }

    fn summary(&self) -> Summary {
        Summary::new(self.metrics())
    }

    /// The items still open, other than `todo_list`, by latest start; `tool` is the item type.
    fn pending_tool_uses(&self) -> Vec<PendingToolUse> {
        self.open
            .iter()
            .filter(|(_, open)| open.kind() != "todo_list")
            .map(|(id, open)| PendingToolUse {
                id: id.to_string(),
                tool: Some(open.kind().to_string()),
                thread: None,
            })
            .collect()
    }
}
