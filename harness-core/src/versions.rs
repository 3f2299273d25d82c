//! What a backend knows of its agents as data: the versions its recordings cover and how an
//! agent is asked its version, one table per backend ([`crate::Backend::versions`]) that
//! `harness --version`, `harness backends` and the recorder all read; and, for a protocol
//! backend, the agents known to speak it ([`crate::Backend::known_agents`]).

use serde::Serialize;

/// The releases of an agent a backend's recordings cover, and how to ask an agent its version.
///
/// Made with [`Versions::new`] and its `const` setters:
///
/// ```
/// use harness_agents_core::{Coverage, Versions};
///
/// const VERSIONS: Versions = Versions::new("2.1.332").older(&["2.1.197"]);
/// assert_eq!(VERSIONS.args, ["--version"]);
/// assert_eq!(VERSIONS.coverage("2.1.332"), Coverage::Recorded);
/// assert_eq!(VERSIONS.coverage("2.1.197"), Coverage::OlderRecorded);
/// assert_eq!(VERSIONS.coverage("2.2.0"), Coverage::Newer);
/// assert_eq!(VERSIONS.coverage("2.1.200"), Coverage::Older);
/// assert!(VERSIONS.coverage("2.1.197").covered());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Versions {
    /// The release the backend's current recordings come from (`fixtures/NAME/`), the one
    /// `cargo xtask record` installs by default.
    pub recorded: &'static str,
    /// Older releases whose recordings stay supported (`fixtures/NAME-VERSION/`), newest first.
    pub older: &'static [&'static str],
    /// The arguments that make the agent print its version and exit (`["--version"]`).
    pub args: &'static [&'static str],
}

impl Versions {
    /// Recordings of `recorded` only; the agent is asked with `--version`.
    pub const fn new(recorded: &'static str) -> Self {
        Versions {
            recorded,
            older: &[],
            args: &["--version"],
        }
    }

    /// Older releases whose recordings stay supported.
    pub const fn older(mut self, older: &'static [&'static str]) -> Self {
        self.older = older;
        self
    }

    /// The arguments that make the agent print its version.
    pub const fn args(mut self, args: &'static [&'static str]) -> Self {
        self.args = args;
        self
    }

    /// Every covered release: the recorded one, then the older ones.
    pub fn all(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.recorded).chain(self.older.iter().copied())
    }

    /// How `version` (as [`parse_version`] finds it) stands against the recordings.
    pub fn coverage(&self, version: &str) -> Coverage {
        if version == self.recorded {
            return Coverage::Recorded;
        }
        if self.older.contains(&version) {
            return Coverage::OlderRecorded;
        }
        match (numbers(version), numbers(self.recorded)) {
            (Some(found), Some(recorded)) if found > recorded => Coverage::Newer,
            // Equal numbers with a pre-release suffix come before the release.
            (Some(_), Some(_)) => Coverage::Older,
            _ => Coverage::Unknown,
        }
    }
}

/// How an installed agent's version stands against the releases a backend's recordings cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Coverage {
    /// The release the current recordings come from.
    Recorded,
    /// An older release whose recordings stay supported.
    OlderRecorded,
    /// A newer release than any recorded: its output may have drifted.
    Newer,
    /// An older release than the recorded one, not among the older recorded sets.
    Older,
    /// A version that cannot be compared.
    Unknown,
}

impl Coverage {
    /// Whether recordings of this very release exist.
    pub fn covered(self) -> bool {
        matches!(self, Coverage::Recorded | Coverage::OlderRecorded)
    }

    /// The name `harness backends` prints (`"recorded"`, `"older_recorded"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Coverage::Recorded => "recorded",
            Coverage::OlderRecorded => "older_recorded",
            Coverage::Newer => "newer",
            Coverage::Older => "older",
            Coverage::Unknown => "unknown",
        }
    }
}

/// An agent known to speak a protocol backend's protocol, with the command that starts it that
/// way (`gemini --acp`): what `harness backends` lists and looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct KnownAgent {
    /// Its short name (`"gemini"`).
    pub name: &'static str,
    /// The command line that starts it as the backend's agent; its first word is the binary.
    pub command: &'static [&'static str],
    /// How to install it.
    pub install: &'static str,
    /// The versions the backend's recordings of it cover, if any; the agent is asked its
    /// version with their `args` (`--version` without them).
    pub versions: Option<Versions>,
}

impl KnownAgent {
    /// The agent `name`, started by `command`, installed by `install`, never recorded.
    pub const fn new(
        name: &'static str,
        command: &'static [&'static str],
        install: &'static str,
    ) -> Self {
        KnownAgent {
            name,
            command,
            install,
            versions: None,
        }
    }

    /// The versions the backend's recordings of this agent cover.
    pub const fn recorded(mut self, versions: Versions) -> Self {
        self.versions = Some(versions);
        self
    }
}

/// The numeric parts of a version (`2.1.332-beta` gives `[2, 1, 332]`).
fn numbers(version: &str) -> Option<Vec<u64>> {
    let release = version.split(['-', '+']).next()?;
    release.split('.').map(|n| n.parse().ok()).collect()
}

/// The first version number in what an agent printed for its version: a word of at least two
/// dot-separated numbers, optionally after a `v` and followed by a `-` or `+` suffix.
///
/// ```
/// use harness_agents_core::parse_version;
///
/// assert_eq!(parse_version("2.1.332 (Claude Code)"), Some("2.1.332"));
/// assert_eq!(parse_version("codex-cli 0.171.0\n"), Some("0.171.0"));
/// assert_eq!(parse_version("opencode v1.18.33-beta.1"), Some("1.18.33-beta.1"));
/// assert_eq!(parse_version("error: 42 is not an option"), None);
/// ```
pub fn parse_version(text: &str) -> Option<&str> {
    let words = text.split(|c: char| c.is_whitespace() || "()[],;:@/'\"".contains(c));
    words.filter_map(version_word).next()
}

/// `word` as a version, without a leading `v`, if it is one.
fn version_word(word: &str) -> Option<&str> {
    let word = word.strip_prefix(['v', 'V']).unwrap_or(word);
    // A version that ends a sentence keeps its number, not the full stop.
    let word = word.trim_end_matches('.');
    let release_end = word.find(['-', '+']).unwrap_or(word.len());
    let release = &word[..release_end];
    let parts: Vec<&str> = release.split('.').collect();
    let numeric = parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let suffix = &word[release_end..];
    let suffix_ok = suffix.len() != 1
        && suffix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-+.".contains(&b));
    (numeric && suffix_ok).then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_as_the_agents_print_them() {
        let table = [
            ("2.1.332 (Claude Code)", Some("2.1.332")),
            ("codex-cli 0.171.0", Some("0.171.0")),
            ("1.18.33\n", Some("1.18.33")),
            ("0.61.0", Some("0.61.0")),
            ("qwen version v0.2.1.", Some("0.2.1")),
            ("node: warning\n3.0.0-rc.1+b7", Some("3.0.0-rc.1+b7")),
            ("", None),
            ("garbage \u{fffd}\u{fffd} 12", None),
            ("1.", None),
            ("1.2.x", None),
            ("v.1.2", None),
        ];
        for (text, version) in table {
            assert_eq!(parse_version(text), version, "{text:?}");
        }
    }

    #[test]
    fn coverage_compares_numbers_not_text() {
        let versions = Versions::new("0.171.0").older(&["0.163.0"]);
        assert_eq!(versions.coverage("0.171.0"), Coverage::Recorded);
        assert_eq!(versions.coverage("0.163.0"), Coverage::OlderRecorded);
        assert_eq!(versions.coverage("0.1000.0"), Coverage::Newer);
        assert_eq!(versions.coverage("0.99.0"), Coverage::Older);
        assert_eq!(versions.coverage("0.171.0-alpha.1"), Coverage::Older);
        assert_eq!(versions.coverage("nightly"), Coverage::Unknown);
        assert_eq!(versions.all().collect::<Vec<_>>(), ["0.171.0", "0.163.0"]);
    }
}
