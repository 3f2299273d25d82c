//! Tool uses and results: C9-C14, C14a, C17, J3, J6, J8.

use harness_agents_core::NormalizerConfig;
use serde_json::{Value, json};

use super::*;

fn read(path: &str, range: Option<Value>) -> Value {
    let mut event = json!({"kind": "read", "path": path, "success": true, "tool": "Read", "tool_use_id": "t1", "line": 3});
    if let Some(range) = range {
        event["range"] = range;
    }
    event
}

fn read_use(input: Value) -> Value {
    tool_use("t1", "Read", input)
}

fn malformed(block: Value) -> Vec<Value> {
    vec![unknown_use("malformed_tool_use", block)]
}

// ---- C9, C10, C10a ----

#[test]
fn c9_tool_events_wait_for_the_result() {
    let mut n = harness_agents_claude::ClaudeNormalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    use harness_agents_core::Normalizer;
    n.push_line(
        assistant(
            "m1",
            json!([tool_use("t1", "Write", json!({"file_path": "/a"}))]),
        )
        .as_bytes(),
        &mut out,
    );
    assert!(out.is_empty());
    n.push_line(assistant("m2", json!([text("x")])).as_bytes(), &mut out);
    assert!(out.is_empty(), "{out:?}");
    n.push_line(user(json!([tool_result("t1")])).as_bytes(), &mut out);
    assert_eq!(
        out.iter().map(to_json).collect::<Vec<_>>(),
        [
            json!({"kind": "agent", "text": "x", "line": 2}),
            json!({"kind": "write", "path": "/a", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 3}),
        ]
    );
}

#[test]
fn c10_is_error_makes_the_use_fail_with_its_text() {
    assert_eq!(
        events(&[
            assistant(
                "m1",
                json!([tool_use("t1", "Write", json!({"file_path": "/a"}))])
            ),
            user(json!([tool_error("t1", json!("permission denied"))])),
        ]),
        [json!({
            "kind": "write", "path": "/a", "success": false, "error": "permission denied",
            "tool": "Write", "tool_use_id": "t1", "line": 2,
        })]
    );
}

#[test]
fn c10_interrupted_tool_use_result_makes_the_use_fail() {
    let block = tool_use("t1", "Write", json!({"file_path": "/a"}));
    let write = |success: bool, error: Option<&str>| {
        let mut e = json!({"kind": "write", "path": "/a", "success": success, "tool": "Write", "tool_use_id": "t1", "line": 2});
        if let Some(error) = error {
            e["error"] = json!(error);
        }
        e
    };
    let case = |content: Value, tur: Value| {
        events(&[
            assistant("m1", json!([block.clone()])),
            user_tur(
                json!([{"type": "tool_result", "tool_use_id": "t1", "content": content}]),
                tur,
            ),
        ])
    };
    assert_eq!(
        case(json!("stopped"), json!({"interrupted": true})),
        [write(false, Some("stopped"))]
    );
    assert_eq!(
        case(json!(""), json!({"interrupted": true})),
        [write(false, None)]
    );
    // Only `true` interrupts; anything else is success.
    assert_eq!(
        case(json!("x"), json!({"interrupted": "yes"})),
        [write(true, None)]
    );
    assert_eq!(
        case(json!("x"), json!({"interrupted": false})),
        [write(true, None)]
    );
    assert_eq!(case(json!("x"), json!(true)), [write(true, None)]);
}

#[test]
fn c10_tool_use_result_belongs_only_to_a_single_result_block() {
    let a = tool_use("a", "Write", json!({"file_path": "/a"}));
    let b = tool_use("b", "WebFetch", json!({"url": "u"}));
    let results = json!([tool_result("a"), tool_result("b")]);
    assert_eq!(
        events(&[
            assistant("m1", json!([a, b.clone()])),
            user_tur(results, json!({"interrupted": true})),
        ]),
        [
            json!({"kind": "write", "path": "/a", "success": true, "tool": "Write", "tool_use_id": "a", "line": 2}),
            // No `tool_use_result` in raw: the line holds two results.
            json!({
                "kind": "unknown", "reason": "unknown_tool", "tool": "WebFetch", "tool_use_id": "b",
                "raw": {"tool_use": b, "tool_result": tool_result("b")}, "line": 2,
            }),
        ]
    );
}

#[test]
fn c10_single_result_carries_its_tool_use_result_into_raw_unless_null() {
    let b = tool_use("b", "WebFetch", json!({"url": "u"}));
    let with = |tur: Value| {
        events(&[
            assistant("m1", json!([b.clone()])),
            user_tur(json!([text("note"), tool_result("b")]), tur),
        ])
    };
    assert_eq!(
        with(json!({"bytes": 10})),
        [json!({
            "kind": "unknown", "reason": "unknown_tool", "tool": "WebFetch", "tool_use_id": "b",
            "raw": {"tool_use": b, "tool_result": tool_result("b"), "tool_use_result": {"bytes": 10}},
            "line": 2,
        })]
    );
    assert_eq!(
        with(Value::Null),
        [json!({
            "kind": "unknown", "reason": "unknown_tool", "tool": "WebFetch", "tool_use_id": "b",
            "raw": {"tool_use": b, "tool_result": tool_result("b")}, "line": 2,
        })]
    );
}

#[test]
fn c10a_error_text_from_text_blocks_joined_with_newlines() {
    let content = json!([
        text("first"),
        {"type": "image", "source": {}},
        text("second"),
        {"type": "text", "text": 5},
        text(""),
        text("third"),
    ]);
    assert_eq!(
        events(&[
            assistant(
                "m1",
                json!([tool_use("t1", "Write", json!({"file_path": "/a"}))])
            ),
            user(json!([tool_error("t1", content)])),
        ]),
        [json!({
            "kind": "write", "path": "/a", "success": false, "error": "first\nsecond\n\nthird",
            "tool": "Write", "tool_use_id": "t1", "line": 2,
        })]
    );
}

#[test]
fn c10a_error_is_absent_when_the_text_is_empty() {
    for content in [
        json!(""),
        json!([]),
        json!([{"type": "image"}]),
        json!(null),
        json!(42),
    ] {
        let mut result = tool_error("t1", content.clone());
        if content.is_null() {
            result.as_object_mut().unwrap().remove("content");
        }
        assert_eq!(
            events(&[
                assistant(
                    "m1",
                    json!([tool_use("t1", "Write", json!({"file_path": "/a"}))])
                ),
                user(json!([result])),
            ]),
            [
                json!({"kind": "write", "path": "/a", "success": false, "tool": "Write", "tool_use_id": "t1", "line": 2})
            ],
            "{content}"
        );
    }
}

#[test]
fn c10a_error_is_cut_to_1000_characters() {
    let long = "ü".repeat(1_200);
    assert_eq!(
        events(&[
            assistant(
                "m1",
                json!([tool_use("t1", "Write", json!({"file_path": "/a"}))])
            ),
            user(json!([tool_error("t1", json!(long))])),
        ]),
        [json!({
            "kind": "write", "path": "/a", "success": false, "error": "ü".repeat(1_000),
            "tool": "Write", "tool_use_id": "t1", "line": 2,
        })]
    );
}

#[test]
fn j6_no_error_field_when_the_use_succeeds() {
    assert_eq!(
        one_tool(tool_use("t1", "Write", json!({"file_path": "/a"}))),
        [
            json!({"kind": "write", "path": "/a", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 3})
        ]
    );
}

// ---- C11 ----

#[test]
fn c11_second_use_with_same_id_makes_it_ambiguous() {
    let first = tool_use("dup", "Read", json!({"file_path": "a"}));
    let second = tool_use("dup", "Write", json!({"file_path": "b"}));
    let third = tool_use("dup", "Grep", json!({"pattern": "x"}));
    let result = tool_result("dup");
    let late = json!({"type": "tool_result", "tool_use_id": "dup", "content": "late"});
    let run = run(&[
        assistant("m1", json!([first.clone()])),
        assistant("m2", json!([second.clone()])),
        assistant_in(Some("sub"), json!("s1"), json!([third.clone()])),
        user_in(Some("p"), json!([result.clone()])),
        user(json!([late.clone()])),
        result_ok(),
    ]);
    assert_eq!(
        run.events,
        [
            // No `tool`; the parent is the result line's.
            json!({
                "kind": "unknown", "reason": "ambiguous_tool_use_id", "tool_use_id": "dup",
                "raw": {"tool_use": [first, second, third], "tool_result": result},
                "line": 4, "parent_tool_use_id": "p",
            }),
            // Its candidates are settled: a later result with that id is unpaired (C12).
            json!({
                "kind": "unknown", "reason": "unpaired_result", "tool_use_id": "dup",
                "raw": {"tool_use": null, "tool_result": late}, "line": 5,
            }),
        ]
    );
}

#[test]
fn c11_an_id_reused_after_its_result_is_not_ambiguous() {
    assert_eq!(
        events(&[
            assistant(
                "m1",
                json!([tool_use("t1", "Write", json!({"file_path": "/a"}))])
            ),
            user(json!([tool_result("t1")])),
            assistant(
                "m2",
                json!([tool_use("t1", "Write", json!({"file_path": "/b"}))])
            ),
            user(json!([tool_result("t1")])),
        ]),
        [
            json!({"kind": "write", "path": "/a", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 2}),
            json!({"kind": "write", "path": "/b", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 4}),
        ]
    );
}

#[test]
fn c11_ambiguous_result_with_a_file_tool_use_result_is_not_recovered() {
    let first = tool_use("dup", "Read", json!({"file_path": "a"}));
    let second = tool_use("dup", "Read", json!({"file_path": "a"}));
    let tur = json!({"file": {"filePath": "/r/a", "startLine": 1, "numLines": 3}});
    assert_eq!(
        events(&[
            assistant("m1", json!([first.clone(), second.clone()])),
            user_tur(json!([tool_result("dup")]), tur.clone()),
        ]),
        [json!({
            "kind": "unknown", "reason": "ambiguous_tool_use_id", "tool_use_id": "dup",
            "raw": {"tool_use": [first, second], "tool_result": tool_result("dup"), "tool_use_result": tur},
            "line": 2,
        })]
    );
}

// ---- C12 ----

fn unpaired(file: Value, result: Value) -> Vec<Value> {
    events(&[
        init("/repo"),
        user_tur(json!([result]), json!({"type": "text", "file": file})),
    ])
}

fn recovered(path: &str, range: Option<Value>) -> Value {
    let mut event = json!({"kind": "read", "path": path, "success": true, "tool": "Read", "tool_use_id": "lost", "line": 2});
    if let Some(range) = range {
        event["range"] = range;
    }
    event
}

#[test]
fn c12_unpaired_read_is_recovered() {
    assert_eq!(
        unpaired(
            json!({"filePath": "/repo/src/main.rs", "startLine": 7, "numLines": 3, "totalLines": 20}),
            tool_result("lost"),
        ),
        [recovered(
            "/repo/src/main.rs",
            Some(json!({"start": 7, "end": 9}))
        )]
    );
}

#[test]
fn c12_recovered_read_start_below_1_is_1() {
    for start in [0, -5] {
        assert_eq!(
            unpaired(
                json!({"filePath": "/f", "startLine": start, "numLines": 2}),
                tool_result("lost")
            ),
            [recovered("/f", Some(json!({"start": 1, "end": 2})))]
        );
    }
}

#[test]
fn c12_recovered_read_without_a_usable_line_count_has_no_range() {
    for file in [
        json!({"filePath": "/f", "startLine": 1, "numLines": 0}),
        json!({"filePath": "/f", "startLine": 1, "numLines": -2}),
        json!({"filePath": "/f", "startLine": 1, "numLines": 2.5}),
        json!({"filePath": "/f", "startLine": 1, "numLines": 2.0}),
        json!({"filePath": "/f", "startLine": 1, "numLines": "2"}),
        json!({"filePath": "/f", "startLine": 1.0, "numLines": 2}),
        json!({"filePath": "/f", "numLines": 2}),
        json!({"filePath": "/f", "startLine": 1}),
    ] {
        assert_eq!(
            unpaired(file.clone(), tool_result("lost")),
            [recovered("/f", None)],
            "{file}"
        );
    }
}

#[test]
fn c12_recovered_relative_file_path_is_resolved_against_cwd() {
    assert_eq!(
        unpaired(
            json!({"filePath": "src/../lib.rs", "startLine": 2, "numLines": 1}),
            tool_result("lost")
        ),
        [recovered(
            "/repo/lib.rs",
            Some(json!({"start": 2, "end": 2}))
        )]
    );
}

#[test]
fn c12_recovered_read_takes_success_from_the_result() {
    assert_eq!(
        unpaired(
            json!({"filePath": "/f"}),
            tool_error("lost", json!("too big"))
        ),
        [json!({
            "kind": "read", "path": "/f", "success": false, "error": "too big",
            "tool": "Read", "tool_use_id": "lost", "line": 2,
        })]
    );
}

#[test]
fn c12_recovered_read_without_a_tool_use_id_has_none() {
    let result = json!({"type": "tool_result", "content": "x"});
    assert_eq!(
        unpaired(json!({"filePath": "/f"}), result),
        [json!({"kind": "read", "path": "/f", "success": true, "tool": "Read", "line": 2})]
    );
}

#[test]
fn c12_unpaired_non_read_result_is_unpaired_result() {
    let cases = [
        json!({"stdout": "hello", "interrupted": false}),
        json!({"file": {"filePath": ""}}),
        json!({"file": {"filePath": 5}}),
        json!({"file": {"path": "/f"}}),
        json!({"file": "/f"}),
        json!("a string"),
    ];
    for tur in cases {
        let result = json!({"type": "tool_result", "tool_use_id": "lost", "content": "hello"});
        assert_eq!(
            events(&[user_tur(json!([result.clone()]), tur.clone())]),
            [json!({
                "kind": "unknown", "reason": "unpaired_result", "tool_use_id": "lost",
                "raw": {"tool_use": null, "tool_result": result, "tool_use_result": tur},
                "line": 1,
            })]
        );
    }
    // No tool_use_result at all, in a sub-agent thread, without a string id.
    let result = json!({"type": "tool_result", "tool_use_id": 9, "content": "x"});
    assert_eq!(
        events(&[user_in(Some("p"), json!([result.clone()]))]),
        [json!({
            "kind": "unknown", "reason": "unpaired_result",
            "raw": {"tool_use": null, "tool_result": result}, "line": 1, "parent_tool_use_id": "p",
        })]
    );
}

// ---- C13 ----

#[test]
fn c13_use_without_an_id_is_emitted_at_once() {
    let no_id = json!({"type": "tool_use", "name": "Read", "input": {"file_path": "/a"}});
    let number_id = json!({"type": "tool_use", "id": 5, "input": {}});
    let run = run(&[assistant(
        "m1",
        json!([text("before"), no_id.clone(), number_id.clone()]),
    )]);
    assert_eq!(
        run.events,
        [
            json!({
                "kind": "unknown", "reason": "malformed_tool_use", "tool": "Read",
                "raw": {"tool_use": no_id, "tool_result": null}, "line": 1,
            }),
            json!({
                "kind": "unknown", "reason": "malformed_tool_use",
                "raw": {"tool_use": number_id, "tool_result": null}, "line": 1,
            }),
            json!({"kind": "agent", "text": "before", "line": 1}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn c13_use_without_a_string_name_is_malformed_at_its_result() {
    for block in [
        json!({"type": "tool_use", "id": "t1", "input": {"file_path": "/a"}}),
        json!({"type": "tool_use", "id": "t1", "name": 3, "input": {"file_path": "/a"}}),
        json!({"type": "tool_use", "id": "t1", "name": null, "input": {"file_path": "/a"}}),
    ] {
        assert_eq!(one_tool(block.clone()), malformed(block));
    }
}

#[test]
fn c13_input_that_is_not_an_object_is_malformed() {
    for input in [json!("file_path=/a"), json!(null), json!([1]), json!(5)] {
        let block = tool_use("t1", "Read", input);
        assert_eq!(one_tool(block.clone()), malformed(block));
    }
    let missing = json!({"type": "tool_use", "id": "t1", "name": "Read"});
    assert_eq!(one_tool(missing.clone()), malformed(missing));
    // Also for tools that have no mapping, and for StructuredOutput.
    for name in ["WebFetch", "StructuredOutput"] {
        let block = tool_use("t1", name, json!("x"));
        assert_eq!(one_tool(block.clone()), malformed(block));
    }
}

#[test]
fn c13_required_field_missing_empty_null_or_wrong_type_is_malformed() {
    let cases = [
        ("Read", json!({})),
        ("Read", json!({"file_path": ""})),
        ("Read", json!({"file_path": null})),
        ("Read", json!({"file_path": 5})),
        ("Read", json!({"path": "/a"})),
        ("Write", json!({"content": "x"})),
        ("Edit", json!({"file_path": ["/a"]})),
        ("MultiEdit", json!({"file_path": ""})),
        ("NotebookEdit", json!({"file_path": "/a.ipynb"})),
        ("NotebookEdit", json!({"notebook_path": null})),
        ("Grep", json!({"path": "src"})),
        ("Glob", json!({"pattern": ""})),
        ("Grep", json!({"pattern": {"re": "x"}})),
        ("Bash", json!({"command": ""})),
        ("Bash", json!({"command": ["ls"]})),
        ("Bash", json!({"description": "no command"})),
        ("Skill", json!({})),
        ("Skill", json!({"skill": ""})),
        ("Skill", json!({"skill": 5, "command": "fallback"})),
        ("Skill", json!({"command": ""})),
        ("Skill", json!({"skill": null, "command": null})),
    ];
    for (name, input) in cases {
        let block = tool_use("t1", name, input);
        assert_eq!(one_tool(block.clone()), malformed(block));
    }
}

#[test]
fn c13_optional_field_of_the_wrong_type_is_malformed() {
    let cases = [
        ("Grep", json!({"pattern": "x", "path": 42})),
        ("Glob", json!({"pattern": "x", "path": ["src"]})),
        ("LS", json!({"path": true})),
        ("Read", json!({"file_path": "/a", "offset": "10"})),
        ("Read", json!({"file_path": "/a", "limit": "5"})),
    ];
    for (name, input) in cases {
        let block = tool_use("t1", name, input);
        assert_eq!(one_tool(block.clone()), malformed(block));
    }
}

#[test]
fn c13_read_offset_and_limit_out_of_range_negative_or_float_are_malformed() {
    for bad in [
        json!(-1),
        json!(1.5),
        json!(2.0),
        json!(4_294_967_296_u64),
        json!(u64::MAX),
    ] {
        for key in ["offset", "limit"] {
            let mut input = json!({"file_path": "/a"});
            input[key] = bad.clone();
            let block = read_use(input);
            assert_eq!(one_tool(block.clone()), malformed(block), "{key}: {bad}");
        }
    }
}

#[test]
fn c13_null_counts_as_absent() {
    assert_eq!(
        one_tool(read_use(
            json!({"file_path": "/a", "offset": null, "limit": null})
        )),
        [read("/a", None)]
    );
    assert_eq!(
        one_tool(tool_use(
            "t1",
            "Grep",
            json!({"pattern": "x", "path": null})
        )),
        [
            json!({"kind": "search", "query": "x", "success": true, "tool": "Grep", "tool_use_id": "t1", "line": 3})
        ]
    );
}

#[test]
fn c13_malformed_use_without_a_result_is_unresolved_at_the_end() {
    let block = tool_use("t1", "Read", json!({}));
    let run = run(&[assistant("m1", json!([block.clone()])), result_ok()]);
    assert_eq!(
        run.events,
        [json!({
            "kind": "unknown", "reason": "unresolved_tool_use", "tool": "Read", "tool_use_id": "t1",
            "raw": {"tool_use": block, "tool_result": null},
        })]
    );
}

// ---- C14: the tool map ----

#[test]
fn c14_read_range_from_offset_and_limit() {
    let cases = [
        (
            json!({"offset": 10, "limit": 5}),
            Some(json!({"start": 10, "end": 14})),
        ),
        (
            json!({"offset": 10}),
            Some(json!({"start": 10, "end": null})),
        ),
        (json!({"limit": 5}), Some(json!({"start": 1, "end": 5}))),
        (
            json!({"offset": 0, "limit": 3}),
            Some(json!({"start": 1, "end": 3})),
        ),
        (json!({"offset": 0}), Some(json!({"start": 1, "end": null}))),
        // A limit of 0 counts as absent.
        (
            json!({"offset": 4, "limit": 0}),
            Some(json!({"start": 4, "end": null})),
        ),
        (json!({"limit": 0}), None),
        (json!({}), None),
        (
            json!({"offset": 4_294_967_295_u64, "limit": 4_294_967_295_u64}),
            Some(json!({"start": 4_294_967_295_u64, "end": 8_589_934_589_u64})),
        ),
    ];
    for (extra, range) in cases {
        let mut input = json!({"file_path": "src/lib.rs"});
        for (k, v) in extra.as_object().unwrap() {
            input[k] = v.clone();
        }
        assert_eq!(
            one_tool(read_use(input.clone())),
            [read("/repo/src/lib.rs", range)],
            "{input}"
        );
    }
}

#[test]
fn c14_write_edit_multiedit_and_notebookedit_are_writes() {
    for (name, input) in [
        ("Write", json!({"file_path": "a.txt", "content": "x"})),
        (
            "Edit",
            json!({"file_path": "a.txt", "old_string": "a", "new_string": "b"}),
        ),
        ("MultiEdit", json!({"file_path": "a.txt", "edits": []})),
        (
            "NotebookEdit",
            json!({"notebook_path": "a.txt", "new_source": "x"}),
        ),
    ] {
        assert_eq!(
            one_tool(tool_use("t1", name, input)),
            [
                json!({"kind": "write", "path": "/repo/a.txt", "success": true, "tool": name, "tool_use_id": "t1", "line": 3})
            ]
        );
    }
}

#[test]
fn c14_grep_and_glob_are_searches() {
    assert_eq!(
        one_tool(tool_use(
            "t1",
            "Grep",
            json!({"pattern": "fn main", "path": "src", "glob": "*.rs"})
        )),
        [
            json!({"kind": "search", "query": "fn main", "path": "/repo/src", "success": true, "tool": "Grep", "tool_use_id": "t1", "line": 3})
        ]
    );
    // An empty optional path counts as absent.
    assert_eq!(
        one_tool(tool_use(
            "t1",
            "Glob",
            json!({"pattern": "**/*.rs", "path": ""})
        )),
        [
            json!({"kind": "search", "query": "**/*.rs", "success": true, "tool": "Glob", "tool_use_id": "t1", "line": 3})
        ]
    );
}

#[test]
fn c14_ls_is_a_list() {
    assert_eq!(
        one_tool(tool_use("t1", "LS", json!({"path": "/repo/src/"}))),
        [
            json!({"kind": "list", "path": "/repo/src", "success": true, "tool": "LS", "tool_use_id": "t1", "line": 3})
        ]
    );
    for input in [json!({}), json!({"path": ""}), json!({"path": null})] {
        assert_eq!(
            one_tool(tool_use("t1", "LS", input)),
            [
                json!({"kind": "list", "success": true, "tool": "LS", "tool_use_id": "t1", "line": 3})
            ]
        );
    }
}

#[test]
fn c14_skill_in_the_default_workspace() {
    assert_eq!(
        one_tool(tool_use("t1", "Skill", json!({"skill": "release"}))),
        [json!({
            "kind": "skill", "name": "release", "path": "/repo/.claude/skills/release/SKILL.md",
            "success": true, "tool": "Skill", "tool_use_id": "t1", "line": 3,
        })]
    );
}

#[test]
fn c14_skill_name_from_command_when_skill_is_absent() {
    for input in [
        json!({"command": "pdf"}),
        json!({"skill": null, "command": "pdf"}),
    ] {
        assert_eq!(
            one_tool(tool_use("t1", "Skill", input)),
            [json!({
                "kind": "skill", "name": "pdf", "path": "/repo/.claude/skills/pdf/SKILL.md",
                "success": true, "tool": "Skill", "tool_use_id": "t1", "line": 3,
            })]
        );
    }
    // `skill` wins when both are there.
    assert_eq!(
        one_tool(tool_use(
            "t1",
            "Skill",
            json!({"skill": "a", "command": "b"})
        ))[0]["name"],
        "a"
    );
}

#[test]
fn c14_structured_output_gives_no_event() {
    let run = run(&[
        init("/repo"),
        assistant("m1", json!([tool_use("so", "StructuredOutput", json!({"answer": 42}))])),
        user(json!([tool_result("so")])),
        json!({"type": "result", "subtype": "success", "result": "", "structured_output": {"answer": 42}})
            .to_string(),
    ]);
    assert_eq!(run.events, Vec::<Value>::new());
    assert_eq!(
        run.outcome,
        json!({
            "session_id": "sess", "status": "success", "final_output": "",
            "structured_output": {"answer": 42}, "metrics": {}, "counts": {},
        })
    );
}

#[test]
fn c14_unknown_tool_is_unknown_tool() {
    let block = tool_use("t1", "WebFetch", json!({"url": "https://example.com"}));
    assert_eq!(
        one_tool(block.clone()),
        [unknown_use("unknown_tool", block)]
    );
    // Even a failed one carries no `success` or `error`.
    let block = tool_use("t1", "mcp__srv__do", json!({}));
    let failed = tool_error("t1", json!("nope"));
    assert_eq!(
        events(&[
            assistant("m1", json!([block.clone()])),
            user(json!([failed.clone()]))
        ]),
        [json!({
            "kind": "unknown", "reason": "unknown_tool", "tool": "mcp__srv__do", "tool_use_id": "t1",
            "raw": {"tool_use": block, "tool_result": failed}, "line": 2,
        })]
    );
}

#[test]
fn c17_agent_and_task_are_unknown_tools() {
    for name in ["Agent", "Task"] {
        let block = tool_use(
            "t1",
            name,
            json!({"prompt": "p", "subagent_type": "Explore"}),
        );
        assert_eq!(
            one_tool(block.clone()),
            [unknown_use("unknown_tool", block)]
        );
    }
}

#[test]
fn c14_tool_names_are_case_sensitive() {
    let block = tool_use("t1", "read", json!({"file_path": "/a"}));
    assert_eq!(
        one_tool(block.clone()),
        [unknown_use("unknown_tool", block)]
    );
}

// ---- C14a: paths ----

#[test]
fn c14a_relative_paths_with_dotdot_are_normalized_lexically() {
    let cases = [
        ("../other/x", "/other/x"),
        ("../../../../x", "/x"),
        ("./a/./b//c/", "/repo/a/b/c"),
        ("a/../../repo2/f", "/repo2/f"),
        ("/abs/../etc/./hosts", "/etc/hosts"),
        ("/../..", "/"),
        (".", "/repo"),
    ];
    for (given, expected) in cases {
        assert_eq!(
            one_tool(tool_use("t1", "Write", json!({"file_path": given}))),
            [
                json!({"kind": "write", "path": expected, "success": true, "tool": "Write", "tool_use_id": "t1", "line": 3})
            ],
            "{given}"
        );
    }
}

fn write_at(config: NormalizerConfig, lines: &[String]) -> Vec<Value> {
    events_with(config, lines)
}

#[test]
fn c14a_no_init_line_leaves_paths_relative() {
    let lines = [
        assistant(
            "m1",
            json!([
                tool_use("t1", "Write", json!({"file_path": "./src/../a.rs"})),
                tool_use("t2", "Write", json!({"file_path": "../../x/"}))
            ]),
        ),
        user(json!([tool_result("t1"), tool_result("t2")])),
    ];
    assert_eq!(
        write_at(NormalizerConfig::default(), &lines),
        [
            json!({"kind": "write", "path": "a.rs", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 2}),
            json!({"kind": "write", "path": "../../x", "success": true, "tool": "Write", "tool_use_id": "t2", "line": 2}),
        ]
    );
}

#[test]
fn c14a_config_cwd_is_used_without_an_init_line() {
    let config = {
        let mut config = NormalizerConfig::default();
        config.cwd = Some("/given".to_string());
        config.workspace = None;
        config
    };
    let lines = [
        assistant(
            "m1",
            json!([tool_use("t1", "Write", json!({"file_path": "../a.rs"}))]),
        ),
        user(json!([tool_result("t1")])),
        init("/from/init"),
        assistant(
            "m2",
            json!([tool_use("t2", "Write", json!({"file_path": "../a.rs"}))]),
        ),
        user(json!([tool_result("t2")])),
    ];
    assert_eq!(
        write_at(config, &lines),
        [
            json!({"kind": "write", "path": "/a.rs", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 2}),
            // The init cwd wins over --cwd once it arrives.
            json!({"kind": "write", "path": "/from/a.rs", "success": true, "tool": "Write", "tool_use_id": "t2", "line": 5}),
        ]
    );
}

#[test]
fn c14a_relative_config_cwd_stays_relative() {
    let config = {
        let mut config = NormalizerConfig::default();
        config.cwd = Some("rel/dir".to_string());
        config.workspace = None;
        config
    };
    let lines = [
        assistant(
            "m1",
            json!([tool_use(
                "t1",
                "Write",
                json!({"file_path": "../../../a.rs"})
            )]),
        ),
        user(json!([tool_result("t1")])),
    ];
    assert_eq!(
        write_at(config, &lines),
        [
            json!({"kind": "write", "path": "../a.rs", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 2})
        ]
    );
}

#[test]
fn c14a_the_cwd_in_effect_when_the_event_is_emitted_is_used() {
    let lines = [
        init("/first"),
        assistant(
            "m1",
            json!([tool_use("t1", "Write", json!({"file_path": "a"}))]),
        ),
        // A later init replaces the cwd; an empty or non-string cwd does not.
        init("/second"),
        json!({"type": "system", "subtype": "init", "cwd": ""}).to_string(),
        json!({"type": "system", "subtype": "init", "cwd": 5}).to_string(),
        json!({"type": "system", "subtype": "init"}).to_string(),
        user(json!([tool_result("t1")])),
    ];
    assert_eq!(
        events(&lines),
        [
            json!({"kind": "write", "path": "/second/a", "success": true, "tool": "Write", "tool_use_id": "t1", "line": 7})
        ]
    );
}

#[test]
fn c14a_skill_workspace_from_config() {
    let skill = |config: NormalizerConfig, with_init: bool| {
        let mut lines = Vec::new();
        if with_init {
            lines.push(init("/repo"));
        }
        lines.push(assistant(
            "m1",
            json!([tool_use("t1", "Skill", json!({"skill": "s"}))]),
        ));
        lines.push(user(json!([tool_result("t1")])));
        let events = events_with(config, &lines);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["kind"], "skill");
        assert_eq!(events[0]["name"], "s");
        events[0]["path"].as_str().unwrap().to_string()
    };
    let ws = |w: &str| {
        let mut config = NormalizerConfig::default();
        config.cwd = None;
        config.workspace = Some(w.to_string());
        config
    };
    assert_eq!(skill(ws("/ws/"), true), "/ws/skills/s/SKILL.md");
    assert_eq!(skill(ws("tools/../ws"), true), "/repo/ws/skills/s/SKILL.md");
    assert_eq!(skill(ws("ws"), false), "ws/skills/s/SKILL.md");
    assert_eq!(
        skill(NormalizerConfig::default(), false),
        ".claude/skills/s/SKILL.md"
    );
    let cwd_only = {
        let mut config = NormalizerConfig::default();
        config.cwd = Some("/c".to_string());
        config.workspace = None;
        config
    };
    assert_eq!(skill(cwd_only, false), "/c/.claude/skills/s/SKILL.md");
}

#[test]
fn c12_recovered_read_is_a_failure_when_interrupted() {
    let result =
        json!({"type": "tool_result", "tool_use_id": "lost", "content": [text("stopped")]});
    assert_eq!(
        events(&[user_tur(
            json!([result]),
            json!({"interrupted": true, "file": {"filePath": "/f", "startLine": 3, "numLines": 1}})
        )]),
        [json!({
            "kind": "read", "path": "/f", "range": {"start": 3, "end": 3}, "success": false,
            "error": "stopped", "tool": "Read", "tool_use_id": "lost", "line": 1,
        })]
    );
}

#[test]
fn c13_use_without_an_id_is_malformed_even_for_an_unmapped_tool() {
    let block = json!({"type": "tool_use", "name": "WebFetch", "input": {"url": "u"}});
    assert_eq!(
        events(&[assistant("m1", json!([block.clone()]))]),
        [json!({
            "kind": "unknown", "reason": "malformed_tool_use", "tool": "WebFetch",
            "raw": {"tool_use": block, "tool_result": null}, "line": 1,
        })]
    );
}

// ---- L1: started events ----

fn with_started() -> NormalizerConfig {
    let mut config = NormalizerConfig::default();
    config.cwd = Some("/w".into());
    config.started = true;
    config
}

#[test]
fn l1_started_comes_on_the_tool_use_line_with_what_its_result_will_give() {
    let read = tool_use(
        "t1",
        "Read",
        json!({"file_path": "a.rs", "offset": 4, "limit": 6}),
    );
    let bash = tool_use(
        "t2",
        "Bash",
        json!({"command": "cat b.rs && rg -n foo src"}),
    );
    let make = tool_use("t3", "Bash", json!({"command": "cargo test"}));
    let other = tool_use("t4", "WebFetch", json!({"url": "https://example.invalid"}));
    let structured = tool_use("t5", "StructuredOutput", json!({"x": 1}));
    let lines = [
        assistant("m1", json!([text("I will look."), read])),
        assistant("m1", json!([bash, make])),
        assistant("m1", json!([other, structured])),
        user(json!([tool_result("t1")])),
    ];
    let events = events_with(with_started(), &lines);
    assert_eq!(
        events[..7],
        [
            json!({"kind": "started", "tool": "Read", "tool_use_id": "t1", "line": 1,
                "expect": [{"kind": "read", "path": "/w/a.rs", "range": {"start": 4, "end": 9}}]}),
            json!({"kind": "started", "tool": "Bash", "tool_use_id": "t2", "line": 2,
                "command": "cat b.rs && rg -n foo src",
                "expect": [{"kind": "read", "path": "/w/b.rs"}, {"kind": "search", "query": "foo", "path": "/w/src"}]}),
            json!({"kind": "started", "tool": "Bash", "tool_use_id": "t3", "line": 2,
                "command": "cargo test", "expect": [{"kind": "command"}]}),
            // An unmapped tool, and StructuredOutput (no final event): name and id only.
            json!({"kind": "started", "tool": "WebFetch", "tool_use_id": "t4", "line": 3}),
            json!({"kind": "started", "tool": "StructuredOutput", "tool_use_id": "t5", "line": 3}),
            // C4: the user line flushes the message, then the result's events follow.
            json!({"kind": "agent", "text": "I will look.", "line": 1}),
            json!({"kind": "read", "path": "/w/a.rs", "range": {"start": 4, "end": 9},
                "success": true, "tool": "Read", "tool_use_id": "t1", "line": 4}),
        ]
    );
}

#[test]
fn l1_started_is_off_by_default_and_never_counted() {
    let read = tool_use("t1", "Read", json!({"file_path": "/a.rs"}));
    let lines = [
        assistant_in(Some("ag"), json!("m1"), json!([read])),
        user_in(Some("ag"), json!([tool_result("t1")])),
    ];
    let off = events_with(NormalizerConfig::default(), &lines);
    assert!(off.iter().all(|e| e["kind"] != "started"), "{off:?}");
    let on = events_with(with_started(), &lines);
    // J4: the sub-agent's thread; counts are checked against the other events by the helper.
    assert_eq!(on[0]["kind"], "started");
    assert_eq!(on[0]["parent_tool_use_id"], "ag");
    assert_eq!(on[1..], off[..]);
}
