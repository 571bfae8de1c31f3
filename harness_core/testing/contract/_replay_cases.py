"""`ReplayCases`: replay tests every CLI provider can inherit — an interrupted run and a CLI crash, recorded and
replayed from the wire log alone, on the fake and on the real CLI (`FakeAndReal`).
Layer: testing (shipped, exported by `harness_core.testing.contract`). Knows the contract's `play` and
`replay_of` and the scenario names; knows no concrete provider. Tool calls, approvals and an API failure are the
contract's own `test_replay_reproduces_the_run`.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness_core.capabilities import Capability
from harness_core.events import HarnessEvent, RunStatus
from harness_core.testing.contract._base import Play
from harness_core.testing.contract._fake_and_real import FakeAndReal
from harness_core.testing.contract._support import assert_replayed_as_recorded

__all__ = ["ReplayCases"]


class ReplayCases(FakeAndReal):
    """Subclass with `provider_name` and `fake_contract` (see `FakeAndReal`). A provider without `interrupt` sets
    `test_an_interrupted_run_replays_its_interrupt = None` (under `HARNESS_REQUIRE_REAL_CLIS=1` a skipped real test
    fails)."""

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["slow_text", "slow_command"])
    async def test_an_interrupted_run_replays_its_interrupt(self, name: str, play: Play) -> None:
        """Interrupted while it streams (or while a command runs): the replay interrupts where the recording says
        (its `interrupt` record), within `run_deadline`, and gives back the same events."""
        if Capability.INTERRUPT not in self.capabilities:
            pytest.skip(f"{self.provider_name} does not declare 'interrupt'")
        busy = "text_delta" if name == "slow_text" else "tool_use"
        asked: list[str] = []

        def interrupt_when_busy(event: HarnessEvent, live: Any) -> None:
            if event.type == busy and not asked:
                asked.append(event.type)
                live.interrupt()

        played = await play(name, on_event=interrupt_when_busy, record_wire=True)
        assert asked and played.result.status is RunStatus.INTERRUPTED, played.result
        recorded, replayed = await self.replay_of(played)
        assert_replayed_as_recorded(replayed, recorded)

    @pytest.mark.anyio
    async def test_a_crash_replays_to_the_same_error(self, play: Play) -> None:
        """The CLI killed mid-turn: the replay ends in the same `process_exited` error (exit status, stderr)."""
        played = await play("tools", fault="crash", record_wire=True)
        assert played.result.error is not None and played.result.error.code == "process_exited"
        recorded, replayed = await self.replay_of(played)
        assert_replayed_as_recorded(replayed, recorded)
