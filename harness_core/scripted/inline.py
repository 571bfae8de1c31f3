"""Scenarios written as JSON: what a batch task's `scenario` field (and `--scenario`) may hold besides a name.

Layer: offline (pure data: no I/O, nothing started). Knows the scenario vocabulary; knows no provider and no
wire format. `scenario_to_json` writes the same form, so a `Scenario` round-trips. The form, step by step:
docs/providers.md (scenarios written as JSON).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

from harness_core.scripted.scenarios import (
    SCENARIOS,
    TOOL_RESULT,
    CallMcpTool,
    EditFile,
    Expected,
    Fail,
    ReadFile,
    ReportAttachments,
    RunCommand,
    Say,
    Scenario,
    Stall,
    Step,
    TakeLong,
    Think,
    WriteFile,
)

__all__ = ["ScenarioSyntaxError", "scenario_from_json", "scenario_to_json"]

_KINDS: dict[str, tuple[type[Any], str]] = {
    # key in JSON → (step class, the field the key's value fills)
    "say": (Say, "text"),
    "think": (Think, "text"),
    "run": (RunCommand, "command"),
    "read": (ReadFile, "path"),
    "write": (WriteFile, "path"),
    "edit": (EditFile, "path"),
    "fail": (Fail, "status"),
    "stall": (Stall, "seconds"),
    "take_long": (TakeLong, "seconds"),
    "mcp": (CallMcpTool, "tool"),
    "report_attachments": (ReportAttachments, "chunks"),
}
_KEY_OF = {cls: (key, first) for key, (cls, first) in _KINDS.items()}
_TYPES: dict[str, tuple[type, ...]] = {
    "text": (str,), "command": (str,), "path": (str,), "content": (str,), "old": (str,), "new": (str,),
    "output": (str,), "message": (str,), "exit_code": (int,), "status": (int,), "chunks": (int,),
    "seconds": (int, float), "delay": (int, float),
}
_ENDINGS = (Say, Fail, Stall, ReportAttachments)
_MCP_FIELDS = {"server": str, "tool": str, "args": Mapping, "output": str}


class ScenarioSyntaxError(ValueError):
    """A scenario given as JSON does not describe one; the message names the step and what to write instead."""


def scenario_from_json(value: Any, *, name: str | None = None) -> Scenario:
    """The `Scenario` a JSON value describes: a named scenario's name (`"tools"`), or an object with `steps`
    (required) and optionally `files` and `description`. `name` names an inline scenario (default: `inline-`
    and a hash of its content, so equal scenarios have equal names).

    Raises:
        ScenarioSyntaxError: an unknown name, a step that is not one of the forms above, a field of the wrong
            type, or a last step the model could not end its turn with (it must be `say`, `fail` or `stall`).
    """
    if isinstance(value, str):
        found = SCENARIOS.get(value)
        if found is None:
            close = difflib.get_close_matches(value, list(SCENARIOS), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ScenarioSyntaxError(f"no offline scenario named {value!r}; {hint}choose one of: "
                                      f"{', '.join(SCENARIOS)}, " 'or write one inline: {"steps": [{"say": "hello"}]}')
        return found
    if not isinstance(value, Mapping):
        raise ScenarioSyntaxError(f"a scenario is a name or an object with `steps`, not {type(value).__name__}")
    unknown = sorted(set(value) - {"steps", "files", "description"})
    if unknown:
        raise ScenarioSyntaxError(f"unknown scenario field(s) {', '.join(map(repr, unknown))}; a scenario has "
                                  "`steps` (required), `files` and `description`")
    raw_steps = value.get("steps")
    if not isinstance(raw_steps, list) or not raw_steps:
        raise ScenarioSyntaxError('a scenario needs a non-empty list `steps`, e.g. [{"say": "hello"}]')
    steps = tuple(_step(raw, index) for index, raw in enumerate(raw_steps, 1))
    if not isinstance(steps[-1], _ENDINGS):
        raise ScenarioSyntaxError(f"step {len(steps)} is the last: it must end the model's turn (`say`, `fail` or "
                                  f"`stall`), not `{_KEY_OF[type(steps[-1])][0]}`; add e.g. {{\"say\": \"done\"}}")
    files = value.get("files", {})
    if not isinstance(files, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise ScenarioSyntaxError('`files` maps relative paths to their text: {"notes.txt": "alpha\\n"}')
    for path in [*files, *(getattr(step, "path", "") for step in steps)]:
        if path and (path.startswith(("/", "~")) or ".." in Path(path).parts):
            raise ScenarioSyntaxError(f"path {path!r} leaves the workspace: give paths relative to it, without `..`")
    description = value.get("description", "")
    if not isinstance(description, str):
        raise ScenarioSyntaxError("`description` is a line of text")
    if name is None:
        digest = hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:10]
        name = f"inline-{digest}"
    return Scenario(name, steps, _expected(steps), dict(files), description or "A scenario written inline.")


def scenario_to_json(scenario: Scenario) -> dict[str, Any]:
    """`scenario` in the form `scenario_from_json` reads (fields left at their defaults are left out)."""
    steps: list[dict[str, Any]] = []
    for step in scenario.steps:
        if isinstance(step, CallMcpTool):
            call: dict[str, Any] = {"server": step.server, "tool": step.tool, "args": dict(step.args)}
            steps.append({"mcp": {**call, **({"output": step.output} if step.output else {})}})
            continue
        if isinstance(step, ReportAttachments):
            steps.append({"report_attachments": True})
            continue
        key, first = _KEY_OF[type(step)]
        entry: dict[str, Any] = {key: getattr(step, first)}
        for f in fields(step):
            if f.name != first and getattr(step, f.name) != f.default:
                entry[f.name] = getattr(step, f.name)
        steps.append(entry)
    out: dict[str, Any] = {"steps": steps}
    if scenario.files:
        out["files"] = dict(scenario.files)
    if scenario.description:
        out["description"] = scenario.description
    return out


def _step(raw: Any, index: int) -> Step:
    if not isinstance(raw, Mapping):
        raise ScenarioSyntaxError(f"step {index}: a step is an object such as {{\"say\": \"hello\"}}, not {raw!r}")
    kinds = [k for k in raw if k in _KINDS]
    if len(kinds) != 1:
        raise ScenarioSyntaxError(f"step {index}: name exactly one kind of step ({', '.join(_KINDS)}); got "
                                  f"{', '.join(map(repr, raw)) or 'nothing'}")
    if kinds[0] == "mcp":
        return _mcp_step(raw, index)
    if kinds[0] == "report_attachments":
        if raw != {"report_attachments": True}:
            raise ScenarioSyntaxError(f'step {index}: write it {{"report_attachments": true}}, with nothing else')
        return ReportAttachments()
    cls, first = _KINDS[kinds[0]]
    known = {f.name for f in fields(cls)}
    values = {first: raw[kinds[0]], **{k: v for k, v in raw.items() if k != kinds[0]}}
    extra = sorted(set(values) - known)
    if extra:
        raise ScenarioSyntaxError(f"step {index} ({kinds[0]}): unknown field(s) {', '.join(map(repr, extra))}; "
                                  f"it takes {', '.join(sorted(known - {first})) or 'nothing else'}")
    for key, item in values.items():
        wanted = _TYPES.get(key, (str,))
        if not isinstance(item, wanted) or isinstance(item, bool):
            kind = "a number" if float in wanted else ("a whole number" if int in wanted else "text")
            raise ScenarioSyntaxError(f"step {index} ({kinds[0]}): `{key}` must be {kind}, not {item!r}")
    try:
        step: Step = cls(**values)
    except TypeError as exc:  # a required field left out
        raise ScenarioSyntaxError(f"step {index} ({kinds[0]}): {exc}") from None
    return step


def _mcp_step(raw: Mapping[str, Any], index: int) -> CallMcpTool:
    call = raw["mcp"]
    example = '{"mcp": {"server": "harness", "tool": "add", "args": {"a": 2, "b": 3}}}'
    if len(raw) != 1 or not isinstance(call, Mapping):
        raise ScenarioSyntaxError(f"step {index} (mcp): the call is one object, e.g. {example}")
    unknown = sorted(set(call) - set(_MCP_FIELDS))
    if unknown:
        raise ScenarioSyntaxError(f"step {index} (mcp): unknown field(s) {', '.join(map(repr, unknown))}; it takes "
                                  "server, tool, args and output")
    for key, wanted in _MCP_FIELDS.items():
        if key in call and not isinstance(call[key], wanted):
            kind = "an object" if wanted is Mapping else "text"
            raise ScenarioSyntaxError(f"step {index} (mcp): `{key}` must be {kind}, not {call[key]!r}")
    if not call.get("server") or not call.get("tool"):
        raise ScenarioSyntaxError(f"step {index} (mcp): name the `server` and the `tool`, e.g. {example}")
    return CallMcpTool(call["server"], call["tool"], dict(call.get("args", {})), call.get("output", ""))


def _expected(steps: tuple[Step, ...]) -> Expected:
    last = steps[-1]
    if isinstance(last, Fail):
        code = "rate_limited" if last.status == 429 else "auth_failed" if last.status == 401 else "model_error"
        return Expected(status="failed", error_code=code)
    if isinstance(last, Stall):
        return Expected(status="failed", error_code="idle_timeout")
    if isinstance(last, ReportAttachments):
        return Expected()
    assert isinstance(last, Say)
    return Expected(final_text=last.text if TOOL_RESULT not in last.text else None)
