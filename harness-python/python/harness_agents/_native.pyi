"""Types of the Rust extension `harness_agents._native` (see `src/lib.rs`); the package's
public API is `harness_agents`, which wraps it."""

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from ._events import Event, Outcome

class RunError(Exception): ...

class Normalizer:
    def __init__(
        self,
        backend_name: str,
        *,
        cwd: str | None = None,
        workspace: str | None = None,
        started: bool = False,
    ) -> None: ...
    def push(self, data: bytes) -> list[Event]: ...
    def push_line(self, line: str | bytes) -> list[Event]: ...
    def push_stderr(self, line: str | bytes) -> list[Event]: ...
    def finish(self) -> tuple[list[Event], Outcome]: ...
    @property
    def session_id(self) -> str | None: ...

class FileEvents:
    def next_batch(self) -> list[Event] | None: ...
    def outcome(self) -> Outcome | None: ...

class Run:
    def next(self) -> Event | Outcome | None: ...
    def next_into(
        self,
        event_loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
        resolve: Callable[[asyncio.Future[Any], Any, BaseException | None], None],
    ) -> None: ...
    def close(self) -> None: ...

class Session:
    def next(self) -> Event | Outcome | tuple[str, Outcome] | None: ...
    def next_into(
        self,
        event_loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
        resolve: Callable[[asyncio.Future[Any], Any, BaseException | None], None],
    ) -> None: ...
    def prompt(self, text: str) -> None: ...
    def interrupt(self) -> None: ...
    def answer(self, id: str, decision: str, message: str | None = None) -> None: ...
    def close(self) -> None: ...
    def end_input(self) -> None: ...
    def kill(self) -> None: ...
    @property
    def session_id(self) -> str | None: ...
    def wait_session_id(self, timeout: float | None = None) -> str | None: ...

def normalize_file(
    path: str,
    backend_name: str,
    *,
    cwd: str | None = None,
    workspace: str | None = None,
    started: bool = False,
) -> FileEvents: ...
def classify(command: str | Sequence[str]) -> list[dict[str, Any]]: ...
def backends() -> list[str]: ...
def schema() -> str: ...
def start_run(
    backend_name: str,
    prompt: str,
    *,
    cwd: str | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    timeout: float | None = None,
    binary: str | None = None,
    extra_args: list[str] = ...,
    env: dict[str, str] | None = None,
    started: bool = False,
    normalizer_cwd: str | None = None,
    workspace: str | None = None,
    agent: list[str] | None = None,
) -> Run: ...
def start_session(
    backend_name: str,
    *,
    cwd: str | None = None,
    model: str | None = None,
    permission_mode: str | None = None,
    timeout: float | None = None,
    idle_timeout: float | None = None,
    resume: str | None = None,
    binary: str | None = None,
    extra_args: list[str] = ...,
    env: dict[str, str] | None = None,
    started: bool = False,
    normalizer_cwd: str | None = None,
    workspace: str | None = None,
    agent: list[str] | None = None,
) -> Session: ...
