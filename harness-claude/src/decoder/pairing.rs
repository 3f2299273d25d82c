//! Tool uses recorded, paired with their results, mapped (C9-C15), and announced (L1).

use super::*;

/// A `tool_result` block and what its line says about it.
pub(super) struct ResultRef<'a> {
    /// The block as written, when kept.
    pub(super) raw: Option<&'a str>,
    /// Its place in the message's content.
    pub(super) index: usize,
    /// Its `tool_use_id`, when a string.
    pub(super) tool_use_id: Option<&'a str>,
    /// Whether the line's `tool_use_result` belongs to this result (C10), and what it is.
    pub(super) tool_use_result: ToolUseResult,
    /// The whole line, for raw JSON.
    pub(super) line: LineValue<'a>,
    /// The whole line's JSON text.
    pub(super) text: &'a str,
    /// The key of the line's tool use result: `tool_use_result`, or a stored transcript's
    /// `toolUseResult` (T1).
    pub(super) key: &'static str,
}

impl ResultRef<'_> {
    /// C10a: the failure text, read without building the block (J6: cut to 1,000 characters).
    fn error_text(&self) -> Option<String> {
        match self.raw {
            Some(raw) => stream_json::result_error_text(raw, MAX_TEXT),
            None => stream_json::line_result_error_text(self.text, self.index, MAX_TEXT),
        }
    }

    fn value(&self) -> Value {
        block_value(self.raw, self.index, self.line)
    }

    fn tool_use_result_value(&self) -> Option<Value> {
        match self.tool_use_result {
            ToolUseResult::None => None,
            _ => (self.line)().get(self.key).cloned(),
        }
    }
}

impl ClaudeDecoder {
    /// C9, C11, C13: records a tool use, or emits it at once when it has no string id.
    pub(super) fn record_tool_use(
        &mut self,
        block: &stream_json::BlockView<'_>,
        text: Box<str>,
        seq: u64,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let name = block.name.as_str().map(str::to_string);
        let Some(id) = block.id.as_str() else {
            let raw = tool_raw(reparse(text.as_bytes()), Value::Null, None);
            let body = EventBody::Unknown {
                reason: UnknownReason::MalformedToolUse,
                raw,
                tool: ToolRef {
                    tool: name,
                    tool_use_id: None,
                },
            };
            out.emit_in(body, thread.clone());
            return;
        };
        if let Some(m) = self.message_mut(seq) {
            m.tool_ids.push(id.to_string());
        }
        self.owners.entry(id.to_string()).or_default().push(seq);

        out.defer();
        if out.wants_started() {
            let tool = ToolRef {
                tool: name.clone(),
                tool_use_id: Some(id.to_string()),
            };
            self.started(&text, tool, thread, out);
        }
        self.uses.record(ToolUse {
            id: id.to_string(),
            name,
            thread: thread.clone(),
            block: text,
        });
    }

    pub(super) fn on_user(
        &mut self,
        content: Content<'_>,
        tool_use_result: ToolUseResult,
        line: LineValue<'_>,
        text: &str,
        thread: Thread,
        out: &mut Emitter<'_>,
    ) {
        let results: Vec<(usize, &stream_json::BlockView<'_>, Option<&str>)> = match &content {
            Content::List(blocks) => blocks
                .iter()
                .enumerate()
                .filter_map(|(i, b)| Some((i, b.view.as_ref()?, b.raw)))
                .filter(|(_, v, _)| v.kind.as_str() == Some("tool_result"))
                .collect(),
            _ => Vec::new(),
        };

        let mut set = Vec::new();
        if let Some(&seq) = self.open_by_thread.get(&thread) {
            set.push(seq);
        }
        self.flush_for_parent(&thread, &mut set);
        for (_, view, _) in &results {
            if let Some(id) = view.tool_use_id.as_str() {
                self.flush_thread(id, &mut set);
            }
        }
        self.flush(set, out);

        match content {
            Content::Text => {}
            Content::List(_) => {
                let tool_use_result = if results.len() == 1 {
                    tool_use_result
                } else {
                    ToolUseResult::None
                };
                for &(index, view, raw) in &results {
                    let result = ResultRef {
                        raw,
                        index,
                        tool_use_id: view.tool_use_id.as_str(),
                        tool_use_result,
                        line,
                        text,
                        key: self.tool_use_result_key(),
                    };
                    self.resolve(&result, view.is_error.is_true(), &thread, out);
                }
            }
            Content::Other => {
                out.unknown_in(UnknownReason::MalformedMessage, line(), thread.clone())
            }
        }
    }

    /// C9-C12: a tool result resolves its recorded use, or is recovered, or is unpaired.
    pub(super) fn resolve(
        &mut self,
        result: &ResultRef<'_>,
        is_error: bool,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let interrupted = matches!(
            result.tool_use_result,
            ToolUseResult::Object { interrupted: true }
        );
        let success = !is_error && !interrupted;
        let status = ToolStatus {
            success,
            error: if success { None } else { result.error_text() },
        };
        let id = result.tool_use_id;
        match self.uses.take(id) {
            Paired::One(tool_use) => self.emit_tool(tool_use, result, status, out),
            Paired::Ambiguous(uses) => {
                let candidates: Vec<Value> =
                    uses.iter().map(|u| reparse(u.block.as_bytes())).collect();
                let raw = tool_raw(
                    Value::Array(candidates),
                    result.value(),
                    result.tool_use_result_value(),
                );
                let body = EventBody::Unknown {
                    reason: UnknownReason::AmbiguousToolUseId,
                    raw,
                    tool: ToolRef {
                        tool: None,
                        tool_use_id: id.map(str::to_string),
                    },
                };
                out.emit_in(body, thread.clone());
            }
            Paired::None => self.unpaired(result, status, thread, out),
        }
    }

    /// C12: a result with no pending use.
    pub(super) fn unpaired(
        &mut self,
        result: &ResultRef<'_>,
        status: ToolStatus,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let tool_use_id = result.tool_use_id.map(str::to_string);
        let tool_use_result = result.tool_use_result_value();
        let file = tool_use_result.as_ref().and_then(|t| t.get("file"));
        let file_path = file
            .and_then(|f| str_field(f, "filePath"))
            .filter(|p| !p.is_empty());
        let body = match (file, file_path) {
            (Some(file), Some(path)) => {
                let start = integer(file.get("startLine"));
                let lines = integer(file.get("numLines"));
                let range = match (start, lines) {
                    (Some(start), Some(lines)) if lines >= 1 => {
                        let start = start.max(1);
                        Some(LineRange {
                            start: to_u64(start),
                            end: Some(to_u64(start + lines - 1)),
                        })
                    }
                    _ => None,
                };
                EventBody::Read {
                    path: harness_agents_core::backend::paths::resolve(path, self.current_cwd()),
                    range,
                    command: None,
                    status,
                    tool: ToolRef {
                        tool: Some("Read".to_string()),
                        tool_use_id,
                    },
                }
            }
            _ => EventBody::Unknown {
                reason: UnknownReason::UnpairedResult,
                raw: tool_raw(Value::Null, result.value(), tool_use_result),
                tool: ToolRef {
                    tool: None,
                    tool_use_id,
                },
            },
        };
        out.emit_in(body, thread.clone());
    }

    /// What a tool use block maps to (C13-C15), with the working directory now in effect.
    pub(super) fn mapping(&self, block: &str, status: &ToolStatus, tool: &ToolRef) -> Mapping {
        let input = stream_json::tool_input(block);
        match (tool.tool.as_deref(), &input) {
            (Some(name), Some(input)) => {
                let cx = Context {
                    cwd: self.current_cwd(),
                    workspace: self.workspace.as_deref(),
                };
                map_tool(name, input, status, tool, &cx)
            }
            _ => Mapping::Malformed,
        }
    }

    /// L1: the `started` event of a tool use just recorded, from what it would give on
    /// success (nothing expected of `StructuredOutput`, an unmapped or a malformed use).
    pub(super) fn started(
        &self,
        block: &str,
        tool: ToolRef,
        thread: &Thread,
        out: &mut Emitter<'_>,
    ) {
        let ok = ToolStatus {
            success: true,
            error: None,
        };
        match self.mapping(block, &ok, &tool) {
            Mapping::Events(bodies) => out.started_from(tool, &bodies, thread.clone()),
            Mapping::Nothing | Mapping::UnknownTool | Mapping::Malformed => {
                out.started(tool, None, Vec::new(), thread.clone())
            }
        }
    }

    /// Emits the events of a resolved tool use (C13-C15), on the result's line.
    pub(super) fn emit_tool(
        &mut self,
        tool_use: ToolUse,
        result: &ResultRef<'_>,
        status: ToolStatus,
        out: &mut Emitter<'_>,
    ) {
        let tool = ToolRef {
            tool: tool_use.name.clone(),
            tool_use_id: Some(tool_use.id.clone()),
        };
        let mapping = self.mapping(&tool_use.block, &status, &tool);
        let reason = match mapping {
            Mapping::Events(bodies) => {
                for body in bodies {
                    out.emit_in(body, tool_use.thread.clone());
                }
                return;
            }
            Mapping::Nothing => return,
            Mapping::UnknownTool => UnknownReason::UnknownTool,
            Mapping::Malformed => UnknownReason::MalformedToolUse,
        };
        let raw = tool_raw(
            reparse(tool_use.block.as_bytes()),
            result.value(),
            result.tool_use_result_value(),
        );
        let body = EventBody::Unknown { reason, raw, tool };
        out.emit_in(body, tool_use.thread.clone());
    }
}

/// The `raw` of an event about one Claude tool use (J8).
pub(super) fn tool_raw(
    tool_use: Value,
    tool_result: Value,
    tool_use_result: Option<Value>,
) -> Value {
    let mut raw = Map::new();
    raw.insert("tool_use".to_string(), tool_use);
    raw.insert("tool_result".to_string(), tool_result);
    if let Some(t) = tool_use_result {
        raw.insert("tool_use_result".to_string(), t);
    }
    Value::Object(raw)
}

/// An integer as serde_json keeps one, widened so no arithmetic on it can overflow.
pub(super) fn integer(value: Option<&Value>) -> Option<i128> {
    let n = value?.as_number()?;
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

pub(super) fn to_u64(n: i128) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
