"""Shared paths and helpers of the pytest suite: the repository's recorded fixtures and fake
agents (`fixtures/`), never a real agent or the network."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
FAKE_AGENT = FIXTURES / "fake-agent"

# Each fixture folder: its backend, the stream count it must hold, and the working directory
# its recordings were normalized with (the Rust golden tests use the same).
FOLDERS = {
    "claude": ("claude", 49, None),
    "claude-2.1.197": ("claude", 47, None),
    "claude-edges": ("claude", 9, None),
    "codex": ("codex", 51, "/home/dev2/project"),
    "codex-0.163.0": ("codex", 50, "/home/dev2/project"),
    "codex-edges": ("codex", 2, "/home/dev2/project"),
    "opencode": ("opencode", 46, "/home/oc/project"),
    "gemini": ("gemini", 40, "/home/gemini/project"),
    "pi": ("pi", 32, "/home/pi/project"),
    # ACP transcripts name their directory themselves (A2).
    "acp": ("acp", 34, None),
}


def streams(folder: str) -> list[Path]:
    """The recorded streams of a folder that have an expected file, sorted by name."""
    return sorted(
        p
        for p in (FIXTURES / folder).glob("*.jsonl")
        if not p.name.endswith(".expected.jsonl") and expected_path(p).exists()
    )


def expected_path(stream: Path) -> Path:
    return stream.with_name(stream.name.removesuffix(".jsonl") + ".expected.jsonl")


def stderr_path(stream: Path) -> Path | None:
    path = stream.with_suffix(".stderr")
    return path if path.exists() and path.stat().st_size > 0 else None


def expected_rows(stream: Path) -> list[dict[str, Any]]:
    text = expected_path(stream).read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def gone(pid: int, within: float = 10.0) -> bool:
    """Whether process `pid` is gone (not running, not a zombie) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.02)
    return False


def wait_for_file(path: Path, within: float = 10.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists():
            return path.read_text()
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")
