"""Contract tests of sessions (`harness_core.open_session`), for every provider declaring `session` or
`live_session`, and of structured output.

Layer: testing (mixed into `ProviderContract`). Knows the public session API, the scenario vocabulary, the
scripted model backends and the process-tree helpers; knows no concrete provider. docs/providers.md (sessions).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core import Session, SessionSpec, open_session
from harness_core.capabilities import Capability
from harness_core.errors import SessionClosedError, UnsupportedFeatureError
from harness_core.events import ApprovalDecision, ApprovalRequested, HarnessEvent, RunStarted, RunStatus
from harness_core.scripted.backends import ResponsesBackend, ScriptedBackend
from harness_core.scripted.scenarios import SCENARIOS, Scenario
from harness_core.testing.contract._base import ContractBase, Play, written_files
from harness_core.testing.contract._secrets import (
    Secret,
    assert_no_secrets_in_events,
    assert_no_secrets_in_files,
    plant_secrets,
    secrets_of,
)
from harness_core.testing.contract._support import Approver, Played, descendants
from harness_core.transport import proctree

__all__ = ["ContractSession", "OpenSession", "SessionTests"]

_MODEL = "harness-contract-model"
_TURN_MODEL = "harness-contract-turn-model"
_GONE_WITHIN = 5.0
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["answer", "count"],
}
"""What the `json` scenario's answer is valid against (and the `say` scenario's is not: it is not JSON)."""

OnEvent = Callable[[HarnessEvent, Any], None]


@dataclass
class ContractSession:
    """A session the contract opened: `turn` plays one turn to its end (within `run_deadline`) as a `Played`."""

    session: Session
    backend: ScriptedBackend | None
    workspace: Path
    contract: ContractBase
    scenario: Scenario
    secrets: tuple[Secret, ...]
    runs_dir: Path

    async def turn(self, prompt: str, *, on_event: OnEvent | None = None, **overrides: Any) -> Played:
        before = len(self.backend.requests) if self.backend is not None else 0
        events: list[HarnessEvent] = []
        dog = self.contract.watchdog(self.scenario, self.session.spec.idle_timeout)
        if self.backend is not None:
            self.backend.on_request(dog.saw_request)
        with anyio.move_on_after(self.contract.run_deadline) as deadline:
            async with dog.watching(), self.session.turn(prompt, **overrides) as live:
                dog.stop = live.stop
                async for event in live:
                    events.append(event)
                    dog.saw_event(event)
                    if on_event is not None:
                        on_event(event, live)
        if dog.hung is not None or deadline.cancelled_caught:
            self.contract.fail_hung(f"turn {self.session.turns} of a session on scenario {self.scenario.name!r}; "
                                    "`ProviderSession.turn` must return a result or raise a HarnessError", dog.hung)
        assert live.result is not None
        requests = list(self.backend.requests[before:]) if self.backend is not None else None
        played = Played(events, live.result, live.log_path or Path(), self.workspace, requests, self.secrets)
        assert_no_secrets_in_events(played.events, played.secrets)
        assert_no_secrets_in_files(written_files(self.runs_dir), played.secrets)
        return played

    def reseed(self, files: dict[str, str], made: tuple[str, ...] = ()) -> None:
        """Put the scenario's files back as they were and remove the ones it made, before a turn plays it again."""
        for rel, content in files.items():
            (self.workspace / rel).write_text(content)
        for rel in made:
            (self.workspace / rel).unlink(missing_ok=True)


OpenSession = Callable[..., AbstractAsyncContextManager[ContractSession]]


class SessionTests(ContractBase):
    """Sessions and structured output (see the module docstring)."""

    @pytest.fixture
    def open_contract_session(self, tmp_path: Path, harness_real: bool,
                              monkeypatch: pytest.MonkeyPatch) -> OpenSession:
        """`async with open_contract_session(name, approver=None, **session_fields) as cs:` a session on the
        scenario `name` (its backend, if any, serving every turn), closed when the block ends."""
        self._runs_dir = tmp_path / "runs"
        planted_spec_env, planted_env = plant_secrets()
        for variable, value in planted_env.items():
            monkeypatch.setenv(variable, value)

        @asynccontextmanager
        async def opened(name: str, *, approver: Approver | None = None,
                         **fields: Any) -> AsyncIterator[ContractSession]:
            scenario = SCENARIOS[name]
            workspace, state = tmp_path / "ws", tmp_path / "state"
            for path in (workspace, state):
                path.mkdir(exist_ok=True)
            for rel, content in scenario.files.items():
                (workspace / rel).write_text(content)
            setup = self.setup_run(scenario, workspace, state, real=harness_real, fault=None)
            if setup is None:
                pytest.skip(f"{self.provider_name} cannot play {name!r} in this mode")
            options = {**setup.provider_options, **fields.pop("provider_options", {})}
            env = {**setup.env, **planted_spec_env}
            spec = SessionSpec(cwd=workspace, provider_options=options, env=env, **fields)
            backend = setup.backend if isinstance(setup.backend, ScriptedBackend) else None
            if backend is not None:
                backend.replay_each_prompt = True  # each turn's prompt gets the scenario's answer
            if isinstance(backend, ResponsesBackend):
                backend.refuse_unknown_previous = True
            with ExitStack() as stack:
                if setup.backend is not None:
                    stack.enter_context(setup.backend)
                async with open_session(spec, self.provider_name, host=self._provider_host(),
                                        runs_dir=self._runs_dir, approver=approver) as session:
                    run_secrets = tuple(secrets_of(spec.env, os.environ))
                    yield ContractSession(session, backend, workspace, self, scenario, run_secrets, self._runs_dir)

        return opened

    def _require_sessions(self) -> None:
        if not {Capability.SESSION, Capability.LIVE_SESSION} & self.capabilities:
            pytest.skip(f"{self.provider_name} declares neither 'session' nor 'live_session' (refusal tested "
                        "in test_a_session_plays_three_turns_of_one_conversation)")

    def _own_process(self, cs: ContractSession) -> proctree.ProcEntry | None:
        """The live session's process (pid and start time), checked to be one this test started; None for a
        provider without a CLI (in-process: it has no process)."""
        pid = cs.session.pid
        if self._provider().cls.info.cli_name is None and pid is None:
            return None
        assert pid is not None, (
            f"{self.provider_name} declares 'live_session' but its session has no process: start the agent with "
            "`ctx.spawn(...)` in `open_session` (entered there with `async with`)")
        entry = next((e for e in proctree.descendants(os.getpid()) if e[0] == pid), None)
        assert entry is not None, f"the session's pid {pid} is not a process this test started"
        return entry

    # --- the tests ---------------------------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_a_session_plays_three_turns_of_one_conversation(self, open_contract_session: OpenSession,
                                                                     play: Play) -> None:
        """Three turns of `say`, each a run of its own (`run_started.session_turn` indexes 0..2, one `done`), all
        in one provider session. The second turn overrides the model (where the provider can) and the third is
        back on the session's. Where a scripted backend shows the requests (real mode), turns 2 and 3 carry the
        first turn's prompt (or chain to its response) and name the model each turn was given. With
        `live_session`, one process plays every turn and is gone once the session closes."""
        if not {Capability.SESSION, Capability.LIVE_SESSION} & self.capabilities:
            before = descendants()
            with pytest.raises(UnsupportedFeatureError) as caught:
                async with open_contract_session("say"):
                    pytest.fail(f"{self.provider_name} opened a session without declaring 'session'")
            assert self.provider_name in str(caught.value) and "Nothing was started" in str(caught.value)
            assert descendants() - before == set()
            return
        info = self._provider().cls.info
        live = Capability.LIVE_SESSION in info.capabilities
        override = not live or "model" in info.session_overrides
        word = f"harness-session-{secrets.token_hex(4)}"
        prompts = [f"contract scenario say: remember the word {word}", "contract scenario say: which word was it?",
                   "contract scenario say: and once more?"]
        async with open_contract_session("say", model=_MODEL) as cs:
            assert cs.session.live is live
            entry = self._own_process(cs) if live else None
            turns = []
            for index, prompt in enumerate(prompts):
                overrides: dict[str, Any] = {"model": _TURN_MODEL} if index == 1 and override else {}
                turns.append(await cs.turn(prompt, **overrides))
                if entry is not None:
                    assert cs.session.pid == entry[0] and proctree.alive([entry]), (
                        f"turn {index + 1} did not keep the session's process: a provider with 'live_session' "
                        "plays every turn on the process its open_session started")
            provider_session = cs.session.provider_session_id
        for index, played in enumerate(turns):
            self.check_invariants(played)
            assert played.result.status is RunStatus.SUCCESS, f"turn {index + 1}: {played.result.error}"
            assert played.result.final_text.strip() == SCENARIOS["say"].expected.final_text
            started = played.events[0]
            assert isinstance(started, RunStarted) and started.session_turn is not None
            assert (started.session_turn.index, started.session_turn.live) == (index, live), started.session_turn
        assert len({played.log_path for played in turns}) == 3, "each turn has its own run log"
        ids = [played.result.session_id for played in turns]
        assert all(ids) and ids[-1] == provider_session, f"every turn reports the session to continue: {ids}"
        if live:
            assert ids == [ids[0]] * 3, f"the turns of one live session report one provider session id: {ids}"
        else:  # a session id may advance with every run (a chained API): each turn resumes the one before
            resumed = [played.events[0].spec.get("resume_session") for played in turns[1:]
                       if isinstance(played.events[0], RunStarted)]
            assert resumed == ids[:2], f"turns 2 and 3 must resume the session the turn before reported: {resumed}"
        if entry is not None:
            assert not await _still_alive(entry), f"the session's process {entry[0]} outlived the session"
        if turns[1].requests is None:
            return
        for index in (1, 2):
            requests = turns[index].requests
            assert requests, f"turn {index + 1} sent no model request"
            first = requests[0]
            assert word in json.dumps(first) or first.get("previous_response_id"), (
                f"turn {index + 1}'s model request does not carry the first turn: the session lost its conversation")
        models = [played.requests[0].get("model") for played in turns if played.requests]
        expected = [_MODEL, _TURN_MODEL if override else _MODEL, _MODEL]
        assert models == expected, (
            f"the turns' model requests name {models}, not {expected}: an override applies to its turn only (a "
            "later turn without it gets the session's model back, even where the agent keeps it sticky)")

    @pytest.mark.anyio
    async def test_an_interrupted_turn_leaves_the_session_usable(self, open_contract_session: OpenSession) -> None:
        """Turn 2 of `tools` is interrupted while its approval waits (a point every turn reaches, however fast the
        agent): it ends `interrupted`, ended by the provider, and turn 3 then succeeds in the same session (and,
        with `live_session`, on the same process)."""
        self._require_sessions()
        for needed in (Capability.INTERRUPT, Capability.APPROVALS):
            self._require(needed)
        playing = [0]
        never = anyio.Event()  # set by no one: turn 2's approval waits until the interrupt withdraws it

        async def approver(request: ApprovalRequested) -> ApprovalDecision:
            if playing[0] == 2:
                with anyio.fail_after(self.run_deadline):
                    await never.wait()
            return ApprovalDecision.APPROVE

        asked: list[float] = []

        def interrupt_when_asked(event: HarnessEvent, live: Any) -> None:
            if event.type == "approval_requested" and not asked:
                asked.append(time.monotonic())
                live.interrupt()

        scenario = SCENARIOS["tools"]
        async with open_contract_session("tools", approval="untrusted", approver=approver) as cs:
            entry = self._own_process(cs) if cs.session.live else None
            playing[0] = 1
            first = await cs.turn("contract scenario tools")
            cs.reseed(scenario.files, ("new.txt",))
            playing[0] = 2
            second = await cs.turn("contract scenario tools: again", on_event=interrupt_when_asked)
            ended = time.monotonic()
            assert cs.session.closed is None, f"an interrupted turn closed the session: {cs.session.closed}"
            cs.reseed(scenario.files, ("new.txt",))
            playing[0] = 3
            third = await cs.turn("contract scenario tools: and again")
            if entry is not None:
                assert cs.session.pid == entry[0] and proctree.alive([entry]), "the interrupt cost the session its pid"
        assert first.result.status is RunStatus.SUCCESS, first.result.error
        assert asked, "turn 2 never asked for an approval to interrupt"
        self.check_invariants(second)
        assert second.result.status is RunStatus.INTERRUPTED, second.result
        error = second.result.error
        assert error is not None and error.code == "interrupted" and error.details.get("stopped_by") != "runner", (
            f"the provider did not end turn 2 after the interrupt; the runner stopped it hard: {error}")
        assert ended - asked[0] < self.interrupt_within, f"turn 2 took {ended - asked[0]:.1f} s to stop"
        self.check_invariants(third)
        assert third.result.status is RunStatus.SUCCESS, f"the turn after an interrupted one: {third.result.error}"
        if cs.session.live:
            assert third.result.session_id == first.result.session_id, "a live session keeps its agent session"
        else:  # the session id may advance with every run: turn 3 resumes the latest one reported
            started = third.events[0]
            assert isinstance(started, RunStarted)
            assert started.spec.get("resume_session") == (second.result.session_id or first.result.session_id)

    @pytest.mark.anyio
    async def test_an_approval_policy_changed_between_turns_applies_to_its_turn_only(
            self, open_contract_session: OpenSession) -> None:
        """Three turns of `tools` in a session with approval `never`: turn 1 asks nothing, turn 2 with
        `approval="untrusted"` asks before its actions (approved, they change the workspace), turn 3 without the
        override asks nothing again (an agent that keeps a policy sticky gets the session's back). For providers
        with `approvals` and sessions, where a live session can change the approval per turn."""
        self._require_sessions()
        self._require(Capability.APPROVALS)
        info = self._provider().cls.info
        if Capability.LIVE_SESSION in info.capabilities and "approval" not in info.session_overrides:
            pytest.skip(f"{self.provider_name}'s live sessions keep the approval policy for the whole session "
                        "(`ProviderInfo.session_overrides`; the refusal is a core test)")
        playing = [0]
        asked: list[tuple[int, ApprovalRequested]] = []

        def approver(request: ApprovalRequested) -> ApprovalDecision:
            asked.append((playing[0], request))
            return ApprovalDecision.APPROVE

        scenario = SCENARIOS["tools"]
        turns: list[Played] = []
        changed: list[bool] = []
        async with open_contract_session("tools", approval="never", approver=approver) as cs:
            plan: list[tuple[str, dict[str, Any]]] = [
                ("contract scenario tools", {}),
                ("contract scenario tools: again, asking first", {"approval": "untrusted"}),
                ("contract scenario tools: once more, as the session says", {}),
            ]
            for index, (prompt, overrides) in enumerate(plan):
                if index:
                    cs.reseed(scenario.files, ("new.txt",))
                playing[0] = index + 1
                turns.append(await cs.turn(prompt, **overrides))
                changed.append("beta" in (cs.workspace / "notes.txt").read_text()
                               and (cs.workspace / "new.txt").exists())
        for index, played in enumerate(turns):
            self.check_invariants(played)
            assert played.result.status is RunStatus.SUCCESS, f"turn {index + 1}: {played.result.error}"
            assert changed[index], f"turn {index + 1}'s edits did not change the workspace"
        by_turn = [[r for turn, r in asked if turn == index + 1] for index in range(3)]
        shown = [len(played.of_type("approval_requested")) for played in turns]
        assert not by_turn[0] and shown[0] == 0, (
            f"turn 1 (approval never) asked {shown[0]} time(s): the session's policy is 'never'")
        assert by_turn[1] and shown[1] == len(by_turn[1]), (
            "turn 2 with approval 'untrusted' never asked before acting: a per-turn approval override must reach "
            "the agent")
        resolved = turns[1].of_type("approval_resolved")
        assert len(resolved) == shown[1] and all(r.decision is ApprovalDecision.APPROVE for r in resolved)
        assert not by_turn[2] and shown[2] == 0, (
            f"turn 3 (no override) asked {shown[2]} time(s): an override applies to its turn only; a later turn "
            "without it gets the session's policy back, even where the agent keeps a policy sticky")

    @pytest.mark.anyio
    async def test_a_process_killed_between_turns_fails_the_next_turn(self, open_contract_session: OpenSession) -> None:
        """SIGKILL the live session's process after a turn: the next turn fails `process_exited`, the session says
        it is closed, and a turn after that is refused (`SessionClosedError`)."""
        self._require_sessions()
        if Capability.LIVE_SESSION not in self.capabilities:
            pytest.skip(f"{self.provider_name} does not declare 'live_session': each turn is a process of its own, "
                        "there is none to kill between turns")
        async with open_contract_session("say") as cs:
            first = await cs.turn("contract scenario say")
            assert first.result.status is RunStatus.SUCCESS, first.result.error
            entry = self._own_process(cs)
            if entry is None:
                pytest.skip(f"{self.provider_name} runs in-process: it has no process to kill")
            os.kill(entry[0], signal.SIGKILL)
            assert not await _still_alive(entry), f"the session's process {entry[0]} survived SIGKILL"
            try:
                second = await cs.turn("contract scenario say: are you there?")
            except SessionClosedError as exc:
                pytest.fail(f"the session closed itself when its process died between turns ({exc}): the next turn "
                            "must be played and fail with process_exited (a reader that outlives turns must not end "
                            "the provider's open_session; `ProviderSession.turn` raises ProcessExitedError)",
                            pytrace=False)
            self.check_invariants(second)
            assert second.result.status is RunStatus.FAILED, second.result
            assert second.result.error is not None and second.result.error.code == "process_exited", second.result.error
            assert cs.session.closed is not None, "the session must report that its process is gone"
            with pytest.raises(SessionClosedError):
                await cs.session.run("contract scenario say: and now?")

    @pytest.mark.anyio
    async def test_structured_output_is_parsed_and_validated(self, play: Play) -> None:
        """With `output_schema`, a JSON answer (scenario `json`) valid against it is the result's
        `structured_output`; a plain-text answer (`say`) fails `invalid_structured_output`. A provider without
        `structured_output` refuses the spec before anything starts."""
        if Capability.STRUCTURED_OUTPUT not in self.capabilities:
            await self._assert_refused(play, output_schema=_SCHEMA)
            return
        valid = await play("json", output_schema=_SCHEMA)
        self.check_invariants(valid)
        assert valid.result.status is RunStatus.SUCCESS, valid.result.error
        assert valid.result.structured_output == json.loads(SCENARIOS["json"].expected.final_text or "null")
        invalid = await play("say", output_schema=_SCHEMA)
        self.check_invariants(invalid)
        assert invalid.result.status is RunStatus.FAILED, invalid.result
        assert invalid.result.error is not None and invalid.result.error.code == "invalid_structured_output", (
            f"an answer that is not valid against the schema is a classified failure: {invalid.result.error}")


async def _still_alive(entry: proctree.ProcEntry) -> bool:
    """Whether the process is still running after up to `_GONE_WITHIN` seconds (a zombie counts as gone)."""
    with anyio.move_on_after(_GONE_WITHIN):
        while proctree.alive([entry]):  # noqa: ASYNC110 - polling another process: nothing here to wait on
            await anyio.sleep(0.05)
    return bool(proctree.alive([entry]))
