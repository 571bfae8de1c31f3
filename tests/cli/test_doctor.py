"""`harness doctor`: a CLI found but too old says so under its path, and each available provider's credentials
are checked through the optional `Provider.check_auth` hook (under a deadline; "not checked" without it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.cli.providers.report as reports
import harness_core.testing.scripted as scripted
from harness_core.agentcli.cache import clear_probe_cache
from harness_core.capabilities import ProviderInfo
from harness_core.errors import SpawnFailedError
from harness_core.hookspecs import hookimpl
from harness_core.plugins import reset_host
from harness_core.provider import AuthStatus, CliInfo, ProviderOptions, probe_cli
from tests.cli.test_cli import invoke, make_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FAKE_BIN: dict[str, str] = {}
"""Where each test's fake `agent` CLI is (set by the fixture)."""


class OldCliProvider(scripted.ScriptedProvider):
    """Drives a CLI (a shell script printing its version) that is older than the minimum."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="old-cli", version="1.0", cli_name="agent",
                                                min_cli_version="2.1.328")

    async def probe(self, options: ProviderOptions) -> CliInfo:
        return await probe_cli("agent", FAKE_BIN["agent"], install_hint="npm i agent", option_name="agent_bin",
                               minimum="2.1.328")

    async def check_auth(self, options: ProviderOptions, cli: CliInfo) -> AuthStatus:
        raise AssertionError("never called for an unavailable CLI")


class LoggedOut(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="logged-out", version="1.0")
    seen: ClassVar[list[CliInfo]] = []

    async def check_auth(self, options: ProviderOptions, cli: CliInfo) -> AuthStatus:
        type(self).seen.append(cli)
        return AuthStatus(logged_in=False, detail="not logged in", next_step="run `agent login`")


class LoggedIn(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="logged-in", version="1.0")

    async def check_auth(self, options: ProviderOptions, cli: CliInfo) -> AuthStatus:
        return AuthStatus(logged_in=True, detail="API key from AGENT_API_KEY")


class Hanging(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="hanging", version="1.0")

    async def check_auth(self, options: ProviderOptions, cli: CliInfo) -> AuthStatus:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class Failing(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="failing", version="1.0")

    async def check_auth(self, options: ProviderOptions, cli: CliInfo) -> AuthStatus | None:
        raise SpawnFailedError("`agent auth` exited with status 9")


def _plugin(*classes: type) -> Any:
    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            for cls in classes:
                register(cls)

    return Plugin()


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    agent = tmp_path / "agent"
    agent.write_text("#!/bin/sh\necho '2.1.300 (Agent)'\n")
    agent.chmod(0o755)
    FAKE_BIN["agent"] = str(agent)
    clear_probe_cache()
    LoggedOut.seen = []
    yield
    reset_host(None)


def test_a_cli_found_but_too_old_says_found_and_too_old(tmp_path: Path) -> None:
    reset_host(make_host(("old", _plugin(OldCliProvider))))
    result = invoke("doctor")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    at = lines.index("!! old-cli 1.0")
    assert lines[at + 1] == f"     cli: {tmp_path / 'agent'} (found)"
    assert lines[at + 2] == "     version: 2.1.300 — too old (minimum 2.1.328)"
    assert lines[at + 3].startswith("     supported: no: agent 2.1.300 is too old; Harness needs agent >= 2.1.328")
    assert lines[at + 4] == "     credentials: not checked (its CLI is not available)"
    assert "not found" not in result.stdout


def test_not_logged_in_is_a_problem_with_the_next_step() -> None:
    reset_host(make_host(("p", _plugin(LoggedOut, LoggedIn))))
    result = invoke("doctor")
    assert result.exit_code == 1
    assert "!! logged-out 1.0" in result.stdout and "ok logged-in 1.0" in result.stdout
    assert "     credentials: not logged in; run `agent login`" in result.stdout
    assert "     credentials: ok (API key from AGENT_API_KEY)" in result.stdout
    assert "1 problem(s) found" in result.stdout and "everything looks fine" not in result.stdout
    report = json.loads(invoke("doctor", "--json").stdout)
    assert report["credentials"]["logged-out"] == {"checked": True, "logged_in": False, "detail": "not logged in",
                                                   "next_step": "run `agent login`"}
    assert report["problems"] == ["provider logged-out: not logged in; run `agent login`"]
    assert LoggedOut.seen and LoggedOut.seen[0] == CliInfo()  # what the probe found is passed on


def test_logged_in_everywhere_and_providers_without_a_check_are_fine() -> None:
    reset_host(make_host(("p", _plugin(LoggedIn))))
    result = invoke("doctor")
    assert result.exit_code == 0, result.stdout
    assert "     credentials: not checked (the provider has no credentials check)" in result.stdout  # scripted
    assert result.stdout.rstrip().endswith("everything looks fine")


def test_a_hanging_or_failing_check_is_not_checked_never_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reports.doctor_report, "__defaults__", (0.2,))  # the deadline `harness doctor` uses
    reset_host(make_host(("p", _plugin(Hanging, Failing))))
    result = invoke("doctor")
    assert result.exit_code == 0, result.stdout
    assert "     credentials: not checked (the check took longer than 0.2 s)" in result.stdout
    assert "     credentials: not checked (`agent auth` exited with status 9)" in result.stdout


def test_a_bad_configuration_is_one_of_doctors_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reset_host(make_host(("p", _plugin(LoggedIn))))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "harness" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('# mine\nmax_turns = "3"\n')
    result = invoke("doctor")
    assert result.exit_code == 1, result.output
    problem = f'{user}:2: max_turns = "3": Input should be a valid integer'
    assert result.stdout.splitlines()[0] == f"!! config: {problem}"
    assert "ok logged-in 1.0" in result.stdout and "1 problem(s) found" in result.stdout
    assert json.loads(invoke("doctor", "--json").stdout)["problems"] == [f"config: {problem}"]
    user.write_text('provider = "logged-inn"\n[providers.gone]\nmodel = "m"\n')  # values the host checks
    result = invoke("doctor")
    assert result.exit_code == 1
    assert (f"!! config: {user}:1: provider = \"logged-inn\": no provider named 'logged-inn' is installed; did you "
            "mean 'logged-in'?") in result.stdout
    assert f"   config: warning: {user}:3: [providers.gone] is not used" in result.stdout
    user.write_text('provider = "logged-in"\n')
    result = invoke("doctor")
    assert result.exit_code == 0, result.stdout
    assert "ok logged-in 1.0 (default)" in result.stdout


class NeedsOptions(scripted.ScriptedProvider):
    """A provider that cannot probe without an option (the agent to drive, as a generic protocol provider)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="needs-options", version="1.0")

    async def probe(self, options: ProviderOptions) -> CliInfo:
        from harness_core.errors import InvalidSpecError

        raise InvalidSpecError("pass the agent's command: -o command=...")


def test_a_provider_that_needs_options_is_not_a_problem(tmp_path: Path) -> None:
    reset_host(make_host(("p", _plugin(NeedsOptions, LoggedIn))))
    result = invoke("doctor")
    assert result.exit_code == 0, result.stdout
    assert "-- needs-options 1.0" in result.stdout
    assert "     supported: no: pass the agent's command: -o command=..." in result.stdout
    assert result.stdout.rstrip().endswith("everything looks fine")
