"""Offline runs: a provider's real CLI against an embedded scripted model backend on 127.0.0.1.

Layer: CLI support (used by `harness run --offline` and `harness demo`). Knows the provider interface's
`offline_setup` and the scenario vocabulary; knows no concrete provider. Needs no credentials and no network
beyond loopback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from harness_core._provider_interface import Provider
from harness_core._run.probe import preflight
from harness_core._run.tool_policy import tool_forbidden
from harness_core.errors import InvalidSpecError
from harness_core.files.scratch import Scratch
from harness_core.offline._pins import merge_offline
from harness_core.plugins import PluginHost, get_host
from harness_core.scripted.inline import ScenarioSyntaxError, scenario_from_json
from harness_core.scripted.scenarios import SCENARIOS, Scenario
from harness_core.spec import AgentRunSpec, SessionSpec

if TYPE_CHECKING:
    from harness_core.scripted.backends import ScriptedBackend

SpecT = TypeVar("SpecT", AgentRunSpec, SessionSpec)

OFFLINE_ENV = "HARNESS_OFFLINE"
"""Set (to "1") in the environment of every spec `offline_spec` yields: the run log keeps the name (values are
masked), so a later `harness run --continue` knows the run was offline (its agent state was temporary)."""

__all__ = [
    "DEFAULT_SCENARIO",
    "can_run_offline",
    "check_offline_servers",
    "check_offline",
    "offline_spec",
    "prepared_offline",
    "scenario_named",
    "seed_workspace",
    "workspace_conflict",
]
_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})

DEFAULT_SCENARIO = "tools"


def scenario_named(name: str) -> Scenario:
    """The scenario `name` names, or the one it writes inline (JSON starting with `{`, as batch tasks take it).

    Raises:
        InvalidSpecError: no scenario has that name, or the inline scenario does not describe one (saying why).
    """
    if name.lstrip().startswith("{"):
        try:
            return scenario_from_json(json.loads(name))
        except ValueError as exc:  # a JSON error, or a ScenarioSyntaxError
            what = "" if isinstance(exc, ScenarioSyntaxError) else "not JSON: "
            raise InvalidSpecError(f"inline scenario: {what}{exc}") from None
    try:
        return SCENARIOS[name]
    except KeyError:
        raise InvalidSpecError(
            f"no offline scenario named {name!r}; choose one of: {', '.join(SCENARIOS)}, or write one inline: "
            '{"steps": [{"say": "hello"}]}'
        ) from None


def seed_workspace(scenario: Scenario, workspace: Path) -> list[str]:
    """Create the files the scenario expects in `workspace` when they are missing; returns those created."""
    created = []
    root = workspace.resolve()
    for rel, content in scenario.files.items():
        target = (root / rel).resolve()
        if not target.is_relative_to(root):
            raise InvalidSpecError(f"scenario {scenario.name!r}: file {rel!r} is outside the workspace; give paths "
                                   "relative to it, without `..`")
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            created.append(rel)
    return created


def check_offline(spec: AgentRunSpec | SessionSpec, provider: str | None, scenario: Scenario | str,
                  *, host: PluginHost | None = None, pins: bool = True) -> Scenario:
    """Everything that can be checked before an offline run creates anything (a workspace, its files, a backend):
    the scenario exists, the provider exists and can run offline, `spec.provider_options` validate, the
    provider has every capability the spec needs and (with `pins`) no option or variable of the spec would take
    the agent off its scripted backend (`offline_spec` refuses those; to know them the provider's setup is made in
    a scratch directory, its backend bound and never served, then dropped). Returns the scenario.

    Raises:
        InvalidSpecError: no such scenario, the provider cannot run offline, its options do not validate, or an
            option or variable of the spec would take the agent off its scripted backend.
        ProviderNotFoundError: no such provider.
        UnsupportedFeatureError: the spec needs a capability the provider does not declare.
    """
    host = host or get_host()
    played = scenario_named(scenario) if isinstance(scenario, str) else scenario
    registered = host.get(provider)
    if not can_run_offline(registered.cls):
        raise _cannot_run_offline(registered.name, host)
    check_offline_servers(spec)
    preflight(spec, registered.name, host)
    if pins:
        scratch = Scratch("harness-offline-check-")
        try:
            with prepared_offline(SessionSpec.of(spec).model_copy(update={"cwd": scratch.path / "workspace"}),
                                  registered.name, played, host=host):
                pass
        finally:
            scratch.release()
    return played


def workspace_conflict(scenario: Scenario, workspace: Path) -> str | None:
    """Why playing `scenario` in `workspace` would touch the user's files, or None when it is safe (the directory
    is empty or new). The reason names what is there and what the scenario writes."""
    if not workspace.is_dir():
        return None
    present = sorted(p.name for p in workspace.iterdir())
    if not present:
        return None
    shown = ", ".join(present[:5]) + (f" and {len(present) - 5} more" if len(present) > 5 else "")
    writes = ", ".join(scenario.writes) or "no files of its own, but its commands run there"
    return (f"{workspace} is not empty ({shown}); the offline scenario {scenario.name!r} creates or changes files "
            f"there ({writes})")


def _left_out(spec: AgentRunSpec | SessionSpec, server: str, tool: str) -> str | None:
    return tool_forbidden(spec, tool, server)


def _cannot_run_offline(name: str, host: PluginHost) -> InvalidSpecError:
    able = [n for n, p in host.providers.items() if can_run_offline(p.cls)]
    return InvalidSpecError(
        f"provider {name!r} cannot run offline (it has no scripted model backend); "
        f"providers that can: {', '.join(sorted(able)) or 'none'}"
    )


@contextmanager
def offline_spec(spec: SpecT, provider: str | None = None, scenario: Scenario | str = DEFAULT_SCENARIO,
                 *, host: PluginHost | None = None) -> Iterator[SpecT]:
    """Start the provider's scripted backend for `scenario` (a `Scenario` or its name) and yield `spec`
    pointed at it; run that spec with the same provider inside the `with` block:

        with offline_spec(AgentRunSpec(prompt="hi", cwd=ws), "my-agent", "tools") as spec:
            result = await run(spec, "my-agent")

    `spec` may be a `SessionSpec` (for `open_session`): the backend plays the scenario again for every new prompt
    of the conversation, so each turn gets its answer, in the same workspace. The scenario's files are not
    created: call `seed_workspace` first if the workspace should have them. The
    CLI's own state (home, config, sessions) lives in a temporary directory removed afterwards. The caller's
    options are merged into the offline ones key by key (a table of options is merged, never replaced) and the
    caller's environment wins over the offline one, except for what the provider's setup pins because it decides
    where the agent connects (`OfflineSetup.pinned_options`, `pinned_env`, `check_options`): that is refused.
    Every offline run gets `NO_PROXY`/`no_proxy` set to the loopback addresses, so that a proxy from the
    environment never carries its calls off the machine, and never trusts its project (`trust_project` is False
    whatever the spec says): a project's own agent configuration could name another model API or an MCP server.

    Raises:
        ProviderNotFoundError: no such provider.
        InvalidSpecError: the provider cannot run offline, or an option or variable of the spec would take the
            agent off its backend (the message names it and why).
    """
    with prepared_offline(spec, provider, scenario, host=host) as (backend, merged), backend:
        yield merged


@contextmanager
def prepared_offline(spec: SpecT, provider: str | None, scenario: Scenario | str,
                     *, host: PluginHost | None = None) -> Iterator[tuple[ScriptedBackend, SpecT]]:
    """`offline_spec` up to serving: the provider's setup made (its state in a temporary directory, removed when
    the block ends), the spec merged with it, and the backend bound but not started. Creates nothing else, so that a
    refused option is refused before a workspace is. The caller enters the backend to serve it.

    Raises:
        ProviderNotFoundError: no such provider.
        InvalidSpecError: the provider cannot run offline, or an option or variable of the spec would take the
            agent off its backend.
    """
    host = host or get_host()
    if isinstance(scenario, str):
        scenario = scenario_named(scenario)
    registered = host.get(provider)
    if not can_run_offline(registered.cls):
        raise _cannot_run_offline(registered.name, host)
    check_offline_servers(spec)
    scratch = Scratch("harness-offline-")  # a killed Harness's is swept later (`harness runs prune`)
    state = scratch.path
    backend: ScriptedBackend | None = None
    try:
        setup = registered.cls().offline_setup(scenario, spec.cwd, state)
        backend = setup.backend if setup is not None else None
        if setup is None or backend is None:
            raise _cannot_run_offline(registered.name, host)
        options, env = merge_offline(setup, registered.cls(), spec.provider_options, spec.env)
        merged = spec.model_copy(update={"provider_options": options, "env": {**env, OFFLINE_ENV: "1"},
                                         "trust_project": False})  # a project's config could name another API
        backend.replay_each_prompt = True  # one conversation per backend: each turn plays the scenario
        backend.left_out = partial(_left_out, spec)  # a refused call says the filter hid the tool, if it did
        yield backend, merged
    finally:
        if backend is not None:
            backend.stop()  # idempotent: a refused or never-served backend releases its port too
        scratch.release()


def check_offline_servers(spec: AgentRunSpec | SessionSpec) -> None:
    """Refuse an MCP server an offline run would reach beyond this machine (an http or sse url whose host is not
    127.0.0.1, ::1 or localhost). A stdio server is a program the caller names; it runs as given.

    Raises:
        InvalidSpecError: naming the server and the way out.
    """
    for server in spec.mcp_servers:
        host = urlsplit(server.url).hostname if server.url else None
        if host is not None and host not in _LOOPBACK_HOSTS:
            raise InvalidSpecError(
                f"MCP server {server.name!r} is at {host}, beyond this machine: an offline run reaches nothing but "
                "127.0.0.1. Give a server on loopback (or a stdio command), or run without --offline")


def can_run_offline(cls: type) -> bool:
    return getattr(cls, "offline_setup", Provider.offline_setup) is not Provider.offline_setup
