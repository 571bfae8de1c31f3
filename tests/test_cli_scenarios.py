"""`harness scenarios` and `--scenario help`: every offline scenario with what it does and when it asks for an
approval; an unknown `--scenario` names `harness scenarios`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

import harness_core.testing.scripted as scripted
from harness_core.cli import cli
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost, reset_host


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted)]))
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield
    reset_host(None)


def test_every_scenario_has_a_one_line_description() -> None:
    assert all(s.description and "\n" not in s.description for s in SCENARIOS.values())


def test_scenarios_lists_each_one_on_its_own_line() -> None:
    result = CliRunner().invoke(cli, ["scenarios"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for name, scenario in SCENARIOS.items():
        (line,) = [line for line in lines if line.split()[:1] == [name]]
        assert scenario.description in line
    (tools,) = [line for line in lines if line.startswith("tools (default)")]
    assert "asks with --approval untrusted (edit, write; command, read: some providers)" in tools
    assert "on-request --sandbox read-only (edit, write" in tools
    (say,) = [line for line in lines if line.startswith("say ")]
    assert say.endswith("[asks nothing]")
    assert "the default, never, asks nothing" in result.output


def test_scenarios_json() -> None:
    result = CliRunner().invoke(cli, ["scenarios", "--json"], catch_exceptions=False)
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert list(rows) == list(SCENARIOS)
    assert rows["tools"]["tools"] == ["command", "read", "edit", "write"] and rows["tools"]["default"] is True
    assert rows["tools"]["asks_for_approval"]["untrusted"] == {"every_provider": ["edit", "write"],
                                                               "some_providers": ["command", "read"]}
    assert rows["print_secrets"]["asks_for_approval"]["on-request"] == {"sandbox read-only": []}
    assert rows["fail_401"]["asks_for_approval"] is None and rows["fail_401"]["expected_status"] == "failed"


@pytest.mark.parametrize("command", [["run", "--offline"], ["chat", "--offline"]])
def test_scenario_help_prints_the_list_and_exits_0(command: list[str]) -> None:
    result = CliRunner().invoke(cli, [*command, "--scenario", "help"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == CliRunner().invoke(cli, ["scenarios"]).output


def test_an_unknown_scenario_names_harness_scenarios() -> None:
    result = CliRunner().invoke(cli, ["run", "--offline", "--scenario", "tool"])
    assert result.exit_code == 2
    assert "no offline scenario named 'tool'; did you mean 'tools'? `harness scenarios` lists them" in result.output
