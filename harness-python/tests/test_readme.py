"""The README's first example runs as written and prints what its comment says."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


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
