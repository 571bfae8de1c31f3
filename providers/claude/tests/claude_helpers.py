"""Helpers shared by the claude provider's tests (imported by name; fixtures stay in conftest.py).

A uniquely named module, not `conftest`: several test directories each have a `conftest.py`, and
`from conftest import X` picks whichever was imported first when they run in one pytest session.
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from harness_core import AgentRunSpec, ApprovalDecision, HarnessEvent, HarnessResult, open_run
from harness_core.plugins import PluginHost

__all__ = ["CLAUDE", "Outcome", "children_of", "kill_tree", "needs_real_claude", "run_spec"]

CLAUDE = (
    os.environ.get("HARNESS_CLAUDE_BIN")
    or shutil.which("claude")
    or str(Path(__file__).resolve().parents[3] / ".tools" / "bin" / "claude")
)
"""The real claude CLI: $HARNESS_CLAUDE_BIN, else `claude` on PATH, else the repo's `.tools/bin/claude`."""

needs_real_claude = [
    pytest.mark.real_cli,
    pytest.mark.skipif(
        not os.access(CLAUDE, os.X_OK),
        reason=f"real claude CLI not found at {CLAUDE} (install it with scripts/install-clis.sh, or set "
        "HARNESS_CLAUDE_BIN); with HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure",
    ),
]
"""Marks for a test that needs the real CLI: `real_cli`, and a skip that says how to get the binary."""


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
    """Live children of `pid` (Linux /proc), to check nothing is left running."""
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




async def kill_tree(pid: int, deadline: float = 10.0) -> None:
    """SIGKILL `pid` (a live session's process as spawned: the agent's supervisor) and wait until the agent under
    it is gone too: the supervisor takes it down a moment later, and until then it can still answer a prompt."""
    agents = children_of(pid)
    os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(deadline):
        while any(_running(a) for a in agents):  # noqa: ASYNC110 - no event exists for another process dying
            await anyio.sleep(0.02)


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
