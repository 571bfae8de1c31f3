"""Replay for codex-exec: a run recorded with `record_wire=True` and fed back through the provider from its wire
log (`harness_core.open_replay`, no codex run) gives back its run log's events, `ts` and the run's `duration_ms`
aside (`without_wall_clock`).

Each test plays on the fake `codex exec` and (marked `real_cli`, run by the `-real` tox env) on the real pinned
codex against the scripted Responses backend: a crash mid-turn, a resumed run's token usage (this run's share,
computed from the thread's total in its rollout file before the run) and the patches a read-only sandbox refused
(found in the rollout after the turn). The rollout is a side input: each replay runs after the state dir, rollout
included, is gone. Tool calls and an API failure are the shipped contract's `test_replay_reproduces_the_run`.
"""

from __future__ import annotations

import shutil

import pytest
import test_exec_contract as contract

from harness_core import SessionStarted
from harness_core.testing.contract import Play, ReplayCases, without_wall_clock

pytestmark = pytest.mark.anyio


class TestCodexExecReplay(ReplayCases):
    provider_name = "codex-exec"

    fake_contract = contract.TestCodexExecContract
    test_an_interrupted_run_replays_its_interrupt = None  # codex exec cannot interrupt a turn (no `interrupt`)

    async def test_a_resumed_runs_token_usage_replays_from_the_recorded_rollout(self, play: Play) -> None:
        first = await play("say")
        session = next(e.session_id for e in first.events if isinstance(e, SessionStarted))
        played = await play("say", resume_session=session, record_wire=True)
        usage = [e for e in played.events if e.type == "context_usage"]
        assert usage and not usage[-1].cumulative, "the run's own share, from the thread's total before it"
        shutil.rmtree(played.workspace.parent / "state")  # CODEX_HOME and its rollouts: gone where it is replayed
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)

    async def test_refused_patches_replay_from_the_recorded_rollout(self, play: Play, harness_real: bool) -> None:
        if not harness_real:
            pytest.skip("the fake codex exec writes no rollout with refused patches")
        played = await play("tools", sandbox="read-only", record_wire=True)
        declined = [e for e in played.events if e.type == "tool_result" and e.display.status.value == "declined"]
        assert declined, "the read-only sandbox must refuse the scenario's edit and write"
        shutil.rmtree(played.workspace.parent / "state")
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)
