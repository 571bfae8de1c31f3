"""The data behind `harness providers`, `doctor`, `runs`, `show` and `schema`, as plain JSON-able dicts, plus
their text tables.

Layer: CLI (imported only when one of those commands runs). Knows the plugin host, the provider interface
(`probe`), the run store and the event models; knows nothing of any concrete provider.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio

from harness_core.errors import HarnessError, InvalidSpecError
from harness_core.events import (
    EVENT_ADAPTER,
    ContextUsage,
    Done,
    ErrorEvent,
    HarnessResult,
    HarnessToolDetails,
    RunStarted,
    SessionStarted,
    TextDelta,
    ToolResult,
    ToolUse,
    Usage,
)
from harness_core.plugins import PluginHost, RegisteredProvider
from harness_core.render import format_duration, format_tokens, tool_line
from harness_core.spec import AgentRunSpec
from harness_core.store import list_runs, log_path, read_events, summarize, validate_run_id

__all__ = [
    "PROBE_DEADLINE",
    "doctor_report",
    "format_doctor",
    "format_providers",
    "format_runs",
    "format_show",
    "provider_report",
    "run_details",
    "runs_report",
    "schema_for",
]

PROBE_DEADLINE = 10.0
"""Seconds each provider's probe may take before it is reported as unavailable."""
_EXCERPT = 48


# --- providers and doctor ---------------------------------------------------------------------------------

async def _probe(registered: RegisteredProvider, deadline: float) -> dict[str, Any]:
    info = registered.cls.info
    found: dict[str, Any] = {"available": False, "reason": None, "cli_path": None, "cli_version": None}
    try:
        instance = registered.cls()
        with anyio.fail_after(deadline):
            cli = await instance.probe(instance.parse_options({}))
    except TimeoutError:
        found["reason"] = f"the availability probe took longer than {deadline:g} s"
    except HarnessError as exc:
        found.update(reason=exc.message, error_code=exc.code)
    except Exception as exc:  # noqa: BLE001 - a buggy probe is reported, never fatal to the listing
        found["reason"] = f"the provider's probe crashed: {type(exc).__name__}: {exc}"
    else:
        found.update(available=True, cli_path=cli.path, cli_version=cli.version)
    found["cli_name"] = info.cli_name
    found["min_cli_version"] = info.min_cli_version
    return found


async def provider_report(host: PluginHost, deadline: float = PROBE_DEADLINE) -> dict[str, Any]:
    """Every registered provider (probed concurrently, each under `deadline`) and every broken plugin."""
    default = host.default_name()
    probes: dict[str, dict[str, Any]] = {}

    async def probe_one(registered: RegisteredProvider) -> None:
        probes[registered.name] = await _probe(registered, deadline)

    async with anyio.create_task_group() as tg:
        for registered in host.providers.values():
            tg.start_soon(probe_one, registered)
    providers = []
    for name in host.names():
        registered = host.providers[name]
        info = registered.cls.info
        providers.append({
            "name": name,
            "distribution": registered.distribution,
            "version": registered.distribution_version or info.version,
            "default": name == default,
            "capabilities": sorted(cap.value for cap in info.capabilities),
            "description": info.description,
            **probes[name],
        })
    broken = [{"plugin": b.plugin, "distribution": b.distribution, "error": b.error} for b in host.broken]
    return {"default": default, "providers": providers, "broken_plugins": broken}


def _writable(directory: Path) -> tuple[bool, str | None]:
    probe = directory
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return False, f"{probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return False, f"{probe} is not writable; pass --runs-dir DIR or set HARNESS_RUNS_DIR"
    return True, None


async def doctor_report(host: PluginHost, runs_dir: Path) -> dict[str, Any]:
    """`provider_report` plus the runs dir; `ok` is True only when everything works."""
    report = await provider_report(host)
    writable, why = _writable(runs_dir)
    exists = runs_dir.is_dir()  # noqa: ASYNC240 - one stat, no event loop to starve in a CLI command
    report["runs_dir"] = {"path": str(runs_dir), "exists": exists, "writable": writable, "reason": why}
    problems = [f"provider {p['name']}: {p['reason']}" for p in report["providers"] if not p["available"]]
    problems += [f"plugin {b['plugin']} is broken: {b['error']}" for b in report["broken_plugins"]]
    if not report["providers"]:
        problems.append("no providers installed; install one, e.g. `pip install harness-codex-appserver`")
    if not writable:
        problems.append(f"runs dir: {why}")
    report["problems"] = problems
    report["ok"] = not problems
    return report


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]


def format_providers(report: dict[str, Any]) -> str:
    lines: list[str] = []
    if report["providers"]:
        rows = [["PROVIDER", "VERSION", "CAPABILITIES", "AVAILABLE"]]
        for p in report["providers"]:
            name = p["name"] + (" (default)" if p["default"] else "")
            if p["available"]:
                cli = " ".join(x for x in (p["cli_name"], p["cli_version"]) if x)
                available = f"yes ({cli})" if cli else "yes"
            else:
                available = f"no: {p['reason']}"
            rows.append([name, p["version"], ", ".join(p["capabilities"]) or "-", available])
        lines += _table(rows)
    else:
        lines.append("no providers installed (e.g. `pip install harness-codex-appserver`)")
    if report["broken_plugins"]:
        lines += ["", "broken plugins (not loaded):"]
        lines += [f"  {b['plugin']} ({b['distribution'] or 'no distribution'}): {b['error']}"
                  for b in report["broken_plugins"]]
    return "\n".join(lines)


def format_doctor(report: dict[str, Any]) -> str:
    lines = []
    for p in report["providers"]:
        mark = "ok " if p["available"] else "!! "
        lines.append(f"{mark}{p['name']} {p['version']}" + (" (default)" if p["default"] else ""))
        if p["cli_name"]:
            lines.append(f"     cli: {p['cli_path'] or p['cli_name'] + ' (not found)'}")
            minimum = p["min_cli_version"] or "none"
            lines.append(f"     version: {p['cli_version'] or '?'} (minimum {minimum})")
        lines.append(f"     supported: {'yes' if p['available'] else 'no: ' + str(p['reason'])}")
    for b in report["broken_plugins"]:
        lines.append(f"!! plugin {b['plugin']} ({b['distribution'] or 'no distribution'}): {b['error']}")
    runs = report["runs_dir"]
    lines.append(f"{'ok ' if runs['writable'] else '!! '}runs dir: {runs['path']}"
                 + ("" if runs["writable"] else f" ({runs['reason']})"))
    lines.append("everything looks fine" if report["ok"] else f"{len(report['problems'])} problem(s) found")
    return "\n".join(lines)


# --- runs and show ---------------------------------------------------------------------------------------

def runs_report(runs_dir: Path) -> list[dict[str, Any]]:
    return [summary.as_json() for summary in list_runs(runs_dir)]


def _excerpt(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= _EXCERPT else flat[: _EXCERPT - 1] + "…"


def format_runs(runs: list[dict[str, Any]], runs_dir: Path) -> str:
    if not runs:
        return f"no runs in {runs_dir} yet; start one with `harness run PROMPT`"
    rows = [["RUN", "PROVIDER", "STATUS", "DURATION", "PROMPT"]]
    for run in runs:
        duration = format_duration(run["duration_ms"]) if run["duration_ms"] is not None else "-"
        rows.append([run["run_id"], run["provider"] or "?", run["status"], duration, _excerpt(run["prompt"])])
    return "\n".join(_table(rows))


def run_details(runs_dir: Path, run_id: str) -> dict[str, Any]:
    """The summary object of `harness show`.

    Raises:
        InvalidSpecError: a malformed id or no such run (both messages point to `harness runs`).
    """
    path = log_path(runs_dir, validate_run_id(run_id))
    if not path.is_file():
        raise InvalidSpecError(
            f"no run {run_id!r} in {runs_dir}; see `harness runs` for the ids of your runs", run_id=run_id
        )
    details = summarize(path).as_json()
    tools: dict[str, dict[str, Any]] = {}
    text: list[str] = []
    usage = None
    errors: list[dict[str, Any]] = []
    result: HarnessResult | None = None
    for event in read_events(path):
        if isinstance(event, (ToolUse, ToolResult)):
            tools[event.tool_id] = event.display.model_dump(mode="json", exclude={"raw"})
        elif isinstance(event, TextDelta):
            text.append(event.text)
        elif isinstance(event, ContextUsage) and not event.cumulative:
            usage = event.usage
        elif isinstance(event, SessionStarted) and event.model and not details.get("model"):
            details["model"] = event.model
        elif isinstance(event, ErrorEvent):
            errors.append(event.error.model_dump(mode="json"))
        elif isinstance(event, Done):
            result = event.result
        elif isinstance(event, RunStarted):
            details["cli_version"] = event.cli_version
            details["cwd"] = event.spec.get("cwd")
    if result is not None and (result.usage.input_tokens or result.usage.output_tokens):
        usage = result.usage
    details.update(
        usage=usage.model_dump(mode="json") if usage else None,
        tools=list(tools.values()),
        final_text=result.final_text if result and result.final_text else "".join(text),
        error=(result.error.model_dump(mode="json") if result and result.error else
               (errors[-1] if errors else None)),
    )
    return details


def format_show(details: dict[str, Any]) -> str:
    duration = format_duration(details["duration_ms"]) if details["duration_ms"] is not None else "-"
    lines = [
        f"run       {details['run_id']}",
        f"provider  {details['provider'] or '?'}",
        f"model     {details['model'] or 'default'}",
        f"status    {details['status']}",
        f"duration  {duration}",
    ]
    if details["usage"]:
        lines.append(f"usage     {format_tokens(Usage.model_validate(details['usage']))}")
    if details["session_id"]:
        lines.append(f"session   {details['session_id']}")
    lines.append(f"prompt    {_excerpt(details['prompt'])}")
    if details["tools"]:
        lines.append("tools")
        cwd = details.get("cwd")  # paths inside the run's workspace read as in the live view: relative
        lines += [f"  {tool_line(HarnessToolDetails.model_validate(t), cwd=cwd)}" for t in details["tools"]]
    if details["error"]:
        lines.append(f"error     {details['error']['code']}: {details['error']['message']}")
    if details["final_text"]:
        lines += ["", details["final_text"].rstrip()]
    return "\n".join(lines)


# --- schema ---------------------------------------------------------------------------------------------

def schema_for(what: str) -> str:
    """JSON Schema of `spec`, `events` (one run-log line) or `result`, as indented JSON text."""
    if what == "spec":
        schema = AgentRunSpec.model_json_schema()
    elif what == "events":
        schema = EVENT_ADAPTER.json_schema()
    else:
        schema = HarnessResult.model_json_schema()
    return json.dumps(schema, indent=2)
