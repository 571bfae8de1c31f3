"""An offline run stays offline whatever options it is given: the caller's options merge into the provider's offline
setup key by key (a table is never replaced), and what the setup pins — the options and variables that decide where
the agent connects — is refused with an error naming it, before anything is created. The scripted provider plays
(given an offline setup with pins here), so no CLI is needed; each real provider's pins are tested with it, and
`harness_core.testing.contract`'s `test_offline_run_connects_only_to_its_backend` watches the real CLIs."""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import Field, field_validator

import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, InvalidSpecError
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.hookspecs import hookimpl
from harness_core.offline import offline_spec, offline_workspace
from harness_core.offline._pins import LOOPBACK_ONLY, deep_merge
from harness_core.offline._setup import prepared_offline
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import MessagesBackend
from harness_core.scripted.scenarios import Scenario
from tests.cli.test_cli import invoke, make_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class PinnedOptions(scripted.ScriptedOptions):
    config: dict[str, Any] = Field(default_factory=dict)
    args: list[str] = Field(default_factory=list)

    @field_validator("args", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return shlex.split(value) if isinstance(value, str) else value


def _no_endpoint_args(options: Mapping[str, Any]) -> str | None:
    if any(arg.startswith("--endpoint") for arg in options.get("args") or ()):
        return "option args (--endpoint) is not taken: it points the agent at another model API"
    return None


class PinnedProvider(scripted.ScriptedProvider):
    """The scripted provider with an offline setup as a CLI-driving provider has one: a table of config (its
    endpoint and a retry count), arguments, and a variable naming its model API — the endpoint and the variable
    pinned, an `--endpoint` argument refused."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="pinned", version="1.0", capabilities=frozenset(Capability))
    Options = PinnedOptions
    setups: ClassVar[list[Path]] = []

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        type(self).setups.append(workspace)
        backend = MessagesBackend(scenario, cwd=workspace)
        return OfflineSetup(
            backend=backend,
            provider_options={"scenario": scenario.name, "config": {"endpoint": backend.url, "retries": "0"},
                              "args": ["--quiet"]},
            env={"AGENT_BASE_URL": backend.url, "AGENT_HOME": str(state_dir)},
            pinned_options={"config.endpoint": "is the model API the agent calls"},
            pinned_env={"AGENT_BASE_URL": "is the model API the agent calls"},
            check_options=_no_endpoint_args)


class UnpinnedProvider(PinnedProvider):
    """A setup that declares no pins: everything it sets is pinned."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="unpinned", version="1.0", capabilities=frozenset(Capability))
    Options = PinnedOptions

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        setup = super().offline_setup(scenario, workspace, state_dir)
        setup.pinned_options = setup.pinned_env = setup.check_options = None
        return setup


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(PinnedProvider)
        register(UnpinnedProvider)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)
    found = make_host(("pinned", _Plugin()))
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", "pinned")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    PinnedProvider.setups = []
    yield found
    reset_host(None)


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def _started(stdout: str) -> dict[str, Any]:
    first: dict[str, Any] = json.loads(stdout.splitlines()[0])
    assert first["type"] == "run_started"
    return first


# --- merged, never replaced ------------------------------------------------------------------------------


def test_one_key_of_a_table_the_setup_fills_is_merged_into_it(temp: Path) -> None:
    """`-o config.effort=high` once replaced the setup's whole `config` table, endpoint and all (an agent run went
    to its real model API): it is one more key of that table."""
    result = invoke("run", "--offline", "--json", "-o", "config.effort=high", "-o", "args=--verbose")
    assert result.exit_code == 0, result.output
    options = _started(result.stdout)["spec"]["provider_options"]
    assert set(options["config"]) == {"endpoint", "retries", "effort"} and options["config"]["effort"] == "high"
    assert options["args"] == ["--quiet", "--verbose"] and options["scenario"] == "tools"


def test_the_callers_own_value_wins_where_nothing_is_pinned(temp: Path) -> None:
    result = invoke("run", "--offline", "--json", "-o", "config.retries=3")
    assert result.exit_code == 0, result.output
    assert _started(result.stdout)["spec"]["provider_options"]["config"]["retries"] == "3"


def test_every_offline_run_bypasses_proxies_for_loopback(host: PluginHost) -> None:
    """A proxy in the user's environment would carry the calls to the loopback backend (prompts included) to the
    proxy's host: every offline spec says NO_PROXY for loopback, and a caller may not change it."""
    with offline_spec(AgentRunSpec(prompt="x", env={"MINE": "1"}), "pinned", "say", host=host) as spec:
        assert spec.env["NO_PROXY"] == spec.env["no_proxy"] == LOOPBACK_ONLY
        assert spec.env["MINE"] == "1" and spec.env["AGENT_BASE_URL"].startswith("http://127.0.0.1:")
    with (pytest.raises(InvalidSpecError, match="NO_PROXY is not taken: it keeps the calls to the loopback backend"),
          offline_spec(AgentRunSpec(prompt="x", env={"NO_PROXY": "*"}), "pinned", "say", host=host)):
        pytest.fail("must not be entered")


def test_the_backend_knows_which_tools_the_runs_filter_leaves_out(host: PluginHost) -> None:
    """So that its refusal of a call says the filter hid the tool (trial 27, problem 8)."""
    spec = AgentRunSpec(prompt="x", disallowed_tools=frozenset({"mcp:harness.add"}))
    with prepared_offline(spec, "pinned", "say", host=host) as (backend, _merged):
        assert backend.left_out("harness", "add") == "disallowed_tools 'mcp:harness.add'"
        assert backend.left_out("harness", "count_lines") is None and backend.left_out("ev", "add") is None


def test_deep_merge_merges_tables_joins_lists_and_lets_the_rest_win() -> None:
    base = {"a": {"b": 1, "c": {"d": 2}}, "l": ["x", "-c"], "s": "base"}
    over = {"a": {"c": {"e": 3}}, "l": ["-c", "y"], "s": "over", "n": 1}
    assert deep_merge(base, over) == {"a": {"b": 1, "c": {"d": 2, "e": 3}}, "l": ["x", "-c", "-c", "y"],
                                      "s": "over", "n": 1}
    assert base == {"a": {"b": 1, "c": {"d": 2}}, "l": ["x", "-c"], "s": "base"}  # untouched


def test_a_value_given_where_the_setup_has_a_table_is_refused_when_the_table_is_pinned(host: PluginHost) -> None:
    """An option above a pinned path (the whole table) would replace what is pinned inside it."""
    spec = AgentRunSpec(prompt="x", provider_options={"config": {}})
    with (pytest.raises(InvalidSpecError, match=r"option config \(it holds config.endpoint\) is not taken"),
          offline_spec(spec, "pinned", "say", host=host)):
        pytest.fail("must not be entered")


# --- pinned, refused before anything is created --------------------------------------------------------


@pytest.mark.parametrize(("option", "said"), [
    ("config.endpoint=http://192.0.2.1/v1", "option config.endpoint is not taken: it is the model API the agent calls"),
    ("config.endpoint.path=/v2", "option config.endpoint.path (under config.endpoint) is not taken"),
    ("args=--endpoint=http://192.0.2.1", "option args (--endpoint) is not taken: it points the agent at another"),
])
@pytest.mark.parametrize("background", [False, True])
def test_an_option_that_would_redirect_the_agent_is_refused_before_anything_is_created(
        tmp_path: Path, temp: Path, option: str, said: str, background: bool) -> None:
    result = invoke("run", "--offline", *(["--background"] if background else []), "-o", option)
    assert result.exit_code == 2, result.output
    assert f"harness: error: offline, {said}" in result.stderr
    assert "run without --offline" in result.stderr and "[providers.pinned]" in result.stderr
    assert "offline workspace" not in result.stderr and list(temp.iterdir()) == []
    assert not (tmp_path / "runs").exists() or not list((tmp_path / "runs").iterdir())


def test_a_refused_option_leaves_a_given_cwd_as_it_was(host: PluginHost, tmp_path: Path) -> None:
    given = tmp_path / "new-ws"
    spec = AgentRunSpec(prompt="x", cwd=given, provider_options={"config": {"endpoint": "http://192.0.2.1"}})
    with pytest.raises(InvalidSpecError, match=r"config\.endpoint is not taken"), \
            offline_workspace(spec, "pinned", host=host):
        pytest.fail("must not be entered")
    assert not given.exists()


def test_a_pinned_variable_of_the_specs_env_is_refused(host: PluginHost, temp: Path) -> None:
    spec = AgentRunSpec(prompt="x", env={"AGENT_BASE_URL": "http://192.0.2.1"})
    with (pytest.raises(InvalidSpecError, match=r"offline, environment variable AGENT_BASE_URL is not taken: it is "
                                                r"the model API the agent calls\. Drop it from the spec's env"),
          offline_workspace(spec, "pinned", host=host)):
        pytest.fail("must not be entered")
    assert list(temp.iterdir()) == []


def test_a_setup_without_pins_pins_everything_it_sets(host: PluginHost) -> None:
    for spec in (AgentRunSpec(prompt="x", provider_options={"config": {"retries": "3"}}),
                 AgentRunSpec(prompt="x", env={"AGENT_HOME": "/elsewhere"})):
        with (pytest.raises(InvalidSpecError, match="is not taken: it is set by the offline setup"),
              offline_spec(spec, "unpinned", "say", host=host)):
            pytest.fail("must not be entered")
    with offline_spec(AgentRunSpec(prompt="x", provider_options={"config": {"effort": "low"}}), "unpinned", "say",
                      host=host) as merged:
        assert merged.provider_options["config"]["effort"] == "low"


# --- never trusting its project ----------------------------------------------------------------------------


def test_an_offline_spec_never_trusts_its_project(host: PluginHost, tmp_path: Path) -> None:
    """A trusted project's own agent configuration (a base URL, an MCP server) could send an offline run's prompt
    off the machine: the Python API's offline spec does not trust its project, whatever the caller said."""
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, trust_project=True)
    with offline_spec(spec, "pinned", "say", host=host) as merged:
        assert merged.trust_project is False


def test_harness_run_offline_in_a_trusted_project_does_not_trust_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    config = tmp_path / "xdg" / "harness" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f"trusted_projects = [{json.dumps(str(project))}]\n")
    result = invoke("run", "--offline", "--json", "--cwd", str(project), "--force", "--scenario", "say", "hi")
    assert result.exit_code == 0, result.output
    assert _started(result.stdout)["spec"]["trust_project"] is False
