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


def _blocks(output: str) -> dict[str, str]:
    """Each scenario's block (its first line and the indented lines under it) as one line of text."""
    blocks: dict[str, str] = {}
    name = None
    for line in output.split("\n\n")[0].splitlines():
        if not line.startswith(" "):
            name = line.split()[0]
            blocks[name] = line
        elif name is not None:
            blocks[name] += " " + line.strip()
    return blocks


def test_scenarios_lists_each_one_with_its_description_within_the_width() -> None:
    result = CliRunner().invoke(cli, ["scenarios"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    blocks = _blocks(result.output)
    assert list(blocks) == list(SCENARIOS)
    for name, scenario in SCENARIOS.items():
        assert " ".join(scenario.description.split()) in " ".join(blocks[name].split())
    tools = blocks["tools"]
    assert tools.startswith("tools (default)")
    assert "asks with --approval untrusted (edit, write; command, read: some providers)" in tools
    assert "on-request --sandbox read-only (edit, write" in tools
    assert blocks["say"].endswith("[asks nothing]")
    assert "the default, never, asks nothing" in " ".join(result.output.split())
    assert max(len(line) for line in result.output.splitlines()) <= 100  # off a terminal: 100 columns
    from harness_core.cli.flags.scenarios import format_scenarios, scenario_rows

    narrow = format_scenarios(scenario_rows(), None, width=60)
    assert max(len(line) for line in narrow.splitlines()) <= 60 and _blocks(narrow).keys() == blocks.keys()


def test_scenarios_json() -> None:
    result = CliRunner().invoke(cli, ["scenarios", "--json"], catch_exceptions=False)
    rows = {r["name"]: r for r in json.loads(result.output)}
    assert list(rows) == list(SCENARIOS)
    assert rows["tools"]["tools"] == ["command", "read", "edit", "write"] and rows["tools"]["default"] is True
    assert rows["tools"]["asks_for_approval"]["untrusted"] == {"every_provider": ["edit", "write"],
                                                               "some_providers": ["command", "read"]}
    assert rows["print_secrets"]["asks_for_approval"]["on-request"] == {"read_only_sandbox": []}
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
