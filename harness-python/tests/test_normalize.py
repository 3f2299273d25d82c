"""The incremental `Normalizer`, `normalize(path)` and `classify` against the recorded fixtures
(SPEC rule ids in the test names' docstrings)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest

import harness_agents as hn
from conftest import FIXTURES, FOLDERS, expected_rows, stderr_path, streams


def rows_of(events: list[hn.Event], outcome: hn.Outcome) -> list[dict[str, Any]]:
    return [event.to_dict() for event in events] + [outcome.to_dict()]


# The fields the Rust conformance kit compares (`fixtures/src/lib.rs`), and the outcome's.
FIELDS = (
    "kind", "text", "path", "range", "query", "command", "success", "exit_code", "tool",
    "tool_use_id", "parent_tool_use_id", "name", "reason", "source", "stream", "line", "raw",
    "items", "change", "error",
)
OUTCOME_FIELDS = ("kind", "session_id", "status", "final_output", "structured_output", "metrics", "counts")


def assert_matches(expected: list[dict[str, Any]], actual: list[dict[str, Any]], name: str) -> None:
    """With the Rust kit's rules: every field it compares exactly; an `error`'s or a `stream`
    warning's message exactly, a `stderr` or `non_json` warning's message containing the
    expected text; the outcome's fields."""
    assert len(actual) == len(expected), f"{name}: {len(actual)} rows, expected {len(expected)}"
    *events, outcome = zip(expected, actual)
    for i, (want, got) in enumerate(events, 1):
        for field in FIELDS:
            assert got.get(field) == want.get(field), f"{name} event {i} field {field}"
        if want["kind"] == "error" or (want["kind"] == "warning" and want["source"] == "stream"):
            assert got["message"] == want["message"], f"{name} event {i}"
        elif want["kind"] == "warning":
            if want["source"] in ("stderr", "non_json"):
                assert want["message"] in got["message"], f"{name} event {i}"
            assert isinstance(got["message"], str)
    want, got = outcome
    for field in OUTCOME_FIELDS:
        assert got.get(field) == want.get(field), f"{name} outcome field {field}"


def normalize_fixture(
    stream: Path, backend: str, cwd: str | None, chunk: int, with_stderr: bool = True
) -> list[dict[str, Any]]:
    normalizer = hn.Normalizer(backend, cwd=cwd)
    data = stream.read_bytes()
    events: list[hn.Event] = []
    for start in range(0, len(data), chunk):
        events += normalizer.push(data[start : start + chunk])
    if with_stderr and (stderr := stderr_path(stream)) is not None:
        for line in stderr.read_text().splitlines():
            events += normalizer.push_stderr(line)
    last, outcome = normalizer.finish()
    return rows_of(events + last, outcome)


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_every_recording_gives_its_expected_events_through_the_normalizer(folder: str) -> None:
    """Every recorded stream, pushed in 97-byte chunks then its stderr, gives exactly the
    events and outcome of its expected file (S1, S4, S10, O1) as typed objects' `to_dict()`."""
    backend, count, cwd = FOLDERS[folder]
    found = streams(folder)
    assert len(found) == count
    for stream in found:
        assert_matches(expected_rows(stream), normalize_fixture(stream, backend, cwd, 97), stream.name)


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_normalize_reads_each_recording_as_the_normalizer_does(folder: str) -> None:
    """`normalize(path)` gives, for every recording's standard output, exactly what the
    incremental normalizer gives for the same bytes (and the expected events when the
    recording has no standard error)."""
    backend, _, cwd = FOLDERS[folder]
    for stream in streams(folder):
        events = hn.normalize(stream, backend, cwd=cwd)
        assert events.outcome is None
        items = list(events)
        assert events.outcome is not None
        rows = rows_of(items, events.outcome)
        assert rows == normalize_fixture(stream, backend, cwd, 4096, with_stderr=False), stream.name
        if stderr_path(stream) is None:
            assert_matches(expected_rows(stream), rows, stream.name)


# One recording of each backend whose folder the count checks above leave out while its corpus
# grows: the backend's name, the recording, the working directory its expected file was
# normalized with.
ONE_RECORDING = [
    ("qwen", FIXTURES / "qwen" / "a_plain_text.jsonl", "/home/qwen/project"),
    ("copilot", FIXTURES / "copilot" / "a_plain_text.jsonl", "/home/copilot/project"),
]


@pytest.mark.parametrize("backend,stream,cwd", ONE_RECORDING, ids=[b for b, _, _ in ONE_RECORDING])
def test_a_recording_of_each_newer_backend_gives_its_expected_events(backend: str, stream: Path, cwd: str) -> None:
    """The backend's name is accepted, and both the incremental normalizer and
    `normalize(path)` give exactly the recording's hand-reviewed expected events."""
    assert backend in hn.backends()
    expected = expected_rows(stream)
    assert normalize_fixture(stream, backend, cwd, 97) == expected
    events = hn.normalize(stream, backend, cwd=cwd)
    items = list(events)
    assert events.outcome is not None
    assert rows_of(items, events.outcome) == expected


def test_chunks_of_any_size_give_the_same_events() -> None:
    """S1: one byte at a time, or the whole stream at once, gives the same events."""
    stream = FIXTURES / "claude" / "c_read.jsonl"
    whole = normalize_fixture(stream, "claude", None, 1 << 30)
    assert normalize_fixture(stream, "claude", None, 1) == whole
    assert whole == expected_rows(stream)


def test_events_are_typed_dataclasses() -> None:
    """J1-J5, J8: each kind is its own class with the schema's fields; `unknown` keeps `raw`
    whole, as `json.loads` gives it."""
    normalizer = hn.Normalizer("claude", cwd="/repo")
    events = normalizer.push(
        b'{"type":"system","subtype":"init","cwd":"/repo","session_id":"s1"}\n'
        b'{"type":"assistant","message":{"id":"m1","content":[{"type":"text","text":"Reading."},'
        b'{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"src/a.rs","offset":3,"limit":2}}]}}\n'
        b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}\n'
        b'{"type":"mystery","n":[1,2.5,null,true]}\n'
    )
    assert events == [
        hn.AgentEvent(text="Reading.", line=2),
        hn.ReadEvent(
            path="/repo/src/a.rs",
            success=True,
            range=hn.LineRange(start=3, end=4),
            tool="Read",
            tool_use_id="t1",
            line=3,
        ),
        hn.UnknownEvent(
            reason="unknown_type",
            raw={"type": "mystery", "n": [1, 2.5, None, True]},
            line=4,
        ),
    ]
    assert isinstance(events[2].raw["n"][1], float)
    assert events[1].kind == "read"
    assert events[1].to_dict() == {
        "kind": "read",
        "path": "/repo/src/a.rs",
        "range": {"start": 3, "end": 4},
        "success": True,
        "tool": "Read",
        "tool_use_id": "t1",
        "line": 3,
    }
    assert normalizer.session_id == "s1"
    last, outcome = normalizer.finish()
    assert last == [hn.ErrorEvent(message="stream ended without a result")]  # S9
    assert outcome == hn.Outcome(
        session_id="s1",
        status="incomplete",
        metrics=hn.Metrics(),
        counts={"agent": 1, "read": 1, "unknown": 1, "error": 1},
    )


def test_lines_and_stderr_lines() -> None:
    """S2, S4: a non-JSON line is a `non_json` warning, a stderr line a `stderr` warning; a
    trailing newline on a line is allowed, and str or bytes both work."""
    normalizer = hn.Normalizer("codex")
    assert normalizer.push_line("not json\n") == [
        hn.WarningEvent(source="non_json", message=normalizer_message("not json"), line=1)
    ]
    assert normalizer.push_stderr(b"boom") == [
        hn.WarningEvent(source="stderr", message="boom", stream="stderr", line=1)
    ]


def normalizer_message(line: str) -> str:
    """The S2 warning's message for a non-JSON line, as the Rust library words it."""
    normalizer = hn.Normalizer("codex")
    (warning,) = normalizer.push_line(line)
    assert isinstance(warning, hn.WarningEvent)
    assert line in warning.message
    return warning.message


def test_finish_twice_gives_no_events_and_the_same_outcome() -> None:
    """S9: a last line without a newline is read at the end; finishing again repeats the
    outcome and ignores later input."""
    normalizer = hn.Normalizer("claude")
    assert normalizer.push(b'{"type":"result","subtype":"success","is_error":false,"result":"ok"}') == []
    events, outcome = normalizer.finish()
    assert events == []
    assert (outcome.status, outcome.final_output) == ("success", "ok")
    assert normalizer.push(b'{"type":"mystery"}\n') == []
    assert normalizer.finish() == ([], outcome)


def test_bad_calls_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r'unknown backend "nope"; known backends: claude, codex, opencode, gemini'):
        hn.Normalizer("nope")
    normalizer = hn.Normalizer("claude")
    with pytest.raises(ValueError, match="a line holds no newline inside it"):
        normalizer.push_line("{}\n{}")
    normalizer.push(b"{")
    with pytest.raises(ValueError, match="push\\(\\) left a partial line"):
        normalizer.push_line("{}")
    assert normalizer.push(b"}\n") == [
        hn.UnknownEvent(reason="not_an_event", raw={}, line=1)
    ]
    assert normalizer.push_line("{}") == [hn.UnknownEvent(reason="not_an_event", raw={}, line=2)]
    with pytest.raises(FileNotFoundError):
        hn.normalize(FIXTURES / "no-such-file.jsonl", "claude")


def test_normalize_yields_events_before_the_file_ends(tmp_path: Path) -> None:
    """S6: `normalize` streams: from a FIFO, the first event comes out while the writer still
    holds the rest of the stream back, so the file is never read whole first."""
    fifo = tmp_path / "stream.jsonl"
    os.mkfifo(fifo)
    release = threading.Event()

    def write() -> None:
        with open(fifo, "wb") as out:
            out.write(b'{"type":"mystery","n":1}\n')
            out.flush()
            release.wait(10)
            out.write(b'{"type":"mystery","n":2}\n')

    writer = threading.Thread(target=write)
    writer.start()
    try:
        events = hn.normalize(fifo, "claude")
        first = next(iter(events))
        assert first == hn.UnknownEvent(reason="unknown_type", raw={"type": "mystery", "n": 1}, line=1)
        assert events.outcome is None
        release.set()
        rest = list(events)
        assert rest == [
            hn.UnknownEvent(reason="unknown_type", raw={"type": "mystery", "n": 2}, line=2),
            hn.ErrorEvent(message="stream ended without a result"),  # S9
        ]
        assert events.outcome is not None
        assert events.outcome.counts == {"unknown": 2, "error": 1}
    finally:
        release.set()
        writer.join()


def test_classify_a_script_and_an_argv() -> None:
    """B1a: the parts exactly as `harness classify` prints them."""
    assert hn.classify("cd src && rg -n foo lib.rs | head") == [
        {"type": "search", "cmd": "rg -n foo lib.rs", "query": "foo", "path": "lib.rs"}
    ]
    assert hn.classify(["ls", "-la", "docs"]) == [{"type": "list_files", "cmd": "ls -la docs", "path": "docs"}]
    assert hn.classify("make build") == [{"type": "unknown", "cmd": "make build"}]
    with pytest.raises(ValueError, match="expected a script"):
        hn.classify(42)  # type: ignore[arg-type]


def test_the_backends_of_this_build() -> None:
    assert hn.backends() == ["claude", "codex", "opencode", "gemini", "pi", "qwen", "copilot", "acp"]


def test_the_generated_module_matches_the_schema() -> None:
    """The dataclasses are generated from `harness schema`, never hand-edited: regenerating
    them from the schema this build carries gives the committed file byte for byte."""
    import importlib.util

    from harness_agents import _events, _native

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("gen_events", root / "gen_events.py")
    assert spec is not None and spec.loader is not None
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    generated = gen.render(json.loads(_native.schema()))
    assert generated == (root / "python" / "harness_agents" / "_events.py").read_text()
    assert Path(_events.__file__).read_text() == generated


def test_the_docstring_examples_run() -> None:
    import doctest

    result = doctest.testmod(hn, raise_on_error=False)
    assert result.attempted == 1
    assert result.failed == 0
