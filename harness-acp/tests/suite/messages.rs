//! Every kind of message the client writes (A12-A15), recorded in
//! `fixtures/acp/client/messages.jsonl` (in the transcript's format, with the agent's messages
//! they answer) so that `acp-schema-check/` parses them with the protocol's official types.
//! This test fails when the file is not what the client writes; `UPDATE_EXPECT=1` rewrites it.

use std::path::PathBuf;

use harness_agents_acp::{AcpClient, Permission};
use harness_agents_core::process::{Conversation, Reply};

/// Where the client's messages are kept for the schema check.
fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/acp/client/messages.jsonl")
}

/// A permission request for a call of `kind`, with the usual three options.
fn permission(id: u64, kind: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"session/request_permission","params":{{"sessionId":"s1","toolCall":{{"toolCallId":"t{id}","kind":"{kind}","title":"a call"}},"options":[{{"optionId":"proceed_always","name":"Always","kind":"allow_always"}},{{"optionId":"proceed_once","name":"Once","kind":"allow_once"}},{{"optionId":"cancel","name":"No","kind":"reject_once"}}]}}}}"#
    )
}

/// The transcript lines of one exchange: what the agent sent (when `keep_agent`), then what
/// the client answered.
fn lines(reply: &Reply, keep_agent: bool) -> Vec<String> {
    reply
        .record
        .iter()
        .map(|l| String::from_utf8(l.clone()).unwrap())
        .filter(|l| keep_agent || l.starts_with(r#"{"from":"client""#))
        .collect()
}

/// A client through a whole run: initialize, new session, prompt; the agent's requests (allowed,
/// rejected, no fitting option, an unknown method, invalid params); then a stop (cancel).
fn transcript() -> Vec<String> {
    let mut out = Vec::new();
    let mut client = AcpClient::new(
        "/home/acp/project".into(),
        "Run the tests".into(),
        Permission::AllowEdits,
    );
    out.extend(lines(&client.open(), true));
    for (answer, keep) in [
        (r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}"#.to_string(), true),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}"#.to_string(), true),
        (permission(10, "edit"), true),
        (permission(11, "execute"), true),
        (
            r#"{"jsonrpc":"2.0","id":12,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t12"},"options":[{"optionId":"ok","name":"OK","kind":"allow_once"}]}}"#.to_string(),
            true,
        ),
        (
            r#"{"jsonrpc":"2.0","id":"r-13","method":"fs/read_text_file","params":{"sessionId":"s1","path":"/etc/hostname"}}"#.to_string(),
            true,
        ),
        // Not a valid request (no options): only the client's -32602 answer is kept, since
        // the official types rightly reject the request itself.
        (
            r#"{"jsonrpc":"2.0","id":14,"method":"session/request_permission","params":{"sessionId":"s1","toolCall":{"toolCallId":"t14"}}}"#.to_string(),
            false,
        ),
    ] {
        out.extend(lines(&client.line(answer.as_bytes()), keep));
    }
    let (cancel, _) = client.stop();
    out.extend(lines(&cancel, true));
    out
}

#[test]
fn a12_a15_the_client_messages_the_schema_check_reads_are_current() {
    let lines = transcript();
    // The three requests, three permission answers (allowed, rejected, cancelled), two errors
    // and the cancel notification.
    let client: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with(r#"{"from":"client""#))
        .collect();
    assert_eq!(client.len(), 9, "{client:#?}");
    let text = lines.join("\n") + "\n";
    let path = path();
    if fixtures::update_expect() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        committed,
        text,
        "{} is stale: rerun with UPDATE_EXPECT=1, then `cargo test --manifest-path acp-schema-check/Cargo.toml`",
        path.display()
    );
}
