"""Sessions against the fake Claude Code session agent (`fixtures/fake-agent/claude-session`,
whose header says what each prompt makes it do): turns, permission answers, interrupts, the
end, and the agent's death on close, drop and cancel. Every session is bounded: each turn by
`timeout`, so a test fails instead of hanging."""

from __future__ import annotations

import asyncio
import gc
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import harness_agents as hn
from conftest import FAKE_AGENT, gone, wait_for_file

AGENT = FAKE_AGENT / "claude-session"
SID = "5e55a0e0-0000-4000-8000-000000000001"
TURN_LIMIT = 30.0


def open_session(tmp_path: Path, **options: Any) -> hn.Session:
    """A session with the fake agent, which writes its pid to `tmp_path / "pid"` and every line
    it reads to `tmp_path / "log"`."""
    env = {"FAKE_PID": str(tmp_path / "pid"), "FAKE_LOG": str(tmp_path / "log"), **options.pop("env", {})}
    return hn.session(binary=AGENT, cwd=tmp_path, timeout=TURN_LIMIT, env=env, **options)


def agent_pid(tmp_path: Path) -> int:
    return int(wait_for_file(tmp_path / "pid"))


def wait_for_prompt(tmp_path: Path, within: float = 10.0) -> None:
    """Waits until the fake agent has read a prompt, so that its turn runs. Claude Code's text
    is an event only once its message is complete (at the message's next line), so a turn that
    hangs shows nothing before it ends: the agent's own log says when it runs."""
    log = tmp_path / "log"
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if log.exists() and '"type":"user"' in log.read_text():
            return
        time.sleep(0.02)
    raise AssertionError("the agent never read the prompt")


def metrics(turn: int, cost: bool = True) -> dict[str, Any]:
    """The fake's figures after `turn` turns: Claude Code reports them for the session so far."""
    if not cost:
        return {"num_turns": turn, "cumulative": True}
    return {
        "input_tokens": 10,
        "output_tokens": 5,
        "total_cost_usd": 0.01,
        "duration_ms": 10 * turn,
        "num_turns": turn,
        "cumulative": True,
    }


def turn_end(turn: int, answer: str, counts: dict[str, int]) -> dict[str, Any]:
    return {
        "kind": "outcome",
        "session_id": SID,
        "status": "success",
        "final_output": answer,
        "metrics": metrics(turn),
        "counts": counts,
        "turn": turn,
    }


def permission(turn: int, line: int) -> dict[str, Any]:
    return {
        "kind": "permission",
        "id": f"perm-{turn}",
        "options": ["allow", "allow_always", "deny"],
        "command": "touch made.txt",
        "expect": [{"kind": "command"}],
        "input": {"command": "touch made.txt"},
        "tool": "Bash",
        "tool_use_id": f"toolu_{turn}",
        "line": line,
    }


def test_two_turns_then_the_end_of_input_ends_the_session(tmp_path: Path) -> None:
    """I2, I3: prompts sent at once run one after the other, each turn ends with its outcome,
    and the end of input ends the session once they have run."""
    with open_session(tmp_path) as session:
        session.prompt("plain")
        session.prompt("plain")
        session.end_input()
        items = [item.to_dict() for item in session]
    assert items == [
        {"kind": "agent", "text": "plain 1", "line": 2},
        turn_end(1, "plain 1", {"agent": 1}),
        {"kind": "agent", "text": "plain 2", "line": 5},
        turn_end(2, "plain 2", {"agent": 1}),
    ]
    assert session.end is not None
    assert session.end.reason == "caller"
    assert session.end.outcome.exit_code == 0
    assert session.end.outcome.counts == {"agent": 2}
    assert session.end.outcome.session_id == SID
    assert gone(agent_pid(tmp_path))
    assert list(session) == []


def test_a_permission_allowed_and_one_denied_with_a_message(tmp_path: Path) -> None:
    """I4: each request is a `PermissionEvent` the session waits on; an allow runs the tool, a
    deny's message reaches the agent as the tool's failure."""
    session = open_session(tmp_path)
    session.prompt("ask")
    items: list[dict[str, Any]] = []
    for item in session:
        items.append(item.to_dict())
        if isinstance(item, hn.PermissionEvent) and item.id == "perm-1":
            session.answer(item.id, "allow")
        elif isinstance(item, hn.PermissionEvent):
            session.answer(item.id, "deny", "not now")
        elif isinstance(item, hn.Outcome) and item.turn == 1:
            session.prompt("ask")
        elif isinstance(item, hn.Outcome):
            # Not before: once the input has ended, nobody is left to answer a request, and
            # the session denies it itself.
            session.end_input()
    assert items == [
        permission(1, 3),
        {"kind": "command", "command": "touch made.txt", "success": True, "tool": "Bash", "tool_use_id": "toolu_1", "line": 4},
        {"kind": "agent", "text": "made it", "line": 5},
        turn_end(1, "made it", {"agent": 1, "command": 1, "permission": 1}),
        permission(2, 9),
        {
            "kind": "command",
            "command": "touch made.txt",
            "success": False,
            "error": "not now",
            "tool": "Bash",
            "tool_use_id": "toolu_2",
            "line": 10,
        },
        {"kind": "agent", "text": "denied", "line": 11},
        turn_end(2, "denied", {"agent": 1, "command": 1, "permission": 1}),
    ]
    assert session.end is not None and session.end.reason == "caller"


def test_an_interrupt_ends_the_turn_interrupted_and_the_session_goes_on(tmp_path: Path) -> None:
    """I2, I3: the interrupt goes through the agent's protocol; that turn ends `interrupted`,
    and the next prompt is answered in the same session."""
    with open_session(tmp_path) as session:
        session.prompt("hang")
        wait_for_prompt(tmp_path)
        session.interrupt()
        items: list[dict[str, Any]] = []
        for item in session:
            items.append(item.to_dict())
            if isinstance(item, hn.Outcome) and item.turn == 1:
                session.prompt("plain")
                session.end_input()
    assert items == [
        {"kind": "agent", "text": "working", "line": 2},
        {"kind": "error", "message": "error_during_execution", "line": 4},
        {
            "kind": "outcome",
            "session_id": SID,
            "status": "interrupted",
            "metrics": metrics(1, cost=False),
            "counts": {"agent": 1, "error": 1},
            "turn": 1,
        },
        {"kind": "agent", "text": "plain 2", "line": 6},
        {**turn_end(2, "plain 2", {"agent": 1}), "metrics": metrics(1) | {"num_turns": 2}},
    ]
    assert session.end is not None and session.end.reason == "caller"


def test_close_interrupts_the_running_turn_and_ends_the_session(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    session.prompt("hang")
    wait_for_prompt(tmp_path)
    session.close()
    rest = [item.to_dict() for item in session]
    assert rest == [
        {"kind": "agent", "text": "working", "line": 2},
        {"kind": "error", "message": "error_during_execution", "line": 4},
        {
            "kind": "outcome",
            "session_id": SID,
            "status": "interrupted",
            "metrics": metrics(1, cost=False),
            "counts": {"agent": 1, "error": 1},
            "turn": 1,
        },
    ]
    assert session.end is not None and session.end.reason == "caller"
    assert gone(agent_pid(tmp_path))
    # Commands to an ended session do nothing.
    session.prompt("plain")
    assert list(session) == []


def test_an_agent_that_dies_ends_the_session(tmp_path: Path) -> None:
    """I6: the turn ends `error` with an event naming the exit, and so does the session."""
    session = open_session(tmp_path)
    session.prompt("die")
    items = list(session)
    assert isinstance(items[-1], hn.Outcome)
    assert (items[-1].turn, items[-1].status) == (1, "error")
    # The agent's last words first, then the error naming its exit.
    assert [item.to_dict() for item in items[:-1]] == [
        {"kind": "agent", "text": "dying", "line": 2},
        {"kind": "error", "message": "stream ended without a result"},
        {"kind": "error", "message": "the agent exited with status 3 during turn 1; the session has ended"},
    ]
    assert session.end is not None
    assert session.end.reason == "agent_exited"
    assert session.end.outcome.exit_code == 3


def test_leaving_a_with_block_early_closes_the_session_and_stops_the_agent(tmp_path: Path) -> None:
    with open_session(tmp_path) as session:
        session.prompt("ask")
        for item in session:
            assert item.to_dict() == permission(1, 3)
            break
    assert session.end is not None and session.end.reason == "caller"
    assert gone(agent_pid(tmp_path))


def test_dropping_a_session_kills_the_agent(tmp_path: Path) -> None:
    session = open_session(tmp_path)
    session.prompt("ask")
    assert next(session).to_dict() == permission(1, 3)
    pid = agent_pid(tmp_path)
    del session
    gc.collect()
    assert gone(pid)


def test_a_silent_turn_past_the_idle_timeout_ends_the_session(tmp_path: Path) -> None:
    """I6: the turn ends `error` with an event saying so; the agent, which ignores the
    interrupt, is killed."""
    session = open_session(tmp_path, idle_timeout=0.5)
    session.prompt("ignore")
    items = [item.to_dict() for item in session]
    assert items == [
        {"kind": "error", "message": "the agent was silent for 0.5 seconds during the turn; the session is closed"},
        {"kind": "agent", "text": "not listening", "line": 2},
        {"kind": "error", "message": "stream ended without a result"},
        {
            "kind": "outcome",
            "session_id": SID,
            "status": "error",
            "metrics": {"cumulative": True},
            "counts": {"agent": 1, "error": 2},
            "turn": 1,
        },
    ]
    assert session.end is not None and session.end.reason == "timed_out"
    assert gone(agent_pid(tmp_path))


def test_the_options_reach_the_agent(tmp_path: Path) -> None:
    """I5: `resume` continues a stored session through Claude Code's own `--resume`."""
    argv = tmp_path / "argv"
    with open_session(tmp_path, resume="abc-123", model="opus", env={"FAKE_ARGV": str(argv)}) as session:
        session.prompt("plain")
        session.end_input()
        assert [item.kind for item in session] == ["agent", "outcome"]
    args = argv.read_text().splitlines()
    assert "--resume=abc-123" in args and "--model=opus" in args
    assert "--permission-prompt-tool" in args


def test_an_async_session_yields_the_same_items(tmp_path: Path) -> None:
    async def main() -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        async with hn.async_session(binary=AGENT, timeout=TURN_LIMIT) as session:
            session.prompt("ask")
            async for item in session:
                items.append(item.to_dict())
                if isinstance(item, hn.PermissionEvent):
                    session.answer(item.id, "allow")
                elif isinstance(item, hn.Outcome):
                    session.end_input()
        assert session.end is not None and session.end.reason == "caller"
        return items

    assert asyncio.run(main()) == [
        permission(1, 3),
        {"kind": "command", "command": "touch made.txt", "success": True, "tool": "Bash", "tool_use_id": "toolu_1", "line": 4},
        {"kind": "agent", "text": "made it", "line": 5},
        turn_end(1, "made it", {"agent": 1, "command": 1, "permission": 1}),
    ]


def test_cancelling_an_async_session_kills_the_agent(tmp_path: Path) -> None:
    async def main() -> None:
        session = hn.async_session(binary=AGENT, timeout=TURN_LIMIT, env={"FAKE_PID": str(tmp_path / "pid")})
        session.prompt("ignore")

        async def consume() -> None:
            async for _ in session:
                pass

        task = asyncio.create_task(consume())
        pid = agent_pid(tmp_path)
        await asyncio.sleep(0.2)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # `session` is still referenced here: the cancellation itself killed the agent.
        assert gone(pid)
        assert [item async for item in session] == []
        assert session.end is None

    asyncio.run(main())


def test_a_pi_session_runs_its_prompts_through_pi_rpc(tmp_path: Path) -> None:
    """PR1, PR2: Pi's sessions go through `pi --mode rpc` (the fake `pi-rpc`)."""
    env = {"FAKE_PID": str(tmp_path / "pid")}
    with hn.session("pi", binary=FAKE_AGENT / "pi-rpc", cwd=tmp_path, timeout=TURN_LIMIT, env=env) as session:
        session.prompt("plain")
        session.end_input()
        items = [item.to_dict() for item in session]
    assert items[0] == {"kind": "agent", "text": "plain 1", "line": 5}
    assert len(items) == 2
    assert session.end is not None
    assert session.end.outcome.session_id == "019b0000-0000-7000-8000-000000000001"
    assert gone(agent_pid(tmp_path))


def test_a_session_that_cannot_start_is_a_run_error(tmp_path: Path) -> None:
    missing = tmp_path / "claude"
    with pytest.raises(hn.RunError, match=f"^{missing} does not exist$"):
        hn.session(binary=missing)
    with pytest.raises(ValueError, match="idle_timeout must be a finite number of seconds"):
        hn.session(binary=AGENT, idle_timeout=-1)
    with pytest.raises(ValueError, match="unknown backend"):
        hn.session("nobody")


def test_an_unknown_decision_is_a_value_error(tmp_path: Path) -> None:
    with open_session(tmp_path) as session:
        with pytest.raises(ValueError, match='unknown decision "maybe"'):
            session.answer("perm-1", "maybe")  # type: ignore[arg-type]
        session.end_input()


def test_ctrl_c_in_a_sync_loop_kills_the_agent(tmp_path: Path) -> None:
    """SIGINT while a `for` loop waits on a silent turn raises KeyboardInterrupt in the loop,
    and the agent dies at once, though the object is still referenced."""
    pid_file = tmp_path / "pid"
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        import harness_agents as hn
        session = hn.session(binary={str(AGENT)!r}, timeout=30, env={{"FAKE_PID": {str(pid_file)!r}}})
        session.prompt("ignore")
        try:
            for item in session:
                pass
        except KeyboardInterrupt:
            agent = Path({str(pid_file)!r}).read_text().strip()
            deadline = time.monotonic() + 10
            while Path("/proc", agent).exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            print("interrupted", "gone" if not Path("/proc", agent).exists() else "alive", flush=True)
        """
    )
    python = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    pid = agent_pid(tmp_path)
    time.sleep(0.2)  # the loop waits for the silent turn
    python.send_signal(signal.SIGINT)
    out, _ = python.communicate(timeout=30)
    assert out == "interrupted gone\n"
    assert python.returncode == 0
    assert gone(pid)
