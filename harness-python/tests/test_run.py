"""Live runs against the fake agents (`fixtures/fake-agent`): the items, the options, and the
agent's death on close, drop, cancel, Ctrl-C and timeout."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import harness_agents as hn
from conftest import FAKE_AGENT, FIXTURES, expected_rows, gone, wait_for_file

PLAIN = FIXTURES / "claude" / "a_plain_text.jsonl"


def fake(backend: str = "claude") -> Path:
    return FAKE_AGENT / backend


def test_a_sync_run_yields_the_events_then_the_outcome(tmp_path: Path) -> None:
    """O1, S10: the recorded stream's events, then the outcome with the exit code; the prompt
    on standard input, never on the command line; model and permission mode as single words."""
    argv, stdin = tmp_path / "argv", tmp_path / "stdin"
    run = hn.run(
        "claude",
        "-say hello",
        binary=fake(),
        model="-m",
        permission_mode="plan",
        cwd=tmp_path,
        env={"FAKE_STREAM": str(PLAIN), "FAKE_ARGV": str(argv), "FAKE_STDIN": str(stdin)},
    )
    items = list(run)
    rows = [item.to_dict() for item in items]
    expected = expected_rows(PLAIN)
    assert [row["kind"] for row in rows] == [row["kind"] for row in expected] == ["agent", "outcome"]
    assert rows[0] == expected[0]
    assert isinstance(items[-1], hn.Outcome) and run.outcome is items[-1]
    assert run.outcome.exit_code == 0
    assert run.outcome.status == "success"
    assert run.outcome.final_output == expected[-1]["final_output"]
    assert stdin.read_text() == "-say hello"
    args = argv.read_text().splitlines()
    assert "--model=-m" in args and "--permission-mode=plan" in args
    assert "-say hello" not in args
    assert list(run) == []


def test_an_async_run_yields_the_same_items() -> None:
    async def collect() -> list[hn.Item]:
        run = hn.run("claude", "hi", binary=fake(), env={"FAKE_STREAM": str(PLAIN), "FAKE_EXIT": "3"})
        return [item async for item in run]

    items = asyncio.run(collect())
    assert [type(item) for item in items] == [hn.AgentEvent, hn.Outcome]
    outcome = items[-1]
    assert isinstance(outcome, hn.Outcome)
    assert outcome.exit_code == 3
    assert outcome.to_dict()["exit_code"] == 3


def test_events_come_while_the_agent_runs(tmp_path: Path) -> None:
    """S6: the first event arrives while the agent is still held after its first line."""
    go = tmp_path / "go"
    stream = tmp_path / "two.jsonl"
    stream.write_text('{"type":"mystery","n":1}\n{"type":"mystery","n":2}\n')
    with hn.run("claude", "hi", binary=fake(), env={"FAKE_STREAM": str(stream), "FAKE_GO": str(go)}) as run:
        first = next(run)
        assert first == hn.UnknownEvent(reason="unknown_type", raw={"type": "mystery", "n": 1}, line=1)
        go.touch()
        kinds = [item.kind for item in run]
    assert kinds == ["unknown", "error", "outcome"]


def hung_agent(tmp_path: Path, **kwargs: object) -> tuple[hn.Run, int, int]:
    """A run whose agent hangs with a grandchild; its pid and the grandchild's."""
    pids = tmp_path / "pids"
    run = hn.run("claude", "hi", binary=fake(), env={"FAKE_PIDS": str(pids)}, **kwargs)  # type: ignore[arg-type]
    agent, child = (int(pid) for pid in wait_for_file(pids).split())
    return run, agent, child


def test_closing_a_run_kills_the_agent_and_its_process_group(tmp_path: Path) -> None:
    run, agent, child = hung_agent(tmp_path)
    run.close()
    assert gone(agent) and gone(child)
    assert list(run) == []


def test_dropping_a_run_kills_the_agent(tmp_path: Path) -> None:
    forever = tmp_path / "forever"
    run = hn.run("claude", "hi", binary=fake(), env={"FAKE_FOREVER": str(forever)})
    agent = int(wait_for_file(forever))
    assert next(run).kind == "unknown"
    del run
    gc.collect()
    assert gone(agent)


def test_breaking_out_of_a_with_block_kills_the_agent(tmp_path: Path) -> None:
    forever = tmp_path / "forever"
    with hn.run("claude", "hi", binary=fake(), env={"FAKE_FOREVER": str(forever)}) as run:
        agent = int(wait_for_file(forever))
        for item in run:
            assert item.kind == "unknown"
            break
    assert gone(agent)


def test_cancelling_an_async_run_kills_the_agent(tmp_path: Path) -> None:
    """The task waiting on the run is cancelled while the agent is silent: the agent and its
    grandchild die, and the cancellation reaches the caller."""

    async def main() -> None:
        run, agent, child = hung_agent(tmp_path)

        async def consume() -> None:
            async for _ in run:
                pass

        task = asyncio.create_task(consume())
        await asyncio.sleep(0.2)
        assert not task.done()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # `run` is still referenced here: the cancellation itself killed the agent.
        assert gone(agent) and gone(child)
        assert [item async for item in run] == []

    asyncio.run(main())


def test_an_async_with_block_kills_the_agent_on_exit(tmp_path: Path) -> None:
    forever = tmp_path / "forever"

    async def main() -> int:
        async with hn.run("claude", "hi", binary=fake(), env={"FAKE_FOREVER": str(forever)}) as run:
            agent = int(wait_for_file(forever))
            async for item in run:
                assert item.kind == "unknown"
                break
        return agent

    assert gone(asyncio.run(main()))


def test_a_timeout_kills_the_agent_and_the_run_ends_with_its_outcome(tmp_path: Path) -> None:
    """O1, S9: the timeout's error event, the end-of-input error, then the outcome,
    `incomplete` with no terminal line, exit code None (killed by a signal)."""
    run, agent, child = hung_agent(tmp_path, timeout=0.5)
    *events, outcome = list(run)
    assert events == [
        hn.ErrorEvent(message="the run timed out after 0.5 seconds; its process group was killed"),
        hn.ErrorEvent(message="stream ended without a result"),  # S9
    ]
    assert isinstance(outcome, hn.Outcome)
    assert outcome.status == "incomplete"
    assert outcome.exit_code is None
    assert gone(agent) and gone(child)


def test_ctrl_c_in_a_sync_loop_kills_the_agent(tmp_path: Path) -> None:
    """SIGINT while a `for` loop waits on a silent agent raises KeyboardInterrupt in the loop,
    and the agent dies with the run."""
    pids = tmp_path / "pids"
    script = textwrap.dedent(
        f"""
        import time
        from pathlib import Path
        import harness_agents as hn
        run = hn.run("claude", "hi", binary={str(fake())!r}, env={{"FAKE_PIDS": {str(pids)!r}}})
        try:
            for item in run:
                pass
        except KeyboardInterrupt:
            # `run` is still referenced: the interruption itself killed the agent.
            agent = Path({str(pids)!r}).read_text().split()[0]
            deadline = time.monotonic() + 10
            while Path("/proc", agent).exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            print("interrupted", "gone" if not Path("/proc", agent).exists() else "alive", flush=True)
        """
    )
    python = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    agent, child = (int(pid) for pid in wait_for_file(pids).split())
    python.send_signal(signal.SIGINT)
    out, _ = python.communicate(timeout=30)
    assert out == "interrupted gone\n"
    assert python.returncode == 0
    assert gone(agent) and gone(child)


def test_a_missing_binary_is_a_run_error(tmp_path: Path) -> None:
    missing = tmp_path / "claude"
    with pytest.raises(hn.RunError, match=f"^{missing} does not exist$"):
        hn.run("claude", "hi", binary=missing)
    with pytest.raises(hn.RunError, match="cannot run in"):
        hn.run("claude", "hi", binary=fake(), cwd=tmp_path / "nowhere")
    with pytest.raises(ValueError, match="timeout must be a finite number of seconds"):
        hn.run("claude", "hi", binary=fake(), timeout=-1)


def test_every_backend_runs_its_fake_agent() -> None:
    """Each backend's launch starts its agent and normalizes what it prints."""
    streams = {
        "codex": FIXTURES / "codex" / "a_plain_text.jsonl",
        "opencode": next(iter(sorted((FIXTURES / "opencode").glob("*.jsonl")))),
        "gemini": next(iter(sorted((FIXTURES / "gemini").glob("*.jsonl")))),
        "pi": FIXTURES / "pi" / "a_plain_text.jsonl",
        "qwen": FIXTURES / "qwen" / "a_plain_text.jsonl",
        "copilot": FIXTURES / "copilot" / "a_plain_text.jsonl",
    }
    for backend, stream in streams.items():
        items = list(hn.run(backend, "hi", binary=fake(backend), env={"FAKE_STREAM": str(stream)}))
        outcome = items[-1]
        assert isinstance(outcome, hn.Outcome), backend
        assert outcome.exit_code == 0, backend
        assert sum(outcome.counts.values()) == len(items) - 1 - sum(
            1 for item in items if item.kind == "started"
        ), backend


def test_the_fake_agents_exist() -> None:
    for backend in hn.backends():
        assert os.access(fake(backend), os.X_OK), backend


def test_an_acp_run_drives_the_agent_command_it_is_given(tmp_path: Path) -> None:
    """The `acp` backend starts the `agent` command line (A12) in `cwd` and speaks the protocol
    with it: the fake ACP agent's thought, message, read and plan come back as typed events
    (A5-A9), its prompt answer and usage as the outcome (A10)."""
    items = list(hn.run("acp", "hi", cwd=tmp_path, agent=[str(fake("acp"))], env={"FAKE_MODE": "ok"}))
    assert items[:-1] == [
        hn.ReasoningEvent(text="Reading it.", line=6),
        hn.AgentEvent(text="Let me look.", line=8),
        hn.ReadEvent(path=f"{tmp_path}/notes.txt", success=True, tool="read", tool_use_id="r1", line=10),
        hn.PlanEvent(
            items=[hn.PlanItem(completed=True, text="Read"), hn.PlanItem(completed=False, text="Answer")],
            line=11,
        ),
        hn.AgentEvent(text="Done.", line=13),
    ]
    outcome = items[-1]
    assert isinstance(outcome, hn.Outcome)
    assert (outcome.status, outcome.exit_code, outcome.session_id) == ("success", 0, "s1")
    assert (outcome.final_output, outcome.metrics.total_cost_usd) == ("Done.", 0.25)


def test_an_acp_run_without_an_agent_command_is_a_run_error() -> None:
    with pytest.raises(hn.RunError):
        list(hn.run("acp", "hi"))
