"""Replay for claude: a run recorded with `record_wire=True` and fed back through the provider from its wire log
(`harness_core.open_replay`, no claude run) gives back its run log's events, `ts` and the run's `duration_ms` aside
(`without_wall_clock`).

Each test plays on the fake `claude` and (marked `real_cli`, run by the `-real` tox env) on the real pinned CLI
against the scripted Messages backend: on-request approvals answered over the control protocol (the first
approved, any next denied; the real CLI asks nothing on-request in this scenario), and a crash mid-turn. Tool
calls, `untrusted` approvals and an API failure are the shipped contract's `test_replay_reproduces_the_run`.
"""

from __future__ import annotations

import pytest
import test_claude_contract as contract
from harness_core import ApprovalDecision, ApprovalRequested
from harness_core.testing.contract import Play, ReplayCases, without_wall_clock

pytestmark = pytest.mark.anyio


class TestClaudeReplay(ReplayCases):
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
