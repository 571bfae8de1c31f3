"""Shared fixtures: a plugin host with only this provider, a fake `claude` on disk, a run helper."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core.events import ApprovalDecision, HarnessEvent, HarnessResult
from harness_core.plugins import PluginHost
from harness_core.runner import open_run
from harness_core.spec import AgentRunSpec
from harness_core.testing.fake_claude import write_fake_claude

import harness_claude


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("claude", harness_claude)], env={})


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    return write_fake_claude(tmp_path)


@dataclass
class Outcome:
    events: list[HarnessEvent] = field(default_factory=list)

    @property
    def result(self) -> HarnessResult:
        done = self.events[-1]
        assert done.type == "done"
        return done.result

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


async def run_spec(
    spec: AgentRunSpec,
    host: PluginHost,
    *,
    approver: Callable[[Any], ApprovalDecision] | None = None,
    interrupt_on: str | None = None,
    timeout: float = 30,  # noqa: ASYNC109 - the helper's own deadline, applied with fail_after
) -> Outcome:
    out = Outcome()
    with anyio.fail_after(timeout):
        async with open_run(spec, "claude", host=host, run_log=False, approver=approver) as live:
            async for event in live:
                out.events.append(event)
                if interrupt_on == event.type:
                    live.interrupt()
    return out


def children_of(pid: int) -> list[int]:
    """Live descendants of `pid` (Linux /proc), to check nothing is left running."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture
def no_leftovers() -> Any:
    before = set(children_of(os.getpid()))
    yield
    left = set(children_of(os.getpid())) - before
    assert not left, f"processes left running: {sorted(left)}"
