//! Message assembly (C3) and its flush points (C4).

use harness_agents_core::backend::text::Joined;

use super::*;

/// An assistant message being assembled (C3).
#[derive(Debug)]
pub(super) struct Message {
    pub(super) thread: Thread,
    pub(super) id: Option<String>,
    pub(super) reasoning: String,
    pub(super) reasoning_line: Option<u64>,
    pub(super) text: Joined,
    pub(super) text_line: Option<u64>,
    pub(super) tool_ids: Vec<String>,
}

impl ClaudeDecoder {
    /// C4: the open message whose own tool use started the thread of this line.
    pub(super) fn flush_for_parent(&self, parent: &Thread, set: &mut Vec<u64>) {
        if let Some(p) = parent {
            if let Some(seqs) = self.owners.get(p) {
                set.extend_from_slice(seqs);
            }
        }
    }

    /// C4: the open message of the sub-agent thread started by tool use `id` (that sub-agent
    /// has finished).
    pub(super) fn flush_thread(&self, id: &str, set: &mut Vec<u64>) {
        if let Some(&seq) = self.open_by_thread.get(&Some(id.to_string())) {
            set.push(seq);
        }
    }

    /// Flushes the given messages in the order they were first seen (C4).
    pub(super) fn flush(&mut self, mut seqs: Vec<u64>, out: &mut Emitter<'_>) {
        seqs.sort_unstable();
        seqs.dedup();
        for seq in seqs {
            if let Some(message) = self.messages.remove(&seq) {
                self.close(seq, message, out);
            }
        }
    }

    pub(super) fn flush_all(&mut self, out: &mut Emitter<'_>) {
        while let Some((seq, message)) = self.messages.pop_first() {
            self.close(seq, message, out);
        }
    }

    pub(super) fn close(&mut self, seq: u64, message: Message, out: &mut Emitter<'_>) {
        if self.open_by_thread.get(&message.thread) == Some(&seq) {
            self.open_by_thread.remove(&message.thread);
        }
        for id in &message.tool_ids {
            if let Some(seqs) = self.owners.get_mut(id) {
                seqs.retain(|&s| s != seq);
                if seqs.is_empty() {
                    self.owners.remove(id);
                }
            }
        }
        if let Some(line) = message.reasoning_line {
            let body = EventBody::Reasoning {
                text: message.reasoning,
            };
            out.emit_at_in(body, Some(line), message.thread.clone());
        }
        if let Some(line) = message.text_line {
            let body = EventBody::Agent {
                text: message.text.into_text(),
            };
            out.emit_at_in(body, Some(line), message.thread);
        }
    }

    pub(super) fn message_mut(&mut self, seq: u64) -> Option<&mut Message> {
        self.messages.get_mut(&seq)
    }

    pub(super) fn on_assistant(
        &mut self,
        id: &Loose<'_>,
        content: Content<'_>,
        line: LineValue<'_>,
        thread: Thread,
        out: &mut Emitter<'_>,
    ) {
        let id = id.as_str();
        let mut set = Vec::new();
        if let Some(&seq) = self.open_by_thread.get(&thread) {
            let open_id = self.messages.get(&seq).and_then(|m| m.id.as_deref());
            if id.is_none() || open_id != id {
                set.push(seq);
            }
        }
        self.flush_for_parent(&thread, &mut set);
        self.flush(set, out);

        let Content::List(blocks) = content else {
            out.unknown_in(UnknownReason::MalformedMessage, line(), thread.clone());
            return;
        };

        let seq = match self.open_by_thread.get(&thread) {
            Some(&seq) => seq,
            None => {
                let seq = self.next_message;
                self.next_message += 1;
                self.messages.insert(
                    seq,
                    Message {
                        thread: thread.clone(),
                        id: id.map(str::to_string),
                        reasoning: String::new(),
                        reasoning_line: None,
                        text: Joined::default(),
                        text_line: None,
                        tool_ids: Vec::new(),
                    },
                );
                self.open_by_thread.insert(thread.clone(), seq);
                seq
            }
        };

        let line_no = out.line().unwrap_or_default();
        for (index, Block { view, raw }) in blocks.into_iter().enumerate() {
            let view = view.unwrap_or_default();
            let text = raw;
            let raw = || block_value(text, index, line);
            match view.kind.as_str() {
                Some("text") => match view.text.as_str() {
                    Some(text) => {
                        if let Some(m) = self.message_mut(seq) {
                            if !text.is_empty() {
                                m.text.push(text);
                                m.text_line = Some(line_no);
                            }
                        }
                        if !text.is_empty() {
                            out.defer();
                        }
                    }
                    None => self.unknown_block(raw(), &thread, out),
                },
                Some("thinking") => match view.thinking.as_str() {
                    Some(text) => {
                        if let Some(m) = self.message_mut(seq) {
                            append(&mut m.reasoning, &mut m.reasoning_line, text, line_no);
                        }
                        if !text.is_empty() {
                            out.defer();
                        }
                    }
                    None => self.unknown_block(raw(), &thread, out),
                },
                Some("redacted_thinking") => {}
                Some("tool_use") => {
                    let text: Box<str> = match text {
                        Some(text) => text.into(),
                        None => raw().to_string().into(),
                    };
                    self.record_tool_use(&view, text, seq, &thread, out);
                }
                _ => self.unknown_block(raw(), &thread, out),
            }
        }
    }

    /// C2: a block this backend does not know, emitted at once.
    pub(super) fn unknown_block(&mut self, raw: Value, thread: &Thread, out: &mut Emitter<'_>) {
        out.unknown_in(UnknownReason::UnknownBlock, raw, thread.clone());
    }
}

/// Adds one block's text to a message: non-empty texts are joined with a blank line, and the
/// line of the last one is kept (C4, J2).
pub(super) fn append(buffer: &mut String, line: &mut Option<u64>, text: &str, line_no: u64) {
    if text.is_empty() {
        return;
    }
    if !buffer.is_empty() {
        buffer.push_str("\n\n");
    }
    buffer.push_str(text);
    *line = Some(line_no);
}
