"""The behavioural contract every Harness provider must pass, shipped for third parties.

Layer: testing. Knows the public runner API and the scenario vocabulary; knows no concrete provider. A
provider's whole contract test is one subclass (not named `Test*` here, so pytest collects it only through
a subclass):

    from harness_core.testing.contract import ProviderContract

    class TestMyProviderContract(ProviderContract):
        provider_name = "my-provider"

The provider is found only through its `harness` entry point. Fake mode (the default) plays scenarios through
`setup_run`, which a provider with a CLI overrides to point itself at its fake CLI; `--harness-real` plays
them through the provider's own `offline_setup` (the real CLI against a scripted model backend on 127.0.0.1).
Tests of capabilities the provider does not declare check the refusal instead. In real mode, a CLI that is not
on PATH is found through `HARNESS_<CLI>_BIN` (e.g. `HARNESS_MY_AGENT_BIN=/opt/my-agent/bin/my-agent` for a
CLI named `my-agent`) or in `$HARNESS_TOOLS_DIR/bin`. Every test runs under asyncio and trio.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

from harness_core import open_run
from harness_core.capabilities import Capability
from harness_core.errors import CliNotFoundError, CliVersionUnsupportedError, UnsupportedFeatureError
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    HarnessEvent,
    RunStatus,
    SessionStarted,
    ToolResult,
    ToolStatus,
)
from harness_core.offline.scenarios import SCENARIOS, Scenario
from harness_core.plugins import PluginHost, RegisteredProvider
from harness_core.provider import OfflineSetup
from harness_core.spec import AgentRunSpec
from harness_core.testing._contract_support import (
    Approver,
    Played,
    assert_invariants,
    descendants,
    find_real_cli,
    processes_left,
)
from harness_core.testing._killed_host import kill_host_during_command
from harness_core.transport.supervisor import available as supervisor_available

__all__ = ["Played", "ProviderContract", "descendants"]


class ProviderContract:
    """Subclass with `provider_name`; override `setup_run` to point the provider at its fake CLI."""

    provider_name: ClassVar[str]
    scenarios: ClassVar[tuple[str, ...]] = ("say", "tools", "think")
    """The success scenarios this provider can play."""
    failures: ClassVar[tuple[str, ...]] = ("fail_500", "fail_401", "fail_429")
    """The API-failure scenarios this provider can play."""
    interrupt_within: ClassVar[float] = 15.0
    """Seconds an interrupt may take, from the request to `done`."""
    run_deadline: ClassVar[float] = 90.0

    # --- the hook a provider overrides ---------------------------------------------------------------------

    def setup_run(self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool,
                  fault: str | None = None) -> OfflineSetup | None:
        """How to run `scenario`. `fault` is None, "too_old" (a CLI below the supported version) or "crash"
        (the CLI dies mid-turn). Return None to skip (e.g. a fault a real CLI cannot be made to show).

        Default: the provider's own `offline_setup` (a scripted model backend); in fake mode, a provider
        without one runs as it is, with `scenario=<name>` in its options (in-process providers). Providers
        that drive a CLI override this for fake mode, to point themselves at their fake CLI."""
        if fault is not None:
            return None
        info = self._provider().cls.info
        setup = self._provider().cls().offline_setup(scenario, workspace, state_dir)
        if setup is None and not real:
            return OfflineSetup(provider_options={"scenario": scenario.name})
        cli_path = self.real_cli_path()
        if setup is not None and cli_path:
            setup.provider_options.setdefault(f"{info.cli_name}_bin", cli_path)
        return setup

    def real_cli_path(self) -> str | None:
        """Where the real CLI is when it is not on PATH: `$HARNESS_<CLI>_BIN`, else `$HARNESS_TOOLS_DIR/bin/<cli>`
        (where `scripts/install-clis.sh` and the tox envs put the pinned CLIs)."""
        cli = self._provider().cls.info.cli_name
        return find_real_cli(cli) if cli is not None else None

    def missing_cli_options(self, state_dir: Path) -> dict[str, Any] | None:
        """Options pointing the provider at a CLI that does not exist (None: it has no CLI)."""
        cli = self._provider().cls.info.cli_name
        if cli is None:
            return None
        return {f"{cli}_bin": str(state_dir / "no-such-dir" / cli)}

    # --- fixtures ------------------------------------------------------------------------------------------

    @pytest.fixture(params=["asyncio", "trio"])
    def anyio_backend(self, request: pytest.FixtureRequest) -> str:
        """Every contract test runs under asyncio and trio: providers must be anyio-clean."""
        return str(request.param)

    @pytest.fixture
    def harness_real(self, request: pytest.FixtureRequest) -> bool:
        return bool(request.config.getoption("--harness-real", default=False))

    @pytest.fixture(autouse=True)
    def _no_process_left_alive(self) -> Iterator[None]:
        before = descendants()
        yield
        left = processes_left(before, within=5.0)
        assert not left, f"processes left alive after the run: {sorted(left)}"

    _host: ClassVar[PluginHost | None] = None

    def _provider(self) -> RegisteredProvider:
        if ProviderContract._host is None:
            ProviderContract._host = PluginHost.create()
        return ProviderContract._host.get(self.provider_name)

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self._provider().cls.info.capabilities

    def _require(self, capability: Capability) -> None:
        if capability not in self.capabilities:
            pytest.skip(f"{self.provider_name} does not declare {capability.value!r} (refusal tested instead)")

    @pytest.fixture
    def play(self, tmp_path: Path, harness_real: bool) -> Callable[..., Awaitable[Played]]:
        self._runs_dir = tmp_path / "runs"
        async def play(name: str, *, fault: str | None = None, approver: Approver | None = None,
                       on_event: Callable[[HarnessEvent, Any], None] | None = None, **spec_fields: Any) -> Played:
            scenario = SCENARIOS[name]
            workspace = tmp_path / "ws"
            state = tmp_path / "state"
            for path in (workspace, state):
                path.mkdir(exist_ok=True)
            for rel, content in scenario.files.items():
                (workspace / rel).write_text(content)
            setup = self.setup_run(scenario, workspace, state, real=harness_real, fault=fault)
            if setup is None:
                pytest.skip(f"{self.provider_name} cannot play {name!r}"
                            f"{' with fault ' + fault if fault else ''} in this mode")
            options = {**setup.provider_options, **spec_fields.pop("provider_options", {})}
            env = {**setup.env, **spec_fields.pop("env", {})}
            spec = AgentRunSpec(prompt=f"contract scenario {name}", cwd=workspace, provider_options=options,
                                env=env, **spec_fields)
            events: list[HarnessEvent] = []
            with ExitStack() as stack:
                if setup.backend is not None:
                    stack.enter_context(setup.backend)
                with anyio.fail_after(self.run_deadline):
                    async with open_run(spec, self.provider_name, host=self._provider_host(),
                                        runs_dir=tmp_path / "runs", approver=approver) as live:
                        async for event in live:
                            events.append(event)
                            if on_event is not None:
                                on_event(event, live)
            assert live.result is not None
            return Played(events, live.result, live.log_path or Path(), workspace)

        return play

    def _provider_host(self) -> PluginHost:
        self._provider()
        assert ProviderContract._host is not None
        return ProviderContract._host

    # --- invariants ----------------------------------------------------------------------------------------

    def check_invariants(self, played: Played) -> None:
        """The invariants every run holds (see `assert_invariants`); a subclass may add its own."""
        assert_invariants(played, self.provider_name)

    # --- scenarios -----------------------------------------------------------------------------------------

    def test_found_through_its_entry_point(self) -> None:
        registered = self._provider()
        assert registered.distribution, f"{self.provider_name} was not registered through an entry point"
        assert registered.cls.info.name == self.provider_name

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["say", "tools", "think"])
    async def test_scenario(self, name: str, play: Callable[..., Awaitable[Played]]) -> None:
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
                assert display.exit_code == want.exit_code, display
            assert display.status is ToolStatus.COMPLETED, display
        if Capability.SESSION in self.capabilities:
            assert played.result.session_id, "a provider with `session` must report the session id"

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["fail_500", "fail_401", "fail_429"])
    async def test_api_failure_is_classified(self, name: str, play: Callable[..., Awaitable[Played]]) -> None:
        if name not in self.failures:
            pytest.skip(f"{self.provider_name} does not play {name!r}")
        played = await play(name)
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED
        assert played.result.error is not None
        assert played.result.error.code == SCENARIOS[name].expected.error_code, played.result.error

    @pytest.mark.anyio
    async def test_stall_is_caught_by_idle_timeout(self, play: Callable[..., Awaitable[Played]]) -> None:
        started = time.monotonic()
        played = await play("stall", idle_timeout=3.0)
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED
        assert played.result.error is not None and played.result.error.code == "idle_timeout"
        assert time.monotonic() - started < 30

    # --- capabilities --------------------------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_streaming_deltas_arrive_before_the_result(self, play: Callable[..., Awaitable[Played]]) -> None:
        if Capability.STREAMING not in self.capabilities:
            await self._assert_refused(play, requires=[Capability.STREAMING])
            return
        played = await play("say")
        deltas = [e.seq for e in played.events if e.type == "text_delta"]
        assert len(deltas) >= 2, "a streaming provider must deliver the text in more than one delta"
        assert max(deltas) < played.events[-1].seq

    @pytest.mark.anyio
    async def test_resume_continues_the_session(self, play: Callable[..., Awaitable[Played]]) -> None:
        if Capability.SESSION not in self.capabilities:
            await self._assert_refused(play, resume_session="some-session")
            return
        first = await play("say")
        session = first.result.session_id
        assert session
        second = await play("say", resume_session=session)
        self.check_invariants(second)
        assert second.result.status is RunStatus.SUCCESS, second.result.error
        assert second.result.session_id, "a resumed run must report the session id to continue from"
        started = [e for e in second.events if isinstance(e, SessionStarted)]
        assert started, "a resumed run must emit session_started"
        # Ids may stay (a thread or session the agent keeps) or advance per run (chained API responses).
        assert started[0].session_id == session or started[0].resumed, started[0]

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["slow_text", "slow_command"])
    async def test_interrupt_ends_interrupted(self, name: str, play: Callable[..., Awaitable[Played]]) -> None:
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
        assert time.monotonic() - asked[0] < self.interrupt_within

    @pytest.mark.parametrize("sig", ["SIGKILL", "SIGHUP"])
    def test_nothing_outlives_a_killed_harness(self, sig: str, tmp_path: Path, harness_real: bool) -> None:
        """Whatever kills the process running Harness (SIGKILL, an OOM kill, the terminal closing), the agent
        and every process it started — also in their own session — are gone within seconds."""
        if not supervisor_available():
            pytest.skip("no process supervisor on this platform (Linux only)")
        scenario = SCENARIOS["slow_command"]
        workspace, state = tmp_path / "ws", tmp_path / "state"
        for path in (workspace, state):
            path.mkdir()
        for rel, content in scenario.files.items():
            (workspace / rel).write_text(content)
        setup = self.setup_run(scenario, workspace, state, real=harness_real, fault=None)
        if setup is None:
            pytest.skip(f"{self.provider_name} cannot play 'slow_command' in this mode")
        spec = AgentRunSpec(prompt="contract scenario slow_command", cwd=workspace,
                            provider_options=setup.provider_options, env=setup.env)
        with ExitStack() as stack:
            if setup.backend is not None:
                stack.enter_context(setup.backend)
            outcome, survivors = kill_host_during_command(spec, self.provider_name, tmp_path, signal.Signals[sig])
        if outcome != "killed":
            pytest.skip(f"{self.provider_name}: {outcome}")
        assert not survivors, f"alive 3 s after {sig} of the process running Harness: {survivors}"

    @pytest.mark.anyio
    @pytest.mark.parametrize("decision", list(ApprovalDecision))
    async def test_approvals(self, decision: ApprovalDecision, play: Callable[..., Awaitable[Played]]) -> None:
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

    async def _assert_refused(self, play: Callable[..., Awaitable[Played]], **fields: Any) -> None:
        before = descendants()
        with pytest.raises(UnsupportedFeatureError) as caught:
            await play("say", **fields)
        message = str(caught.value)
        assert self.provider_name in message and "Nothing was started" in message
        assert descendants() - before == set()
        assert not self._runs_dir.exists() or not any(self._runs_dir.iterdir()), "a refused run must not start"

    # --- faults --------------------------------------------------------------------------------------------

    @pytest.mark.anyio
    async def test_missing_cli_is_reported(self, tmp_path: Path, play: Callable[..., Awaitable[Played]]) -> None:
        options = self.missing_cli_options(tmp_path)
        if options is None:
            pytest.skip(f"{self.provider_name} drives no CLI")
        with pytest.raises(CliNotFoundError) as caught:
            await play("say", provider_options=options)
        assert "install" in str(caught.value).lower()

    @pytest.mark.anyio
    async def test_too_old_cli_is_refused(self, play: Callable[..., Awaitable[Played]]) -> None:
        minimum = self._provider().cls.info.min_cli_version
        if minimum is None:
            pytest.skip(f"{self.provider_name} declares no minimum CLI version")
        with pytest.raises(CliVersionUnsupportedError) as caught:
            await play("say", fault="too_old")
        assert minimum in str(caught.value)

    @pytest.mark.anyio
    async def test_cli_crash_mid_turn_is_reported(self, play: Callable[..., Awaitable[Played]]) -> None:
        played = await play("tools", fault="crash")
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED
        assert played.result.error is not None and played.result.error.code == "process_exited"
