//! S8: every input line is accounted for. Each table `fixtures/dispositions/NAME.jsonl` pairs
//! input lines with the disposition each must get, through the normalizer NAME names: a
//! registered backend's, a stored session's (`claude-transcript`, `codex-rollout`), or a
//! backend's in a live session (`claude-session`: its `session` setting on).

use harness_agents::{Normalizer, NormalizerConfig};
use harness_agents_claude::TranscriptNormalizer;
use harness_agents_codex::RolloutNormalizer;

/// A fresh normalizer for the table `name`.
fn normalizer(name: &str) -> Box<dyn Normalizer> {
    let mut config = NormalizerConfig::default();
    if let Some(backend) = name.strip_suffix("-session") {
        config.session = true;
        return harness_agents::registry()
            .get(backend)
            .unwrap_or_else(|| panic!("no normalizer for the table {name}"))
            .normalizer(config);
    }
    match name {
        "claude-transcript" => Box::new(TranscriptNormalizer::new(config)),
        "codex-rollout" => Box::new(RolloutNormalizer::new(config)),
        backend => harness_agents::registry()
            .get(backend)
            .unwrap_or_else(|| panic!("no normalizer for the table {backend}"))
            .normalizer(config),
    }
}

#[test]
fn s8_every_line_of_every_disposition_table_is_accounted_for_as_it_says() {
    let dir = fixtures::root().join("dispositions");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            Some(
                path.file_name()?
                    .to_str()?
                    .strip_suffix(".jsonl")?
                    .to_string(),
            )
        })
        .collect();
    names.sort();
    // These tables are there; any other names its normalizer ([`normalizer`] panics on a name
    // that does not), so a new backend's table is read once it is in the folder.
    for table in [
        "claude",
        "claude-session",
        "claude-transcript",
        "codex",
        "codex-rollout",
        "pi",
        "qwen",
        "copilot",
    ] {
        assert!(names.iter().any(|name| name == table), "{table}: {names:?}");
    }
    for name in names {
        fixtures::assert_dispositions(&name, normalizer(&name).as_mut());
    }
}
