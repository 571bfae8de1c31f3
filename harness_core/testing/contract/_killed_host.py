"""A run in a host process that is then killed: nothing of the run may outlive it.

Layer: testing (the contract suite's "whatever kills Harness" check). Knows the public run API, the scenario
vocabulary and the transport's /proc snapshots; knows no provider. How the check runs: docs/testing.md
(a killed Harness).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from harness_core.spec import AgentRunSpec
from harness_core.transport.proctree import ProcEntry, alive, descendants, kill_entries

__all__ = ["kill_host_during_command"]

_SUPERVISOR = "from _supervise import main"
"""In the command line of every process supervisor (`transport.supervisor`'s boot code)."""

_HOST = r"""
import sys, anyio
from harness_core import AgentRunSpec, open_run

async def main() -> None:
    spec = AgentRunSpec.model_validate_json(open(sys.argv[1]).read())
    async with open_run(spec, sys.argv[2], runs_dir=sys.argv[3]) as live:
        async for event in live:
            print(event.type, flush=True)

anyio.run(main)
"""


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return ""


def kill_host_during_command(spec: AgentRunSpec, provider: str, workdir: Path, sig: signal.Signals, *,
                             start_within: float = 60.0, supervised_within: float = 60.0,
                             gone_within: float = 3.0) -> tuple[str, list[str]]:
    """Play `spec` (a scenario whose agent runs a `sleep`) in a host process, kill the host with `sig` while
    the command runs, and return (what happened, the command lines of processes still alive — empty when the
    promise holds). Still alive means: once every supervisor of the run has finished (it exits after killing
    and reaping its tree; `supervised_within` seconds at most, a bound for a hung one, not a timing), and
    `gone_within` seconds more for anything no supervisor owned. Survivors are killed before returning.

    What happened is "killed" or, when no `sleep` ever ran under the host, why not (the caller skips)."""
    spec_file = workdir / "host-spec.json"
    spec_file.write_text(spec.model_dump_json())
    host = subprocess.Popen(
        [sys.executable, "-c", _HOST, str(spec_file), provider, str(workdir / "host-runs")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(line.decode().strip() for line in host.stdout or ()),
                              daemon=True)
    reader.start()
    tree: list[ProcEntry] = []
    try:
        deadline = time.monotonic() + start_within
        while time.monotonic() < deadline and host.poll() is None:
            tree = descendants(host.pid)
            if any(cmdline(pid).split(" ")[0].endswith("sleep") for pid, _ in tree):
                break
            if not tree and "tool_use" in lines:  # the command is under way and nothing was spawned for it
                return "the provider runs in-process: it started no process to outlive the host", []
            time.sleep(0.05)
        else:
            events = ", ".join(lines[-8:]) or "none"
            return f"no `sleep` ran under the host (host exit {host.poll()}; last events: {events})", []
        tree = descendants(host.pid)  # everything the run started, now that the command runs
        supervisors = [entry for entry in tree if _SUPERVISOR in cmdline(entry[0])]
        os.kill(host.pid, sig)
        host.wait(timeout=10)
        deadline = time.monotonic() + supervised_within
        while alive(supervisors) and time.monotonic() < deadline:  # their completion is the signal to check
            time.sleep(0.05)
        deadline = time.monotonic() + gone_within
        left = alive(tree)
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = alive(tree)
        survivors = [f"{pid}: {cmdline(pid)}" for pid, _ in left]
        return "killed", survivors
    finally:
        if host.poll() is None:
            host.kill()
            host.wait(timeout=10)
        kill_entries(alive(tree))
        reader.join(timeout=5)
        for stream in (host.stdout, host.stderr):
            if stream is not None:
                stream.close()
