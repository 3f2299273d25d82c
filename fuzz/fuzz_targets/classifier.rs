//! Bytes → a script (lossy UTF-8, classified as `bash -lc SCRIPT`) and an argv (the bytes
//! split on NUL): the classifier must be total and pure (SPEC B3).

#![no_main]

use harness_agents_codex_shell::{classify, classify_script, parse_command};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let script = String::from_utf8_lossy(data).into_owned();
    let parts = classify_script(&script);
    assert_eq!(parts, classify_script(&script), "B3: not pure");

    let argv: Vec<String> = data
        .split(|&b| b == 0)
        .map(|word| String::from_utf8_lossy(word).into_owned())
        .collect();
    let parsed = parse_command(&argv);
    let classified = classify(&argv);
    assert_eq!(parsed.len(), classified.len());
});
