"""Replay for codex-appserver: a run recorded with `record_wire=True` and fed back through the provider from its
wire log (`harness_core.open_replay`, no codex run) gives back its run log's events, `ts` and the run's
`duration_ms` aside (`without_wall_clock`).

Each test plays on the fake app-server and (marked `real_cli`, run by the `-real` tox env) on the real pinned
codex against the scripted Responses backend: an on-request approval, a crash mid-turn, and the patch a
read-only sandbox refused, which only the thread's rollout file shows (a side input: the replay runs after the
state dir, rollout included, is gone). Tool calls, `untrusted` approvals and an API failure are the shipped
contract's `test_replay_reproduces_the_run`.
"""

from __future__ import annotations

import shutil

import pytest
import test_appserver_contract as contract
from harness_core import ApprovalDecision, ApprovalRequested
from harness_core.testing.contract import FakeAndReal, Play, without_wall_clock

pytestmark = pytest.mark.anyio


class TestCodexAppServerReplay(FakeAndReal):
    provider_name = "codex-appserver"

    fake_contract = contract.TestCodexAppServerContract

    async def test_on_request_approvals_replay_as_decided(self, play: Play, harness_real: bool) -> None:
        asked: list[ApprovalRequested] = []

        def approver(request: ApprovalRequested) -> ApprovalDecision:
            asked.append(request)
            return ApprovalDecision.APPROVE if len(asked) == 1 else ApprovalDecision.DENY

        played = await play("tools", approval="on-request", sandbox="read-only", approver=approver,
                            record_wire=True)
        assert asked or not harness_real, "on-request in a read-only sandbox: codex asks to escalate"
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)
        assert [e.decision for e in replayed if e.type == "approval_resolved"] == [
            ApprovalDecision.APPROVE if i == 0 else ApprovalDecision.DENY for i in range(len(asked))]

    async def test_a_crash_replays_to_the_same_error(self, play: Play) -> None:
        played = await play("tools", fault="crash", record_wire=True)
        assert played.result.error is not None and played.result.error.code == "process_exited"
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)

    async def test_refused_patches_replay_from_the_recorded_rollout(self, play: Play, harness_real: bool) -> None:
        if not harness_real:
            pytest.skip("the fake app-server writes no rollout with refused patches")
        played = await play("tools", sandbox="read-only", record_wire=True)
        declined = [e for e in played.events if e.type == "tool_result" and e.display.status.value == "declined"]
        assert declined, "the read-only sandbox must refuse the scenario's edit and write"
        shutil.rmtree(played.workspace.parent / "state")  # CODEX_HOME and its rollouts: gone where it is replayed
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)
