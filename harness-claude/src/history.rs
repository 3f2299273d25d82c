//! Claude Code's stored history (the T rules of `docs/sessions.md`): where its transcripts
//! are, how a session's files are found, decoded and summed up.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::backend::Driver;
use harness_agents_core::stored::{self, Accounting, History, SessionFiles};
use harness_agents_core::{Event, Normalizer, NormalizerConfig, Outcome};

use crate::{TranscriptDecoder, TranscriptNormalizer, TranscriptTally};

/// Claude Code's stored history, registered as `"claude"`: `~/.claude/projects/<project>/
/// <session>.jsonl` (some releases `~/.config/claude/projects/`; `CLAUDE_CONFIG_DIR` moves
/// them), each session's sub-agents in `<session>/subagents/agent-<id>.jsonl`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TranscriptHistory;

/// The `projects` folder of a Claude Code configuration folder, or `dir` itself when it is one
/// (its name is `projects`).
pub fn projects_of(dir: &Path) -> PathBuf {
    if dir.file_name().is_some_and(|n| n == "projects") {
        dir.to_path_buf()
    } else {
        dir.join("projects")
    }
}

impl History for TranscriptHistory {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "HOME"]
    }

    /// Each folder of `$CLAUDE_CONFIG_DIR` (comma-separated; a configuration folder, or its
    /// `projects/` itself), else `$XDG_CONFIG_HOME/claude/projects`
    /// (`~/.config/claude/projects`) and `~/.claude/projects`, the ones that exist.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let home = var("HOME").map(PathBuf::from);
        if let Some(dirs) = var("CLAUDE_CONFIG_DIR") {
            return dirs
                .to_string_lossy()
                .split(',')
                .filter(|d| !d.trim().is_empty())
                .map(|d| projects_of(Path::new(d.trim())))
                .collect();
        }
        let config = var("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".config")));
        let found: Vec<PathBuf> = config
            .map(|c| c.join("claude/projects"))
            .into_iter()
            .chain(home.iter().map(|h| h.join(".claude/projects")))
            .collect();
        let mut roots = Vec::new();
        for dir in found {
            // Both may be one folder (a link): read it once.
            let real = std::fs::canonicalize(&dir).ok();
            let seen = roots
                .iter()
                .any(|d: &PathBuf| real.is_some() && std::fs::canonicalize(d).ok() == real);
            if dir.is_dir() && !seen {
                roots.push(dir);
            }
        }
        if roots.is_empty() {
            roots.extend(home.iter().map(|h| h.join(".claude/projects")));
        }
        roots
    }

    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        vec![projects_of(dir)]
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        for project in stored::sorted_paths(root, Path::is_dir) {
            for main in stored::sorted_paths(&project, |_| true) {
                if main.extension().is_none_or(|e| e != "jsonl") || !main.is_file() {
                    continue;
                }
                let Some(id) = main.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                    continue;
                };
                let subagents = subagent_files(&project.join(&id).join("subagents"));
                let project_dir = project
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned());
                found.push(SessionFiles {
                    backend: self.name(),
                    id,
                    main,
                    subagents,
                    project_dir,
                });
            }
        }
    }

    fn decode(
        &self,
        files: &SessionFiles,
        index: usize,
        sink: &mut dyn FnMut(Event),
    ) -> io::Result<(Outcome, Accounting)> {
        let (path, thread) = files.file(index).ok_or_else(stored::no_such_file)?;
        let config = NormalizerConfig::default();
        let decoder = TranscriptDecoder::for_subagent(&config, thread.map(str::to_string));
        let mut normalizer: TranscriptNormalizer = Driver::with_decoder(decoder, config);
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
        let (path, thread) = files.file(index).ok_or_else(stored::no_such_file)?;
        let tally = match index {
            0 => TranscriptTally::new(),
            _ => TranscriptTally::for_subagent(thread),
        };
        stored::tally_file(path, tally, buf)
    }
}

/// The sub-agent transcripts in `dir`, each with the `toolUseId` of its `.meta.json` (T8).
fn subagent_files(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    stored::sorted_paths(dir, |p| p.extension().is_some_and(|e| e == "jsonl"))
        .into_iter()
        .map(|path| {
            let meta = path.with_extension("meta.json");
            let tool_use = std::fs::read(&meta)
                .ok()
                .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
                .and_then(|v| v.get("toolUseId")?.as_str().map(str::to_string));
            (path, tool_use)
        })
        .collect()
}
