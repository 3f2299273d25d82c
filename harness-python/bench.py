#!/usr/bin/env python3
"""Events per second of `harness_agents.normalize` against the floor a Python user would
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

import harness_agents as hn

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


def best(rounds: int, work, path: str) -> tuple[float, float, int]:  # type: ignore[no-untyped-def]
    """The best wall time and the best CPU time of the process (less sensitive to other load
    on the machine) over `rounds` runs, and the work's result."""
    walls, cpus = [], []
    result = 0
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), time.process_time()
        result = work(path)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), result


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
        h_wall, h_cpu, events = best(args.rounds, harness_events, path)
        f_wall, f_cpu, parsed = best(args.rounds, floor_lines, path)
        assert parsed == lines
        print(f"corpus: fixtures/claude repeated to {mib:.1f} MiB, {lines} lines, {events} events")
        for name, secs in (("wall", h_wall), ("CPU", h_cpu)):
            print(
                f"harness normalize ({name}): {secs:.3f} s, {events / secs:,.0f} events/s, "
                f"{lines / secs:,.0f} lines/s, {mib / secs:.0f} MiB/s"
            )
        for name, secs in (("wall", f_wall), ("CPU", f_cpu)):
            print(
                f"json.loads floor  ({name}): {secs:.3f} s, {lines / secs:,.0f} lines/s, "
                f"{mib / secs:.0f} MiB/s"
            )
        print(
            f"harness takes {h_wall / f_wall:.2f}x the floor's wall time, "
            f"{h_cpu / f_cpu:.2f}x its CPU time"
        )
    finally:
        os.unlink(path)


if __name__ == "__main__":
    main()
