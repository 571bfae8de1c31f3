"""The behavioural contract every Harness provider must pass, shipped for third parties.

Layer: testing. Knows the public runner API and the scenario vocabulary; knows no concrete provider. A
provider's whole contract test is one subclass of `ProviderContract` (not named `Test*`, so pytest collects it
only through a subclass). What it checks and how to adapt it: docs/providers.md (the contract suite).
"""

from __future__ import annotations

import json
import secrets
import time
from typing import TYPE_CHECKING, Any

import pytest

from harness_core._facade import missing_name
from harness_core._run.changes.undo import apply_undo, plan_undo
from harness_core.capabilities import Capability
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    HarnessEvent,
    RunStatus,
    SessionStarted,
    ToolResult,
    ToolStatus,
)
from harness_core.scripted.scenarios import SCENARIOS
from harness_core.store import read_events  # re-exported: a golden test reads its recorded run log
from harness_core.testing.contract._background import BackgroundTests
from harness_core.testing.contract._base import ContractBase, Play
from harness_core.testing.contract._chat import ChatTests
from harness_core.testing.contract._fake_and_real import FakeAndReal
from harness_core.testing.contract._faults import FaultTests
from harness_core.testing.contract._imports import ImportTests
from harness_core.testing.contract._offline import OfflineTests
from harness_core.testing.contract._replay_cases import ReplayCases
from harness_core.testing.contract._secrets import Secret
from harness_core.testing.contract._session import SessionTests
from harness_core.testing.contract._support import Played, assert_replayed_as_recorded, descendants, without_wall_clock
from harness_core.testing.contract._tools import ToolTests

__all__ = [
    "UNKNOWN_SESSION",
    "ContractBase",
    "FakeAndReal",
    "Played",
    "ProviderContract",
    "ReplayCases",
    "Secret",
    "descendants",
    "read_events",
    "without_wall_clock",
]

UNKNOWN_SESSION = "harness-contract-no-such-session"
"""The session id `test_resume_of_an_unknown_session_fails` resumes (no agent has it)."""


class ProviderContract(OfflineTests, ChatTests, SessionTests, BackgroundTests, FaultTests, ImportTests, ToolTests,
                       ContractBase):
    """Subclass with `provider_name`; override `setup_run` to point the provider at its fake CLI.

    Class attributes to adjust: `scenarios`, `failures`, `interrupt_within`, `run_deadline`, `crash_after_lines`
    (see `ContractBase`), `offline_options` and `offline_environment` (see `OfflineTests`). Hooks: `setup_run`,
    `real_cli_path`, `missing_cli_options`, `check_invariants`.
    """

    # --- scenarios -----------------------------------------------------------------------------------------

    def test_found_through_its_entry_point(self) -> None:
        registered = self._provider()
        assert registered.distribution, f"{self.provider_name} was not registered through an entry point"
        assert registered.cls.info.name == self.provider_name

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["say", "tools", "think"])
    async def test_scenario(self, name: str, play: Play, harness_real: bool) -> None:
        if name not in self.scenarios:
            pytest.skip(f"{self.provider_name} does not play {name!r}")
        played = await play(name)
        self.check_invariants(played)
        expected = SCENARIOS[name].expected
        assert played.result.status.value == expected.status, played.result.error
        if expected.final_text is not None:
            assert played.result.final_text.strip() == expected.final_text
            assert played.text.strip() == expected.final_text, "text deltas must rebuild the final text"
        results = [e for e in played.events if isinstance(e, ToolResult)]
        assert len(results) == len(expected.tools), [r.display for r in results]
        for got, want in zip(results, expected.tools, strict=True):
            display = got.display
            assert display.kind.value == want.kind, display
            if want.path is not None:
                assert display.path is not None and display.path.endswith(want.path), display
            if want.command_contains is not None:
                assert display.command is not None and want.command_contains in display.command, display
            if want.exit_code is not None:
                assert display.exit_code == (want.exit_code if self.reports_exit_codes else None), display
            assert display.status is ToolStatus.COMPLETED, display
        uses = {e.tool_id: e.display for e in played.of_type("tool_use")}
        for got in results:  # the start line (a slow tool's) names what its end line names, as the same kind
            use = uses[got.tool_id]
            assert (use.kind, use.title) == (got.display.kind, got.display.title), (use, got.display)
            if got.display.path or got.display.command:
                assert use.path or use.command, f"the tool_use of {got.tool_id} names nothing: {use}"
        if Capability.SESSION in self.capabilities:
            assert played.result.session_id, "a provider with `session` must report the session id"
        if name == "tools" and harness_real:
            self._check_undo(played)

    def _check_undo(self, played: Played) -> None:
        """`harness undo` puts the workspace back from what the run log recorded of the tools' changes: the edit
        reverted, the new file removed (the runner records it, whatever the provider; this checks the provider
        announces its edits so that it can). Real CLIs only: a fake that writes a file before it announces the
        tool leaves the runner reading it too late to know what it held before."""
        assert set(played.result.files_changed) == {"notes.txt", "new.txt"}, (
            f"the run's files_changed must name the files its edit tools changed: {played.result.files_changed}")
        plan = plan_undo(played.log_path)
        assert not plan.problems, plan.problems
        apply_undo(plan)
        assert (played.workspace / "notes.txt").read_text() == "alpha\n"
        assert not (played.workspace / "new.txt").exists()

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["fail_500", "fail_401", "fail_429"])
    async def test_api_failure_is_classified(self, name: str, play: Play) -> None:
        if name not in self.failures:
            pytest.skip(f"{self.provider_name} does not play {name!r}")
        played = await play(name)
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED
        assert played.result.error is not None
        assert played.result.error.code == SCENARIOS[name].expected.error_code, played.result.error

    @pytest.mark.anyio
    async def test_stall_is_caught_by_idle_timeout(self, play: Play) -> None:
        started = time.monotonic()
        played = await play("stall", idle_timeout=3.0)
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED
        assert played.result.error is not None and played.result.error.code == "idle_timeout"
        assert time.monotonic() - started < 30

    # --- capabilities --------------------------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_streaming_deltas_arrive_before_the_result(self, play: Play) -> None:
        if Capability.STREAMING not in self.capabilities:
            await self._assert_refused(play, requires=[Capability.STREAMING])
            return
        played = await play("say")
        deltas = [e.seq for e in played.events if e.type == "text_delta"]
        assert len(deltas) >= 2, "a streaming provider must deliver the text in more than one delta"
        assert max(deltas) < played.events[-1].seq

    @pytest.mark.anyio
    async def test_resume_continues_the_session(self, play: Play) -> None:
        """The resumed run continues the conversation: where a scripted backend shows the model requests (real
        mode), the resumed run's request carries the earlier turn (a word only the first prompt said), or, for
        a chained API, names the resumed session's response as `previous_response_id`."""
        if Capability.SESSION not in self.capabilities:
            await self._assert_refused(play, resume_session="some-session")
            return
        word = f"harness-resume-{secrets.token_hex(4)}"
        first = await play("say", prompt=f"contract scenario say: remember the word {word}")
        session = first.result.session_id
        assert session
        second = await play("say", resume_session=session, prompt="contract scenario say: which word was it?")
        self.check_invariants(second)
        assert second.result.status is RunStatus.SUCCESS, second.result.error
        assert second.result.session_id, "a resumed run must report the session id to continue from"
        started = [e for e in second.events if isinstance(e, SessionStarted)]
        assert started, "a resumed run must emit session_started"
        # Ids may stay (a thread or session the agent keeps) or advance per run (chained API responses).
        assert started[0].session_id == session or started[0].resumed, started[0]
        if second.requests is not None:
            assert second.requests, "the resumed run sent no model request"
            request = second.requests[0]
            # The earlier turn travels in the request, or (a chained API) the request names the response that
            # holds it: the session it was asked to resume.
            assert word in json.dumps(request) or request.get("previous_response_id") == session, (
                "the resumed run's model request does not carry the earlier turn: the session was not resumed")

    @pytest.mark.anyio
    async def test_resume_of_an_unknown_session_fails(self, play: Play) -> None:
        """Resuming a session no run created fails with `session_not_found` naming it (raise
        `SessionNotFoundError` when the agent says so), instead of quietly starting a new conversation that claims
        to continue one. In fake mode the provider's fake must know its sessions too (as a real agent's home does)."""
        if Capability.SESSION not in self.capabilities:
            pytest.skip(f"{self.provider_name} does not declare 'session' (refusal tested instead)")
        unknown = UNKNOWN_SESSION
        played = await play("say", resume_session=unknown)
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED, (
            f"resuming the unknown session {unknown!r} ended {played.result.status.value}: a provider must not "
            "pretend to continue a session its agent does not have")
        error = played.result.error
        assert error is not None and error.code == "session_not_found" and unknown in error.message, (
            f"resuming an unknown session must fail as session_not_found naming {unknown!r}: {error}")

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["slow_text", "slow_command"])
    async def test_interrupt_ends_interrupted(self, name: str, play: Play) -> None:
        if Capability.INTERRUPT not in self.capabilities:
            await self._assert_refused(play, requires=[Capability.INTERRUPT])
            return
        asked: list[float] = []

        def interrupt_when_busy(event: HarnessEvent, live: Any) -> None:
            busy = event.type == "text_delta" if name == "slow_text" else event.type == "tool_use"
            if busy and not asked:
                asked.append(time.monotonic())
                live.interrupt()

        played = await play(name, on_event=interrupt_when_busy)
        self.check_invariants(played)
        assert asked, "the scenario never reached the point to interrupt"
        assert played.result.status is RunStatus.INTERRUPTED, played.result
        error = played.result.error
        assert error is not None and error.code == "interrupted", f"an interrupted run has code interrupted: {error}"
        assert error.details.get("stopped_by") != "runner", (
            f"the provider did not end the run after the interrupt; the runner stopped it hard ({error.message}). "
            "A provider with `interrupt` stops the turn on its wire when `ctx.interrupt_requested` is set and "
            "returns status `interrupted`")
        assert time.monotonic() - asked[0] < self.interrupt_within
        if name == "slow_command":  # the command the interrupt cut short reads so, whatever the agent reported
            results = played.of_type("tool_result")
            assert results and all(r.display.status is ToolStatus.INTERRUPTED for r in results), (
                f"a tool whose result came after the interrupt must end `interrupted`: {results}")

    @pytest.mark.anyio
    @pytest.mark.parametrize("decision", list(ApprovalDecision))
    async def test_approvals(self, decision: ApprovalDecision, play: Play) -> None:
        if Capability.APPROVALS not in self.capabilities:
            await self._assert_refused(play, approval="untrusted")
            return
        asked: list[ApprovalRequested] = []

        def approver(request: ApprovalRequested) -> ApprovalDecision:
            asked.append(request)
            return decision

        played = await play("tools", approval="untrusted", approver=approver)
        self.check_invariants(played)
        assert asked, "approval 'untrusted' must ask before at least one action"
        resolved = played.of_type("approval_resolved")
        assert len(resolved) == len(played.of_type("approval_requested")) >= 1
        assert all(r.decision is decision for r in resolved)
        asked_tools = {a.tool_id for a in asked if a.tool_id}
        results = {r.tool_id: r for r in played.events if isinstance(r, ToolResult)}
        unanswered = asked_tools - set(results)
        assert not unanswered, f"approvals named tools that never got a tool_result: {sorted(unanswered)}"
        notes = (played.workspace / "notes.txt").read_text()
        created = (played.workspace / "new.txt").exists()
        if decision is ApprovalDecision.APPROVE:
            assert played.result.status is RunStatus.SUCCESS, played.result.error
            assert all(results[t].display.status is ToolStatus.COMPLETED for t in asked_tools)
            assert "beta" in notes and created, "approved edits must change the workspace"
        else:
            assert all(results[t].display.status in (ToolStatus.DECLINED, ToolStatus.FAILED) for t in asked_tools)
            assert notes == "alpha\n" and not created, "a denied or aborted edit must not change the workspace"
            if decision is ApprovalDecision.ABORT:
                assert played.result.status is RunStatus.INTERRUPTED, played.result
            else:
                assert played.result.status is RunStatus.SUCCESS, played.result.error

    @pytest.mark.anyio
    @pytest.mark.parametrize("case", ["tools", "approved", "fail_401"])
    async def test_replay_reproduces_the_run(self, case: str, play: Play) -> None:
        """A run recorded with `record_wire=True`, replayed from its wire log (`harness_core.open_replay`: the
        provider's own `run` on the recorded child, no CLI run), gives back its run log's events field by field,
        `WALL_CLOCK_FIELDS` aside: a run with tool calls, one with approvals, one that failed."""
        fields: dict[str, Any] = {}
        if case == "approved":
            if Capability.APPROVALS not in self.capabilities:
                pytest.skip(f"{self.provider_name} does not declare 'approvals'")
            fields = {"approval": "untrusted", "approver": lambda _request: ApprovalDecision.APPROVE}
        elif case not in self.failures:
            case = case if case in self.scenarios else "say"
        played = await play("tools" if case == "approved" else case, record_wire=True, **fields)
        recorded, replayed = await self.replay_of(played)
        assert_replayed_as_recorded(replayed, recorded)
        assert replayed[-1].type == "done"
        if case == "approved":
            assert played.of_type("approval_resolved"), "approval 'untrusted' must ask before at least one action"


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any name

    def __getattr__(name: str) -> Any:
        """A name this façade does not export: an ImportError saying where it is (`harness_core._facade`)."""
        raise missing_name(__name__, name)
