//! The conformance kit (`harness_agents_core::testkit`) on the ACP backend: hostile and generated
//! lines in its vocabulary (no panic, chunk invariance, line numbers, order, accounting,
//! settling, counts, L1).

use harness_agents_acp::AcpHarness;

use super::config;

const TYPES: &[&str] = &["agent", "client", "session/update", "session/prompt"];
const KEYS: &[&str] = &[
    "from",
    "message",
    "text",
    "jsonrpc",
    "id",
    "method",
    "params",
    "result",
    "error",
    "update",
    "sessionUpdate",
    "sessionId",
    "toolCallId",
    "kind",
    "status",
    "content",
    "stopReason",
];

harness_agents_core::conformance_kit!(AcpHarness, config(), types: TYPES, keys: KEYS);
