//! One test per behaviour of Codex's parser described in `fixtures/shell/RULES.md`, named
//! after what it proves. Expected values are Codex's answers as RULES.md records them.

use harness_agents_codex_shell::{classify, classify_script, parse_command, plain_commands};
use serde_json::{Value, json};

fn argv(words: &[&str]) -> Vec<String> {
    words.iter().map(|word| word.to_string()).collect()
}

fn of_script(script: &str) -> Value {
    serde_json::to_value(parse_command(&argv(&["bash", "-lc", script]))).unwrap()
}

fn of_argv(words: &[&str]) -> Value {
    serde_json::to_value(parse_command(&argv(words))).unwrap()
}

fn read(cmd: &str, name: &str, path: &str) -> Value {
    json!({"type": "read", "cmd": cmd, "name": name, "path": path})
}

fn list(cmd: &str, path: Option<&str>) -> Value {
    json!({"type": "list_files", "cmd": cmd, "path": path})
}

fn search(cmd: &str, query: Option<&str>, path: Option<&str>) -> Value {
    json!({"type": "search", "cmd": cmd, "query": query, "path": path})
}

fn unknown(cmd: &str) -> Value {
    json!([{"type": "unknown", "cmd": cmd}])
}

fn event_paths(script: &str) -> Vec<Option<String>> {
    classify_script(script)
        .into_iter()
        .map(|part| part.event_path)
        .collect()
}

// §3 shell wrappers

#[test]
fn wrapper_accepts_shell_paths_and_exe_suffix() {
    let expected = json!([read("cat a", "a", "a")]);
    for shell in ["bash", "zsh", "sh", "/bin/bash", "/usr/bin/zsh", "bash.exe"] {
        for flag in ["-c", "-lc"] {
            assert_eq!(of_argv(&[shell, flag, "cat a"]), expected, "{shell} {flag}");
        }
    }
}

#[test]
fn wrapper_needs_exactly_three_words_and_a_c_or_lc_flag() {
    assert_eq!(
        of_argv(&["bash", "-ic", "cat a"]),
        unknown("bash -ic 'cat a'")
    );
    assert_eq!(
        of_argv(&["bash", "-l", "-c", "cat a"]),
        unknown("bash -l -c 'cat a'")
    );
    assert_eq!(
        of_argv(&["bash", "-lc", "cat a", "extra"]),
        unknown("bash -lc 'cat a' extra")
    );
    assert_eq!(
        of_argv(&["dash", "-c", "cat a"]),
        unknown("dash -c 'cat a'")
    );
}

#[test]
fn powershell_wrapper_is_unknown_with_its_script() {
    assert_eq!(
        of_argv(&["pwsh", "-NoProfile", "-c", "Get-Content a.txt"]),
        unknown("Get-Content a.txt")
    );
    assert_eq!(
        of_argv(&["powershell.exe", "-nologo", "-COMMAND", "cat a"]),
        unknown("cat a")
    );
    // An unknown flag before -Command: not a wrapper, the argv is quoted back.
    assert_eq!(
        of_argv(&["pwsh", "-X", "-c", "ls"]),
        unknown("pwsh -X -c ls")
    );
}

// §4 what the shell parser accepts

#[test]
fn any_shell_construct_beyond_plain_words_makes_the_script_unknown() {
    for script in [
        "cat a.rs # show",
        "cat a 2>/dev/null",
        "rg foo |& head",
        "FOO=1 cat a",
        "cat \"$HOME/x\"",
        "cat $HOME",
        "cat `which rg`",
        "(cd src && ls)",
        "{ cat a; }",
        "cat 'unterminated",
        "cat a &",
        "if true; then cat a; fi",
        "[[ -f a ]] && cat a",
        "! cat a",
        "export X=1 && cat a",
        "cat <<EOF\nx\nEOF",
        "cat a &&",
        "&& cat a",
        "cat a | | wc",
        "cat a ;; cat b",
        "",
        "   ",
    ] {
        assert_eq!(of_script(script), unknown(script), "{script:?}");
    }
}

#[test]
fn newlines_pipes_and_lists_are_one_flat_sequence() {
    assert_eq!(
        of_script("cat a.rs\ncat b.rs"),
        json!([
            read("cat a.rs", "a.rs", "a.rs"),
            read("cat b.rs", "b.rs", "b.rs")
        ])
    );
}

#[test]
fn words_keep_backslashes_and_quotes_are_glued() {
    assert_eq!(
        of_script("rg -g\"*.py\" foo"),
        json!([search("rg '-g*.py' foo", Some("foo"), None)])
    );
    assert_eq!(
        of_script("cat src/my\\ file.rs"),
        json!([read("cat 'src/my file.rs'", " file.rs", "src/my\\ file.rs")])
    );
    assert_eq!(
        of_script("grep \"a\\\"b\" f"),
        json!([search("grep 'a\"b' f", Some("a\\\"b"), Some("f"))])
    );
    assert_eq!(
        of_script("cat 'it'\\''s.txt'"),
        json!([read("cat \"it's.txt\"", "'s.txt", "it\\'s.txt")])
    );
}

#[test]
fn globs_tilde_and_braces_stay_literal() {
    assert_eq!(
        of_script("cat *.md"),
        json!([read("cat '*.md'", "*.md", "*.md")])
    );
    assert_eq!(
        of_script("cat ~/notes.md"),
        json!([read("cat '~/notes.md'", "notes.md", "~/notes.md")])
    );
    assert_eq!(
        of_script("cat {a,b}.rs"),
        json!([read("cat '{a,b}.rs'", "{a,b}.rs", "{a,b}.rs")])
    );
}

#[test]
fn plain_commands_gives_words_or_none() {
    assert_eq!(
        plain_commands("ls -1 && echo 'hi there' | wc -l"),
        Some(vec![
            argv(&["ls", "-1"]),
            argv(&["echo", "hi there"]),
            argv(&["wc", "-l"])
        ])
    );
    assert_eq!(plain_commands("ls > out"), None);
    assert_eq!(plain_commands(""), Some(vec![]));
}

#[test]
fn scanner_crash_input_is_answered() {
    // tree-sitter-bash 0.25.1 reads out of bounds on `{` followed by a large code point.
    assert_eq!(of_script("{\u{f441f}"), unknown("{\u{f441f}"));
    assert_eq!(
        of_script("cat {1\u{f441f}"),
        json!([read("cat '{1\u{f441f}'", "{1\u{f441f}", "{1\u{f441f}")])
    );
}

// §5 formatting helpers

#[test]
fn formatting_helpers_are_dropped_anywhere() {
    assert_eq!(
        of_script("rg --files | head -n 50"),
        json!([list("rg --files", None)])
    );
    assert_eq!(
        of_script("rg -n foo src | wc -l"),
        json!([search("rg -n foo src", Some("foo"), Some("src"))])
    );
    assert_eq!(
        of_script("sort file.txt && cat a"),
        json!([read("cat a", "a", "a")])
    );
    assert_eq!(
        of_script("yes | rg --files"),
        json!([list("rg --files", None)])
    );
    assert_eq!(
        of_script("printf '== a ==\\n'; cat a.rs"),
        json!([read("cat a.rs", "a.rs", "a.rs")])
    );
}

#[test]
fn only_helpers_left_is_unknown() {
    assert_eq!(of_script("wc -l src/main.rs"), unknown("wc -l src/main.rs"));
    assert_eq!(of_script("head -n 5"), unknown("head -n 5"));
}

#[test]
fn xargs_is_kept_only_when_it_edits_in_place() {
    let mutating = "rg -l x | xargs sed -i s/a/b/";
    assert_eq!(of_script(mutating), unknown(mutating));
    assert_eq!(
        of_script("grep -rl TODO src | xargs wc -l"),
        json!([search("grep -rl TODO src", Some("TODO"), Some("src"))])
    );
    let perl = "rg -l x | xargs -n 1 perl -pi -e s/a/b/";
    assert_eq!(of_script(perl), unknown(perl));
}

#[test]
fn tail_helper_accepts_plus_counts() {
    assert_eq!(
        of_script("rg --files | tail -n +5"),
        json!([list("rg --files", None)])
    );
    assert_eq!(
        of_script("rg --files | tail -c +"),
        json!([list("rg --files", None)])
    );
}

// §6 cd tracking

#[test]
fn cd_joins_later_reads_only() {
    assert_eq!(
        of_script("cd repo && cat README.md"),
        json!([read("cat README.md", "README.md", "repo/README.md")])
    );
    assert_eq!(
        of_script("cd frontend && rg useState src"),
        json!([search("rg useState src", Some("useState"), Some("src"))])
    );
    assert_eq!(
        of_script("cd a && cat /etc/hosts"),
        json!([read("cat /etc/hosts", "hosts", "/etc/hosts")])
    );
}

#[test]
fn cd_takes_the_last_operand_or_the_one_after_double_dash() {
    assert_eq!(
        of_script("cd a b && cat x"),
        json!([read("cat x", "x", "b/x")])
    );
    assert_eq!(of_script("cd - && cat x"), json!([read("cat x", "x", "x")]));
    assert_eq!(
        of_script("cd -- -dir && cat x"),
        json!([read("cat x", "x", "-dir/x")])
    );
}

#[test]
fn cd_accumulates_without_normalizing() {
    assert_eq!(
        of_script("cd a && cd ../b && cat c.txt"),
        json!([read("cat c.txt", "c.txt", "a/../b/c.txt")])
    );
    assert_eq!(
        of_script("cd a && cd /abs && cat c"),
        json!([read("cat c", "c", "/abs/c")])
    );
}

#[test]
fn cd_alone_gives_an_empty_list() {
    assert_eq!(of_script("cd src"), json!([]));
    assert_eq!(of_argv(&["cd", "src"]), json!([]));
}

// §7 per-program rules

#[test]
fn cat_reads_exactly_one_operand() {
    assert_eq!(
        of_script("cat -n src/main.rs"),
        json!([read("cat -n src/main.rs", "main.rs", "src/main.rs")])
    );
    assert_eq!(of_script("cat a b"), unknown("cat a b"));
    assert_eq!(
        of_script("cat -- ./-strange"),
        json!([read("cat -- ./-strange", "-strange", "./-strange")])
    );
}

#[test]
fn head_and_tail_read_only_with_n_counts() {
    assert_eq!(
        of_script("head -n 50 src/main.rs"),
        json!([read("head -n 50 src/main.rs", "main.rs", "src/main.rs")])
    );
    assert_eq!(
        of_script("head -50 src/main.rs"),
        unknown("head -50 src/main.rs")
    );
    assert_eq!(
        of_script("head -n 5 a b"),
        json!([read("head -n 5 a b", "a", "a")])
    );
    assert_eq!(
        of_script("tail -n +100 src/p.rs"),
        json!([read("tail -n +100 src/p.rs", "p.rs", "src/p.rs")])
    );
    assert_eq!(of_script("tail -f log"), unknown("tail -f log"));
    assert_eq!(
        of_script("head README.md"),
        json!([read("head README.md", "README.md", "README.md")])
    );
}

#[test]
fn sed_reads_only_a_numeric_range_with_n() {
    assert_eq!(
        of_script("sed -n '10,40p' src/main.rs"),
        json!([read(
            "sed -n '10,40p' src/main.rs",
            "main.rs",
            "src/main.rs"
        )])
    );
    assert_eq!(of_script("sed -n '$p' f"), unknown("sed -n '$p' f"));
    assert_eq!(of_script("sed -n 1,20p"), unknown("sed -n 1,20p"));
    assert_eq!(
        of_script("sed -n -e 5p f.txt"),
        json!([read("sed -n -e 5p f.txt", "f.txt", "f.txt")])
    );
}

#[test]
fn nl_awk_bat_less_read_their_file() {
    assert_eq!(
        of_script("nl -ba src/main.rs"),
        json!([read("nl -ba src/main.rs", "main.rs", "src/main.rs")])
    );
    assert_eq!(
        of_script("awk '{print $1}' data.csv"),
        json!([read("awk '{print $1}' data.csv", "data.csv", "data.csv")])
    );
    assert_eq!(of_script("awk '{print $1}'"), unknown("awk '{print $1}'"));
    assert_eq!(of_script("bat -l rust x.rs"), unknown("bat -l rust x.rs"));
    assert_eq!(
        of_script("less -p TODO README.md"),
        json!([read("less -p TODO README.md", "README.md", "README.md")])
    );
}

#[test]
fn listings_shorten_their_path() {
    assert_eq!(
        of_script("ls -la src/"),
        json!([list("ls -la src/", Some("src"))])
    );
    assert_eq!(of_script("ls -1 /"), json!([list("ls -1 /", Some(""))]));
    assert_eq!(
        of_script("tree -L 2 src"),
        json!([list("tree -L 2 src", Some("src"))])
    );
    assert_eq!(of_script("du -sh ."), json!([list("du -sh .", Some("."))]));
    assert_eq!(
        of_script("rg --files webview/src"),
        json!([list("rg --files webview/src", Some("webview"))])
    );
    assert_eq!(
        of_script("git ls-files src"),
        json!([list("git ls-files src", Some("src"))])
    );
}

#[test]
fn rg_takes_query_then_path_skipping_valued_flags_but_not_e() {
    assert_eq!(
        of_script("rg -e foo -e bar src"),
        json!([search("rg -e foo -e bar src", Some("foo"), Some("bar"))])
    );
    assert_eq!(
        of_script("rg --colors=never -n foo src"),
        json!([search(
            "rg '--colors=never' -n foo src",
            Some("foo"),
            Some("src")
        )])
    );
    assert_eq!(
        of_script("rg -l TODO"),
        json!([search("rg -l TODO", Some("TODO"), None)])
    );
}

#[test]
fn quoted_connector_word_ends_rg_operands() {
    // `'|'` reaches the program rules as a word; rg stops its operands there.
    assert_eq!(
        of_script("rg foo '|' src"),
        json!([search("rg foo '|' src", Some("foo"), None)])
    );
}

#[test]
fn grep_pattern_flags_move_the_path_to_the_first_operand() {
    assert_eq!(
        of_script("grep -R -e pat -n dir/sub"),
        json!([search(
            "grep -R -e pat -n dir/sub",
            Some("pat"),
            Some("sub")
        )])
    );
    assert_eq!(
        of_script("grep -rn --include '*.py' 'import os' ."),
        json!([search(
            "grep -rn --include '*.py' 'import os' .",
            Some("*.py"),
            Some("import os")
        )])
    );
    assert_eq!(
        of_script("git grep -n deprecated -- src"),
        json!([search(
            "git grep -n deprecated -- src",
            Some("deprecated"),
            Some("src")
        )])
    );
    assert_eq!(of_script("git status"), unknown("git status"));
}

#[test]
fn fd_and_find_choose_between_search_and_listing() {
    assert_eq!(
        of_script("fd main"),
        json!([search("fd main", Some("main"), None)])
    );
    assert_eq!(of_script("fd src/"), json!([list("fd src/", Some("src"))]));
    assert_eq!(
        of_script("fd config src"),
        json!([search("fd config src", Some("config"), Some("src"))])
    );
    assert_eq!(
        of_script("find . -name '*.rs'"),
        json!([search("find . -name '*.rs'", Some("*.rs"), Some("."))])
    );
    assert_eq!(
        of_script("find src -type f"),
        json!([list("find src -type f", Some("src"))])
    );
    assert_eq!(
        of_script("find -name Cargo.toml"),
        json!([search(
            "find -name Cargo.toml",
            Some("Cargo.toml"),
            Some("Cargo.toml")
        )])
    );
    assert_eq!(
        of_script("find -type f"),
        json!([list("find -type f", Some("f"))])
    );
}

#[test]
fn python_lists_only_when_its_script_walks_files() {
    let walk = "python3 -c 'import os; print(os.listdir())'";
    assert_eq!(of_script(walk), json!([list(walk, None)]));
    assert_eq!(
        of_script("python3 -c 'print(1)'"),
        unknown("python3 -c 'print(1)'")
    );
}

#[test]
fn program_names_match_exactly() {
    for script in ["/bin/cat a", "sudo cat a", "command cat a", "time cat a"] {
        assert_eq!(of_script(script), unknown(script), "{script}");
    }
}

// §9 simplifications

#[test]
fn leading_echo_and_true_are_dropped_but_trailing_echo_is_not() {
    assert_eq!(
        of_script("echo '--- a.rs ---' && cat a.rs"),
        json!([read("cat a.rs", "a.rs", "a.rs")])
    );
    assert_eq!(
        of_script("cat a.rs || true"),
        json!([read("cat a.rs", "a.rs", "a.rs")])
    );
    assert_eq!(
        of_script("cat a.rs && echo done"),
        unknown("cat a.rs && echo done")
    );
    assert_eq!(of_script("true"), unknown("true"));
    assert_eq!(of_script("echo hi"), unknown("echo hi"));
}

#[test]
fn bare_nl_is_dropped_and_equal_neighbours_merge() {
    assert_eq!(
        of_script("rg --files | nl -ba"),
        json!([list("rg --files", None)])
    );
    assert_eq!(
        of_script("cat a.rs && cat a.rs"),
        json!([read("cat a.rs", "a.rs", "a.rs")])
    );
    assert_eq!(
        of_script("cat a.rs; cat b.rs; cat a.rs"),
        json!([
            read("cat a.rs", "a.rs", "a.rs"),
            read("cat b.rs", "b.rs", "b.rs"),
            read("cat a.rs", "a.rs", "a.rs")
        ])
    );
}

#[test]
fn any_unknown_left_collapses_to_the_script() {
    assert_eq!(of_script("pwd && ls"), unknown("pwd && ls"));
    assert_eq!(
        of_script("cat package.json | jq .scripts"),
        unknown("cat package.json | jq .scripts")
    );
}

// §10 which cmd is reported

#[test]
fn single_part_without_connectors_reports_the_requoted_script() {
    assert_eq!(
        of_script("cat src/main.rs;"),
        json!([read("cat 'src/main.rs;'", "main.rs", "src/main.rs")])
    );
    assert_eq!(
        of_script("cat a.rs\r\n"),
        json!([read("cat 'a.rs\r'", "a.rs", "a.rs")])
    );
}

#[test]
fn single_read_from_a_sed_n_pipeline_reports_the_raw_script() {
    let script = "nl -ba core/src/x.rs | sed -n '1200,1720p'";
    assert_eq!(
        of_script(script),
        json!([read(script, "x.rs", "core/src/x.rs")])
    );
    assert_eq!(
        of_script("cat src/main.rs | head -n 40"),
        json!([read("cat src/main.rs", "main.rs", "src/main.rs")])
    );
}

#[test]
fn several_parts_keep_their_own_cmd() {
    assert_eq!(
        of_script("cat src/main.rs ;  cat src/lib.rs"),
        json!([
            read("cat src/main.rs", "main.rs", "src/main.rs"),
            read("cat src/lib.rs", "lib.rs", "src/lib.rs")
        ])
    );
}

// §11 plain argv

#[test]
fn plain_argv_splits_on_connector_words() {
    assert_eq!(
        of_argv(&["cd", "foo", "&&", "cat", "foo.txt"]),
        json!([read("cat foo.txt", "foo.txt", "foo/foo.txt")])
    );
    assert_eq!(
        of_argv(&["rg", "--files", "|", "nl", "-ba"]),
        json!([list("rg --files", None)])
    );
    assert_eq!(
        of_argv(&["echo", "x", "&&", "cat", "a"]),
        json!([read("cat a", "a", "a")])
    );
}

#[test]
fn plain_argv_keeps_helpers_and_redirect_words() {
    assert_eq!(
        of_argv(&["rg", "--files", "|", "head", "-n", "5"]),
        unknown("rg --files '|' head -n 5")
    );
    assert_eq!(
        of_argv(&["rg", "-n", "foo", "src", "2>/dev/null"]),
        json!([search(
            "rg -n foo src '2>/dev/null'",
            Some("foo"),
            Some("src")
        )])
    );
}

#[test]
fn plain_argv_drops_a_leading_yes_pipe() {
    assert_eq!(
        of_argv(&["yes", "|", "rg", "-n", "foo bar", "-S"]),
        json!([search("rg -n 'foo bar' -S", Some("foo bar"), None)])
    );
}

#[test]
fn empty_argv_is_unknown_empty() {
    assert_eq!(of_argv(&[]), unknown(""));
}

#[test]
fn nul_byte_cannot_be_quoted() {
    assert_eq!(
        of_argv(&["git", "a\0b"]),
        unknown("<command included NUL byte>")
    );
}

// C15 event paths

#[test]
fn event_path_is_the_unshortened_operand_joined_onto_cd() {
    assert_eq!(
        event_paths("rg foo src/webview"),
        [Some("src/webview".to_string())]
    );
    assert_eq!(
        event_paths("cd web && rg foo src/hooks"),
        [Some("web/src/hooks".to_string())]
    );
    assert_eq!(event_paths("cd web && ls"), [Some("web".to_string())]);
    assert_eq!(event_paths("rg foo"), [None]);
    assert_eq!(event_paths("cd a && cat b"), [Some("a/b".to_string())]);
    assert_eq!(event_paths("cd a && ls /etc"), [Some("/etc".to_string())]);
    assert_eq!(event_paths("git status"), [None]);
    assert_eq!(event_paths("cd x"), Vec::<Option<String>>::new());
}

#[test]
fn event_path_follows_the_operand_codex_picked() {
    assert_eq!(
        event_paths("rg -e foo -e bar src"),
        [Some("bar".to_string())]
    );
    assert_eq!(event_paths("ls -1 /"), [Some("/".to_string())]);
    assert_eq!(
        event_paths("find -name Cargo.toml"),
        [Some("Cargo.toml".to_string())]
    );
}

#[test]
fn classify_and_parse_command_agree() {
    let command = argv(&["bash", "-lc", "cd a && rg x src | head -n 3; cat b"]);
    let parts: Vec<_> = classify(&command)
        .into_iter()
        .map(|part| part.parsed)
        .collect();
    assert_eq!(parts, parse_command(&command));
}

// Linear time (B3): what the fast path decides without the grammar

#[test]
fn certain_rejections_are_found_after_a_doubtful_word() {
    // The backslash sends the script past the fast lexer; the redirection still decides it.
    for script in [
        "cat a\\ b > out",
        "cat {a,b} && rg x $(pwd)",
        "ls [x] # note",
        "cat \\( a",
        "rg x 'unterminated",
        "cat ''\"\"",
    ] {
        assert_eq!(of_script(script), unknown(script), "{script:?}");
    }
}

#[test]
fn repeated_commands_merge_like_codex_and_keep_their_own_cmd() {
    assert_eq!(
        of_script("cat a | sed -n 1p | cat a | cat a | cat a"),
        json!([read("cat a", "a", "a")])
    );
    assert_eq!(
        of_script("cat a | sed -n 1p"),
        json!([read("cat a | sed -n 1p", "a", "a")])
    );
    assert_eq!(
        of_script("cd x && ls && ls && ls && cd y && ls"),
        json!([list("ls", None)])
    );
    assert_eq!(
        event_paths("cd x && ls && ls && ls && cd y && ls"),
        [Some("x".to_string())]
    );
}

#[test]
fn an_unknown_anywhere_decides_a_long_script() {
    let script = format!("{}git status", "cat a.rs && ".repeat(50_000));
    assert_eq!(of_script(&script), unknown(&script));
    let script = format!("git status{}", " && cat a.rs".repeat(50_000));
    assert_eq!(of_script(&script), unknown(&script));
}

#[test]
fn long_plain_script_is_classified_in_full() {
    let script = format!("{}cat b.rs", "cat a.rs && ".repeat(50_000));
    assert_eq!(
        of_script(&script),
        json!([
            read("cat a.rs", "a.rs", "a.rs"),
            read("cat b.rs", "b.rs", "b.rs")
        ])
    );
}

#[test]
fn doubtful_script_over_the_grammar_limit_is_unknown() {
    let script = format!(
        "cat a\\ b{}",
        " ".repeat(harness_agents_codex_shell::GRAMMAR_LIMIT)
    );
    assert_eq!(of_script(&script), unknown(&script));
    let short = "cat a\\ b";
    assert_eq!(of_script(short), json!([read("cat 'a b'", " b", "a\\ b")]));
}

#[test]
fn lone_test_operators_and_nul_bytes_go_to_the_grammar() {
    // Found by differential fuzzing: the grammar reads `==`/`=~` alone as operators, and a
    // NUL byte as the end of input.
    assert_eq!(of_script("rg =~ x"), unknown("rg =~ x"));
    assert_eq!(of_script("rg == x"), unknown("rg == x"));
    assert_eq!(
        of_script("rg =~x"),
        json!([search("rg '=~x'", Some("=~x"), None)])
    );
    assert_eq!(of_script("cat 'a\0b'"), unknown("cat 'a\0b'"));
}
