//! Properties (SPEC B3): total and pure on any input, no equal neighbours, and the fast
//! lexer never disagrees with the grammar it stands in front of.

use harness_agents_codex_shell::{
    classify, classify_script, plain_commands, plain_commands_by_grammar,
};
use proptest::prelude::*;

/// Pieces agents' scripts are made of, plus the characters that trip shell parsers up.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "cat", "rg", "grep", "ls", "cd", "sed", "head", "tail", "find", "fd", "echo", "true",
            "nl", "wc", "xargs", "awk", "git", "python3", "if", "for", "done", "export", "time",
            "-n", "-e", "--files", "-la", "--", "50", "1,20p", "src", "a.rs", "src/main.rs",
            "foo=bar", "FOO=1", "~/x", "*.md", "{a,b}", "[x]", "a#b", "!", "x!", "é", "日本",
            "\u{a0}", "0x1F", "-g*.py", "in", "{}", "\\;", "@", "%", "^", ":", ",", "+", "?",
        ])
        .prop_map(str::to_string),
        3 => prop::sample::select(vec![
            " ", " ", " ", "\t", "\n", ";", "&&", "||", "|", "&", "|&", ">", "<", "2>&1", "$",
            "$x", "${x}", "$(", ")", "(", "`", "'", "\"", "\\", "#", "\r", "\r\n", ";;", "{", "}",
            "[[", "]]", "=", "'it'\\''s'", "\"a b\"", "'a b'", "\"\"", "''", "\"a\\\"b\"",
            "\"$x\"", "\\\n", "<<EOF", "a\\ b", "==", "=~", "\0",
        ])
        .prop_map(str::to_string),
    ]
}

fn script() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..12).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lexer_agrees_with_grammar_on_shell_like_scripts(script in script()) {
        prop_assert_eq!(plain_commands(&script), plain_commands_by_grammar(&script));
    }

    #[test]
    fn lexer_agrees_with_grammar_on_any_string(script in any::<String>()) {
        prop_assert_eq!(plain_commands(&script), plain_commands_by_grammar(&script));
    }

    #[test]
    fn classify_script_is_total_and_pure(script in any::<String>()) {
        prop_assert_eq!(classify_script(&script), classify_script(&script));
    }

    #[test]
    fn classify_is_total_and_pure_on_any_argv(argv in prop::collection::vec(any::<String>(), 0..6)) {
        prop_assert_eq!(classify(&argv), classify(&argv));
    }

    #[test]
    fn shell_like_scripts_never_give_equal_neighbours(script in script()) {
        let parts = classify_script(&script);
        prop_assert!(parts.windows(2).all(|pair| pair[0].parsed != pair[1].parsed));
    }

    #[test]
    fn argv_never_gives_equal_neighbours(argv in prop::collection::vec(piece(), 0..10)) {
        let parts = classify(&argv);
        prop_assert!(parts.windows(2).all(|pair| pair[0].parsed != pair[1].parsed));
    }

    #[test]
    fn unknown_is_always_alone(script in script()) {
        let parts = classify_script(&script);
        let unknowns = parts
            .iter()
            .filter(|part| matches!(part.parsed, harness_agents_codex_shell::ParsedCommand::Unknown { .. }))
            .count();
        prop_assert!(unknowns == 0 || parts.len() == 1);
    }
}
