"""A cloned repository's own agent configuration is loaded only for a trusted project: `harness run` and `harness
chat` set `trust_project` from the user's `trusted_projects` (the same list that trusts a `.harness.toml`), and in an
untrusted directory that holds configuration of the provider's agent (`ProviderInfo.project_config`) say so once,
naming the files and how to trust the project. Each provider keeps its agent from loading them (tested with the real
CLIs in the providers' `test_*project_trust_real.py`). A provider declaring an agent's project files is faked here."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner, Result

import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, SessionSpec
from harness_core.capabilities import ProviderInfo
from harness_core.cli import cli
from harness_core.events import RunStarted
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost, reset_host
from harness_core.store import read_events

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class ConfiguredProvider(scripted.ScriptedProvider):
    """The scripted provider, as if its agent loaded `.agent/settings.json` and `.agent/commands` from a project."""

    info: ClassVar[ProviderInfo] = scripted.ScriptedProvider.info.model_copy(
        update={"name": "configured", "project_config": (".agent/settings.json", ".agent/commands")})


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(ConfiguredProvider)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("HARNESS_PROVIDER", "configured")
    found = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("configured", _Plugin())])
    reset_host(found)
    yield found
    reset_host(None)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A cloned repository carrying the agent's configuration at its root; the run plays in `src/` below it."""
    root = tmp_path / "clone"
    (root / ".git").mkdir(parents=True)
    (root / ".agent" / "commands").mkdir(parents=True)
    (root / ".agent" / "settings.json").write_text('{"hooks": {}}')
    (root / "src").mkdir()
    return root


def invoke(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def trust(tmp_path: Path, directory: Path) -> None:
    user = tmp_path / "xdg" / "harness" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(textwrap.dedent(f"""\
        trusted_projects = [{json.dumps(str(directory))}]
    """))


def started(tmp_path: Path) -> list[RunStarted]:
    logs = sorted(p for p in (tmp_path / "runs").glob("*.jsonl") if not p.name.endswith(".wire.jsonl"))
    firsts = [next(iter(read_events(log))) for log in logs]
    assert all(isinstance(first, RunStarted) for first in firsts)
    return firsts  # type: ignore[return-value]


def test_an_untrusted_project_is_played_without_its_agent_config_and_says_so_once(tmp_path: Path, repo: Path) -> None:
    result = invoke("run", "-C", str(repo / "src"), "go")
    assert result.exit_code == 0, result.output
    (run,) = started(tmp_path)
    assert run.spec["trust_project"] is False
    notices = [line for line in result.stderr.splitlines()
               if "not loading the project's own agent configuration" in line]
    assert len(notices) == 1, result.stderr
    notice = notices[0]
    assert str(repo / ".agent" / "settings.json") in notice and str(repo / ".agent" / "commands") in notice
    assert f"{repo / 'src'} is not a trusted project" in notice
    assert f"add it to trusted_projects in {tmp_path / 'xdg' / 'harness' / 'config.toml'}" in notice


def test_a_trusted_project_keeps_its_agent_config_and_says_nothing(tmp_path: Path, repo: Path) -> None:
    trust(tmp_path, repo)  # the repository: its subdirectories are trusted too
    result = invoke("run", "-C", str(repo / "src"), "go")
    assert result.exit_code == 0, result.output
    (run,) = started(tmp_path)
    assert run.spec["trust_project"] is True and "not loading" not in result.stderr


def test_a_directory_without_agent_config_says_nothing_and_is_not_trusted(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = invoke("run", "-C", str(plain), "go")
    assert result.exit_code == 0, result.output
    assert started(tmp_path)[0].spec["trust_project"] is False and "not loading" not in result.stderr


def test_quiet_says_nothing_but_still_does_not_trust(tmp_path: Path, repo: Path) -> None:
    result = invoke("run", "-q", "-C", str(repo), "go")
    assert result.exit_code == 0 and "not loading" not in result.stderr
    assert started(tmp_path)[0].spec["trust_project"] is False


def test_a_chat_in_an_untrusted_project_says_so_once_for_all_its_turns(tmp_path: Path, repo: Path) -> None:
    result = invoke("chat", "-C", str(repo), input="one\ntwo\n")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("not loading the project's own agent configuration") == 1
    runs = started(tmp_path)
    assert len(runs) == 2 and all(run.spec["trust_project"] is False for run in runs)


def test_a_spec_trusts_no_project_unless_told() -> None:
    assert AgentRunSpec(prompt="x").trust_project is False and SessionSpec().trust_project is False
    assert SessionSpec(trust_project=True).turn("x").trust_project is True
