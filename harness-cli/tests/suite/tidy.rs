//! Tidy: the repository's own rules, checked on its files so that the docs stay true.
//!
//! Each test reads the repository from the workspace root (this crate's parent folder),
//! walking every folder but build output, generated data and installed packages (`target/`,
//! `node_modules/`, `dist/`, `.git/`, the fuzzers' corpora and artifacts, Python's virtual
//! environments and caches). Each failure names the file, the line and what to change.
//!
//! - Paths named in docs exist. The docs are every `*.md` file and the crate docs (the `//!`
//!   lines of every Rust file). A *path* there is the target of a Markdown link, or a span in
//!   backticks that does not start with `/`, `~` or `-`, holds no space and no mark of a
//!   placeholder or of code (`*`, `{`, `<`, `…`, `...`, `$`, `=`, `|`, quotes, brackets, `,`,
//!   `:`, or a name with two capitals in a row such as `NAME`, `BACKEND`, `TARGET`, other than
//!   README, CHANGELOG, ARCHITECTURE, SPEC and SKILL), and that is one of:
//!   - a name that starts with a top-level entry of the repository (`fixtures/claude/`,
//!     `harness-core/src/lib.rs`, `.ci/run`; `target/` aside), resolved from the root;
//!   - in a package (a folder with `Cargo.toml`, `package.json` or `pyproject.toml` above the
//!     doc), a name that starts with one of its usual folders (src, tests, benches, examples,
//!     python, test, scripts, bin), resolved from that package;
//!   - a bare `*.md` name, found beside the doc, in its package or at the root.
//!
//!   Anything else in backticks (an agent's `app.py`, `/home/dev/project`, `~/.claude`) is
//!   an example, not a file of this repository. Link targets are resolved from the doc's
//!   folder; web addresses and `#anchors` are not checked.
//! - No tracker references: the project has no public tracker, so no text names an issue by
//!   its number (the word "issue" or "issues", then a number, with or without `#`, or a name
//!   such as "issue" with digits and `_`); the reason goes in the text and the history in git
//!   (`CHANGELOG.md` included). Recorded agent output under `fixtures/` (`*.jsonl`,
//!   `*.stderr`, `*.cmd`) is the agents' text, not ours, and is not read.
//! - The inventory of `unsafe` in ARCHITECTURE.md ("Unsafe code") lists every Rust file with
//!   an `unsafe` block or `unsafe impl` (outside `//` comments and one-line string literals),
//!   with how many of each.
//! - Every Rust file starts with a `//!` header saying what it is.
//! - The README's samples are the binary's: its `harness backends` output is exactly what
//!   `harness backends` prints, every complete line of its first output sample is a line that
//!   its first command prints, and its human-format sample is what that command prints (a line
//!   ending in `…` may be shortened). Each of its Python and TypeScript examples is one of the
//!   examples of `harness-python/README.md` and `npm/README.md` that those packages' tests
//!   run: the first, and the one that opens a session.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::harness;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the CLI lives in the workspace")
        .to_path_buf()
}

/// Folders that are build output, generated data or installed packages (what the
/// `.gitignore` files leave out), never the project's own files.
const SKIPPED: [&str; 11] = [
    "target",
    "node_modules",
    ".git",
    ".venv",
    "venv",
    "__pycache__",
    ".pytest_cache",
    "dist",
    "corpus",
    "artifacts",
    "coverage",
];

/// Every file of the repository, as paths relative to the root with `/` separators, sorted.
fn files() -> Vec<String> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                if !SKIPPED.contains(&name.as_str()) {
                    walk(&entry.path(), &path, out);
                }
            } else if kind.is_file() {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root(), "", &mut out);
    out.sort();
    out
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The folder of a relative path (`""` at the root).
fn parent(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// The package a file belongs to: the nearest folder above it with a manifest.
fn package(rel: &str) -> Option<String> {
    let mut dir = parent(rel);
    while !dir.is_empty() {
        let base = root().join(dir);
        if ["Cargo.toml", "package.json", "pyproject.toml"]
            .iter()
            .any(|m| base.join(m).is_file())
        {
            return Some(dir.to_string());
        }
        dir = parent(dir);
    }
    None
}

/// One line of doc text with where it came from.
struct DocLine<'a> {
    file: &'a str,
    number: usize,
    text: String,
}

/// The doc lines of a file: every line of a `*.md` file, the `//!` lines of a Rust file.
fn doc_lines(file: &str) -> Vec<DocLine<'_>> {
    let text = read(file);
    let markdown = file.ends_with(".md");
    text.lines()
        .enumerate()
        .filter_map(|(i, line)| {
            let text = if markdown {
                line.to_string()
            } else {
                line.trim_start().strip_prefix("//!")?.to_string()
            };
            Some(DocLine {
                file,
                number: i + 1,
                text,
            })
        })
        .collect()
}

/// The spans in backticks and the Markdown link targets of one line.
fn spans(line: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut parts = line.split('`');
    parts.next();
    while let (Some(inside), Some(_)) = (parts.next(), parts.next()) {
        out.push((inside.to_string(), false));
    }
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let target = &rest[at + 2..];
        let end = target.find(')').unwrap_or(target.len());
        out.push((target[..end].to_string(), true));
        rest = &target[end..];
    }
    out
}

/// The names written in capitals that are files, not placeholders.
const DOC_NAMES: [&str; 5] = ["README", "CHANGELOG", "ARCHITECTURE", "SPEC", "SKILL"];

/// Whether a span is a placeholder or an example rather than a path (see the module docs).
fn is_placeholder(span: &str) -> bool {
    let marks = [
        ' ', '\t', '*', '{', '}', '<', '>', '…', '$', '=', '|', '(', '[', '"', '\'', ',', ':',
    ];
    if span.is_empty() || span.contains(marks) || span.contains("...") {
        return true;
    }
    span.split('/').any(|segment| {
        let stem = segment.split('.').next().unwrap_or(segment);
        !DOC_NAMES.contains(&stem)
            && stem
                .as_bytes()
                .windows(2)
                .any(|w| w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase())
    })
}

/// Where a span that names a file of this repository must exist, or `None` when it does not
/// name one (see the module docs).
fn where_to_find(span: &str, link: bool, doc: &str, top: &[String]) -> Option<Vec<String>> {
    let join = |dir: &str, name: &str| {
        if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        }
    };
    if link {
        if span.contains(':') || span.starts_with('#') || span.is_empty() {
            return None;
        }
        let target = span.split('#').next().unwrap_or(span);
        return Some(vec![join(parent(doc), target)]);
    }
    if is_placeholder(span) || span.starts_with(['/', '~', '-']) {
        return None;
    }
    let first = span.split('/').next().unwrap_or(span);
    if !span.contains('/') {
        if !span.ends_with(".md") {
            return None;
        }
        let mut places = vec![join(parent(doc), span), span.to_string()];
        places.extend(package(doc).map(|p| join(&p, span)));
        return Some(places);
    }
    if first != "target" && top.iter().any(|t| t == first) {
        return Some(vec![span.to_string()]);
    }
    let package_dirs = [
        "src", "tests", "benches", "examples", "python", "test", "scripts", "bin",
    ];
    if package_dirs.contains(&first) {
        return package(doc).map(|p| vec![join(&p, span)]);
    }
    None
}

/// `a/b/../c` as `a/c`.
fn lexical(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." | "" => {}
            ".." => {
                out.pop();
            }
            _ => out.push(part),
        }
    }
    out.join("/")
}

#[test]
fn paths_named_in_docs_exist() {
    let all = files();
    let top: Vec<String> = std::fs::read_dir(root())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !SKIPPED.contains(&n.as_str()))
        .collect();
    let docs = all
        .iter()
        .filter(|f| f.ends_with(".md") || f.ends_with(".rs"));
    let mut missing = Vec::new();
    let mut checked = 0;
    for doc in docs {
        for line in doc_lines(doc) {
            for (span, link) in spans(&line.text) {
                let Some(places) = where_to_find(&span, link, doc, &top) else {
                    continue;
                };
                checked += 1;
                if !places.iter().any(|p| root().join(lexical(p)).exists()) {
                    missing.push(format!(
                        "{}:{}: `{span}` names no file or folder (looked for {}): correct the \
                         path, or drop it if the file is gone",
                        line.file,
                        line.number,
                        places.join(", ")
                    ));
                }
            }
        }
    }
    assert!(
        checked > 200,
        "only {checked} paths found: is the rule broken?"
    );
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// Where `text` cites a tracker (the word "issue" or "issues", then a number, across spaces,
/// line breaks, comment marks and `#`; or a name such as "issue" with digits and `_`), as
/// byte offsets.
fn tracker_references(text: &str) -> Vec<usize> {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = lower[from..].find("issue") {
        let start = from + at;
        from = start + 5;
        if start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
            continue;
        }
        let mut i = start + 5;
        if bytes.get(i) == Some(&b's') {
            i += 1;
        }
        while bytes.get(i).is_some_and(|b| b" \t\r\n/!#*>_-".contains(b)) {
            i += 1;
        }
        if bytes.get(i).is_some_and(u8::is_ascii_digit) {
            found.push(start);
        }
    }
    found
}

#[test]
fn tracker_references_are_found_where_they_hide() {
    // Spelled in two pieces, so that this file holds no reference itself.
    let word = "iss".to_string() + "ue";
    for tail in [
        " 12",
        " #3",
        "s 11 and 18",
        "\n//! 17",
        "12_regression()",
        "_7",
    ] {
        let text = format!("see {word}{tail}");
        assert_eq!(tracker_references(&text).len(), 1, "{text:?}");
    }
    for text in [
        "tissue 5",
        "an issue with 3 parts",
        "issues, 2 of them",
        "issue",
    ] {
        assert!(tracker_references(text).is_empty(), "{text:?}");
    }
}

#[test]
fn no_tracker_references_in_sources_or_docs() {
    let recorded = [".jsonl", ".stderr", ".cmd"];
    let mut found = Vec::new();
    for file in files() {
        if file.starts_with("fixtures/") && recorded.iter().any(|e| file.ends_with(e)) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root().join(&file)) else {
            continue; // not text
        };
        for at in tracker_references(&text) {
            let line = text[..at].matches('\n').count() + 1;
            let end = text[at..]
                .char_indices()
                .nth(24)
                .map_or(text.len(), |(i, _)| at + i);
            found.push(format!(
                "{file}:{line}: `{}` cites a tracker the project does not have: say why in \
                 the text, in the present tense, and leave the history to git",
                text[at..end].replace('\n', " ")
            ));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The `unsafe` blocks and `unsafe impl`s of one Rust file, `//` comments and one-line string
/// literals left out.
fn count_unsafe(text: &str) -> (usize, usize) {
    let (mut blocks, mut impls) = (0, 0);
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut from = 0;
        while let Some(at) = code[from..].find("unsafe") {
            let start = from + at;
            from = start + 6;
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let word_char = |c: char| c.is_alphanumeric() || c == '_';
            // Inside a string literal when an odd number of unescaped quotes precede it.
            let quotes = code[..start].matches('"').count() - code[..start].matches("\\\"").count();
            if code[from..].starts_with(word_char) || quotes % 2 == 1 {
                continue;
            }
            let after = code[from..].trim_start();
            if after.starts_with('{') {
                blocks += 1;
            } else if after
                .strip_prefix("impl")
                .is_some_and(|rest| !rest.starts_with(word_char))
            {
                impls += 1;
            }
        }
    }
    (blocks, impls)
}

#[test]
fn unsafe_is_counted_in_code_only() {
    let text = [
        "unsafe { a() }",
        "unsafe impl Send for X {}",
        "// unsafe { b() }",
        "let s = \"unsafe { c() }\";",
        "fn unsafe_name() {}",
        "unsafe fn f() {}",
    ]
    .join("\n");
    assert_eq!(count_unsafe(&text), (1, 1));
}

#[test]
fn the_unsafe_inventory_in_architecture_md_is_complete() {
    let mut code = BTreeMap::new();
    for file in files().into_iter().filter(|f| f.ends_with(".rs")) {
        let counts = count_unsafe(&read(&file));
        if counts != (0, 0) {
            code.insert(file, counts);
        }
    }
    let architecture = read("ARCHITECTURE.md");
    let section = architecture
        .split("\n## ")
        .find(|s| s.starts_with("Unsafe code"))
        .expect(
            "ARCHITECTURE.md has no \"## Unsafe code\" section: add one with a table \
             `| file | unsafe blocks | unsafe impls | why |`",
        );
    let mut listed = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let number = |i: usize| -> usize {
            cells
                .get(i)
                .and_then(|c| c.parse().ok())
                .unwrap_or_else(|| panic!("ARCHITECTURE.md: `{row}`: cell {i} is not a count"))
        };
        listed.insert(
            cells[1].trim_matches('`').to_string(),
            (number(2), number(3)),
        );
    }
    let mut wrong = Vec::new();
    for (file, &(blocks, impls)) in &code {
        match listed.get(file) {
            Some(&counts) if counts == (blocks, impls) => {}
            Some(&(b, i)) => wrong.push(format!(
                "ARCHITECTURE.md lists `{file}` with {b} unsafe blocks and {i} unsafe impls; \
                 the file has {blocks} and {impls}: correct its row"
            )),
            None => wrong.push(format!(
                "`{file}` has {blocks} unsafe blocks and {impls} unsafe impls: add the row \
                 | `{file}` | {blocks} | {impls} | why | to ARCHITECTURE.md's \"Unsafe code\""
            )),
        }
    }
    for file in listed.keys().filter(|f| !code.contains_key(*f)) {
        wrong.push(format!(
            "ARCHITECTURE.md lists `{file}`, which has no unsafe code: remove its row"
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_rust_file_starts_with_a_header() {
    let missing: Vec<String> = files()
        .into_iter()
        .filter(|f| f.ends_with(".rs") && !read(f).starts_with("//!"))
        .map(|f| format!("{f}: start the file with `//!` lines saying what it holds"))
        .collect();
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// The lines of the first fenced block of `language` after a ```sh block that starts with the
/// line `command`, with the line number of its first line.
fn sample<'a>(text: &'a str, command: &str, language: &str) -> Option<(usize, Vec<&'a str>)> {
    let lines: Vec<&str> = text.lines().collect();
    let from = 1 + lines
        .windows(2)
        .position(|w| w[0].trim() == "```sh" && w[1].trim() == command)?;
    let fence = format!("```{language}");
    let open = from + lines[from..].iter().position(|l| l.trim() == fence)?;
    let body: Vec<&str> = lines[open + 1..]
        .iter()
        .take_while(|l| l.trim() != "```")
        .copied()
        .collect();
    Some((open + 2, body))
}

#[test]
fn the_readmes_backends_sample_is_what_the_binary_prints() {
    // On a machine with none of the agents (an empty PATH, no `*_BIN` variable), so the sample
    // does not depend on what this machine has installed.
    let empty = tempfile::tempdir().unwrap();
    let mut command = harness();
    command.arg("backends").env("PATH", empty.path());
    for name in ["CLAUDE_BIN", "CODEX_BIN", "OPENCODE_BIN", "GEMINI_BIN"] {
        command.env_remove(name);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let readme = read("README.md");
    let Some((line, shown)) = sample(&readme, "harness backends", "json") else {
        panic!(
            "README.md has no `harness backends` sample: add a ```sh block holding the line \
             `harness backends`, then a ```json block holding:\n{printed}"
        );
    };
    assert_eq!(
        shown.join("\n"),
        printed.trim_end(),
        "README.md:{line}: the `harness backends` sample is not what the binary prints; \
         replace the block with:\n{printed}"
    );
}

#[test]
fn the_readmes_first_sample_is_what_its_first_command_prints() {
    const COMMAND: &str = "cargo run -p harness-cli -- normalize fixtures/claude/c_read.jsonl";
    let readme = read("README.md");
    assert!(
        readme.lines().take(20).any(|l| l.starts_with(COMMAND)),
        "README.md: the first command, `{COMMAND}`, is gone from its first lines; \
         update this test with the new first command and its sample"
    );
    let output = harness()
        .args(["normalize", "fixtures/claude/c_read.jsonl"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let open = lines
        .iter()
        .take(40)
        .position(|l| l.trim() == "```json")
        .expect("README.md: the first command's output follows it in a ```json block");
    let at = open + 2;
    let shown: Vec<&str> = lines[open + 1..]
        .iter()
        .take_while(|l| l.trim() != "```")
        .copied()
        .collect();
    let mut stale = Vec::new();
    for (i, line) in shown.iter().enumerate() {
        // Lines with `…` are shortened on purpose.
        if !line.contains('…') && !printed.lines().any(|p| p == *line) {
            stale.push(format!("README.md:{}: {line}", at + i));
        }
    }
    assert!(
        stale.is_empty(),
        "these sample lines are not printed by `{COMMAND}`; replace them with its lines \
         (shorten with `…` where they are long):\n{}\nIt prints:\n{printed}",
        stale.join("\n")
    );
}

#[test]
fn the_readmes_human_sample_is_what_the_binary_prints() {
    const COMMAND: &str = "harness normalize --format human fixtures/claude/c_read.jsonl";
    let readme = read("README.md");
    let (at, shown) = sample(&readme, COMMAND, "text").unwrap_or_else(|| {
        panic!("README.md: no ```sh block with `{COMMAND}`, followed by its output in ```text")
    });
    let mut command = harness();
    for name in ["NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE"] {
        command.env_remove(name);
    }
    let output = command
        .args([
            "normalize",
            "--format",
            "human",
            "fixtures/claude/c_read.jsonl",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed = String::from_utf8(output.stdout).unwrap();
    let printed: Vec<&str> = printed.lines().collect();
    // A line may end in `…` where the README shortens it.
    let agrees = |shown: &str, line: &str| match shown.strip_suffix('…') {
        Some(start) => line.starts_with(start),
        None => shown == line,
    };
    let same =
        shown.len() == printed.len() && shown.iter().zip(&printed).all(|(s, p)| agrees(s, p));
    assert!(
        same,
        "README.md:{at}: the output of `{COMMAND}` is not what the binary prints; replace it \
         with (shortened with `…` at a line's end where it is long):\n{}",
        printed.join("\n")
    );
}

/// The examples of `language` in a Markdown text, each as its text.
fn examples(text: &str, language: &str) -> Vec<String> {
    let fence = format!("```{language}\n");
    text.split(&fence)
        .skip(1)
        .filter_map(|rest| rest.split("```").next())
        .map(str::to_string)
        .collect()
}

#[test]
fn the_readmes_python_and_typescript_examples_are_the_tested_ones() {
    let readme = read("README.md");
    // Each package's README runs its first example and its session example in its own tests
    // (`harness-python/tests/test_readme.py`, `npm/test/readme.test.ts`).
    for (language, tested, opens_session) in [
        ("python", "harness-python/README.md", "harness.session("),
        ("js", "npm/README.md", "session("),
    ] {
        let examples_there = examples(&read(tested), language);
        let first = examples_there
            .first()
            .unwrap_or_else(|| panic!("{tested} has no ```{language} example"));
        let session = examples_there
            .iter()
            .find(|example| example.contains(opens_session))
            .unwrap_or_else(|| panic!("{tested} has no ```{language} session example"));
        for example in examples(&readme, language) {
            assert!(
                example == *first || example == *session,
                "README.md's ```{language} example is neither the first nor the session \
                 example of {tested}, which its tests run: copy one of those:\n{example}"
            );
        }
    }
}
