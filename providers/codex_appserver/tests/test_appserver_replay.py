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

import json
import shutil
from pathlib import Path

import pytest
import test_appserver_contract as contract
from harness_core import ApprovalDecision, ApprovalRequested
from harness_core.testing.contract import Play, ReplayCases, without_wall_clock

pytestmark = pytest.mark.anyio


class TestCodexAppServerReplay(ReplayCases):
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

    async def test_refused_patches_replay_from_the_recorded_rollout(self, play: Play, harness_real: bool) -> None:
        if not harness_real:
            pytest.skip("the fake app-server writes no rollout with refused patches")
        played = await play("tools", sandbox="read-only", record_wire=True)
        declined = [e for e in played.events if e.type == "tool_result" and e.display.status.value == "declined"]
        assert declined, "the read-only sandbox must refuse the scenario's edit and write"
        shutil.rmtree(played.workspace.parent / "state")  # CODEX_HOME and its rollouts: gone where it is replayed
        recorded, replayed = await self.replay_of(played)
        assert without_wall_clock(replayed) == without_wall_clock(recorded)


def test_the_golden_recorder_reads_a_format_2_wire_log(tmp_path: Path) -> None:
    from appserver_helpers import wire_to_transcript

    records = [
        {"dir": "header", "t": 10.0, "format": 2, "run_id": "r", "provider": "codex-appserver", "spec": {}},
        {"dir": "spawn", "t": 10.5, "child": 0},
        {"dir": "out", "t": 11.0, "child": 0, "line": json.dumps({"id": 1, "method": "initialize", "cwd": "/tmp/x"})},
        {"dir": "err", "t": 11.1, "child": 0, "line": "warming up", "nl": True},
        {"dir": "in", "t": 11.5, "child": 0, "line": json.dumps({"id": 1, "result": {}})},
        {"dir": "file", "t": 11.6, "name": "rollout", "data": None},
        {"dir": "approval", "t": 11.7, "request_id": "a", "decision": "approve", "decided_by": "callback"},
        {"dir": "interrupt", "t": 11.8, "how": "interrupt", "after_seq": 3},
        {"dir": "close", "t": 12.0, "child": 0}, {"dir": "eof", "t": 12.1, "child": 0},
        {"dir": "exit", "t": 12.2, "child": 0, "code": 0},
    ]
    wire = tmp_path / "run.wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "transcript.jsonl"
    assert wire_to_transcript(wire, out, rewrite={"/tmp/x": "/tmp/e2e"}) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows == [{"dir": "out", "t": 0.0, "msg": {"id": 1, "method": "initialize", "cwd": "/tmp/e2e"}},
                    {"dir": "in", "t": 0.5, "msg": {"id": 1, "result": {}}}]
