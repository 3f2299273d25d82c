//! Per-program rules: what one command (a list of words) reads, searches or lists.
//!
//! Everything here works on words already split, and never looks at the shell again. The
//! helpers mirror the small vocabulary Codex uses for operands: "positional operands" (flags
//! skipped, `--` ends the flags), "flag values" (the word after a flag that takes one), and the
//! short display path.

use std::borrow::Cow;

use crate::ParsedCommand;

/// One word of a command: borrowed from the script when it is written as one piece (most
/// words), owned when quotes glue pieces together. No heap allocation per plain word.
pub(crate) type Word<'s> = Cow<'s, str>;

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
///
/// Written out word by word into one string: `try_join` first collects every quoted word,
/// which costs a pointer and a length per word on top of the result.
pub(crate) fn join_words<S: AsRef<str>>(words: impl IntoIterator<Item = S>) -> String {
    let quoter = shlex::Quoter::new();
    let mut joined = String::new();
    for (index, word) in words.into_iter().enumerate() {
        let Ok(quoted) = quoter.quote(word.as_ref()) else {
            return "<command included NUL byte>".to_string();
        };
        if index > 0 {
            joined.push(' ');
        }
        joined.push_str(&quoted);
    }
    joined
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
fn before_connector<'a, 's>(args: &'a [Word<'s>]) -> &'a [Word<'s>] {
    let end = args
        .iter()
        .position(|word| is_connector(word))
        .unwrap_or(args.len());
    &args[..end]
}

/// Drops the values of flags that take one and every `--name=value` word; after `--`, keeps
/// everything. Other flags stay (callers filter them). Each word comes with whether it came
/// after `--`. Lazy: callers look at the first one or two operands only.
fn without_flag_values<'a>(
    args: &'a [Word<'_>],
    valued: &'a [&'a str],
) -> impl Iterator<Item = (&'a str, bool)> + 'a {
    let mut index = 0;
    let mut after_dashes = false;
    std::iter::from_fn(move || {
        while let Some(word) = args.get(index) {
            let word: &str = word;
            index += 1;
            if after_dashes {
                return Some((word, true));
            }
            if word == "--" {
                after_dashes = true;
                continue;
            }
            if word.starts_with("--") && word.contains('=') {
                continue;
            }
            if valued.contains(&word) {
                // The value is skipped only when there is one.
                if index < args.len() {
                    index += 1;
                }
                continue;
            }
            return Some((word, false));
        }
        None
    })
}

/// The words that do not start with `-`, after dropping flag values.
fn non_flags<'a>(args: &'a [Word<'_>], valued: &'a [&'a str]) -> impl Iterator<Item = &'a str> {
    without_flag_values(args, valued)
        .map(|(word, _)| word)
        .filter(|word| !word.starts_with('-'))
}

/// Positional operands: flags and their values skipped, `--name=value` skipped, every word
/// after `--` kept as is (even one starting with `-`).
fn positional<'a>(args: &'a [Word<'_>], valued: &'a [&'a str]) -> impl Iterator<Item = &'a str> {
    without_flag_values(args, valued)
        .filter(|(word, after_dashes)| *after_dashes || !word.starts_with('-'))
        .map(|(word, _)| word)
}

/// The first two items of `items`.
fn first_two<T>(mut items: impl Iterator<Item = T>) -> (Option<T>, Option<T>) {
    let first = items.next();
    let second = first.as_ref().and_then(|_| items.next());
    (first, second)
}

/// The only positional operand, when there is exactly one.
fn single_operand<'a>(args: &'a [Word<'_>], valued: &'a [&'a str]) -> Option<&'a str> {
    match first_two(positional(args, valued)) {
        (Some(only), None) => Some(only),
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

fn read(words: &[Word<'_>], path: &str) -> Summary {
    Summary {
        parsed: ParsedCommand::Read {
            cmd: join_words(words),
            name: short_display_path(path),
            path: path.to_string(),
        },
        operand: Some(path.to_string()),
    }
}

fn list(words: &[Word<'_>], operand: Option<&str>) -> Summary {
    Summary {
        parsed: ParsedCommand::ListFiles {
            cmd: join_words(words),
            path: operand.map(short_display_path),
        },
        operand: operand.map(str::to_string),
    }
}

fn search(words: &[Word<'_>], query: Option<&str>, operand: Option<&str>) -> Summary {
    Summary {
        parsed: ParsedCommand::Search {
            cmd: join_words(words),
            query: query.map(str::to_string),
            path: operand.map(short_display_path),
        },
        operand: operand.map(str::to_string),
    }
}

fn unknown(words: &[Word<'_>]) -> Summary {
    Summary {
        parsed: ParsedCommand::Unknown {
            cmd: join_words(words),
        },
        operand: None,
    }
}

fn read_or_unknown(words: &[Word<'_>], path: Option<&str>) -> Summary {
    match path {
        Some(path) => read(words, path),
        None => unknown(words),
    }
}

/// Whether Codex drops this command as a small formatting helper (RULES §5).
pub(crate) fn is_formatting_helper(words: &[Word<'_>]) -> bool {
    let Some((program, args)) = words.split_first() else {
        return false;
    };
    match &**program {
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
fn xargs_mutates(args: &[Word<'_>]) -> bool {
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
        let takes_value = matches!(&**word, "-E" | "-e" | "-I" | "-L" | "-n" | "-P" | "-s");
        index += if takes_value { 2 } else { 1 };
    };
    let Some((program, rest)) = command.split_first() else {
        return false;
    };
    let in_place = || {
        rest.iter()
            .any(|word| word.starts_with("-i") || word.starts_with("-pi"))
    };
    match &**program {
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
fn sed_read_path<'a>(args: &'a [Word<'_>]) -> Option<&'a str> {
    let args = before_connector(args);
    if !args.iter().any(|word| word == "-n") {
        return None;
    }
    let mut has_range = false;
    let mut index = 0;
    while index < args.len() {
        match &*args[index] {
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
    match first_two(non_flags(args, &["-e", "-f", "--expression", "--file"])) {
        (Some(first), second) if is_line_range(first) => second,
        (first, _) => first,
    }
}

/// The data file an `awk` command reads, when it names one.
fn awk_data_file<'a>(args: &'a [Word<'_>]) -> Option<&'a str> {
    let args = before_connector(args);
    let script_file = args.iter().any(|word| word == "-f" || word == "--file");
    let mut operands = non_flags(
        args,
        &["-F", "-v", "-f", "--field-separator", "--assign", "--file"],
    );
    operands.nth(if script_file { 0 } else { 1 })
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

fn grep_like(words: &[Word<'_>], args: &[Word<'_>]) -> Summary {
    let args = before_connector(args);
    // Only the first two operands matter: keep those, not a list of every word.
    let mut operands: Vec<&str> = Vec::with_capacity(2);
    let mut pattern: Option<&str> = None;
    let mut index = 0;
    while index < args.len() {
        let word: &str = &args[index];
        index += 1;
        match word {
            "--" => {
                let room = 2 - operands.len();
                operands.extend(args[index..].iter().take(room).map(|word| &**word));
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
            _ if operands.len() < 2 => operands.push(word),
            _ => {}
        }
    }
    let (query, path) = match pattern {
        Some(pattern) => (Some(pattern), operands.first().copied()),
        None => (operands.first().copied(), operands.get(1).copied()),
    };
    search(words, query, path)
}

fn head_or_tail(words: &[Word<'_>], args: &[Word<'_>], count_ok: fn(&str) -> bool) -> Summary {
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

fn python_lists_files(args: &[Word<'_>]) -> bool {
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
pub(crate) fn summarize(words: &[Word<'_>]) -> Summary {
    let Some((program, args)) = words.split_first() else {
        return unknown(words);
    };
    match &**program {
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
            .next(),
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
            .next(),
        ),
        "tree" => list(
            words,
            positional(
                args,
                &["-L", "-P", "-I", "--charset", "--filelimit", "--sort"],
            )
            .next(),
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
            .next(),
        ),
        "rg" | "rga" | "ripgrep-all" => {
            let args = before_connector(args);
            let (first, second) = first_two(non_flags(
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
            ));
            if args.iter().any(|word| word == "--files") {
                list(words, first)
            } else {
                search(words, first, second)
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
                .next(),
            ),
            _ => unknown(words),
        },
        "fd" => {
            let args = before_connector(args);
            let operands = first_two(non_flags(
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
            ));
            match operands {
                (None, _) => list(words, None),
                (Some(one), None) if looks_like_path(one) => list(words, Some(one)),
                (Some(one), None) => search(words, Some(one), None),
                (Some(query), Some(path)) => search(words, Some(query), Some(path)),
            }
        }
        "find" => {
            let args = before_connector(args);
            let path = args
                .iter()
                .map(|word| &**word)
                .find(|word| !word.starts_with('-') && !matches!(*word, "!" | "(" | ")"));
            let query = args
                .iter()
                .position(|word| matches!(&**word, "-name" | "-iname" | "-path" | "-regex"))
                .and_then(|index| args.get(index + 1));
            match query {
                Some(query) => search(words, Some(query), path),
                None => list(words, path),
            }
        }
        "grep" | "egrep" | "fgrep" => grep_like(words, args),
        "ag" | "ack" | "pt" => {
            let args = before_connector(args);
            let (first, second) = first_two(non_flags(
                args,
                &[
                    "-G",
                    "-g",
                    "--file-search-regex",
                    "--ignore-dir",
                    "--ignore-file",
                    "--path-to-ignore",
                ],
            ));
            search(words, first, second)
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
        "awk" => read_or_unknown(words, awk_data_file(args)),
        "nl" => read_or_unknown(
            words,
            non_flags(args, &["-s", "-w", "-v", "-i", "-b"]).next(),
        ),
        "sed" => read_or_unknown(words, sed_read_path(args)),
        name if is_python(name) && python_lists_files(args) => list(words, None),
        _ => unknown(words),
    }
}

/// The directory a `cd` with these arguments changes to, if any.
pub(crate) fn cd_target<'a>(args: &'a [Word<'_>]) -> Option<&'a str> {
    let mut target = None;
    for (index, word) in args.iter().enumerate() {
        if word == "--" {
            return args.get(index + 1).map(|word| &**word);
        }
        if !word.starts_with('-') {
            target = Some(&**word);
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
    let mut joined = String::with_capacity(base.len() + 1 + path.len());
    joined.push_str(base);
    push_path(&mut joined, path);
    joined
}

/// [`join_path`] in place: `base` becomes `base` joined with `path`, in time proportional to
/// `path` alone (amortized), so a chain of `cd`s costs its length, not its length squared.
pub(crate) fn push_path(base: &mut String, path: &str) {
    if is_absolute_like(path) || base.is_empty() {
        base.clear();
    } else if !base.ends_with('/') {
        base.push('/');
    }
    base.push_str(path);
}
