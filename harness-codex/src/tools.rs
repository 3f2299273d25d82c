//! The tool map (X3-X6): what one completed Codex item becomes. Pure functions of the item.

use std::path::Path;

use harness_agents_core::backend::json::{Loose, Scan};
use harness_agents_core::backend::paths::resolve;
use harness_agents_core::backend::reclassify::{ShellInput, shell_events};
use harness_agents_core::{EventBody, PlanItem, ToolRef, ToolStatus, UnknownReason, WarningSource};
use serde_json::Value;

use crate::wire::Item;

fn tool_ref(tool: &str, item: &Item<'_>) -> ToolRef {
    ToolRef {
        tool: Some(tool.to_string()),
        tool_use_id: item.view.id.as_str().map(str::to_string),
    }
}

fn unknown(reason: UnknownReason, item: &Item<'_>, tool: ToolRef) -> EventBody {
    EventBody::Unknown {
        reason,
        raw: item.value(),
        tool,
    }
}

/// `success` of a tool item: its `status` is `"completed"` (X4, X6).
fn status_of(item: &Item<'_>) -> ToolStatus {
    ToolStatus {
        success: item.view.status.as_str() == Some("completed"),
        error: None,
    }
}

/// The events of a completed item of type `kind` (X3-X6). `cwd` resolves relative paths (X9).
pub(crate) fn completed(item: &Item<'_>, kind: &str, cwd: Option<&str>) -> Vec<EventBody> {
    match kind {
        // S7: decoded once, into the text the event and the outcome share.
        "agent_message" => item
            .view
            .text
            .shared()
            .map(|text| EventBody::Agent { text })
            .into_iter()
            .collect(),
        "reasoning" => item
            .view
            .text
            .non_empty_str()
            .map(|text| EventBody::Reasoning {
                text: text.into_owned(),
            })
            .into_iter()
            .collect(),
        "command_execution" => command_events(item, cwd),
        "file_change" => file_change_events(item, cwd),
        "todo_list" => vec![EventBody::Plan {
            items: plan_items_of(item),
        }],
        "error" => vec![EventBody::Warning {
            message: item.view.message.as_str().unwrap_or_default().to_string(),
            source: WarningSource::Stream,
        }],
        "mcp_tool_call" => {
            let name = match (item.view.server.as_str(), item.view.tool.as_str()) {
                (Some(server), Some(tool)) => format!("{server}/{tool}"),
                _ => "mcp_tool_call".to_string(),
            };
            vec![unknown(
                UnknownReason::UnknownTool,
                item,
                tool_ref(&name, item),
            )]
        }
        "web_search" => vec![unknown(
            UnknownReason::UnknownTool,
            item,
            tool_ref("web_search", item),
        )],
        _ => vec![unknown(
            UnknownReason::UnknownItem,
            item,
            ToolRef::default(),
        )],
    }
}

/// X5: a `todo_list`'s entries: `text` and `completed` of each object entry, as given.
pub(crate) fn plan_items(item: &Value) -> Vec<PlanItem> {
    let Some(Value::Array(entries)) = item.get("items") else {
        return Vec::new();
    };
    entries
        .iter()
        .filter(|e| e.is_object())
        .map(|e| PlanItem {
            text: e.get("text").cloned().unwrap_or(Value::Null),
            completed: e.get("completed").cloned().unwrap_or(Value::Null),
        })
        .collect()
}

/// X5: a `todo_list` item's entries (see [`plan_items`]), read from the item's text without
/// building the item as a `Value`: only each entry's `text` and `completed` are parsed.
pub(crate) fn plan_items_of(item: &Item<'_>) -> Vec<PlanItem> {
    plan_items_from(item.raw).unwrap_or_else(|| plan_items(&item.value()))
}

/// [`plan_items`] from an item's text; `None` when the fast reader is unsure.
fn plan_items_from(raw: &str) -> Option<Vec<PlanItem>> {
    let mut scan = Scan::new(raw)?;
    let mut items = Vec::new();
    scan.members(|scan, key| {
        if key != "items" {
            return scan.skip();
        }
        // A repeated key keeps its last value, as in a `Value`.
        items.clear();
        if scan.peek()? != b'[' {
            return scan.skip();
        }
        scan.elements(|scan| {
            if scan.peek()? != b'{' {
                return scan.skip();
            }
            let (mut text, mut completed) = (None, None);
            scan.members(|scan, key| {
                match key {
                    "text" => text = Some(scan.raw()?),
                    "completed" => completed = Some(scan.raw()?),
                    _ => scan.skip()?,
                }
                Some(())
            })?;
            // The text is surely JSON: parsed on its own, as the `Value` would hold it.
            let value = |raw: Option<&str>| match raw {
                Some(raw) => serde_json::from_str(raw).ok(),
                None => Some(Value::Null),
            };
            items.push(PlanItem {
                text: value(text)?,
                completed: value(completed)?,
            });
            Some(())
        })
    })?;
    scan.end()?;
    Some(items)
}

/// The script of a shell wrapper `[bash|zsh|sh (any path), -c|-lc, script]` (X4).
fn wrapped_script(argv: &[String]) -> Option<&str> {
    let [program, flag, script] = argv else {
        return None;
    };
    is_wrapper(program, flag).then_some(script.as_str())
}

/// Whether `[program, flag, script]` is a shell wrapper: bash, zsh or sh (any path) with
/// `-c` or `-lc` (X4).
fn is_wrapper(program: &str, flag: &str) -> bool {
    let name = Path::new(program).file_name().and_then(|n| n.to_str());
    matches!(name, Some("bash" | "zsh" | "sh")) && (flag == "-c" || flag == "-lc")
}

/// X4: a `command_execution` item: read/search/list events when every part Codex finds is one
/// of those, else one `command` event with its `exit_code` (i64 or u64, as serde_json keeps an
/// integer).
fn command_events(item: &Item<'_>, cwd: Option<&str>) -> Vec<EventBody> {
    let tool = tool_ref("command_execution", item);
    let Some(line) = item.view.command.as_str() else {
        return vec![unknown(UnknownReason::MalformedToolUse, item, tool)];
    };
    let exit_code = match &item.view.exit_code {
        Loose::Number(n) if n.is_i64() || n.is_u64() => Some(n.clone()),
        _ => None,
    };
    let status = status_of(item);
    // A wrapper's script is classified on its own, as the classifier would take it out of
    // the argv; the usual `bash -lc 'SCRIPT'` is not even split into words.
    if let Some([program, flag, script]) = wrapper_words(line) {
        if is_wrapper(program, flag) {
            let input = ShellInput::Script(script);
            return shell_events(input, script, exit_code, cwd, &status, &tool);
        }
    }
    let argv = split_command(line);
    let (command, input) = match wrapped_script(&argv) {
        Some(script) => (script, ShellInput::Script(script)),
        None => (line, ShellInput::Argv(&argv)),
    };
    shell_events(input, command, exit_code, cwd, &status, &tool)
}

/// A command line's words, as `shlex::split` gives them (the whole line as one word when it
/// cannot split it). The shape Codex prints nearly always, `PROGRAM FLAG 'SCRIPT'` (plain
/// words, a script in single quotes without one inside, one space between), is split at
/// once: `shlex` would give the same three words.
fn split_command(line: &str) -> Vec<String> {
    wrapper_words(line)
        .map(|words| words.map(str::to_string).to_vec())
        .or_else(|| shlex::split(line))
        .unwrap_or_else(|| vec![line.to_string()])
}

/// The words of `PROGRAM FLAG 'SCRIPT'` (see [`split_command`]); `None` for any other shape.
fn wrapper_words(line: &str) -> Option<[&str; 3]> {
    let plain = |word: &str| {
        !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'.' | b'-'))
    };
    let (program, rest) = line.split_once(' ')?;
    let (flag, quoted) = rest.split_once(' ')?;
    let script = quoted.strip_prefix('\'')?.strip_suffix('\'')?;
    (plain(program) && plain(flag) && !script.contains('\'')).then_some([program, flag, script])
}

/// X6: one `write` per change, each entry without a non-empty string `path` a
/// `malformed_tool_use` in its place; a `changes` that is not a list gives one.
fn file_change_events(item: &Item<'_>, cwd: Option<&str>) -> Vec<EventBody> {
    let tool = tool_ref("file_change", item);
    match changes_of(item.raw) {
        Some(Some(changes)) => {
            let status = status_of(item);
            changes
                .into_iter()
                .map(|change| {
                    let [path, kind] = change.as_ref()?;
                    Some(EventBody::Write {
                        path: resolve(path.non_empty_str()?, cwd),
                        change: kind.as_str().map(str::to_string),
                        status: status.clone(),
                        tool: tool.clone(),
                    })
                })
                .map(|write| {
                    write.unwrap_or_else(|| {
                        unknown(UnknownReason::MalformedToolUse, item, tool.clone())
                    })
                })
                .collect()
        }
        Some(None) => vec![unknown(UnknownReason::MalformedToolUse, item, tool)],
        None => file_change_values(item, cwd, tool),
    }
}

/// The `path` and `kind` of each entry of an item's `changes` (`None` for an entry that is
/// not an object), read from the item's text; `Some(None)` when `changes` is not a list, `None`
/// when the fast reader is unsure (then [`file_change_values`] reads it).
#[allow(clippy::type_complexity)]
fn changes_of(raw: &str) -> Option<Option<Vec<Option<[Loose<'_>; 2]>>>> {
    let mut scan = Scan::new(raw)?;
    let mut changes = None;
    scan.members(|scan, key| {
        if key != "changes" {
            return scan.skip();
        }
        // A repeated key keeps its last value, as in a `Value`.
        changes = None;
        if scan.peek()? == b'[' {
            let mut entries = Vec::new();
            scan.elements(|scan| {
                entries.push(scan.fields(&["path", "kind"])?);
                Some(())
            })?;
            changes = Some(entries);
        } else {
            scan.skip()?;
        }
        Some(())
    })?;
    scan.end()?;
    Some(changes)
}

/// [`file_change_events`] through the item as a `Value`.
fn file_change_values(item: &Item<'_>, cwd: Option<&str>, tool: ToolRef) -> Vec<EventBody> {
    let value = item.value();
    let Some(Value::Array(changes)) = value.get("changes") else {
        return vec![unknown(UnknownReason::MalformedToolUse, item, tool)];
    };
    let status = status_of(item);
    changes
        .iter()
        .map(|change| {
            match change
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
            {
                Some(path) => EventBody::Write {
                    path: resolve(path, cwd),
                    change: change
                        .get("kind")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    status: status.clone(),
                    tool: tool.clone(),
                },
                None => unknown(UnknownReason::MalformedToolUse, item, tool.clone()),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::wire::ItemView;

    /// X4: the shortcut for `PROGRAM FLAG 'SCRIPT'` splits exactly as `shlex` does, and
    /// leaves every other shape to it.
    #[test]
    fn x4_wrapper_commands_split_as_shlex_splits_them() {
        let shortcut = [
            "/bin/bash -lc 'cat README.md'",
            "bash -c 'cd src && cat \"a b\" | wc -l\nls'",
            "/bin/zsh -lc ''",
            "sh -lc 'echo $HOME; \\n'",
            "/usr/bin/env -x 'd\u{e9}j\u{e0}'",
        ];
        for line in shortcut {
            assert!(wrapper_words(line).is_some(), "{line}");
            assert_eq!(Some(split_command(line)), shlex::split(line), "{line}");
        }
        let other = [
            "/bin/bash -lc \"sed -n '1,5p' src/app.py\"",
            "/bin/bash -lc true",
            "/bin/bash  -lc 'ls'",
            "/bin/bash -lc 'ls' ",
            "/bin/bash -lc 'it'\\''s'",
            "/bin/bash -lc 'a' 'b'",
            "#bash -lc 'ls'",
            "b$x -lc 'ls'",
            "bash -lc 'unterminated",
            "bash -lc '",
            "bash\t-lc 'ls'",
            "",
        ];
        for line in other {
            assert!(wrapper_words(line).is_none(), "{line}");
            let expected = shlex::split(line).unwrap_or_else(|| vec![line.to_string()]);
            assert_eq!(split_command(line), expected, "{line}");
        }
    }

    proptest::proptest! {
        /// X4: any line of wrapper-like pieces splits as `shlex` splits it.
        #[test]
        fn x4_split_command_agrees_with_shlex(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "/bin/bash -lc '", "bash -c '", "bash", "-lc", " ", "  ", "'", "\"", "\\",
                    "#", "$x",
                    "\t", "\n", "a", "cat f", "&&", "\u{e9}", ";", "-",
                ]),
                0..12,
            ),
        ) {
            let line = pieces.concat();
            let expected = shlex::split(&line).unwrap_or_else(|| vec![line.clone()]);
            proptest::prop_assert_eq!(split_command(&line), expected, "{}", line);
        }
    }

    /// X5: the plan read from the item's text is the plan the item as a `Value` gives.
    #[test]
    fn x5_plan_read_from_text_as_from_the_value() {
        for items in [
            r#"[{"text":"a","completed":false},{"text":"b\n\u00e9","completed":true}]"#,
            r#"[{"text":"a"},{"completed":true},7,null,[1],{"text":{"x":[1]},"completed":"yes"}]"#,
            r#"[{"text":"a","text":"b","completed":false,"completed":null}]"#,
            r#"[]"#,
            r#"{"text":"a"}"#,
            r#"[{"text":"a"}],"items":[{"text":"b"}]"#,
            r#"[{"text":"a"}],"items":3"#,
            r#"[{"t\u0065xt":"a"}]"#,
            r#"[{"text":1e400}]"#,
        ] {
            let raw = format!(r#"{{"id":"t","type":"todo_list","items":{items}}}"#);
            let Ok(value) = serde_json::from_str::<Value>(&raw) else {
                assert!(plan_items_from(&raw).is_none(), "{raw}");
                continue;
            };
            let item = Item {
                view: ItemView::default(),
                raw: &raw,
            };
            assert_eq!(plan_items_of(&item), plan_items(&value), "{raw}");
        }
        let escaped = r#"{"items":[{"t\u0065xt":"a"}]}"#;
        assert!(plan_items_from(escaped).is_none());
        assert_eq!(
            plan_items_from(r#"{"items":[{"text":"a","completed":true}]}"#),
            Some(vec![PlanItem {
                text: Value::from("a"),
                completed: Value::Bool(true),
            }])
        );
    }

    /// X4: a wrapper's script classified on its own gives the events its argv gives (the
    /// classifier takes the script out of a `[bash|zsh|sh, -c|-lc, SCRIPT]` argv itself).
    #[test]
    fn x4_a_wrapper_script_classifies_as_its_argv() {
        let ok = ToolStatus {
            success: true,
            error: None,
        };
        let tool = ToolRef::default();
        for line in [
            "/bin/bash -lc 'cat README.md'",
            "bash -c 'cd src && cat util.py'",
            "/usr/bin/zsh -lc 'rg -n foo . | head'",
            "sh -c 'ls -la; make'",
            "/bin/bash -lc \"sed -n '1,5p' src/app.py\"",
        ] {
            let argv = split_command(line);
            let script = wrapped_script(&argv).unwrap();
            for cwd in [None, Some("/w")] {
                assert_eq!(
                    shell_events(ShellInput::Script(script), script, None, cwd, &ok, &tool),
                    shell_events(ShellInput::Argv(&argv), script, None, cwd, &ok, &tool),
                    "{line}"
                );
            }
        }
    }

    /// X6: the changes read from the item's text give the events the item as a `Value` gives.
    #[test]
    fn x6_changes_read_from_text_as_from_the_value() {
        for changes in [
            r#"[{"path":"a.rs","kind":"add"},{"path":"/b","kind":"update"}]"#,
            r#"[{"path":"","kind":"add"},{"kind":"x"},7,null,{"path":5},{"path":"c","kind":3}]"#,
            r#"[{"path":"d\u00e9\n","kind":"a\"b","path":"e"}]"#,
            r#"[]"#,
            r#"{"path":"a"}"#,
            r#""a""#,
            r#"[{"path":"a"}],"changes":[{"path":"b"}]"#,
            r#"[{"path":"a"}],"changes":null"#,
            r#"[{"p\u0061th":"a"}]"#,
        ] {
            let raw = format!(r#"{{"id":"f","type":"file_change","changes":{changes}}}"#);
            let item = Item {
                view: ItemView {
                    id: Loose::Str(Cow::Borrowed("f")),
                    status: Loose::Str(Cow::Borrowed("completed")),
                    ..ItemView::default()
                },
                raw: &raw,
            };
            let tool = tool_ref("file_change", &item);
            let expected = file_change_values(&item, Some("/w"), tool);
            assert_eq!(file_change_events(&item, Some("/w")), expected, "{raw}");
        }
        let escaped = r#"{"changes":[{"p\u0061th":"a"}]}"#;
        assert!(
            changes_of(escaped).is_none(),
            "an escaped key is left to the Value"
        );
        assert_eq!(
            changes_of(r#"{"changes":[1]}"#).map(|c| c.map(|c| c.len())),
            Some(Some(1))
        );
    }
}
