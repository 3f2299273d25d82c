"""Sessions through an agent's own server, against its fake in `fixtures/fake-agent/`: a
two-turn session with a permission allowed, each item compared, and the server gone after
the end. Every turn is bounded by `timeout`, so a test fails instead of hanging."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import harness_agents as hn
from conftest import FAKE_AGENT, gone, wait_for_file

TURN_LIMIT = 30.0


def two_turns(session: hn.Session) -> list[dict[str, Any]]:
    """Runs `ask` (its permission allowed) then `plain`, then ends the input."""
    session.prompt("ask")
    items: list[dict[str, Any]] = []
    for item in session:
        items.append(item.to_dict())
        if isinstance(item, hn.PermissionEvent):
            session.answer(item.id, "allow")
        elif isinstance(item, hn.Outcome) and item.turn == 1:
            session.prompt("plain")
        elif isinstance(item, hn.Outcome):
            session.end_input()
    return items


def test_a_codex_app_server_session_with_a_permission_allowed(tmp_path: Path) -> None:
    """Codex through `codex app-server` (docs/codex-app-server.md, XA rules)."""
    env = {"FAKE_PID": str(tmp_path / "pid")}
    session = hn.session(
        "codex",
        binary=FAKE_AGENT / "codex-app-server",
        cwd=tmp_path,
        timeout=TURN_LIMIT,
        env=env,
        permission_mode="untrusted",
    )
    items = two_turns(session)
    request = {
        "command": "/bin/bash -lc 'touch made.txt'",
        "cwd": "/w",
        "itemId": "cmd-1",
        "reason": None,
        "threadId": "th-new",
        "turnId": "turn-1",
    }
    assert items == [
        {
            "kind": "permission",
            "id": "0",
            "options": ["allow", "allow_always", "deny"],
            "command": "touch made.txt",
            "expect": [{"kind": "command"}],
            "input": request,
            "tool": "command_execution",
            "tool_use_id": "cmd-1",
            "line": 8,
        },
        {
            "kind": "command",
            "command": "touch made.txt",
            "success": True,
            "exit_code": 0,
            "tool": "command_execution",
            "tool_use_id": "cmd-1",
            "line": 10,
        },
        {"kind": "agent", "text": "made it", "line": 11},
        {
            "kind": "outcome",
            "counts": {"agent": 1, "command": 1, "permission": 1},
            "metrics": {"cumulative": True, "num_turns": 1},
            "status": "success",
            "final_output": "made it",
            "session_id": "th-new",
            "turn": 1,
        },
        {"kind": "agent", "text": "plain 2", "line": 17},
        {
            "kind": "outcome",
            "counts": {"agent": 1},
            "metrics": {
                "cache_read_input_tokens": 0,
                "cumulative": True,
                "input_tokens": 20,
                "num_turns": 2,
                "output_tokens": 10,
                "reasoning_output_tokens": 0,
            },
            "status": "success",
            "final_output": "plain 2",
            "session_id": "th-new",
            "turn": 2,
        },
    ]
    assert session.end is not None
    assert session.end.reason == "caller"
    assert session.end.outcome.counts == {"agent": 2, "command": 1, "permission": 1}
    assert gone(int(wait_for_file(tmp_path / "pid")))
