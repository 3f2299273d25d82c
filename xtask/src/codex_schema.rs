//! `cargo xtask codex-schema`: every message of the recorded Codex sessions
//! (`fixtures/codex-app-server/`), both directions, checked against the JSON Schema of the
//! `codex app-server` release they were recorded with.
//!
//! The schema is not committed (the files the check needs are about 800 kB, and a release
//! changes them): it is generated at check time by the release itself, `codex app-server
//! generate-json-schema --out DIR`, from `@openai/codex` installed from npm into the record
//! cache (or the binary `--codex` names). Which schema checks a message:
//!
//! - a server request: `ServerRequest.json`; a server notification: `ServerNotification.json`;
//! - the server's answer to the session's request: the result against that method's
//!   `*Response.json` (`v1/InitializeResponse.json`, `v2/ThreadStartResponse.json`, ...), an
//!   error against `JSONRPCError.json`;
//! - a request of the session: `ClientRequest.json`; its notification:
//!   `ClientNotification.json`;
//! - the session's answer to a server request: the result against that request's response
//!   schema (`CommandExecutionRequestApprovalResponse.json`, ...), an error against
//!   `JSONRPCError.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use jsonschema::Validator;
use serde_json::Value;

/// The arguments of `cargo xtask codex-schema`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A Codex binary to generate the schema with (default: the recorded release, installed
    /// from npm).
    #[arg(long, value_name = "PATH")]
    codex: Option<PathBuf>,
}

/// The response schema of each method whose answers the recordings hold.
const RESPONSES: &[(&str, &str)] = &[
    ("initialize", "v1/InitializeResponse.json"),
    ("thread/start", "v2/ThreadStartResponse.json"),
    ("thread/resume", "v2/ThreadResumeResponse.json"),
    ("turn/start", "v2/TurnStartResponse.json"),
    ("turn/interrupt", "v2/TurnInterruptResponse.json"),
    (
        "item/commandExecution/requestApproval",
        "CommandExecutionRequestApprovalResponse.json",
    ),
    (
        "item/fileChange/requestApproval",
        "FileChangeRequestApprovalResponse.json",
    ),
];

/// The validators, loaded once each.
struct Schemas {
    dir: PathBuf,
    loaded: BTreeMap<String, Validator>,
}

impl Schemas {
    fn check(&mut self, file: &str, value: &Value) -> Result<Vec<String>> {
        if !self.loaded.contains_key(file) {
            let path = self.dir.join(file);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("reading {}", path.display()))?;
            let schema: Value = serde_json::from_str(&text)?;
            let validator = jsonschema::draft7::new(&schema)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            self.loaded.insert(file.to_string(), validator);
        }
        let validator = &self.loaded[file];
        Ok(validator
            .iter_errors(value)
            .map(|e| format!("{file}: {e} at {}", e.instance_path()))
            .collect())
    }
}

/// Entry point of `cargo xtask codex-schema`.
pub fn codex_schema(args: Args) -> Result<()> {
    let version = harness_agents_codex::VERSIONS.recorded;
    let codex = match args.codex {
        Some(path) => path,
        None => crate::record::codex::install(&crate::record::cache_dir(), version)?,
    };
    let dir = crate::target_dir().join("codex-app-server-schema");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let status = Command::new(&codex)
        .args(["app-server", "generate-json-schema", "--out"])
        .arg(&dir)
        .status()
        .with_context(|| format!("running {}", codex.display()))?;
    if !status.success() {
        bail!("generate-json-schema failed: {status}");
    }
    let mut schemas = Schemas {
        dir,
        loaded: BTreeMap::new(),
    };
    let folder = fixtures::root().join("codex-app-server");
    let mut names: Vec<String> = std::fs::read_dir(&folder)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter_map(|f| f.strip_suffix(".client.jsonl").map(str::to_string))
        .collect();
    names.sort();
    if names.is_empty() {
        bail!("no recordings in {}", folder.display());
    }
    let (mut checked, mut problems) = (0, Vec::new());
    for name in &names {
        let server = lines(&folder.join(format!("{name}.jsonl")))?;
        let client = lines(&folder.join(format!("{name}.client.jsonl")))?;
        // What each id asked for, on either side.
        let mut asked: BTreeMap<String, String> = BTreeMap::new();
        for message in server.iter().chain(&client) {
            if let (Some(id), Some(method)) = (message.get("id"), method(message)) {
                asked.insert(id.to_string(), method.to_string());
            }
        }
        for (side, messages) in [("server", &server), ("client", &client)] {
            for (n, message) in messages.iter().enumerate() {
                let file = schema_of(side, message, &asked);
                let found = match file {
                    Some(file) => {
                        let checked_value = match (method(message), message.get("result")) {
                            (None, Some(result)) => result,
                            _ => message,
                        };
                        schemas.check(&file, checked_value)?
                    }
                    None => vec!["no schema says what this message is".to_string()],
                };
                checked += 1;
                problems.extend(
                    found
                        .into_iter()
                        .map(|p| format!("{name} {side} line {}: {p}", n + 1)),
                );
            }
        }
    }
    if !problems.is_empty() {
        bail!(
            "{} problem(s) in {checked} messages:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
    println!(
        "{checked} messages of {} recorded sessions match the schema of codex {version}",
        names.len()
    );
    Ok(())
}

/// A message's method, when it has one.
fn method(message: &Value) -> Option<&str> {
    message.get("method").and_then(Value::as_str)
}

/// The schema file a message of `side` is checked against (its `result` for an answer).
fn schema_of(side: &str, message: &Value, asked: &BTreeMap<String, String>) -> Option<String> {
    let request = message.get("id").is_some();
    let file = match (side, method(message), request) {
        ("server", Some(_), true) => "ServerRequest.json",
        ("server", Some(_), false) => "ServerNotification.json",
        ("client", Some(_), true) => "ClientRequest.json",
        ("client", Some(_), false) => "ClientNotification.json",
        (_, None, _) if message.get("error").is_some() => "JSONRPCError.json",
        (_, None, _) => {
            let id = message.get("id")?.to_string();
            let method = asked.get(&id)?;
            RESPONSES.iter().find(|(m, _)| m == method)?.1
        }
        _ => return None,
    };
    Some(file.to_string())
}

/// The JSON messages of a file, one a line.
fn lines(path: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).with_context(|| format!("{}: {l}", path.display())))
        .collect()
}
