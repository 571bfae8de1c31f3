"""Replay for claude: a run recorded with `record_wire=True` and fed back through the provider from its wire log
(`harness_core.open_replay`, no claude run) gives back its run log's events, `ts` and the run's `duration_ms` aside
(`without_wall_clock`).

Each test plays on the fake `claude` and (marked `real_cli`, run by the `-real` tox env) on the real pinned CLI
against the scripted Messages backend: on-request approvals answered over the control protocol (the first
approved, any next denied; the real CLI asks nothing on-request in this scenario), and a crash mid-turn. Tool
calls, `untrusted` approvals and an API failure are the shipped contract's `test_replay_reproduces_the_run`.
"""

from __future__ import annotations

from typing import Any

import pytest
import test_claude_contract as contract
from harness_core import ApprovalDecision, ApprovalRequested, HarnessEvent, RunStatus
from harness_core.testing.contract import FakeAndReal, Play, without_wall_clock

pytestmark = pytest.mark.anyio


class TestClaudeReplay(FakeAndReal):
    provider_name = "claude"

    fake_contract = contract.TestClaudeContract

    async def test_on_request_approvals_replay_as_decided(self, play: Play, harness_real: bool) -> None:
        asked: list[ApprovalRequested] = []

        def approver(request: ApprovalRequested) -> ApprovalDecision:
            asked.append(request)
            return ApprovalDecision.APPROVE if len(asked) == 1 else ApprovalDecision.DENY

        played = await play("tools", approval="on-request", approver=approver, record_wire=True)
        assert asked or harness_real, "on-request: the fake asks before it runs a command"  # the real CLI: `untrusted`
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)
        assert [e.decision for e in replayed if e.type == "approval_resolved"] == [
            ApprovalDecision.APPROVE if i == 0 else ApprovalDecision.DENY for i in range(len(asked))]

    @pytest.mark.parametrize("name", ["slow_text", "slow_command"])
    async def test_an_interrupted_run_replays_its_interrupt(self, name: str, play: Play) -> None:
        busy = "text_delta" if name == "slow_text" else "tool_use"
        asked: list[str] = []

        def interrupt_when_busy(event: HarnessEvent, live: Any) -> None:
            if event.type == busy and not asked:
                asked.append(event.type)
                live.interrupt()

        played = await play(name, on_event=interrupt_when_busy, record_wire=True)
        assert asked and played.result.status is RunStatus.INTERRUPTED, played.result
        recorded, replayed = await self.replay_of(played)  # within run_deadline: the recorded interrupt is replayed
        assert without_wall_clock(replayed) == without_wall_clock(recorded)

    async def test_a_crash_replays_to_the_same_error(self, play: Play) -> None:
        played = await play("tools", fault="crash", record_wire=True)
        assert played.result.error is not None and played.result.error.code == "process_exited"
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)
