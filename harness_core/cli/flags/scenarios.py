"""`harness scenarios` and `--scenario` (`checked_scenario`: `help`, a name, inline JSON or a .json file): the
offline scenarios, one line each: what the scripted model does, which tools it calls, when those ask.

Layer: CLI, loaded when a command runs; knows the scenario vocabulary and the provider-neutral meaning of the
approval policies (docs/sessions.md), no concrete provider.
"""

from __future__ import annotations

import difflib
import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import click

from harness_core.capabilities import Capability
from harness_core.cli.output import dumps
from harness_core.errors import InvalidSpecError
from harness_core.offline import DEFAULT_SCENARIO, SCENARIOS, can_run_offline, scenario_named
from harness_core.plugins import get_host
from harness_core.scripted.scenarios import Scenario

__all__ = ["HELP", "format_scenarios", "checked_scenario", "scenario_rows", "scenarios"]

HELP = "help"
"""`--scenario help`: list the scenarios and exit."""

_KIND = {"RunCommand": "command", "ReadFile": "read", "EditFile": "edit", "WriteFile": "write"}


def _tools(scenario: Scenario) -> list[str]:
    """The scenario's tool steps, in order, as kinds (command, read, edit, write)."""
    return [_KIND[type(step).__name__] for step in scenario.steps if type(step).__name__ in _KIND]


def _asks(tools: list[str]) -> dict[str, Any]:
    """When the scenario's tools may ask, by policy (provider-neutral: see the module docstring)."""
    changes = [t for t in tools if t in ("edit", "write")]
    others = [t for t in tools if t not in ("edit", "write")]
    return {
        "never": [],
        "untrusted": {"every_provider": changes, "some_providers": others},
        "on-request": {"read_only_sandbox": changes},
    }


def scenario_rows() -> list[dict[str, Any]]:
    """Every scenario as `harness scenarios --json` prints it."""

    rows = []
    for scenario in SCENARIOS.values():
        tools = _tools(scenario)
        rows.append({"name": scenario.name, "default": scenario.name == DEFAULT_SCENARIO,
                     "description": scenario.description, "tools": tools, "files": sorted(scenario.files),
                     "expected_status": scenario.expected.status, "asks_for_approval": _asks(tools) if tools else None})
    return rows


def _asks_text(row: dict[str, Any]) -> str:
    asks = row["asks_for_approval"]
    if asks is None:
        return "asks nothing"
    untrusted = asks["untrusted"]
    parts = []
    if untrusted["every_provider"] or untrusted["some_providers"]:
        sure = ", ".join(untrusted["every_provider"])
        maybe = ", ".join(untrusted["some_providers"])
        parts.append("asks with --approval untrusted (" + "; ".join(
            [*([sure] if sure else []), *([f"{maybe}: some providers"] if maybe else [])]) + ")")
    if asks["on-request"]["read_only_sandbox"]:
        parts.append(f"with on-request --sandbox read-only ({', '.join(asks['on-request']['read_only_sandbox'])}: "
                     "some providers)")
    return ", ".join(parts)


def format_scenarios(rows: list[dict[str, Any]], approvals: list[str] | None = None, width: int = 100) -> str:
    """The text of `harness scenarios`: a block per scenario (its name, then what it does and when it asks,
    wrapped to `width`), then how to play one and when approvals are asked (`approvals`: the installed providers
    that can ask, when known)."""

    column = max(len(r["name"]) for r in rows) + len(" (default)") + 2
    wrap = max(width - column, 30)
    lines = []
    for row in rows:
        name = row["name"] + (" (default)" if row["default"] else "")
        text = textwrap.wrap(f"{row['description']} [{_asks_text(row)}]", wrap, break_on_hyphens=False)
        lines += [f"{name:<{column}}{text[0]}", *(" " * column + more for more in text[1:])]
    lines += ["", *textwrap.wrap("Play one: harness run --offline --scenario NAME [-p PROVIDER] [--approval untrusted]",
                                 max(width, 40), break_on_hyphens=False, subsequent_indent="  ")]
    lines += textwrap.wrap(
        "Approvals are asked only with --approval untrusted or on-request (the default, never, asks nothing)"
        + (f", by providers with the approvals capability ({', '.join(approvals)})" if approvals is not None else "")
        + ". Which tools ask is the agent's choice: edits and writes always under untrusted, commands and reads "
          "with some providers; under on-request only what the sandbox forbids, where the agent asks instead of "
          "refusing.", max(width, 40), break_on_hyphens=False)
    return "\n".join(lines)


def _width() -> int:
    """The terminal's width on a terminal (100 off one)."""
    return shutil.get_terminal_size((100, 24)).columns if sys.stdout.isatty() else 100


def _approvers() -> list[str] | None:
    """The installed providers that can ask for approvals and run offline (None when the host cannot say)."""
    try:
        host = get_host()
        return [n for n in host.providers_with(Capability.APPROVALS) if can_run_offline(host.providers[n].cls)]
    except Exception:  # noqa: BLE001 - the list is a courtesy; the scenarios are listed whatever the plugins do
        return None


def scenarios(as_json: bool) -> None:
    """The body of `harness scenarios` (its help: `providers.commands`)."""
    rows = scenario_rows()
    click.echo(dumps(rows) if as_json else format_scenarios(rows, _approvers(), _width()))


def _inline_scenario(value: str) -> str:
    """`--scenario` written inline (JSON) or in a `.json` file: checked, and given on as compact JSON (a background
    run's worker plays it without the file)."""
    text = value
    if not value.lstrip().startswith("{"):
        try:
            text = Path(value).expanduser().read_text()
        except OSError as exc:
            raise click.BadParameter(f"cannot read scenario file {value!r}: {exc.strerror}") from None
    if not text.lstrip().startswith("{"):
        raise click.BadParameter(f'scenario file {value!r} does not hold a JSON object: {{"steps": [{{"say": "hi"}}]}}')
    try:
        scenario_named(text)
    except InvalidSpecError as exc:
        raise click.BadParameter(str(exc)) from None
    return json.dumps(json.loads(text), separators=(",", ":"))


def checked_scenario(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`--scenario`: `help` prints the list and exits 0; a name no scenario has is a usage error that suggests
    the closest names and `harness scenarios`."""
    if value == HELP:
        click.echo(format_scenarios(scenario_rows(), _approvers(), _width()))
        ctx.exit(0)
    if ctx.get_parameter_source(param.name or "") is click.core.ParameterSource.DEFAULT:
        return value
    if value.lstrip().startswith("{") or (value not in SCENARIOS and value.endswith(".json")):
        return _inline_scenario(value)
    if value not in SCENARIOS:
        close = difflib.get_close_matches(value, list(SCENARIOS), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise click.BadParameter(f"no offline scenario named {value!r}; {hint}`harness scenarios` lists them "
                                 f"({', '.join(SCENARIOS)})")
    return value
