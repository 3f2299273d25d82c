//! Per-program rules: what one command (a list of words) reads, searches or lists.
//!
//! Everything here works on words already split, and never looks at the shell again. The
//! helpers mirror the small vocabulary Codex uses for operands: "positional operands" (flags
//! skipped, `--` ends the flags), "flag values" (the word after a flag that takes one), and the
//! short display path.

use crate::ParsedCommand;

/// The classification of one command, plus the operand the event path is built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    /// The part as Codex reports it (before any `cd` joining of read paths).
    pub(crate) parsed: ParsedCommand,
    /// For reads: the path as written. For searches and listings: the path operand before
    /// display shortening. `None` when the command names no path (always for unknown).
    pub(crate) operand: Option<String>,
}

/// The words a connector token stands for when it reaches the per-program rules as a word.
pub(crate) fn is_connector(word: &str) -> bool {
    matches!(word, "|" | "&&" | "||" | ";")
}

/// Quotes words back into one command line, as `shlex::try_join` does; a word holding a NUL
/// byte cannot be quoted, and gives the fixed text Codex reports then.
pub(crate) fn join_words(words: &[String]) -> String {
    shlex::try_join(words.iter().map(String::as_str))
        .unwrap_or_else(|_| "<command included NUL byte>".to_string())
}

/// The short name Codex shows for a path: the last component that is not empty, `build`,
/// `dist`, `node_modules` or `src`, after turning `\` into `/`; the trimmed text when none is.
pub fn short_display_path(path: &str) -> String {
    let slashed = path.replace('\\', "/");
    let trimmed = slashed.trim_end_matches('/');
    trimmed
        .rsplit('/')
        .find(|part| !matches!(*part, "" | "build" | "dist" | "node_modules" | "src"))
        .unwrap_or(trimmed)
        .to_string()
}

/// The words before the first connector word.
fn before_connector(args: &[String]) -> &[String] {
    let end = args
        .iter()
        .position(|word| is_connector(word))
        .unwrap_or(args.len());
    &args[..end]
}

/// Drops the values of flags that take one and every `--name=value` word; after `--`, keeps
/// everything. Other flags stay (callers filter them).
fn without_flag_values<'a>(args: &'a [String], valued: &[&str]) -> Vec<&'a String> {
    let mut out = Vec::with_capacity(args.len());
    let mut index = 0;
    while index < args.len() {
        let word = &args[index];
        if word == "--" {
            out.extend(&args[index + 1..]);
            break;
        }
        if word.starts_with("--") && word.contains('=') {
            index += 1;
            continue;
        }
        if valued.contains(&word.as_str()) {
            // The value is skipped only when there is one.
            index += if index + 1 < args.len() { 2 } else { 1 };
            continue;
        }
        out.push(word);
        index += 1;
    }
    out
}

/// The words that do not start with `-`, after dropping flag values.
fn non_flags<'a>(args: &'a [String], valued: &[&str]) -> Vec<&'a String> {
    without_flag_values(args, valued)
        .into_iter()
        .filter(|word| !word.starts_with('-'))
        .collect()
}

/// Positional operands: flags and their values skipped, `--name=value` skipped, every word
/// after `--` kept as is (even one starting with `-`).
fn positional<'a>(args: &'a [String], valued: &[&str]) -> Vec<&'a String> {
    let mut out = Vec::new();
    let mut index = 0;
    while index < args.len() {
        let word = &args[index];
        if word == "--" {
            out.extend(&args[index + 1..]);
            break;
        }
        if word.starts_with("--") && word.contains('=') {
            index += 1;
            continue;
        }
        if valued.contains(&word.as_str()) {
            index += if index + 1 < args.len() { 2 } else { 1 };
            continue;
        }
        if !word.starts_with('-') {
            out.push(word);
        }
        index += 1;
    }
    out
}

/// The only positional operand, when there is exactly one.
fn single_operand<'a>(args: &'a [String], valued: &[&str]) -> Option<&'a String> {
    match positional(args, valued).as_slice() {
        [only] => Some(only),
        _ => None,
    }
}

fn all_digits(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_digit())
}

/// Digits, optionally after one `+`, at least one digit.
fn plus_digits(text: &str) -> bool {
    let digits = text.strip_prefix('+').unwrap_or(text);
    !digits.is_empty() && all_digits(digits)
}

fn read(words: &[String], path: &str) -> Summary {
    Summary {
        parsed: ParsedCommand::Read {
            cmd: join_words(words),
            name: short_display_path(path),
            path: path.to_string(),
        },
        operand: Some(path.to_string()),
    }
}

fn list(words: &[String], operand: Option<&String>) -> Summary {
    Summary {
        parsed: ParsedCommand::ListFiles {
            cmd: join_words(words),
            path: operand.map(|path| short_display_path(path)),
        },
        operand: operand.cloned(),
    }
}

fn search(words: &[String], query: Option<String>, operand: Option<&String>) -> Summary {
    Summary {
        parsed: ParsedCommand::Search {
            cmd: join_words(words),
            query,
            path: operand.map(|path| short_display_path(path)),
        },
        operand: operand.cloned(),
    }
}

fn unknown(words: &[String]) -> Summary {
    Summary {
        parsed: ParsedCommand::Unknown {
            cmd: join_words(words),
        },
        operand: None,
    }
}

fn read_or_unknown(words: &[String], path: Option<&String>) -> Summary {
    match path {
        Some(path) => read(words, path),
        None => unknown(words),
    }
}

/// Whether Codex drops this command as a small formatting helper (RULES §5).
pub(crate) fn is_formatting_helper(words: &[String]) -> bool {
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    match program.as_str() {
        "wc" | "tr" | "cut" | "sort" | "uniq" | "tee" | "column" | "yes" | "printf" => true,
        "xargs" => !xargs_mutates(args),
        "awk" => awk_data_file(args).is_none(),
        "head" => match args {
            [] => true,
            [only] => only.starts_with('-'),
            [flag, count] => (flag == "-n" || flag == "-c") && all_digits(count),
            _ => false,
        },
        "tail" => match args {
            [] => true,
            [only] => only.starts_with('-'),
            // Unlike the read rule, an empty count (or a lone `+`) passes here.
            [flag, count] => {
                (flag == "-n" || flag == "-c")
                    && all_digits(count.strip_prefix('+').unwrap_or(count))
            }
            _ => false,
        },
        "sed" => sed_read_path(args).is_none(),
        _ => false,
    }
}

/// Whether `xargs ARGS` runs a command that edits files in place.
fn xargs_mutates(args: &[String]) -> bool {
    let mut index = 0;
    let command = loop {
        let Some(word) = args.get(index) else {
            return false;
        };
        if word == "--" {
            break &args[index + 1..];
        }
        if !word.starts_with('-') {
            break &args[index..];
        }
        let takes_value = matches!(
            word.as_str(),
            "-E" | "-e" | "-I" | "-L" | "-n" | "-P" | "-s"
        );
        index += if takes_value { 2 } else { 1 };
    };
    let Some((program, rest)) = command.split_first() else {
        return false;
    };
    let in_place = || {
        rest.iter()
            .any(|word| word.starts_with("-i") || word.starts_with("-pi"))
    };
    match program.as_str() {
        "perl" | "ruby" => in_place(),
        "sed" => in_place() || rest.iter().any(|word| word == "--in-place"),
        "rg" => rest.iter().any(|word| word == "--replace"),
        _ => false,
    }
}

/// `Np` or `N,Mp`, digits only.
fn is_line_range(script: &str) -> bool {
    let Some(range) = script.strip_suffix('p') else {
        return false;
    };
    let mut bounds = range.split(',');
    let first = bounds.next().unwrap_or_default();
    let second = bounds.next();
    if bounds.next().is_some() || first.is_empty() || !all_digits(first) {
        return false;
    }
    second.is_none_or(|last| !last.is_empty() && all_digits(last))
}

/// The file a `sed -n RANGE FILE` command reads.
fn sed_read_path(args: &[String]) -> Option<String> {
    let args = before_connector(args);
    if !args.iter().any(|word| word == "-n") {
        return None;
    }
    let mut has_range = false;
    let mut index = 0;
    while index < args.len() {
        match args[index].as_str() {
            "-e" | "--expression" => {
                if args.get(index + 1).is_some_and(|next| is_line_range(next)) {
                    has_range = true;
                }
                index += 2;
            }
            "-f" | "--file" => index += 2,
            _ => index += 1,
        }
    }
    if !has_range {
        has_range = args
            .iter()
            .any(|word| !word.starts_with('-') && is_line_range(word));
    }
    if !has_range {
        return None;
    }
    let operands = non_flags(args, &["-e", "-f", "--expression", "--file"]);
    match operands.as_slice() {
        [] => None,
        [first, rest @ ..] if is_line_range(first) => rest.first().map(|word| (*word).clone()),
        [first, ..] => Some((*first).clone()),
    }
}

/// The data file an `awk` command reads, when it names one.
fn awk_data_file(args: &[String]) -> Option<String> {
    let args = before_connector(args);
    let script_file = args.iter().any(|word| word == "-f" || word == "--file");
    let operands = non_flags(
        args,
        &["-F", "-v", "-f", "--field-separator", "--assign", "--file"],
    );
    let index = if script_file { 0 } else { 1 };
    operands.get(index).map(|word| (*word).clone())
}

/// `.`, `..`, `./x`, `../x`, or anything with a `/` or `\`.
fn looks_like_path(word: &str) -> bool {
    word == "."
        || word == ".."
        || word.starts_with("./")
        || word.starts_with("../")
        || word.contains('/')
        || word.contains('\\')
}

fn grep_like(words: &[String], args: &[String]) -> Summary {
    let args = before_connector(args);
    let mut operands: Vec<&String> = Vec::new();
    let mut pattern: Option<&String> = None;
    let mut index = 0;
    while index < args.len() {
        let word = &args[index];
        index += 1;
        match word.as_str() {
            "--" => {
                operands.extend(&args[index..]);
                break;
            }
            "-e" | "--regexp" | "-f" | "--file" => {
                if let Some(value) = args.get(index) {
                    pattern = pattern.or(Some(value));
                    index += 1;
                }
            }
            "-m" | "--max-count" | "-C" | "--context" | "-A" | "--after-context" | "-B"
            | "--before-context" => index += 1,
            _ if word.starts_with('-') => {}
            _ => operands.push(word),
        }
    }
    let (query, path) = match pattern {
        Some(pattern) => (Some(pattern.clone()), operands.first().copied()),
        None => (
            operands.first().map(|q| (*q).clone()),
            operands.get(1).copied(),
        ),
    };
    search(words, query, path)
}

fn head_or_tail(words: &[String], args: &[String], count_ok: fn(&str) -> bool) -> Summary {
    let has_count = match args.split_first() {
        Some((first, rest)) if first == "-n" => rest.first().is_some_and(|n| count_ok(n)),
        Some((first, _)) => first.strip_prefix("-n").is_some_and(count_ok),
        None => false,
    };
    if has_count {
        let skip = match args {
            [flag, count, ..] if flag == "-n" && count_ok(count) => 2,
            _ => 0,
        };
        if let Some(path) = args[skip..].iter().find(|word| !word.starts_with('-')) {
            return read(words, path);
        }
    }
    match args {
        [only] if !only.starts_with('-') => read(words, only),
        _ => unknown(words),
    }
}

fn python_lists_files(args: &[String]) -> bool {
    let args = before_connector(args);
    let Some(index) = args.iter().position(|word| word == "-c") else {
        return false;
    };
    args.get(index + 1).is_some_and(|script| {
        [
            "os.walk",
            "os.listdir",
            "os.scandir",
            "glob.glob",
            "glob.iglob",
            "pathlib.Path",
            ".rglob(",
        ]
        .iter()
        .any(|needle| script.contains(needle))
    })
}

fn is_python(program: &str) -> bool {
    matches!(program, "python" | "python2" | "python3")
        || program.starts_with("python2.")
        || program.starts_with("python3.")
}

/// Classifies one command (never `cd`: the caller tracks it).
pub(crate) fn summarize(words: &[String]) -> Summary {
    let Some((program, args)) = words.split_first() else {
        return unknown(words);
    };
    match program.as_str() {
        "ls" => list(
            words,
            positional(
                args,
                &[
                    "-I",
                    "-w",
                    "--block-size",
                    "--format",
                    "--time-style",
                    "--color",
                    "--quoting-style",
                ],
            )
            .first()
            .copied(),
        ),
        "eza" | "exa" => list(
            words,
            positional(
                args,
                &[
                    "-I",
                    "--ignore-glob",
                    "--color",
                    "--sort",
                    "--time-style",
                    "--time",
                ],
            )
            .first()
            .copied(),
        ),
        "tree" => list(
            words,
            positional(
                args,
                &["-L", "-P", "-I", "--charset", "--filelimit", "--sort"],
            )
            .first()
            .copied(),
        ),
        "du" => list(
            words,
            positional(
                args,
                &[
                    "-d",
                    "--max-depth",
                    "-B",
                    "--block-size",
                    "--exclude",
                    "--time-style",
                ],
            )
            .first()
            .copied(),
        ),
        "rg" | "rga" | "ripgrep-all" => {
            let args = before_connector(args);
            let operands = non_flags(
                args,
                &[
                    "-g",
                    "--glob",
                    "--iglob",
                    "-t",
                    "--type",
                    "--type-add",
                    "--type-not",
                    "-m",
                    "--max-count",
                    "-A",
                    "-B",
                    "-C",
                    "--context",
                    "--max-depth",
                ],
            );
            if args.iter().any(|word| word == "--files") {
                list(words, operands.first().copied())
            } else {
                search(
                    words,
                    operands.first().map(|q| (*q).clone()),
                    operands.get(1).copied(),
                )
            }
        }
        "git" => match args.split_first() {
            Some((sub, rest)) if sub == "grep" => grep_like(words, rest),
            Some((sub, rest)) if sub == "ls-files" => list(
                words,
                positional(
                    rest,
                    &["--exclude", "--exclude-from", "--pathspec-from-file"],
                )
                .first()
                .copied(),
            ),
            _ => unknown(words),
        },
        "fd" => {
            let args = before_connector(args);
            let operands = non_flags(
                args,
                &[
                    "-t",
                    "--type",
                    "-e",
                    "--extension",
                    "-E",
                    "--exclude",
                    "--search-path",
                ],
            );
            match operands.as_slice() {
                [] => list(words, None),
                [one] if looks_like_path(one) => list(words, Some(one)),
                [one] => search(words, Some((*one).clone()), None),
                [query, path, ..] => search(words, Some((*query).clone()), Some(path)),
            }
        }
        "find" => {
            let args = before_connector(args);
            let path = args
                .iter()
                .find(|word| !word.starts_with('-') && !matches!(word.as_str(), "!" | "(" | ")"));
            let query = args
                .iter()
                .position(|word| matches!(word.as_str(), "-name" | "-iname" | "-path" | "-regex"))
                .and_then(|index| args.get(index + 1));
            match query {
                Some(query) => search(words, Some(query.clone()), path),
                None => list(words, path),
            }
        }
        "grep" | "egrep" | "fgrep" => grep_like(words, args),
        "ag" | "ack" | "pt" => {
            let args = before_connector(args);
            let operands = non_flags(
                args,
                &[
                    "-G",
                    "-g",
                    "--file-search-regex",
                    "--ignore-dir",
                    "--ignore-file",
                    "--path-to-ignore",
                ],
            );
            search(
                words,
                operands.first().map(|q| (*q).clone()),
                operands.get(1).copied(),
            )
        }
        "cat" | "more" => read_or_unknown(words, single_operand(args, &[])),
        "bat" | "batcat" => read_or_unknown(
            words,
            single_operand(
                args,
                &[
                    "--theme",
                    "--language",
                    "--style",
                    "--terminal-width",
                    "--tabs",
                    "--line-range",
                    "--map-syntax",
                ],
            ),
        ),
        "less" => read_or_unknown(
            words,
            single_operand(
                args,
                &[
                    "-p",
                    "-P",
                    "-x",
                    "-y",
                    "-z",
                    "-j",
                    "--pattern",
                    "--prompt",
                    "--tabs",
                    "--shift",
                    "--jump-target",
                ],
            ),
        ),
        "head" => head_or_tail(words, args, all_digits),
        "tail" => head_or_tail(words, args, plus_digits),
        "awk" => read_or_unknown(words, awk_data_file(args).as_ref()),
        "nl" => read_or_unknown(
            words,
            without_flag_values(args, &["-s", "-w", "-v", "-i", "-b"])
                .into_iter()
                .find(|word| !word.starts_with('-')),
        ),
        "sed" => read_or_unknown(words, sed_read_path(args).as_ref()),
        name if is_python(name) && python_lists_files(args) => list(words, None),
        _ => unknown(words),
    }
}

/// The directory a `cd` with these arguments changes to, if any.
pub(crate) fn cd_target(args: &[String]) -> Option<&String> {
    let mut target = None;
    for (index, word) in args.iter().enumerate() {
        if word == "--" {
            return args.get(index + 1);
        }
        if !word.starts_with('-') {
            target = Some(word);
        }
    }
    target
}

/// Whether a path counts as absolute for `cd` joining: Unix absolute, `X:\`, or `\\`.
fn is_absolute_like(path: &str) -> bool {
    if path.starts_with('/') {
        return true;
    }
    let mut chars = path.chars();
    match (chars.next(), chars.next(), chars.next()) {
        (Some(drive), Some(':'), Some('\\')) => drive.is_ascii_alphabetic(),
        (Some('\\'), Some('\\'), _) => true,
        _ => false,
    }
}

/// Joins `path` onto `base` the way `PathBuf::push` does on Unix, with Codex's extra
/// absolute forms; an empty base leaves the path alone.
pub fn join_path(base: &str, path: &str) -> String {
    if is_absolute_like(path) || base.is_empty() {
        return path.to_string();
    }
    let mut joined = String::with_capacity(base.len() + 1 + path.len());
    joined.push_str(base);
    if !base.ends_with('/') {
        joined.push('/');
    }
    joined.push_str(path);
    joined
}
