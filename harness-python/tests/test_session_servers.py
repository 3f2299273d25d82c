"""Sessions through an agent's own channel, against its fake in `fixtures/fake-agent/` (the
fakes the npm tests use): Codex's `codex app-server`, opencode's `opencode serve` (HTTP and its
event stream) and Gemini CLI's ACP mode, each a two-turn session with a permission allowed;
Pi's `pi --mode rpc`, a failed request Pi retries then a plain turn. Each item is compared, and
the agent is gone after the end. Every turn is bounded by `timeout`, so a test fails instead of
hanging."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import harness_agents as hn
import pytest
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


def permission(id: str, tool: str, tool_use_id: str, line: int, input: dict[str, Any]) -> dict[str, Any]:
    """The `ask` turn's permission request, as each fake asks it."""
    return {
        "kind": "permission",
        "id": id,
        "options": ["allow", "allow_always", "deny"],
        "command": "touch made.txt",
        "expect": [{"kind": "command"}],
        "input": input,
        "tool": tool,
        "tool_use_id": tool_use_id,
        "line": line,
    }


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


def test_an_opencode_serve_session_with_a_permission_allowed(tmp_path: Path) -> None:
    """opencode through `opencode serve` (docs/opencode-serve.md, PS rules)."""
    session = hn.session(
        "opencode",
        binary=FAKE_AGENT / "opencode-serve",
        cwd=tmp_path,
        timeout=TURN_LIMIT,
        env={"FAKE_PID": str(tmp_path / "pid")},
    )
    items = two_turns(session)

    def steps(n: int) -> dict[str, Any]:
        # PS14: each turn's own steps (two in the first, one in the second), not cumulative.
        return {
            "input_tokens": 10 * n,
            "output_tokens": 5 * n,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "reasoning_output_tokens": 0,
            "total_cost_usd": 0.001 * n,
            "num_turns": n,
        }

    assert items == [
        permission("per_1", "bash", "call_1", 5, {"command": "touch made.txt"}),
        {
            "kind": "command",
            "command": "touch made.txt",
            "success": True,
            "exit_code": 0,
            "tool": "bash",
            "tool_use_id": "call_1",
            "line": 8,
        },
        {"kind": "agent", "text": "done 1", "line": 14},
        {
            "kind": "outcome",
            "counts": {"agent": 1, "command": 1, "permission": 1},
            "metrics": steps(2),
            "status": "success",
            "final_output": "done 1",
            "session_id": "ses_fake",
            "turn": 1,
        },
        {"kind": "agent", "text": "plain 2", "line": 24},
        {
            "kind": "outcome",
            "counts": {"agent": 1},
            "metrics": steps(1),
            "status": "success",
            "final_output": "plain 2",
            "session_id": "ses_fake",
            "turn": 2,
        },
    ]
    assert session.end is not None
    assert session.end.reason == "caller"
    assert session.end.outcome.counts == {"agent": 2, "command": 1, "permission": 1}
    assert gone(int(wait_for_file(tmp_path / "pid")))


def test_a_gemini_acp_session_with_a_permission_allowed(tmp_path: Path) -> None:
    """Gemini CLI through its ACP mode (docs/acp.md), an agent that advertises no resume."""
    session = hn.session(
        "gemini",
        binary=FAKE_AGENT / "acp-session",
        cwd=tmp_path,
        timeout=TURN_LIMIT,
        env={"FAKE_PID": str(tmp_path / "pid"), "FAKE_CAPS": "none"},
    )
    items = two_turns(session)
    assert items == [
        permission("1", "execute", "c1", 6, {"command": "touch made.txt"}),
        {
            "kind": "command",
            "command": "touch made.txt",
            "success": True,
            "tool": "execute",
            "tool_use_id": "c1",
            "line": 8,
        },
        {"kind": "agent", "text": "made it", "line": 9},
        {
            "kind": "outcome",
            "counts": {"agent": 1, "command": 1, "permission": 1},
            "metrics": {"cumulative": True, "num_turns": 1},
            "status": "success",
            "final_output": "made it",
            "session_id": "s1",
            "turn": 1,
        },
        {"kind": "agent", "text": "plain 2", "line": 12},
        {
            "kind": "outcome",
            "counts": {"agent": 1},
            "metrics": {"cumulative": True, "num_turns": 2},
            "status": "success",
            "final_output": "plain 2",
            "session_id": "s1",
            "turn": 2,
        },
    ]
    assert session.end is not None
    assert session.end.reason == "caller"
    assert session.end.outcome.counts == {"agent": 2, "command": 1, "permission": 1}
    assert gone(int(wait_for_file(tmp_path / "pid")))


def test_a_pi_rpc_session_with_a_retried_request_then_a_plain_turn(tmp_path: Path) -> None:
    """Pi through `pi --mode rpc` (docs/pi.md, PR rules): turn 1's request fails with a 500,
    the harness's probe (PR3) finds Pi retrying, and the retry's answer ends the turn; turn 2
    continues the same process."""
    session = hn.session(
        "pi",
        binary=FAKE_AGENT / "pi-rpc",
        cwd=tmp_path,
        timeout=TURN_LIMIT,
        env={"FAKE_PID": str(tmp_path / "pid"), "FAKE_LOG": str(tmp_path / "log")},
    )
    session.prompt("retry")
    items: list[dict[str, Any]] = []
    for item in session:
        items.append(item.to_dict())
        if isinstance(item, hn.Outcome) and item.turn == 1:
            session.prompt("plain")
        elif isinstance(item, hn.Outcome):
            session.end_input()
    sid = "019b0000-0000-7000-8000-000000000001"

    def metrics(n: int, turns: int) -> dict[str, Any]:
        # Pi's usage is summed over the session's process (PI11): `cumulative`.
        return {
            "input_tokens": 10 * n,
            "output_tokens": 5 * n,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
            "total_cost_usd": 0.001 * n,
            "num_turns": turns,
            "cumulative": True,
        }

    assert items == [
        {"kind": "error", "message": '500 {"type":"error"}', "line": 5},
        {
            "kind": "warning",
            "message": "retrying the failed model request (1 of 3) in 2000 ms: 500",
            "source": "stream",
            "line": 8,
        },
        {"kind": "agent", "text": "retried 1", "line": 11},
        {
            "kind": "outcome",
            "counts": {"agent": 1, "warning": 1, "error": 1},
            "metrics": metrics(1, 2),
            "status": "success",
            "final_output": "retried 1",
            "session_id": sid,
            "turn": 1,
        },
        {"kind": "agent", "text": "plain 2", "line": 18},
        {
            "kind": "outcome",
            "counts": {"agent": 1},
            "metrics": metrics(2, 3),
            "status": "success",
            "final_output": "plain 2",
            "session_id": sid,
            "turn": 2,
        },
    ]
    # The session asks for its id as it opens (PR7); the failed request is probed once.
    assert [json.loads(line) for line in (tmp_path / "log").read_text().splitlines()] == [
        {"id": "harness-state-1", "type": "get_state"},
        {"id": "harness-prompt-2", "message": "retry", "type": "prompt"},
        {"id": "harness-probe-3", "type": "get_state"},
        {"id": "harness-prompt-4", "message": "plain", "type": "prompt"},
    ]
    assert session.end is not None
    assert session.end.reason == "caller"
    assert session.end.outcome.counts == {"agent": 2, "warning": 1, "error": 1}
    assert gone(int(wait_for_file(tmp_path / "pid")))


@pytest.mark.parametrize(
    ("backend", "fake", "env", "named"),
    [
        ("codex", "codex-app-server", {}, "th-new"),
        ("opencode", "opencode-serve", {}, "ses_fake"),
        ("gemini", "acp-session", {"FAKE_CAPS": "none"}, "s1"),
        ("pi", "pi-rpc", {}, "019b0000-0000-7000-8000-000000000001"),
    ],
)
def test_i8_the_agents_own_session_id_is_known_before_any_prompt(
    tmp_path: Path, backend: str, fake: str, env: dict[str, str], named: str
) -> None:
    """I8: each session names the agent's own id as it opens; nothing is prompted here."""
    env = {"FAKE_PID": str(tmp_path / "pid"), **env}
    session = hn.session(backend, binary=FAKE_AGENT / fake, cwd=tmp_path, timeout=TURN_LIMIT, env=env)
    assert session.wait_session_id(TURN_LIMIT) == named
    assert session.session_id == named
    session.end_input()
    assert list(session) == []
    assert session.end is not None
    assert session.end.reason == "caller"
    assert gone(int(wait_for_file(tmp_path / "pid")))


def test_i8_waiting_for_an_id_ends_with_none_when_the_time_runs_out(tmp_path: Path) -> None:
    """Claude Code given no id names one with its first turn's `init` (CS11): with no prompt,
    a bounded wait ends without one, and the session goes on."""
    env = {"FAKE_PID": str(tmp_path / "pid")}
    session = hn.session("claude", binary=FAKE_AGENT / "claude-session", cwd=tmp_path, timeout=TURN_LIMIT, env=env)
    assert session.session_id is None
    assert session.wait_session_id(0.2) is None
    session.close()
    list(session)
    assert session.end is not None
