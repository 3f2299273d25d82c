#!/usr/bin/env python3
"""Events per second of `harness_normalize.normalize` against the floor a Python user would
otherwise pay: `json.loads` on every line of the same file.

The corpus is the one the Rust benches use (`harness/benches/backends.rs`): the recordings in
`fixtures/claude/` (not the expected files), one after another in name order, repeated until
it holds at least 100 MiB, written to a temporary file. Each side reads that file itself:

- harness: `for event in normalize(path, "claude")`, every event a typed dataclass;
- floor: `for line in file: json.loads(line)` on every non-blank line (a dict per line, no
  normalization at all).

Run it on a release build (`maturin build --release`, then install the wheel):

    python3 harness-python/bench.py [--rounds 3]

Each figure is the best of the rounds (wall time, `time.perf_counter`).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import harness_normalize as hn

CORPUS_BYTES = 100 * 1024 * 1024
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def corpus(folder: str) -> bytes:
    one = bytearray()
    for path in sorted((FIXTURES / folder).glob("*.jsonl")):
        if path.name.endswith(".expected.jsonl"):
            continue
        one += path.read_bytes()
        if not one.endswith(b"\n"):
            one += b"\n"
    repeats = -(-CORPUS_BYTES // len(one))
    return bytes(one) * repeats


def harness_events(path: str) -> int:
    events = hn.normalize(path, "claude")
    count = 0
    for _ in events:
        count += 1
    assert events.outcome is not None
    return count


def floor_lines(path: str) -> int:
    count = 0
    with open(path, "rb") as file:
        for line in file:
            if line.strip():
                json.loads(line)
                count += 1
    return count


def best(rounds: int, work, path: str) -> tuple[float, int]:  # type: ignore[no-untyped-def]
    times = []
    result = 0
    for _ in range(rounds):
        start = time.perf_counter()
        result = work(path)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = corpus("claude")
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as file:
        file.write(data)
        path = file.name
    try:
        mib = len(data) / (1024 * 1024)
        lines = sum(1 for line in data.split(b"\n") if line.strip())
        h_secs, events = best(args.rounds, harness_events, path)
        f_secs, parsed = best(args.rounds, floor_lines, path)
        assert parsed == lines
        print(f"corpus: fixtures/claude repeated to {mib:.1f} MiB, {lines} lines, {events} events")
        print(
            f"harness normalize: {h_secs:.2f} s, {events / h_secs:,.0f} events/s, "
            f"{lines / h_secs:,.0f} lines/s, {mib / h_secs:.0f} MiB/s"
        )
        print(
            f"json.loads floor:  {f_secs:.2f} s, {lines / f_secs:,.0f} lines/s, "
            f"{mib / f_secs:.0f} MiB/s"
        )
        print(f"harness takes {h_secs / f_secs:.2f}x the floor's time")
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
