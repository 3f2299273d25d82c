//! opencode's stored history (the OS rules of `docs/sessions.md`): its SQLite database, each
//! session's messages and parts read back as the `opencode run --format json` lines they stand
//! for, through the live decoder (P rules).

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};

use harness_agents_core::stored::{self, Accounting, History, SessionFiles, Tokens};
use harness_agents_core::{Event, Normalizer, NormalizerConfig, Outcome};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::{Map, Value, json};

use crate::OpencodeNormalizer;

/// opencode's stored history, registered as `"opencode"`: the database `opencode.db` (or
/// `opencode-<channel>.db`) in its data folder, `$XDG_DATA_HOME/opencode`, else
/// `~/.local/share/opencode`; `OPENCODE_DB` names another (a path, relative ones in the data
/// folder).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpencodeHistory;

/// The data folder of opencode under an XDG data folder.
fn data_dir(var: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    var("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| Path::new(&h).join(".local/share")))
        .map(|d| d.join("opencode"))
}

impl History for OpencodeHistory {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn env_vars(&self) -> &'static [&'static str] {
        &["OPENCODE_DB", "XDG_DATA_HOME", "HOME"]
    }

    /// OS1: the data folder, and the database `$OPENCODE_DB` names unless the folder's
    /// databases include it.
    fn default_roots(&self, var: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
        let data = data_dir(var);
        let mut roots: Vec<PathBuf> = data.iter().cloned().collect();
        if let Some(db) = var("OPENCODE_DB").filter(|d| d != ":memory:") {
            let db = PathBuf::from(db);
            let db = match (&data, db.is_absolute()) {
                (Some(data), false) => data.join(db),
                _ => db,
            };
            // Unless reading the data folder finds it already.
            let in_data = data
                .as_ref()
                .is_some_and(|d| db.parent() == Some(d.as_path()));
            if !(in_data && is_database_name(&db)) {
                roots.push(db);
            }
        }
        roots
    }

    /// A data folder, a folder holding one (`~/.local/share`), or a database file.
    fn roots_of(&self, dir: &Path) -> Vec<PathBuf> {
        if dir.join("opencode").is_dir() && !dir.join("opencode.db").exists() {
            vec![dir.join("opencode")]
        } else {
            vec![dir.to_path_buf()]
        }
    }

    fn discover(&self, root: &Path, found: &mut Vec<SessionFiles>) {
        let databases = if root.is_file() {
            vec![root.to_path_buf()]
        } else {
            let Ok(entries) = std::fs::read_dir(root) else {
                return;
            };
            let mut dbs: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| is_database_name(p) && p.is_file())
                .collect();
            dbs.sort();
            dbs
        };
        for db in databases {
            let Ok(sessions) = sessions_of(&db) else {
                // OS1: a database that cannot be read is listed as one session named after
                // its file, whose reading then fails with the reason (never skipped).
                let id = db.file_name().map(|n| n.to_string_lossy().into_owned());
                found.push(SessionFiles {
                    backend: self.name(),
                    id: id.unwrap_or_default(),
                    main: db,
                    subagents: Vec::new(),
                    project_dir: None,
                });
                continue;
            };
            for (id, directory) in sessions {
                found.push(SessionFiles {
                    backend: self.name(),
                    id,
                    main: db.clone(),
                    subagents: Vec::new(),
                    project_dir: directory,
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
        if index > 0 {
            return Err(stored::no_such_file());
        }
        let stored = read_session(&files.main, &files.id)?;
        // OS1: relative paths are the session's directory's (P6).
        let mut config = NormalizerConfig::default();
        config.cwd = files.project_dir.clone();
        let mut normalizer = OpencodeNormalizer::new(config);
        let mut events = Vec::new();
        for line in &stored.lines {
            normalizer.push_line(line.as_bytes(), &mut events);
            for event in events.drain(..) {
                sink(event);
            }
        }
        let outcome = normalizer.finish_each(sink);
        Ok((outcome, stored.accounting))
    }

    fn tally(
        &self,
        files: &SessionFiles,
        index: usize,
        _buf: &mut Vec<u8>,
    ) -> io::Result<(Option<String>, Accounting)> {
        if index > 0 {
            return Err(stored::no_such_file());
        }
        let stored = read_session(&files.main, &files.id)?;
        Ok((stored.session_id, stored.accounting))
    }

    /// The database and its write-ahead log, where opencode's latest writes are until they
    /// are checkpointed.
    fn stamp_files(&self, files: &SessionFiles) -> Vec<PathBuf> {
        let mut wal = files.main.clone().into_os_string();
        wal.push("-wal");
        let wal = PathBuf::from(wal);
        let mut all = vec![files.main.clone()];
        if wal.exists() {
            all.push(wal);
        }
        all
    }
}

/// Whether a file's name is one opencode gives its databases: `opencode.db`,
/// `opencode-<channel>.db`.
fn is_database_name(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    name.is_some_and(|n| n.starts_with("opencode") && n.ends_with(".db"))
}

fn sql(e: rusqlite::Error) -> io::Error {
    io::Error::other(e)
}

/// Opens a database read-only: opencode may be writing it (its write-ahead log is read too).
fn open(db: &Path) -> io::Result<Connection> {
    Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)
}

/// OS1: every session of a database, by creation time, with its directory.
fn sessions_of(db: &Path) -> io::Result<Vec<(String, Option<String>)>> {
    let conn = open(db)?;
    let mut statement = conn
        .prepare("SELECT id, directory FROM session ORDER BY time_created, id")
        .map_err(sql)?;
    let rows = statement
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .map_err(sql)?;
    rows.collect::<Result<_, _>>().map_err(sql)
}

/// One session read back: the lines `opencode run` would have printed, its id and figures.
struct Stored {
    lines: Vec<String>,
    session_id: Option<String>,
    accounting: Accounting,
}

/// One row of `message` or `part`: its id, its message's id (a message's own, for a message),
/// when it was last written and its `data`.
struct Row {
    id: String,
    message: String,
    updated: i64,
    data: String,
}

/// OS2-OS7: a session's rows, in order, as `opencode run --format json` lines, and its figures.
fn read_session(db: &Path, id: &str) -> io::Result<Stored> {
    let conn = open(db)?;
    let session = conn
        .query_row(
            "SELECT directory, time_created, time_updated FROM session WHERE id = ?1",
            [id],
            |row| {
                Ok((
                    row.get::<_, Option<String>>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            },
        )
        .optional()
        .map_err(sql)?;
    let Some((directory, created, updated)) = session else {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no session {id} in {}", db.display()),
        ));
    };
    let rows = |query: &str| -> io::Result<Vec<Row>> {
        let mut statement = conn.prepare(query).map_err(sql)?;
        let rows = statement
            .query_map([id], |row| {
                Ok(Row {
                    id: row.get(0)?,
                    message: row.get(1)?,
                    updated: row.get(2)?,
                    data: row.get(3)?,
                })
            })
            .map_err(sql)?;
        rows.collect::<Result<_, _>>().map_err(sql)
    };
    let messages = rows(
        "SELECT id, id, time_updated, data FROM message WHERE session_id = ?1 \
         ORDER BY time_created, id",
    )?;
    let parts = rows(
        "SELECT id, message_id, time_updated, data FROM part WHERE session_id = ?1 \
         ORDER BY message_id, id",
    )?;

    let mut accounting = Accounting::default();
    let ms = |t: i64| u64::try_from(t).unwrap_or(0);
    accounting.timestamp(&stored::rfc3339_of_ms(ms(created)));
    accounting.cwd = directory.filter(|d| !d.is_empty());
    let mut lines = Vec::new();
    let mut last = updated;
    let mut by_message: std::collections::HashMap<&str, Vec<&Row>> = Default::default();
    for part in &parts {
        last = last.max(part.updated);
        by_message.entry(&part.message).or_default().push(part);
    }
    for message in &messages {
        last = last.max(message.updated);
        let mine = by_message.remove(message.id.as_str()).unwrap_or_default();
        let info: Value = serde_json::from_str(&message.data).unwrap_or(Value::Null);
        match info.get("role").and_then(Value::as_str) {
            Some("user") => user_message(&mine, &mut accounting),
            Some("assistant") => {
                assistant_message(id, message, &info, &mine, &mut lines, &mut accounting)
            }
            // OS6: a message whose data is not an object with a known role is kept as the
            // line it is, which the decoder reports (S2, S3).
            _ => lines.push(message.data.clone()),
        }
    }
    accounting.timestamp(&stored::rfc3339_of_ms(ms(last)));
    let session_id = Some(id.to_string());
    Ok(Stored {
        lines,
        session_id,
        accounting,
    })
}

/// OS3: a user message is a turn; its first text (not one opencode wrote itself) the prompt.
fn user_message(parts: &[&Row], accounting: &mut Accounting) {
    let text = parts.iter().find_map(|part| {
        let data: Value = serde_json::from_str(&part.data).ok()?;
        let synthetic = data.get("synthetic").and_then(Value::as_bool) == Some(true);
        match data.get("type").and_then(Value::as_str) {
            Some("text") if !synthetic => data.get("text")?.as_str().map(str::to_string),
            _ => None,
        }
    });
    accounting.prompt(text.as_deref().unwrap_or(""));
}

/// OS4, OS5: an assistant message's parts as the lines `opencode run` prints for them, then
/// its error; each finished step counted with the message's model.
fn assistant_message(
    session: &str,
    message: &Row,
    info: &Value,
    parts: &[&Row],
    lines: &mut Vec<String>,
    accounting: &mut Accounting,
) {
    let model = info
        .get("modelID")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_string();
    let mut tools: Vec<String> = Vec::new();
    for part in parts {
        let Ok(Value::Object(mut data)) = serde_json::from_str::<Value>(&part.data) else {
            // S2, S3: kept as it is, for the decoder to report.
            lines.push(part.data.clone());
            continue;
        };
        let kind = data.get("type").and_then(Value::as_str).unwrap_or("");
        let line_type = match kind {
            "step-start" => "step_start",
            "step-finish" => "step_finish",
            "text" => "text",
            "reasoning" => "reasoning",
            "tool" => "tool_use",
            // OS5: what `opencode run` prints nothing for (`patch`, `snapshot`, `file`,
            // `agent`, `subtask`, `retry`, `compaction`, ...).
            _ => continue,
        };
        match kind {
            "tool" => {
                if let Some(tool) = data.get("tool").and_then(Value::as_str) {
                    tools.push(tool.to_string());
                }
            }
            "step-finish" => {
                step(&data, &model, &tools, accounting);
                tools.clear();
            }
            _ => {}
        }
        data.insert("id".into(), json!(part.id));
        data.insert("messageID".into(), json!(message.id));
        data.insert("sessionID".into(), json!(session));
        let line = json!({
            "type": line_type,
            "timestamp": part.updated,
            "sessionID": session,
            "part": Value::Object(data),
        });
        lines.push(line.to_string());
    }
    // OS5: the message's error, as `opencode run` prints it (P13); an abort is the caller's
    // doing, not a failure (as PS5).
    if let Some(error) = info.get("error").filter(|e| !e.is_null()) {
        if error.get("name").and_then(Value::as_str) != Some("MessageAbortedError") {
            let mut line = Map::new();
            line.insert("type".into(), json!("error"));
            line.insert("timestamp".into(), json!(message.updated));
            line.insert("sessionID".into(), json!(session));
            line.insert("error".into(), error.clone());
            lines.push(Value::Object(line).to_string());
        }
    }
}

/// OS7: one finished step: a model message with its tokens (reasoning counted as output,
/// which it is billed as), its cost, and the tools called in it.
fn step(data: &Map<String, Value>, model: &str, tools: &[String], accounting: &mut Accounting) {
    let n = |path: &str| {
        data.get("tokens")
            .and_then(|t| t.pointer(path))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let tokens = Tokens {
        input: n("/input"),
        output: n("/output").saturating_add(n("/reasoning")),
        cache_read: n("/cache/read"),
        cache_write: n("/cache/write"),
    };
    accounting.message(model, &tokens, tools);
    if let Some(cost) = data.get("cost").and_then(Value::as_f64) {
        accounting.reported_cost = Some(accounting.reported_cost.unwrap_or(0.0) + cost);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// A database with opencode's three tables (the columns read) and the rows given:
    /// messages `(id, time, data)`, parts `(id, message, data)`.
    fn database(
        dir: &Path,
        messages: &[(&str, i64, &str)],
        parts: &[(&str, &str, &str)],
    ) -> PathBuf {
        let path = dir.join("opencode.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, \
               time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL);
             CREATE TABLE message (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, \
               time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             CREATE TABLE part (id TEXT PRIMARY KEY, message_id TEXT NOT NULL, \
               session_id TEXT NOT NULL, time_created INTEGER NOT NULL, \
               time_updated INTEGER NOT NULL, data TEXT NOT NULL);
             INSERT INTO session VALUES ('ses_1', '/repo', 1796095944000, 1796095945000);
             INSERT INTO session VALUES ('ses_2', '/other', 1796095946000, 1796095946000);",
        )
        .unwrap();
        for (id, time, data) in messages {
            conn.execute(
                "INSERT INTO message VALUES (?1, 'ses_1', ?2, ?2, ?3)",
                rusqlite::params![id, time, data],
            )
            .unwrap();
        }
        for (id, message, data) in parts {
            conn.execute(
                "INSERT INTO part VALUES (?1, ?2, 'ses_1', 0, 0, ?3)",
                rusqlite::params![id, message, data],
            )
            .unwrap();
        }
        path
    }

    #[test]
    fn a_sessions_rows_read_as_its_live_lines() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(
            dir.path(),
            &[
                ("msg_1", 1, r#"{"role":"user"}"#),
                ("msg_2", 2, r#"{"role":"assistant","modelID":"m"}"#),
                (
                    "msg_3",
                    3,
                    r#"{"role":"assistant","modelID":"m","error":{"name":"APIError","data":{"message":"overloaded"}}}"#,
                ),
                ("msg_4", 4, "not json"),
            ],
            &[
                (
                    "prt_1",
                    "msg_1",
                    r#"{"type":"text","text":"Read notes.txt"}"#,
                ),
                ("prt_2", "msg_2", r#"{"type":"step-start"}"#),
                (
                    "prt_3",
                    "msg_2",
                    r#"{"type":"tool","tool":"read","callID":"c1","state":{"status":"completed","input":{"filePath":"notes.txt"},"output":""}}"#,
                ),
                ("prt_4", "msg_2", r#"{"type":"patch","files":[]}"#),
                ("prt_5", "msg_2", "[1,2"),
                (
                    "prt_6",
                    "msg_2",
                    r#"{"type":"step-finish","reason":"tool-calls","tokens":{"input":10,"output":2,"reasoning":1,"cache":{"read":4,"write":3}},"cost":0.5}"#,
                ),
                ("prt_7", "msg_3", r#"{"type":"step-start"}"#),
            ],
        );
        let mut found = Vec::new();
        OpencodeHistory.discover(dir.path(), &mut found);
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["ses_1", "ses_2"]);
        assert_eq!(found[0].main, db);
        assert_eq!(found[0].project_dir.as_deref(), Some("/repo"));
        let mut events = Vec::new();
        let (outcome, accounting) = OpencodeHistory
            .decode(&found[0], 0, &mut |e| {
                events.push(serde_json::to_value(e).unwrap());
            })
            .unwrap();
        let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
        // OS4: the read; OS6: the part and the message that are not JSON; OS5: the error.
        assert_eq!(
            kinds,
            ["read", "warning", "error", "warning"],
            "{events:#?}"
        );
        assert_eq!(events[0]["path"], "/repo/notes.txt");
        assert_eq!(events[1]["message"], "[1,2");
        assert_eq!(events[2]["message"], "overloaded");
        assert_eq!(events[3]["message"], "not json");
        assert_eq!(outcome.status, harness_agents_core::Status::Error);
        assert_eq!(outcome.session_id.as_deref(), Some("ses_1"));
        assert_eq!(accounting.prompts, 1);
        assert_eq!(accounting.first_prompt.as_deref(), Some("Read notes.txt"));
        assert_eq!(accounting.messages, 1);
        assert_eq!(
            accounting.models["m"],
            Tokens {
                input: 10,
                output: 3,
                cache_read: 4,
                cache_write: 3
            }
        );
        assert_eq!(accounting.tools["read"].uses, 1);
        assert_eq!(accounting.reported_cost, Some(0.5));
        assert_eq!(accounting.cwd.as_deref(), Some("/repo"));
        assert_eq!(
            accounting.first_timestamp.as_deref(),
            Some("2026-12-01T03:32:24.000Z")
        );
        assert_eq!(
            accounting.last_timestamp.as_deref(),
            Some("2026-12-01T03:32:25.000Z")
        );
        let (id, tallied) = OpencodeHistory
            .tally(&found[0], 0, &mut Vec::new())
            .unwrap();
        assert_eq!((id.as_deref(), tallied), (Some("ses_1"), accounting));
    }

    #[test]
    fn the_data_folder_and_opencode_db_name_the_databases() {
        let roots = |vars: &[(&str, &str)]| {
            let vars: Vec<(String, String)> = vars
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            OpencodeHistory.default_roots(&|name| {
                vars.iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| OsString::from(v))
            })
        };
        let data = PathBuf::from("/d/opencode");
        assert_eq!(
            roots(&[("HOME", "/h")]),
            [PathBuf::from("/h/.local/share/opencode")]
        );
        assert_eq!(
            roots(&[("HOME", "/h"), ("XDG_DATA_HOME", "/d")]),
            std::slice::from_ref(&data)
        );
        let with = |db: &str| roots(&[("XDG_DATA_HOME", "/d"), ("OPENCODE_DB", db)]);
        assert_eq!(with("opencode-dev.db"), std::slice::from_ref(&data));
        assert_eq!(
            with("mine.sqlite"),
            [data.clone(), data.join("mine.sqlite")]
        );
        assert_eq!(with("/x/o.db"), [data.clone(), PathBuf::from("/x/o.db")]);
        assert_eq!(with(":memory:"), [data]);
    }

    #[test]
    fn a_missing_session_or_database_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let db = database(dir.path(), &[], &[]);
        let mut files = SessionFiles {
            backend: "opencode",
            id: "ses_9".into(),
            main: db,
            subagents: Vec::new(),
            project_dir: None,
        };
        let error = OpencodeHistory
            .tally(&files, 0, &mut Vec::new())
            .unwrap_err();
        assert!(error.to_string().contains("no session ses_9"), "{error}");
        files.main = dir.path().join("none.db");
        assert!(OpencodeHistory.tally(&files, 0, &mut Vec::new()).is_err());
        let mut found = Vec::new();
        OpencodeHistory.discover(&dir.path().join("nowhere"), &mut found);
        assert!(found.is_empty());
        std::fs::write(
            dir.path().join("opencode-bad.db"),
            "not a database, not even close",
        )
        .unwrap();
        OpencodeHistory.discover(dir.path(), &mut found);
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["opencode-bad.db", "ses_1", "ses_2"]);
        let error = OpencodeHistory
            .tally(&found[0], 0, &mut Vec::new())
            .unwrap_err();
        assert!(error.to_string().contains("not a database"), "{error}");
    }
}
