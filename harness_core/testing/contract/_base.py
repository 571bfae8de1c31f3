"""The machinery under the contract's tests: the hooks a provider overrides, the fixtures, and `play`.

Layer: testing (private base of `harness_core.testing.contract.ProviderContract`; documented there). Knows the
public runner API, the scenario vocabulary, the scripted model backends and the generic fault wrappers; knows no
concrete provider. What every played run is held to: docs/providers.md (the contract suite).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, ClassVar, NoReturn

import anyio
import pytest

from harness_core import load_wire, open_replay, open_run
from harness_core.capabilities import Capability
from harness_core.errors import UnsupportedFeatureError
from harness_core.events import HarnessEvent
from harness_core.plugins import PluginHost, RegisteredProvider
from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import Exchange, ResponsesBackend, ScriptedBackend
from harness_core.scripted.inline import scenario_to_json
from harness_core.scripted.scenarios import SCENARIOS, Scenario
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events
from harness_core.testing.contract._secrets import (
    assert_no_secrets_in_events,
    assert_no_secrets_in_files,
    plant_secrets,
    secrets_of,
)
from harness_core.testing.contract._support import (
    Approver,
    LateEmits,
    Played,
    assert_invariants,
    descendants,
    find_real_cli,
    processes_left,
)
from harness_core.testing.contract._watchdog import Watchdog
from harness_core.testing.fault_cli import below, write_crashing_cli, write_too_old_cli

__all__ = ["ContractBase", "Play", "written_files"]

Play = Callable[..., Awaitable[Played]]


def written_files(runs_dir: Path) -> list[Path]:
    """Every file the test's runs wrote in their runs dir (run logs, wire logs, whatever else)."""
    return sorted(p for p in runs_dir.rglob("*") if p.is_file()) if runs_dir.is_dir() else []


class ContractBase:
    """The hooks, fixtures and helpers of `ProviderContract` (see its docstring)."""

    provider_name: ClassVar[str]
    scenarios: ClassVar[tuple[str, ...]] = ("say", "tools", "think")
    """The success scenarios this provider can play."""
    failures: ClassVar[tuple[str, ...]] = ("fail_500", "fail_401", "fail_429")
    """The API-failure scenarios this provider can play."""
    reports_exit_codes: ClassVar[bool] = True
    """False for a provider whose agent does not say a command's exit status on its wire (ACP leaves it to the
    agent): its shell results must then leave `exit_code` None, never a guess."""
    reports_command_output: ClassVar[bool] = True
    """False for a provider whose agent does not send a command's output on its wire (the secrets test then checks
    the scrubbing of what does arrive: the model's answer repeating a secret)."""
    interrupt_within: ClassVar[float] = 15.0
    """Seconds an interrupt may take, from the request to `done`."""
    start_within: ClassVar[float] = 60.0
    """Seconds a played run may take to show a first sign of its agent (an event after `run_started`, a request to
    the scripted backend): the CLI's start-up."""
    hang_within: ClassVar[float] = 20.0
    """Seconds a played run may then go without any sign of progress (an event, a model request), beyond the
    longest pause its scenario itself makes (a stall cut short by the spec's `idle_timeout`, a slow command, a slow
    answer). Past it the run is stopped at once (its log still ends with `done`) and the test fails with
    "the provider never returned (scenario X): nothing happened for N s ...": a provider that swallowed an error
    and waits fails in seconds."""
    run_deadline: ClassVar[float] = 90.0
    """Seconds one played run may take in all, however busy, before the test fails the same way."""
    crash_after_lines: ClassVar[int] = 3
    fake_calls_mcp: ClassVar[bool | None] = None
    """Whether the agent played without `--harness-real` calls the MCP servers it is given (the Python-tool cases
    need one that does). None: the provider decides: one with a `cli_name` runs a fake CLI, which reports a step's
    `output` without calling; one without runs in process and calls them. A provider that runs a command it is
    given (no `cli_name`) sets False when its contract plays a fake."""
    """Real mode without a scripted backend: the crash wrapper kills the CLI after this many lines of stdout."""

    # --- the hooks a provider overrides --------------------------------------------------------------------

    def served_spec(self, name: str, tmp_path: Path, real: bool, stack: ExitStack) -> AgentRunSpec:
        """A spec that plays scenario `name` in `tmp_path/ws` (its files seeded; the state dir `tmp_path/state`),
        its backend (if any) served on 127.0.0.1 until `stack` closes: for tests that run the spec in another
        process (a killed host, a background worker). Skips when the provider cannot play it in this mode."""
        scenario = SCENARIOS[name]
        workspace, state = tmp_path / "ws", tmp_path / "state"
        for path in (workspace, state):
            path.mkdir()
        for rel, content in scenario.files.items():
            (workspace / rel).write_text(content)
        setup = self.setup_run(scenario, workspace, state, real=real, fault=None)
        if setup is None:
            pytest.skip(f"{self.provider_name} cannot play {name!r} in this mode")
        if setup.backend is not None:
            stack.enter_context(setup.backend)
        return AgentRunSpec(prompt=f"contract scenario {name}", cwd=workspace, provider_options=setup.provider_options,
                            env=setup.env)

    def setup_run(self, scenario: Scenario, workspace: Path, state_dir: Path, *, real: bool,
                  fault: str | None = None) -> OfflineSetup | None:
        """How to run `scenario`. `fault` is None, "too_old" (a CLI below the supported version) or "crash"
        (the CLI dies mid-turn). Return None to skip (the test says why with `-rs`).

        Default: the provider's own `offline_setup` (a scripted model backend) with the real CLI (`real_cli_path`,
        else PATH); in fake mode, a provider without one runs as it is, with `scenario=<name>` in its options
        (in-process providers), and `state_dir=<dir>` if its options have that field (its "home", where it
        keeps sessions across the runs of one test). Faults wrap that real CLI (`harness_core.testing.fault_cli`):
        "too_old" answers `--version` with a version below `ProviderInfo.min_cli_version`, "crash" SIGKILLs the
        CLI at its first line of output after the scripted backend received the turn's first model request.
        Providers that drive a CLI override this for fake mode, to point themselves at their fake CLI (and its
        own faults)."""
        cls = self._provider().cls
        setup = cls().offline_setup(scenario, workspace, state_dir)
        if setup is None:
            if real or fault is not None:
                return None
            named = SCENARIOS.get(scenario.name) is scenario
            options: dict[str, Any] = {"scenario": scenario.name if named else scenario_to_json(scenario)}
            if "state_dir" in cls.Options.model_fields:  # where an in-process agent keeps its sessions
                options["state_dir"] = str(state_dir)
            return OfflineSetup(provider_options=options)
        cli, cli_path = cls.info.cli_name, self.real_cli_path()
        if fault is not None:
            return self._with_fault(setup, fault, state_dir)
        if cli is not None and cli_path:
            setup.provider_options.setdefault(f"{cli}_bin", cli_path)
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

    def _why_not(self, name: str, fault: str | None, real: bool) -> str:
        """Why `setup_run` gave nothing for scenario `name` (the skip's reason)."""
        said = f"{self.provider_name} cannot play {name!r}{' with fault ' + fault if fault else ''} in this mode"
        info = self._provider().cls.info
        if fault is None or info.cli_name is None or self.real_cli_path() or shutil.which(info.cli_name):
            return said
        if fault == "too_old" and info.min_cli_version is None:
            return f"{said}: it declares no min_cli_version"
        return (f"{said}: the default setup_run plays faults with generic wrappers around the real {info.cli_name}, "
                f"and found none (HARNESS_{info.cli_name.upper().replace('-', '_')}_BIN, $HARNESS_TOOLS_DIR/bin, "
                f"PATH){'' if real else '; to play it with your fake CLI, override setup_run for real=False'}")

    def _with_fault(self, setup: OfflineSetup, fault: str, state_dir: Path) -> OfflineSetup | None:
        """`setup` with its CLI replaced by a fault wrapper around the real one (None: no CLI to wrap)."""
        info = self._provider().cls.info
        real = (self.real_cli_path() or shutil.which(info.cli_name)) if info.cli_name else None
        if info.cli_name is None or real is None:
            return None
        bin_dir = state_dir / f"fault-{fault}"
        if fault == "too_old":
            version = below(info.min_cli_version) if info.min_cli_version else None
            if version is None:
                return None
            wrapper = write_too_old_cli(bin_dir, info.cli_name, real, version)
        elif fault == "crash":
            backend = setup.backend
            if isinstance(backend, ScriptedBackend):
                armed = bin_dir / "armed"

                def arm(exchange: Exchange) -> None:
                    if exchange.turn:
                        armed.touch()

                backend.on_request(arm)
                wrapper = write_crashing_cli(bin_dir, info.cli_name, real, armed)
            else:
                wrapper = write_crashing_cli(bin_dir, info.cli_name, real, None, after_lines=self.crash_after_lines)
        else:
            raise ValueError(f"unknown fault {fault!r}: None, 'too_old' or 'crash'")
        setup.provider_options[f"{info.cli_name}_bin"] = str(wrapper)
        return setup

    # --- fixtures ------------------------------------------------------------------------------------------

    @pytest.fixture(params=["asyncio", "trio"])
    def anyio_backend(self, request: pytest.FixtureRequest) -> str:
        """Every contract test runs under asyncio and trio: providers must be anyio-clean (with `--harness-real`, trio
        only for `pytest_plugin.REAL_UNDER_TRIO`: the plugin deselects the others)."""
        return str(request.param)

    @pytest.fixture
    def harness_real(self, request: pytest.FixtureRequest) -> bool:
        return bool(request.config.getoption("--harness-real", default=False))

    @pytest.fixture(autouse=True)
    def _nothing_left_behind(self) -> Iterator[None]:
        """After each test: no process of its runs alive, no event emitted after a provider returned."""
        before = descendants()
        with LateEmits() as late:
            yield
            left = processes_left(before, within=5.0)
        assert not left, f"processes left alive after the run: {sorted(left)}"
        assert not late.refused, (
            f"events emitted after the provider's run returned (refused by the runner): {late.refused}")

    extra_plugins: ClassVar[tuple[tuple[str, Any], ...]] = ()
    """Plugins (name, module or object) registered beside the `harness` entry points, for a provider under test
    that is not installed as a distribution (`test_found_through_its_entry_point` then fails, as it should)."""
    _hosts: ClassVar[dict[tuple[str, ...], PluginHost]] = {}

    def _provider_host(self) -> PluginHost:
        key = tuple(name for name, _ in self.extra_plugins)
        host = ContractBase._hosts.get(key)
        if host is None:
            host = ContractBase._hosts[key] = PluginHost.create(plugins=self.extra_plugins)
        return host

    def _provider(self) -> RegisteredProvider:
        return self._provider_host().get(self.provider_name)

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self._provider().cls.info.capabilities

    def _require(self, capability: Capability) -> None:
        if capability not in self.capabilities:
            pytest.skip(f"{self.provider_name} does not declare {capability.value!r} (refusal tested instead)")

    @pytest.fixture
    def play(self, tmp_path: Path, harness_real: bool, monkeypatch: pytest.MonkeyPatch) -> Play:
        self._runs_dir = tmp_path / "runs"
        planted_spec_env, planted_env = plant_secrets()
        for variable, value in planted_env.items():
            monkeypatch.setenv(variable, value)

        async def play(name: str | Scenario, *, fault: str | None = None, approver: Approver | None = None,
                       on_event: Callable[[HarnessEvent, Any], None] | None = None, record_wire: bool = False,
                       check_secrets: bool = True, run_options: Mapping[str, Any] | None = None,
                       **spec_fields: Any) -> Played:
            scenario = name if isinstance(name, Scenario) else SCENARIOS[name]  # a test's own, or a named one
            name = scenario.name
            workspace = tmp_path / "ws"
            state = tmp_path / "state"
            for path in (workspace, state):
                path.mkdir(exist_ok=True)
            for rel, content in scenario.files.items():
                (workspace / rel).write_text(content)
            setup = self.setup_run(scenario, workspace, state, real=harness_real, fault=fault)
            if setup is None:
                pytest.skip(self._why_not(name, fault, harness_real))
            options = {**setup.provider_options, **spec_fields.pop("provider_options", {})}
            env = {**setup.env, **planted_spec_env, **spec_fields.pop("env", {})}
            prompt = spec_fields.pop("prompt", f"contract scenario {name}")
            spec = AgentRunSpec(prompt=prompt, cwd=workspace, provider_options=options, env=env, **spec_fields)
            events: list[HarnessEvent] = []
            if isinstance(setup.backend, ResponsesBackend):
                setup.backend.refuse_unknown_previous = True  # an unknown chain fails, as on the real API
            dog = self.watchdog(scenario, spec.idle_timeout)
            with ExitStack() as stack:
                if setup.backend is not None:
                    stack.enter_context(setup.backend)
                    setup.backend.on_request(dog.saw_request)
                with anyio.move_on_after(self.run_deadline) as deadline:
                    async with dog.watching(), open_run(spec, self.provider_name, host=self._provider_host(),
                                                        runs_dir=tmp_path / "runs", approver=approver,
                                                        record_wire=record_wire, **(run_options or {})) as live:
                        dog.stop = live.stop
                        async for event in live:
                            events.append(event)
                            dog.saw_event(event)
                            if on_event is not None:
                                on_event(event, live)
            if dog.hung is not None or deadline.cancelled_caught:
                self.fail_hung(f"scenario {name!r}", dog.hung)
            assert live.result is not None
            backend = setup.backend
            requests = list(backend.requests) if isinstance(backend, ScriptedBackend) else None
            played = Played(events, live.result, live.log_path or Path(), workspace, requests,
                            tuple(secrets_of(spec.env, os.environ)),
                            tuple(backend.tool_results) if isinstance(backend, ScriptedBackend) else None)
            if check_secrets:
                assert_no_secrets_in_events(played.events, played.secrets)
                assert_no_secrets_in_files(written_files(self._runs_dir), played.secrets)
            return played

        return play

    # --- helpers -------------------------------------------------------------------------------------------

    def watchdog(self, scenario: Scenario, idle_timeout: float | None = None) -> Watchdog:
        """The watchdog of one played run of `scenario` (`start_within`, `hang_within`, the scenario's pauses)."""
        return Watchdog(scenario, start_within=self.start_within, hang_within=self.hang_within,
                        idle_timeout=idle_timeout)

    def fail_hung(self, what: str, why: str | None) -> NoReturn:
        """Fail the test for a run (`what`: "scenario 'say'", "turn 2 of scenario 'tools'") that never returned:
        stopped by its watchdog (`why`) or, without a reason, by `run_deadline`."""
        reason = why or f"it was still going after `run_deadline`, {self.run_deadline:g} s"
        pytest.fail(
            f"the provider never returned ({what}): {reason}. The run was stopped (its log ends with `done`). A "
            "provider must end every run — return a result or raise a HarnessError — also when its agent failed (an "
            "error it swallowed, a message it still waits for). If the agent legitimately stays quiet longer (a slow "
            "start, retries with backoff), raise `start_within` / `hang_within` (or `run_deadline` for the whole run).",
            pytrace=False)

    async def replay_of(self, played: Played) -> tuple[list[HarnessEvent], list[HarnessEvent]]:
        """A run played with `record_wire=True`, replayed from its wire log (`harness_core.open_replay`: the
        provider's own `run` on the recorded child; no CLI runs): (its run log's events, the replayed events), to
        compare with `without_wall_clock`. The replay must end within `run_deadline`. Skips the test when the
        provider reached its agent without `RunContext.spawn` (in-process, or over HTTP it records itself with
        `RunContext.record_wire`): a replay plays only what a spawned child did."""
        wire = load_wire(played.log_path.with_name(played.log_path.name.removesuffix(".jsonl") + ".wire.jsonl"))
        if wire.outside or not wire.children:
            how = f"{wire.outside} lines it recorded itself" if wire.outside else "it spawned no child"
            pytest.skip(f"{self.provider_name} reaches its agent without `RunContext.spawn` ({how}): a replay plays "
                        "only a spawned child, side inputs (`read_side_input`) and approvals")
        recorded = list(read_events(played.log_path))
        with anyio.fail_after(self.run_deadline):
            async with open_replay(wire, host=self._provider_host()) as live:
                replayed = [event async for event in live]
        return recorded, replayed

    def check_invariants(self, played: Played) -> None:
        """The invariants every run holds (see `assert_invariants`); a subclass may add its own."""
        assert_invariants(played, self.provider_name)

    async def _assert_refused(self, play: Play, **fields: Any) -> None:
        before = descendants()
        with pytest.raises(UnsupportedFeatureError) as caught:
            await play("say", **fields)
        message = str(caught.value)
        assert self.provider_name in message and "Nothing was started" in message
        assert descendants() - before == set()
        assert not self._runs_dir.exists() or not any(self._runs_dir.iterdir()), "a refused run must not start"
