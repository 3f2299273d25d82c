//! Reading the stream: S1 (lines), S2 (non-JSON), S3 (not an event), S4 (stderr).

use harness_agents_core::NormalizerConfig;
use serde_json::{Value, json};

use super::*;

fn non_json(message: &str, line: u64) -> Value {
    json!({"kind": "warning", "source": "non_json", "message": message, "line": line})
}

/// The events of byte lines, followed by a `result` line.
fn byte_events(lines: &[&[u8]]) -> Vec<Value> {
    let result = result_ok();
    let mut all = lines.to_vec();
    all.push(result.as_bytes());
    let run = run_bytes(&all);
    assert_eq!(run.outcome["status"], "success", "{:?}", run.events);
    run.events
}

#[test]
fn s1_crlf_line_is_parsed_without_its_cr() {
    let run = run_stream(
        b"{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\r\n\
          banner\r\n\
          {\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"done\"}\r\n",
    );
    // The non-JSON line does not flush the message (C4): the result line does.
    assert_eq!(
        run.events,
        [
            non_json("banner", 2),
            json!({"kind": "agent", "text": "hi", "line": 1}),
        ]
    );
    assert_eq!(run.outcome["status"], "success");
    assert_eq!(run.outcome["final_output"], "done");
}

#[test]
fn s1_only_one_trailing_cr_is_dropped() {
    assert_eq!(byte_events(&[b"banner\r\r"]), [non_json("banner\r", 1)]);
}

#[test]
fn s1_last_line_may_lack_its_newline() {
    let run = run_stream(b"first\nsecond");
    assert_eq!(
        run.events,
        [
            non_json("first", 1),
            non_json("second", 2),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn s1_blank_and_whitespace_only_lines_are_skipped_but_counted() {
    let run = run_stream(b"\n   \n\t \t\n\r\n \r \n\nbanner\n");
    assert_eq!(
        run.events,
        [
            non_json("banner", 7),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn s1_form_feed_line_is_not_blank() {
    assert_eq!(byte_events(&[b" \x0c "]), [non_json(" \u{c} ", 1)]);
}

#[test]
fn s1_no_break_space_line_is_not_blank() {
    assert_eq!(byte_events(&["\u{a0}".as_bytes()]), [non_json("\u{a0}", 1)]);
}

#[test]
fn s1_whitespace_around_json_is_still_json() {
    let line = format!(" \t{} \t", assistant("m1", json!([text("hi")])));
    assert_eq!(
        events(&[line]),
        [json!({"kind": "agent", "text": "hi", "line": 1})]
    );
}

#[test]
fn s2_banner_text_is_a_non_json_warning() {
    assert_eq!(
        byte_events(&[b"Starting Claude Code...", b"Welcome!"]),
        [
            non_json("Starting Claude Code...", 1),
            non_json("Welcome!", 2)
        ]
    );
}

#[test]
fn s2_invalid_utf8_is_replaced_with_u_fffd() {
    assert_eq!(
        byte_events(&[b"\xff\xfe ok \xc3"]),
        [non_json("\u{fffd}\u{fffd} ok \u{fffd}", 1)]
    );
}

#[test]
fn s2_invalid_utf8_inside_a_json_string_is_not_json() {
    // serde_json::from_slice rejects invalid UTF-8 even inside a string.
    assert_eq!(
        byte_events(&[b"{\"type\":\"x\xff\"}"]),
        [non_json("{\"type\":\"x\u{fffd}\"}", 1)]
    );
}

#[test]
fn s2_bom_line_is_a_non_json_warning() {
    let line = "\u{feff}{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"no\"}";
    let run = run_bytes(&[line.as_bytes()]);
    assert_eq!(
        run.events,
        [
            non_json(line, 1),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
    assert_eq!(run.outcome["status"], "incomplete");
    assert_eq!(run.outcome.get("final_output"), None);
}

#[test]
fn s2_truncated_json_is_a_non_json_warning() {
    let full = assistant("m1", json!([text("hi")]));
    let cut = &full[..full.len() - 3];
    assert_eq!(byte_events(&[cut.as_bytes()]), [non_json(cut, 1)]);
}

#[test]
fn s2_trailing_garbage_after_json_is_a_non_json_warning() {
    let line = "{\"type\":\"zzz\"} {\"type\":\"zzz\"}";
    assert_eq!(byte_events(&[line.as_bytes()]), [non_json(line, 1)]);
}

#[test]
fn s2_nan_and_infinity_are_not_json() {
    let lines: [&[u8]; 4] = [
        b"NaN",
        b"{\"type\":\"zzz\",\"n\":NaN}",
        b"{\"type\":\"zzz\",\"n\":Infinity}",
        b"-Infinity",
    ];
    assert_eq!(
        byte_events(&lines),
        [
            non_json("NaN", 1),
            non_json("{\"type\":\"zzz\",\"n\":NaN}", 2),
            non_json("{\"type\":\"zzz\",\"n\":Infinity}", 3),
            non_json("-Infinity", 4),
        ]
    );
}

#[test]
fn s2_number_out_of_range_is_not_json() {
    let lines: [&[u8]; 2] = [b"{\"type\":\"zzz\",\"n\":1e400}", b"-1e400"];
    assert_eq!(
        byte_events(&lines),
        [
            non_json("{\"type\":\"zzz\",\"n\":1e400}", 1),
            non_json("-1e400", 2)
        ]
    );
}

#[test]
fn s2_lone_surrogate_escape_is_not_json() {
    let lone = r#"{"type":"zzz","s":"\ud800"}"#;
    let low = r#"{"type":"zzz","s":"\udc00x"}"#;
    // The repeated key would replace the bad value in a Value, but parsing fails first.
    let repeated = r#"{"type":"zzz","s":"\ud800","s":"fine"}"#;
    assert_eq!(
        byte_events(&[lone.as_bytes(), low.as_bytes(), repeated.as_bytes()]),
        [non_json(lone, 1), non_json(low, 2), non_json(repeated, 3)]
    );
}

#[test]
fn s2_a_surrogate_pair_escape_is_json() {
    let line = r#"{"type":"zzz","s":"\ud83d\ude00"}"#;
    assert_eq!(
        byte_events(&[line.as_bytes()]),
        [json!({
            "kind": "unknown",
            "reason": "unknown_type",
            "raw": {"type": "zzz", "s": "\u{1f600}"},
            "line": 1,
        })]
    );
}

#[test]
fn s2_non_json_message_is_cut_to_1000_characters() {
    // Characters, not bytes: 'é' is two bytes.
    let long = "é".repeat(1_500);
    let cut = "é".repeat(1_000);
    assert_eq!(byte_events(&[long.as_bytes()]), [non_json(&cut, 1)]);
    let exact = "x".repeat(1_000);
    assert_eq!(byte_events(&[exact.as_bytes()]), [non_json(&exact, 1)]);
}

/// `{"type":"zzz","n":[[...[0]...]]}` with `depth` levels in all (the object is level 1).
fn nested(depth: usize) -> String {
    format!(
        "{{\"type\":\"zzz\",\"n\":{}0{}}}",
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
}

#[test]
fn s2_nesting_of_127_levels_is_json_and_128_is_not() {
    // serde_json's recursion limit: 127 levels parse, 128 are rejected.
    let ok = nested(127);
    let too_deep = nested(128);
    let mut inner = json!(0);
    for _ in 0..126 {
        inner = json!([inner]);
    }
    assert_eq!(
        byte_events(&[ok.as_bytes(), too_deep.as_bytes()]),
        [
            // J11: as `raw` the line would sit 128 levels deep, so it is written as its text.
            json!({
                "kind": "unknown",
                "reason": "unknown_type",
                "raw": json!({"type": "zzz", "n": inner}).to_string(),
                "line": 1,
            }),
            non_json(&too_deep, 2),
        ]
    );
    // A top-level array nested 128 deep: also rejected.
    let arrays = format!("{}{}", "[".repeat(128), "]".repeat(128));
    let arrays_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
    let events = byte_events(&[arrays.as_bytes(), arrays_ok.as_bytes()]);
    assert_eq!(events[0], non_json(&arrays, 1));
    assert_eq!(events[1]["reason"], "not_an_event");
    assert_eq!(events.len(), 2);
}

#[test]
fn s3_valid_json_that_is_not_an_object_is_not_an_event() {
    assert_eq!(
        byte_events(&[b"[1,2]", b"42", b"\"type\"", b"null", b"true"]),
        [
            json!({"kind": "unknown", "reason": "not_an_event", "raw": [1, 2], "line": 1}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": 42, "line": 2}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": "type", "line": 3}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": null, "line": 4}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": true, "line": 5}),
        ]
    );
}

#[test]
fn s3_object_without_string_type_is_not_an_event() {
    assert_eq!(
        byte_events(&[
            br#"{"event":"no type"}"#,
            br#"{"type":7}"#,
            br#"{"type":null}"#,
            br#"{"type":["assistant"]}"#,
            br#"{}"#,
        ]),
        [
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"event": "no type"}, "line": 1}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"type": 7}, "line": 2}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"type": null}, "line": 3}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {"type": ["assistant"]}, "line": 4}),
            json!({"kind": "unknown", "reason": "not_an_event", "raw": {}, "line": 5}),
        ]
    );
}

#[test]
fn s4_stderr_lines_are_stderr_warnings_with_their_own_numbering() {
    let stdout = [b"banner".as_slice(), result_ok().as_bytes()].map(<[u8]>::to_vec);
    let stdout: Vec<&[u8]> = stdout.iter().map(Vec::as_slice).collect();
    let stderr: [&[u8]; 6] = [
        b"first problem\r",
        b"",
        b"  \t",
        b"\r",
        b"bad \xff byte",
        b"two\r\r",
    ];
    let run = run_with(NormalizerConfig::default(), &stdout, &stderr);
    // Blank stderr lines are skipped but still counted (J2: "blank lines count").
    let warn = |message: &str, line: u64| json!({"kind": "warning", "source": "stderr", "message": message, "line": line, "stream": "stderr"});
    assert_eq!(
        run.events,
        [
            non_json("banner", 1),
            warn("first problem", 1),
            warn("bad \u{fffd} byte", 5),
            warn("two\r", 6),
        ]
    );
    assert_eq!(run.outcome["counts"], json!({"warning": 4}));
}

#[test]
fn s4_a_long_stderr_line_is_kept_whole() {
    // S4 says the message is the line; only S2 (non_json) and J6 (error) cut to 1,000.
    let long = "e".repeat(1_500);
    let run = run_with(NormalizerConfig::default(), &[], &[long.as_bytes()]);
    assert_eq!(
        run.events,
        [
            json!({"kind": "warning", "source": "stderr", "message": long, "line": 1, "stream": "stderr"}),
            json!({"kind": "error", "message": "stream ended without a result"}),
        ]
    );
}

#[test]
fn s4_stderr_does_not_flush_a_message() {
    let mut normalizer = harness_agents_claude::ClaudeNormalizer::new(NormalizerConfig::default());
    let mut out = Vec::new();
    use harness_agents_core::Normalizer;
    normalizer.push_line(assistant("m1", json!([text("a")])).as_bytes(), &mut out);
    normalizer.push_stderr(b"oops", &mut out);
    normalizer.push_line(assistant("m1", json!([text("b")])).as_bytes(), &mut out);
    normalizer.push_line(result_ok().as_bytes(), &mut out);
    let outcome = normalizer.finish(&mut out);
    let run = super::finish_run(out, &outcome);
    assert_eq!(
        run.events,
        [
            json!({"kind": "warning", "source": "stderr", "message": "oops", "line": 1, "stream": "stderr"}),
            json!({"kind": "agent", "text": "a\n\nb", "line": 2}),
        ]
    );
}

/// A line of `depth` levels: an object whose `a` holds arrays nested `depth - 1` deep.
fn nested_line(depth: usize) -> String {
    format!(
        r#"{{"type":"deep","a":{}{}}}"#,
        "[".repeat(depth - 1),
        "]".repeat(depth - 1)
    )
}

#[test]
fn j11_a_raw_that_would_nest_past_127_levels_is_written_as_its_json_text() {
    // 127 levels is the deepest line serde_json reads (S2); as `raw` it would sit at 128.
    let deepest = nested_line(127);
    assert!(serde_json::from_str::<Value>(&deepest).is_ok());
    let run = run(&[deepest.clone(), nested_line(126)]);
    let compact: Value = serde_json::from_str(&deepest).unwrap();
    assert_eq!(run.events[0]["reason"], "unknown_type");
    assert_eq!(run.events[0]["raw"], Value::String(compact.to_string()));
    // One level less fits: raw stays a value.
    assert!(run.events[1]["raw"].is_object(), "{:?}", run.events[1]);
    // Every line as written reads back with serde_json's default reader.
    for event in &run.events {
        let text = serde_json::to_string(event).unwrap();
        assert!(
            serde_json::from_str::<Value>(&text).is_ok(),
            "{}",
            &text[..60]
        );
    }
}
