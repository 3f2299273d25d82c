//! Tests grouped by topic, and the helpers they share.

mod alloc;
mod golden;
mod kit;
mod live;
mod live_session;
mod rules;
mod server_rules;

use harness_agents_core::NormalizerConfig;
use harness_agents_core::testkit::{self, Input};
use harness_agents_opencode::OpencodeHarness;
use serde_json::Value;

/// The `--cwd` the recordings assume: the recorder's project.
pub const CWD: &str = "/home/oc/project";

/// The config the recordings assume: `--cwd /home/oc/project`.
pub fn config() -> NormalizerConfig {
    NormalizerConfig::with_cwd(CWD)
}

/// The events (as JSON, every field) and the outcome of `lines`, checked by every property of
/// the conformance kit on the way.
pub fn run(lines: &[Value]) -> (Vec<Value>, Value) {
    let input = Input::stdout(testkit::json_lines(lines));
    let trace = testkit::check_stream(&OpencodeHarness, &config(), &input)
        .unwrap_or_else(|e| panic!("{e}"));
    let events = trace
        .events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect();
    let outcome =
        serde_json::to_value(harness_agents_core::OutcomeLine::new(&trace.outcome)).unwrap();
    (events, outcome)
}
