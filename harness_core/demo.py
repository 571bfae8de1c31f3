"""`harness demo`: one short task through every installed provider's real CLI, offline, side by side.

Layer: CLI support. Knows the public runner API, the renderer and `offline`; knows no concrete provider —
it plays whatever installed providers can run offline.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from harness_core.errors import HarnessError
from harness_core.events import HarnessEvent, RunStarted, ToolResult
from harness_core.offline import can_run_offline, offline_spec, scenario_named, seed_workspace
from harness_core.plugins import DEFAULT_PROVIDER, PluginHost
from harness_core.render import Renderer
from harness_core.runner import open_run
from harness_core.spec import AgentRunSpec

__all__ = ["DEMO_PROMPT", "format_summary", "play_all", "play_one"]

DEMO_PROMPT = "Run `echo harness-ok`, read notes.txt, change alpha to beta in it, create new.txt, then report."
_DEADLINE = 120.0


def _order(host: PluginHost, wanted: list[str]) -> list[str]:
    if wanted:
        return wanted
    names = [n for n, p in host.providers.items() if can_run_offline(p.cls)]
    return sorted(names, key=lambda n: (n != DEFAULT_PROVIDER, n))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def play_one(host: PluginHost, name: str, scenario_name: str, runs_dir: Path | None, out: TextIO,
                   quiet: bool) -> dict[str, Any]:
    """Play the scenario through provider `name`; returns its summary row (never raises a HarnessError)."""
    scenario = scenario_named(scenario_name)
    workspace = Path(tempfile.mkdtemp(prefix=f"harness-demo-{name}-"))
    seed_workspace(scenario, workspace)
    before = _snapshot(workspace)
    row: dict[str, Any] = {"provider": name, "status": "unavailable", "cli_version": None, "tools": [],
                           "duration_s": None, "input_tokens": None, "output_tokens": None, "run_id": None,
                           "changed_files": [], "workspace": str(workspace), "error": None}
    renderer = None if quiet else Renderer.for_stream(out, verbose=False, environ=os.environ)
    if not quiet:
        out.write(f"\n== {name} ==\n")
        out.flush()
    spec = AgentRunSpec(prompt=DEMO_PROMPT, cwd=workspace, idle_timeout=60)
    started = time.monotonic()
    try:
        with offline_spec(spec, name, host, scenario) as offline:
            import anyio

            with anyio.fail_after(_DEADLINE):
                async with open_run(offline, name, host=host, runs_dir=runs_dir) as live:
                    async for event in live:
                        _note(row, event)
                        if renderer is not None:
                            renderer.feed(event)
    except HarnessError as exc:
        row["error"] = f"{exc.code}: {exc.message}"
        if not quiet:
            out.write(f"[unavailable] {exc.message}\n")
        return row
    except TimeoutError:
        row.update(status="failed", error=f"no result within {_DEADLINE:g} s")
        return row
    finally:
        if renderer is not None:
            renderer.close()
    result = live.result
    assert result is not None
    after = _snapshot(workspace)
    row.update(
        status=result.status.value,
        run_id=result.run_id,
        duration_s=round(time.monotonic() - started, 2),
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
        changed_files=sorted(k for k in after if before.get(k) != after[k]),
        error=f"{result.error.code}: {result.error.message}" if result.error else None,
    )
    return row


def _note(row: dict[str, Any], event: HarnessEvent) -> None:
    if isinstance(event, RunStarted):
        row["cli_version"] = event.cli_version
    elif isinstance(event, ToolResult):
        row["tools"].append(f"{event.display.kind.value}:{event.display.status.value}")


async def play_all(host: PluginHost, providers: list[str], scenario_name: str, runs_dir: Path | None,
                   out: TextIO, quiet: bool) -> list[dict[str, Any]]:
    """Play the scenario through each provider in turn (one at a time: the machine may be small)."""
    scenario_named(scenario_name)  # fail fast on a bad name
    return [await play_one(host, name, scenario_name, runs_dir, out, quiet) for name in _order(host, providers)]


def format_summary(rows: list[dict[str, Any]]) -> str:
    """The side-by-side table printed at the end of the demo."""
    if not rows:
        return "No provider can run offline here. Install one: pip install harness-codex-appserver"
    header = ("provider", "cli", "status", "tools (kind:status)", "changed", "time", "tokens in/out", "run id")
    table = [header]
    for r in rows:
        tokens = f"{r['input_tokens']}/{r['output_tokens']}" if r["input_tokens"] is not None else "-"
        table.append((
            r["provider"], r["cli_version"] or "-", r["status"],
            " ".join(r["tools"]) or "-", ", ".join(r["changed_files"]) or "-",
            f"{r['duration_s']:.2f} s" if r["duration_s"] is not None else "-", tokens, r["run_id"] or "-",
        ))
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    lines = ["", "== summary =="]
    for line in table:
        lines.append("  ".join(str(cell).ljust(widths[i]) for i, cell in enumerate(line)).rstrip())
    for r in rows:
        if r["error"]:
            lines.append(f"{r['provider']}: {r['error']}")
    lines.append("Inspect a run with `harness show RUN_ID`.")
    return "\n".join(lines)

