//! Codex's stored history (the R rules of `docs/sessions.md`): where its rollouts are, how a
//! session's file is found, decoded and summed up.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::stored::{self, Accounting, History, SessionFiles};
use harness_agents_core::{Event, Normalizer, NormalizerConfig, Outcome};

use crate::{RolloutNormalizer, RolloutTally};

/// Codex's stored history, registered as `"codex"`:
/// `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` and the rollouts it archived in
/// `~/.codex/archived_sessions/` (`CODEX_HOME` moves both).
#[derive(Debug, Clone, Copy, Default)]
pub struct RolloutHistory;

/// The folders of rollouts under a Codex home: `sessions` and `archived_sessions`.
pub fn rollout_folders(home: &Path) -> Vec<PathBuf> {
    vec![home.join("sessions"), home.join("archived_sessions")]
}

impl History for RolloutHistory {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["CODEX_HOME", "HOME"]
    }

    /// `sessions` and `archived_sessions` under `$CODEX_HOME`, else under `~/.codex`.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        match var("CODEX_HOME") {
            Some(dir) => rollout_folders(Path::new(&dir)),
            None => var("HOME")
                .iter()
                .flat_map(|h| rollout_folders(&Path::new(h).join(".codex")))
                .collect(),
        }
    }

    /// A Codex home: its `sessions` and `archived_sessions`.
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        rollout_folders(dir)
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        let mut rollouts = Vec::new();
        stored::walk(root, "jsonl", 6, &mut rollouts);
        rollouts.sort();
        for main in rollouts {
            let name = main
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !name.starts_with("rollout-") {
                continue;
            }
            // rollout-YYYY-MM-DDTHH-MM-SS-<id>: the id is what follows the 19-character time.
            let id = name
                .get("rollout-".len() + 20..)
                .unwrap_or(&name)
                .to_string();
            found.push(SessionFiles {
                backend: self.name(),
                id,
                main,
                subagents: Vec::new(),
                project_dir: None,
            });
        }
    }

    fn decode(
        &self,
        files: &SessionFiles,
        index: usize,
        sink: &mut dyn FnMut(Event),
    ) -> io::Result<(Outcome, Accounting)> {
        let (path, _) = files.file(index).ok_or_else(stored::no_such_file)?;
        let mut normalizer = RolloutNormalizer::new(NormalizerConfig::default());
        stored::feed(path, &mut normalizer, sink)?;
        let outcome = normalizer.finish_each(sink);
        Ok((outcome, normalizer.decoder().accounting()))
    }

    fn tally(
        &self,
        files: &SessionFiles,
        index: usize,
        buf: &mut Vec<u8>,
    ) -> io::Result<(Option<String>, Accounting)> {
        let (path, _) = files.file(index).ok_or_else(stored::no_such_file)?;
        stored::tally_file(path, RolloutTally::new(), buf)
    }
}
