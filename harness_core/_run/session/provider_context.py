"""The `SessionContext` a live session's provider gets: the session's id, log and CLI, and `spawn` for its process.

Layer: core runtime (the provider-facing edge of a session). Knows the transport's `ChildProcess`; knows nothing of
turns, runs or any concrete provider. No wire recording: a live session's turns record no wire log.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_core._logging import BoundLogger
from harness_core._provider_interface import CliInfo
from harness_core.spec import SessionSpec
from harness_core.transport import ChildProcess

__all__ = ["SessionProcessContext"]


class SessionProcessContext:
    """The runner's `SessionContext` implementation (see `harness_core.provider.SessionContext`)."""

    def __init__(self, session_id: str, cli: CliInfo, spec: SessionSpec, log: BoundLogger,
                 trace_context: Callable[[], dict[str, str]] | None = None) -> None:
        self._session_id = session_id
        self._trace_context = trace_context
        self._cli = cli
        self._spec = spec
        self._log = log
        self._child: ChildProcess | None = None

    @property
    def session_id(self) -> str:
        return self._session_id

    @property
    def log(self) -> BoundLogger:
        return self._log

    @property
    def cli(self) -> CliInfo:
        return self._cli

    @property
    def pid(self) -> int | None:
        try:
            return self._child.pid if self._child is not None else None
        except RuntimeError:  # not started yet
            return None

    def trace_context(self) -> dict[str, str]:
        return self._trace_context() if self._trace_context is not None else {}

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | Path | None = None,
              **options: Any) -> ChildProcess:
        if env is None:
            env = {**os.environ, **self._spec.env}
        child = ChildProcess(argv, env=env, cwd=self._spec.cwd if cwd is None else cwd, **options)
        self._child = self._child or child
        return child
