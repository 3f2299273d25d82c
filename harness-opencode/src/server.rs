//! The events of `opencode serve`'s `/event` stream, as a session's transcript holds them (the
//! PS rules of `docs/opencode.md`): each is read as the `opencode run --format json` line it
//! stands for, so a session gives the events a run gives; the few that only a session has
//! (a permission request, the end of a turn) get rules of their own.

use harness_agents_core::backend::{Emitter, PermissionRequest};
use harness_agents_core::{Decision, ToolRef, UnknownReason};
use serde_json::{Map, Value, json};

/// What one server event is for the decoder.
pub(crate) enum Server {
    /// The `opencode run` line it stands for (PS2, PS3, PS5), to decode by the P rules.
    Run(Vec<u8>),
    /// A permission request (PS6).
    Permission(Map<String, Value>),
    /// The session went idle: the message being assembled is flushed (PS7).
    Idle,
    /// Nothing to say, by the rule named (PS1, PS4, PS8).
    Consumed(&'static str),
    /// Not what its type says (a part that is not an object): `unknown`, the event as raw.
    Malformed(Value),
}

/// A server event's type: dotted (`message.part.updated`), which no `opencode run` line's is.
pub(crate) fn is_server_type(kind: &str) -> bool {
    kind.contains('.')
}

/// The session an event concerns: `properties.sessionID`, else that of its `info` (a
/// message) or `part` (PS1).
pub fn session_of(event: &Value) -> Option<&str> {
    let props = event.get("properties")?;
    props
        .get("sessionID")
        .or_else(|| props.get("info").and_then(|i| i.get("sessionID")))
        .or_else(|| props.get("part").and_then(|p| p.get("sessionID")))
        .and_then(Value::as_str)
}

/// The `opencode run` line `{type, sessionID, part}` (or `error`) that `body` stands for.
fn run_line(kind: &str, session: Option<&str>, key: &str, body: &Value) -> Vec<u8> {
    let mut line = json!({"type": kind});
    if let Some(session) = session {
        line["sessionID"] = json!(session);
    }
    line[key] = body.clone();
    line.to_string().into_bytes()
}

/// The id of the user message a `message.updated` event announces (PS2).
pub(crate) fn user_message(event: &Value) -> Option<&str> {
    if event.get("type").and_then(Value::as_str) != Some("message.updated") {
        return None;
    }
    let info = event.pointer("/properties/info")?;
    if info.get("role").and_then(Value::as_str) != Some("user") {
        return None;
    }
    info.get("id").and_then(Value::as_str)
}

/// Reads one server event (PS1-PS8). `session` is the session id the stream named first;
/// `from_user` says whether a message id is one of the caller's prompts.
pub(crate) fn read(
    event: &Value,
    kind: &str,
    session: Option<&str>,
    from_user: impl Fn(&str) -> bool,
) -> Server {
    let own = session_of(event);
    if let (Some(own), Some(session)) = (own, session) {
        if own != session {
            // PS1: another session of the same server (a sub-agent's, another client's).
            return Server::Consumed("PS1");
        }
    }
    let props = event.get("properties");
    match kind {
        "message.part.updated" => {
            let Some(part) = props.and_then(|p| p.get("part")).filter(|p| p.is_object()) else {
                return Server::Malformed(event.clone());
            };
            let session = own.or(session);
            if part
                .get("messageID")
                .and_then(Value::as_str)
                .is_some_and(from_user)
            {
                // PS2: a part of the caller's own prompt, not something the agent said.
                return Server::Consumed("PS2");
            }
            let ended = part.pointer("/time/end").is_some_and(|t| !t.is_null());
            match part.get("type").and_then(Value::as_str) {
                Some("step-start") => Server::Run(run_line("step_start", session, "part", part)),
                Some("step-finish") => Server::Run(run_line("step_finish", session, "part", part)),
                Some(kind @ ("text" | "reasoning")) if ended => {
                    Server::Run(run_line(kind, session, "part", part))
                }
                // PS2: a text still being written; the whole part follows with `time.end`.
                Some("text" | "reasoning") => Server::Consumed("PS2"),
                Some("tool") => match part.pointer("/state/status").and_then(Value::as_str) {
                    // PS3: a tool part before its input is known; the permission request that
                    // may follow finds its name here.
                    Some("pending") => Server::Consumed("PS3"),
                    _ => Server::Run(run_line("tool_use", session, "part", part)),
                },
                // PS4: the parts `opencode run` prints nothing for (snapshots, patches, files,
                // retries, compaction markers, sub-tasks, agents).
                _ => Server::Consumed("PS4"),
            }
        }
        "session.error" => {
            let error = props.and_then(|p| p.get("error")).unwrap_or(&Value::Null);
            if error.get("name").and_then(Value::as_str) == Some("MessageAbortedError") {
                // PS5: the answer to the caller's interrupt, not a failure; the turn's status
                // says `interrupted`.
                return Server::Consumed("PS5");
            }
            Server::Run(run_line("error", own.or(session), "error", error))
        }
        "permission.asked" => match props {
            Some(Value::Object(props)) => Server::Permission(props.clone()),
            _ => Server::Malformed(event.clone()),
        },
        "session.idle" => Server::Idle,
        // PS8: the server's bookkeeping (`message.updated`, `message.part.delta`,
        // `session.status`, `session.updated`, `session.diff`, `permission.replied`, ...).
        _ => Server::Consumed("PS8"),
    }
}

/// A tool part seen before it finished: its name and input, for a permission request (PS6).
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) input: Value,
}

/// Remembers the tool part of a `message.part.updated` event that has not finished (PS3).
pub(crate) fn seen_tool(event: &Value) -> Option<Seen> {
    let part = event.pointer("/properties/part")?;
    if part.get("type").and_then(Value::as_str) != Some("tool") {
        return None;
    }
    Some(Seen {
        call_id: part.get("callID")?.as_str()?.to_string(),
        tool: part.get("tool")?.as_str()?.to_string(),
        input: part.pointer("/state/input").cloned().unwrap_or(Value::Null),
    })
}

/// PS6: the `permission` event of a `permission.asked` request, offering `once`, `always`
/// and `reject` as allow, allow_always and deny. `seen` is the tool part of its `callID`
/// when one was seen; `would_be` maps a tool part to what it would give on success.
pub(crate) fn permission(
    props: &Map<String, Value>,
    seen: Option<&Seen>,
    would_be: impl FnOnce(&str, &Value) -> Vec<harness_agents_core::EventBody>,
    out: &mut Emitter<'_>,
) {
    let Some(id) = props
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    else {
        out.unknown(
            UnknownReason::MalformedMessage,
            Value::Object(props.clone()),
        );
        return;
    };
    let call_id = props
        .get("tool")
        .and_then(|t| t.get("callID"))
        .and_then(Value::as_str)
        .map(str::to_string);
    // The tool's name is on its part; the request names only the permission (`bash`, `edit`).
    let tool = seen.map(|s| s.tool.clone()).or_else(|| {
        props
            .get("permission")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    // The input as the tool part has it once known, else what the request's metadata says
    // (a command's `command`).
    let input = match seen.map(|s| &s.input) {
        Some(input) if input.as_object().is_some_and(|o| !o.is_empty()) => input.clone(),
        _ => props.get("metadata").cloned().unwrap_or(Value::Null),
    };
    let would_be = match &tool {
        Some(tool) => would_be(tool, &input),
        None => Vec::new(),
    };
    out.permission(
        PermissionRequest {
            id: id.to_string(),
            options: vec![Decision::Allow, Decision::AllowAlways, Decision::Deny],
            tool: ToolRef {
                tool,
                tool_use_id: call_id,
            },
            input: Some(input),
            would_be,
        },
        None,
    );
}
