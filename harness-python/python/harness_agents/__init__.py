"""What coding-agent CLIs print, as one stream of typed events (the `harness` Rust library).

Claude Code, Codex, opencode and Gemini CLI each print their own JSON lines; a *backend* turns
them into the same events (`AgentEvent`, `ReadEvent`, `CommandEvent`, ...) and, at the end, an
`Outcome`. The decoding is the Rust library's, run in this process; the classes are generated
from the schema `harness schema` prints.

- `Normalizer(backend)`: push bytes or lines as they come, get events; `finish()` gives the
  last events and the outcome.
- `normalize(path, backend)`: the events of a recorded stream, read in chunks.
- `classify(script)`: how Codex classifies a shell command.
- `run(backend, prompt, ...)`: a live agent's events as they happen, then its outcome, as a
  sync or async iterator; closing it, cancelling the task or dropping it kills the agent.
- `session(backend, ...)` and `async_session(...)`: one conversation with an agent over
  several turns (SPEC section 8): prompts, interrupts, answers to its permission requests;
  its events and each turn's `Outcome` as they happen, then `.end` says how it ended.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, Union, cast

from . import _native
from ._events import *  # noqa: F403 (the generated classes are the package's vocabulary)
from ._events import Decision, Event, Outcome
from ._events import __all__ as _events_all

__all__ = [
    "AsyncSession",
    "EndReason",
    "Item",
    "Normalizer",
    "Normalized",
    "Run",
    "RunError",
    "Session",
    "SessionEnd",
    "async_session",
    "backends",
    "classify",
    "normalize",
    "run",
    "session",
    *_events_all,
]

RunError = _native.RunError
"""A live run or session could not start: binary missing or not executable, bad working
directory, a backend without sessions."""

Item = Union[Event, Outcome]
"""What a live run yields: events, then the outcome last; what a session yields: events, and
each turn's outcome (its `turn` set)."""

EndReason = Literal["caller", "agent_exited", "timed_out", "stopped"]
"""Why a session ended: the caller closed it or ended its input (`caller`), the agent exited
on its own (`agent_exited`), a turn ran past its `timeout` or was silent past its
`idle_timeout` (`timed_out`), or it was killed (`stopped`)."""

_PathLike = Union[str, "os.PathLike[str]"]


def backends() -> list[str]:
    """The names of the backends this build has (`["claude", "codex", "opencode", "gemini", "pi", "qwen", "copilot", "acp"]`)."""
    return _native.backends()


def classify(command: str | Sequence[str]) -> list[dict[str, Any]]:
    """How Codex classifies a shell command: a script (run as `bash -lc SCRIPT`) or an argv.

    Each part is a dict tagged "type" (`read`, `list_files`, `search`, `unknown`), absent
    values as None, exactly as `harness classify` prints it::

        >>> classify("cat README.md")
        [{'type': 'read', 'cmd': 'cat README.md', 'name': 'README.md', 'path': 'README.md'}]
    """
    return _native.classify(command)


class Normalizer:
    """An incremental normalizer of one stream of a backend's output: no I/O, no threads.

    Push standard output as chunks of any size (`push`) or as lines (`push_line`), standard
    error as lines (`push_stderr`); each call returns the events the input completed. `finish`
    ends the input and returns the end-of-input events and the outcome; input pushed after it
    is ignored.

    Args:
        backend: the backend's name (see `backends()`).
        cwd: the working directory relative paths are resolved against when the stream names
            none.
        workspace: where skills live.
        started: also emit a `StartedEvent` as soon as a tool use is recorded.
    """

    def __init__(
        self,
        backend: str,
        *,
        cwd: str | None = None,
        workspace: str | None = None,
        started: bool = False,
    ) -> None:
        self._native = _native.Normalizer(backend, cwd=cwd, workspace=workspace, started=started)

    def push(self, data: bytes) -> list[Event]:
        """Feeds a chunk of standard output; returns the events of the lines it completes."""
        return self._native.push(data)

    def push_line(self, line: str | bytes) -> list[Event]:
        """Feeds one line of standard output (a trailing newline is allowed); returns its events."""
        return self._native.push_line(line)

    def push_stderr(self, line: str | bytes) -> list[Event]:
        """Feeds one line of standard error; returns its events (`WarningEvent`s)."""
        return self._native.push_stderr(line)

    def finish(self) -> tuple[list[Event], Outcome]:
        """Ends the input: the events still pending (a last line without newline, unresolved
        tool uses), then the outcome. A second call gives no events and the same outcome."""
        return self._native.finish()

    @property
    def session_id(self) -> str | None:
        """The session id seen so far."""
        return self._native.session_id


class Normalized:
    """The events of a recorded stream, read from its file in chunks as they are needed (never
    the whole file at once); `outcome` is set once the iteration has ended."""

    def __init__(self, native: _native.FileEvents) -> None:
        self._native = native
        self._events = self._generate()

    def _generate(self) -> Iterator[Event]:
        while (batch := self._native.next_batch()) is not None:
            yield from batch

    def __iter__(self) -> Iterator[Event]:
        return self._events

    def __next__(self) -> Event:
        return next(self._events)

    @property
    def outcome(self) -> Outcome | None:
        """The outcome, once every event has been read; None before."""
        return self._native.outcome()


def normalize(
    path: _PathLike,
    backend: str,
    *,
    cwd: str | None = None,
    workspace: str | None = None,
    started: bool = False,
) -> Normalized:
    """The events of the recorded stream in the file at `path`, written by `backend`'s agent.

    The file is read 64 KiB at a time, with the GIL released; events come out as the lines
    that complete them are read. Raises `OSError` when the file cannot be opened or read.
    """
    return Normalized(
        _native.normalize_file(
            os.fspath(path), backend, cwd=cwd, workspace=workspace, started=started
        )
    )


def _resolve(future: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    """Completes `future` on its event loop, unless it was cancelled meanwhile."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)


class Run:
    """A live run: its events as they happen, then its `Outcome` as the last item.

    Iterate it with `for` or with `async for` (not both). The agent is killed (its whole
    process group) when the run is closed (`close()`, `aclose()`, leaving a `with` or
    `async with` block), when the task iterating it is cancelled, when Ctrl-C interrupts a
    `for` loop over it, and when the object is dropped. `outcome` is set once the outcome has
    been yielded.
    """

    def __init__(self, native: _native.Run) -> None:
        self._native = native
        self.outcome: Outcome | None = None

    def _seen(self, item: Item | None) -> Item:
        if item is None:
            raise StopIteration
        if isinstance(item, Outcome):
            self.outcome = item
        return item

    def __iter__(self) -> Iterator[Item]:
        return self

    def __next__(self) -> Item:
        try:
            item = self._native.next()
        except BaseException:
            # Ctrl-C (KeyboardInterrupt) or another signal handler's exception while waiting:
            # the iteration is abandoned, so the agent goes with it.
            self.close()
            raise
        return self._seen(item)

    def __aiter__(self) -> AsyncIterator[Item]:
        return self

    async def __anext__(self) -> Item:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._native.next_into(loop, future, _resolve)
        try:
            item = await future
        except asyncio.CancelledError:
            self.close()
            raise
        if item is None:
            raise StopAsyncIteration
        return self._seen(item)

    def close(self) -> None:
        """Kills the agent's process group and ends the run; iterating further ends at once."""
        self._native.close()

    async def aclose(self) -> None:
        """`close()`, for `contextlib.aclosing`."""
        self.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Run:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def run(
    backend: str,
    prompt: str,
    *,
    cwd: _PathLike | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    timeout: float | None = None,
    binary: _PathLike | None = None,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    started: bool = False,
    normalizer_cwd: str | None = None,
    workspace: str | None = None,
    agent: Sequence[str] | None = None,
) -> Run:
    """Starts `backend`'s agent on `prompt` and returns its `Run`.

    The prompt goes where the agent cannot read it as an option (its standard input for
    Claude Code, Codex and Gemini CLI). `timeout` (seconds) kills the agent's process group when
    it runs out, with an `ErrorEvent` saying so, and the run still ends with its outcome.
    `binary` overrides the backend's binary (else its environment variable, such as
    `$CLAUDE_BIN`, else its name on `PATH`); `env` adds environment variables; `started`
    announces tool uses as they start. `agent` is the whole command line of an Agent Client
    Protocol agent for the `acp` backend (`["gemini", "--acp"]`). Raises `RunError` when the agent cannot be started and
    `ValueError` for an unknown backend or a negative timeout.
    """
    return Run(
        _native.start_run(
            backend,
            prompt,
            cwd=None if cwd is None else os.fspath(cwd),
            model=model,
            permission_mode=permission_mode,
            timeout=timeout,
            binary=None if binary is None else os.fspath(binary),
            extra_args=list(extra_args),
            env=None if env is None else dict(env),
            started=started,
            normalizer_cwd=normalizer_cwd,
            workspace=workspace,
            agent=None if agent is None else list(agent),
        )
    )


@dataclass(frozen=True)
class SessionEnd:
    """How a session ended: why, and the whole session's outcome (its session id, the counts of
    every event of the session, the agent's `exit_code`: None when a signal ended it)."""

    reason: EndReason
    outcome: Outcome


class _Session:
    """What `Session` and `AsyncSession` share: the commands (SPEC section 8, I2) and `end`.

    Commands never wait: each takes effect in the order sent, and what it does shows in the
    items. A command sent once the session has ended does nothing.
    """

    def __init__(self, native: _native.Session) -> None:
        self._native = native
        self.end: SessionEnd | None = None
        """How the session ended, once the iteration has stopped at its end; None before."""

    def _seen(self, item: Item | tuple[str, Outcome] | None) -> Item | None:
        """The item to yield, or None when the items are over (the end is kept in `end`)."""
        if isinstance(item, tuple):
            reason, outcome = item
            self.end = SessionEnd(cast(EndReason, reason), outcome)
            return None
        return item

    def prompt(self, text: str) -> None:
        """Starts a turn with `text`, or queues it behind the running turn (turns run one at a
        time, in the order sent)."""
        self._native.prompt(text)

    def interrupt(self) -> None:
        """Stops the running turn through the agent's own protocol: its waiting permission
        requests are withdrawn and the turn ends with status `interrupted`; the session stays
        open. With no turn running, a `WarningEvent` says so."""
        self._native.interrupt()

    def answer(self, id: str, decision: Decision, message: str | None = None) -> None:
        """Answers the permission request `id` (a `PermissionEvent`'s `id`) with one of the
        `options` it offered: `"allow"`, `"allow_always"` (this and the same again in this
        session) or `"deny"`; `message` goes to the agent with a denial. An answer to a request
        that is not waiting is a `WarningEvent`; an unknown decision raises `ValueError`."""
        self._native.answer(id, decision, message)

    def end_input(self) -> None:
        """Sends nothing more: the queued prompts still run, then the session ends (reason
        `caller`). A permission request from then on is denied, since nobody is left to answer."""
        self._native.end_input()

    def close(self) -> None:
        """Ends the session now: the running turn is interrupted, queued prompts are dropped
        and the agent is stopped (its processes killed 5 seconds later if it has not ended).
        The items still come to the end: the interrupted turn's outcome, then `end`."""
        self._native.close()

    def _kill(self) -> None:
        """Kills the agent's process group at once; the items end here, `end` stays None."""
        self._native.kill()

    @property
    def session_id(self) -> str | None:
        """The agent's own id for the session once it has named it (SPEC I8), else None. Every
        backend names it as the session opens, before any prompt (Codex its thread, opencode
        its session, an ACP agent the `sessionId` of `session/new`, Pi the answer to
        `get_state`), Claude Code at once when given an id or resuming one, else with its
        first turn. The id `resume` takes to continue the conversation later."""
        return self._native.session_id


class Session(_Session):
    """A live session with an agent, iterated with `for` (`AsyncSession` for `async for`).

    Iterating gives each event as it happens (a `PermissionEvent` when the agent asks to use a
    tool, waiting for `answer`) and each turn's `Outcome` (with `turn` set); it stops at the
    session's end, and `end` then says why and holds the whole session's outcome. Nothing is
    asked of the agent before the first `prompt`.

    Leaving a `with` block closes the session and reads it to its end (at most 5 seconds once
    the agent is asked to stop). Ctrl-C while a `for` loop waits, and dropping the object, kill
    the agent at once.
    """

    def __iter__(self) -> Iterator[Item]:
        return self

    def wait_session_id(self, timeout: float | None = None) -> str | None:
        """Waits for `session_id`, at most `timeout` seconds when given; None when the session
        ends without one (the agent died, or refused the resume) or the time runs out."""
        return self._native.wait_session_id(timeout)

    def __next__(self) -> Item:
        try:
            item = self._native.next()
        except BaseException:
            # Ctrl-C (KeyboardInterrupt) or another signal handler's exception while waiting:
            # the iteration is abandoned, so the agent goes with it.
            self._kill()
            raise
        seen = self._seen(item)
        if seen is None:
            raise StopIteration
        return seen

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
        for _ in self:
            pass


class AsyncSession(_Session):
    """A live session with an agent, iterated with `async for`; otherwise as `Session`.

    Leaving an `async with` block, or `aclose()`, closes the session and reads it to its end;
    cancelling the task that waits for an item kills the agent at once.
    """

    def __aiter__(self) -> AsyncIterator[Item]:
        return self

    async def wait_session_id(self, timeout: float | None = None) -> str | None:
        """Waits for `session_id` on a thread of its own, as `Session.wait_session_id`."""
        return await asyncio.to_thread(self._native.wait_session_id, timeout)

    async def __anext__(self) -> Item:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._native.next_into(loop, future, _resolve)
        try:
            item = await future
        except asyncio.CancelledError:
            self._kill()
            raise
        seen = self._seen(item)
        if seen is None:
            raise StopAsyncIteration
        return seen

    async def aclose(self) -> None:
        """`close()`, then reads the session to its end."""
        self.close()
        async for _ in self:
            pass

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()


def _start_session(
    backend: str,
    cwd: _PathLike | None,
    model: str | None,
    permission_mode: str | None,
    timeout: float | None,
    idle_timeout: float | None,
    resume: str | None,
    binary: _PathLike | None,
    extra_args: Sequence[str],
    env: Mapping[str, str] | None,
    started: bool,
    normalizer_cwd: str | None,
    workspace: str | None,
    agent: Sequence[str] | None,
) -> _native.Session:
    return _native.start_session(
        backend,
        cwd=None if cwd is None else os.fspath(cwd),
        model=model,
        permission_mode=permission_mode,
        timeout=timeout,
        idle_timeout=idle_timeout,
        resume=resume,
        binary=None if binary is None else os.fspath(binary),
        extra_args=list(extra_args),
        env=None if env is None else dict(env),
        started=started,
        normalizer_cwd=normalizer_cwd,
        workspace=workspace,
        agent=None if agent is None else list(agent),
    )


def session(
    backend: str = "claude",
    *,
    cwd: _PathLike | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    resume: str | None = None,
    binary: _PathLike | None = None,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    started: bool = False,
    normalizer_cwd: str | None = None,
    workspace: str | None = None,
    agent: Sequence[str] | None = None,
) -> Session:
    """Starts `backend`'s agent for a session and returns the `Session`; nothing is asked of it
    before the first `prompt`.

    The options are `run`'s, but: `timeout` (seconds) bounds each turn and `idle_timeout` a
    turn's silence (no line from the agent); past either, an `ErrorEvent` says so and the
    session closes (reason `timed_out`). `resume` continues a stored session through the
    agent's own resume. Raises `RunError` when the agent cannot be started or the backend has
    no sessions (`claude`, `codex`, `opencode`, `gemini`, `pi`, `qwen` and `acp` have them), `ValueError` for an unknown backend or a negative
    time.
    """
    return Session(
        _start_session(
            backend, cwd, model, permission_mode, timeout, idle_timeout, resume, binary,
            extra_args, env, started, normalizer_cwd, workspace, agent,
        )
    )


def async_session(
    backend: str = "claude",
    *,
    cwd: _PathLike | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    resume: str | None = None,
    binary: _PathLike | None = None,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    started: bool = False,
    normalizer_cwd: str | None = None,
    workspace: str | None = None,
    agent: Sequence[str] | None = None,
) -> AsyncSession:
    """`session`, for `async for` and `async with`: returns an `AsyncSession`."""
    return AsyncSession(
        _start_session(
            backend, cwd, model, permission_mode, timeout, idle_timeout, resume, binary,
            extra_args, env, started, normalizer_cwd, workspace, agent,
        )
    )
