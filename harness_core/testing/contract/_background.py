"""Contract tests of background runs: a run started with `harness_core.jobs.start` plays in a detached worker as
it would in the foreground, and a SIGKILLed worker leaves a `lost` run and no process behind.
Layer: testing (mixed into `ProviderContract`). Knows the jobs API, the run store and the process tree helpers;
knows no concrete provider. The worker finds the provider through its `harness` entry point (a provider
registered only in-process is skipped with the reason).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest

from harness_core import jobs
from harness_core.events import Done, RunStatus, ToolUse
from harness_core.plugins import PluginHost
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events
from harness_core.testing.contract._base import ContractBase
from harness_core.testing.contract._killed_host import cmdline as _cmdline
from harness_core.transport.proctree import ProcEntry, alive, descendants, kill_entries
from harness_core.transport.supervisor import available as supervisor_available

__all__ = ["BackgroundTests"]

_START_WITHIN = 60.0
_GONE_WITHIN = 5.0


class BackgroundTests(ContractBase):
    """Background runs of the provider under test (see the module docstring)."""

    def _background_spec(self, name: str, tmp_path: Path, harness_real: bool, stack: ExitStack) -> AgentRunSpec:
        if self.provider_name not in PluginHost.create().providers:
            pytest.skip(f"{self.provider_name} is not installed as a `harness` entry point: a background worker "
                        "(another process) cannot find it")
        return self.served_spec(name, tmp_path, harness_real, stack)  # served here: the worker's CLI reaches it

    def test_a_background_run_plays_as_in_the_foreground(self, tmp_path: Path, harness_real: bool) -> None:
        """`jobs.start` returns once the run's log is open; the worker plays it to `done` and the log holds the
        whole run (its tools, its result)."""
        with ExitStack() as stack:
            spec = self._background_spec("tools", tmp_path, harness_real, stack)

            async def main() -> None:
                job = await jobs.start(spec, self.provider_name, runs_dir=tmp_path / "runs")
                with anyio.fail_after(self.run_deadline):
                    result = await job.wait()
                assert result is not None, f"the background run was lost: {job.summary}"
                assert result.status is RunStatus.SUCCESS, result.error
                events = list(read_events(job.log_path))
                assert isinstance(events[-1], Done) and events[0].type == "run_started"
                assert any(isinstance(e, ToolUse) for e in events), [e.type for e in events]

            anyio.run(main)

    def test_a_killed_worker_leaves_a_lost_run_and_no_process(self, tmp_path: Path, harness_real: bool) -> None:
        """SIGKILL the worker while the agent runs a command: the run reads `lost`, its log keeps every event
        written until then, and the agent and everything it started are gone within seconds."""
        if not supervisor_available():
            pytest.skip("no process supervisor on this platform (Linux only)")
        tree: list[ProcEntry] = []
        with ExitStack() as stack:
            spec = self._background_spec("slow_command", tmp_path, harness_real, stack)
            job = anyio.run(lambda: jobs.start(spec, self.provider_name, runs_dir=tmp_path / "runs"))
            assert job.pid is not None
            try:
                deadline = time.monotonic() + _START_WITHIN
                while time.monotonic() < deadline:
                    tree = descendants(job.pid)
                    commanded = any(isinstance(e, ToolUse) for e in read_events(job.log_path))
                    sleeping = any(_cmdline(pid).split(" ")[0].endswith("sleep") for pid, _ in tree)
                    if sleeping or (tree and commanded and not harness_real):
                        break  # the agent's command runs (a fake CLI only pretends to: then it is the process)
                    if not tree and commanded:
                        pytest.skip(f"{self.provider_name} runs in-process: it started no process to outlive "
                                    "its worker")
                    assert job.status in ("running", "waiting for approval"), job.summary
                    time.sleep(0.05)
                else:
                    pytest.fail(f"no `sleep` ran under the worker within {_START_WITHIN:g} s ({job.summary})")
                tree = descendants(job.pid)
                logged = [e.seq for e in read_events(job.log_path)]
                os.kill(job.pid, signal.SIGKILL)
                deadline = time.monotonic() + _GONE_WITHIN
                while (alive(tree) or job.status != "lost") and time.monotonic() < deadline:
                    time.sleep(0.05)
                survivors = [f"{pid}: {_cmdline(pid)}" for pid, _ in alive(tree)]
                assert not survivors, f"alive {_GONE_WITHIN:g} s after the worker's SIGKILL: {survivors}"
                assert job.status == "lost"
                kept = [e.seq for e in read_events(job.log_path)]
                assert kept[:len(logged)] == logged, "events written before the kill are missing from the log"
            finally:
                kill_entries(alive(tree))
                _end_worker(job.pid)


def _end_worker(pid: int) -> None:
    """Kill the worker (if a skip or a failure left it running) and reap it: it is this process's child."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)

