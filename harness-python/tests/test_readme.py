"""The README's examples run as written: the first prints what its comment says, the session
example what the README shows, against the fake session agent."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
SESSION_AGENT = Path(__file__).resolve().parents[2] / "fixtures" / "fake-agent" / "claude-session"


def test_the_readme_starts_with_a_five_line_example_that_works() -> None:
    text = README.read_text()
    match = re.search(r"```python\n(.*?)```", text, re.S)
    assert match is not None
    assert text.index("```python") < text.index("\n## "), "the example comes first"
    code = match.group(1)
    assert len(code.splitlines()) == 5
    promised = code.splitlines()[-1].split("# ", 1)[1]
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/")
    assert result.stderr == ""
    assert result.stdout == promised + "\n"


def test_the_session_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """Run as written but for which agent answers: the fake one (`CLAUDE_BIN`), which answers
    each prompt it does not know with a successful turn."""
    text = README.read_text()
    examples = [code for code in re.findall(r"```python\n(.*?)```", text, re.S) if "harness.session(" in code]
    assert len(examples) == 1
    shown = re.search(r"```python\n" + re.escape(examples[0]) + r"```\n\n[^`]*```text\n(.*?)```", text, re.S)
    assert shown is not None, "the session example is followed by what it prints"
    result = subprocess.run(
        [sys.executable, "-c", examples[0]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "CLAUDE_BIN": str(SESSION_AGENT)},
        timeout=60,
    )
    assert result.stderr == ""
    assert result.stdout == shown.group(1) == "turn 1: success\nturn 2: success\ncaller 0\n"
