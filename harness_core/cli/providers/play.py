"""`harness demo`'s player: one short task through every installed provider that can run offline (the default one
first), each in its own temporary workspace (kept with `--keep-workspace`), and the side-by-side summary.

Layer: CLI, loaded when `harness demo` runs; knows the run API of the `harness_core` façade, the renderer and
`harness_core.offline`; knows no concrete provider.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio

from harness_core import AgentRunSpec, HarnessError, HarnessEvent, RunStarted, ToolResult, open_run
from harness_core.cli.providers.report import INSTALL_HINT
from harness_core.cli.render import Renderer
from harness_core.cli.render.layout import Column, fit_table, fit_text
from harness_core.files.scratch import Scratch
from harness_core.offline import can_run_offline, offline_spec, scenario_named, seed_workspace
from harness_core.plugins import DEFAULT_PROVIDER, PluginHost

__all__ = ["DEMO_PROMPT", "DemoRow", "format_summary", "play_all", "play_one"]

DEMO_PROMPT = "Run `echo harness-ok`, read notes.txt, change alpha to beta in it, create new.txt, then report."
_DEADLINE = 120.0


@dataclass(frozen=True)
class DemoRow:
    """What one provider did with the demo task: its row of the summary table (and of `--json`)."""

    provider: str
    status: str
    """The result's status, or `unavailable` when the run could not start."""
    workspace: Path | None
    """Where it ran, when the workspace was kept (`--keep-workspace`); None once removed."""
    cli_version: str | None = None
    tools: tuple[str, ...] = ()
    """`kind:status` of each tool action, in order (the table shows `:completed` as the kind alone)."""
    duration_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    run_id: str | None = None
    changed_files: tuple[str, ...] = ()
    error: str | None = None
    """`code: message` of the failure, if any."""

    def as_json(self) -> dict[str, Any]:
        return {
            "provider": self.provider, "status": self.status, "cli_version": self.cli_version,
            "tools": list(self.tools), "duration_s": self.duration_s, "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens, "run_id": self.run_id, "changed_files": list(self.changed_files),
            "workspace": str(self.workspace) if self.workspace is not None else None, "error": self.error,
        }


@dataclass
class _Seen:
    """What the stream showed so far (kept when the run ends early)."""

    cli_version: str | None = None
    tools: list[str] = field(default_factory=list)

    def note(self, event: HarnessEvent) -> None:
        if isinstance(event, RunStarted):
            self.cli_version = event.cli_version
        elif isinstance(event, ToolResult):
            self.tools.append(f"{event.display.kind.value}:{event.display.status.value}")


def _order(host: PluginHost, wanted: list[str]) -> list[str]:
    if wanted:
        return wanted
    names = [n for n, p in host.providers.items() if can_run_offline(p.cls)]
    return sorted(names, key=lambda n: (n != DEFAULT_PROVIDER, n))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


async def play_one(host: PluginHost, name: str, scenario_name: str, runs_dir: Path | None, out: TextIO,
                   quiet: bool, *, keep: bool = False) -> DemoRow:
    """Play the scenario through provider `name` in a temporary workspace, removed afterwards unless `keep`;
    returns its summary row (never raises a HarnessError)."""
    scratch = Scratch(f"harness-demo-{name}-")  # a killed demo's is swept later (`harness runs prune`)
    workspace = scratch.path
    try:
        row = await _play_in(host, name, scenario_name, runs_dir, out, quiet, workspace)
    finally:
        scratch.release(keep=keep)
    return row if keep else dataclasses.replace(row, workspace=None)


async def _play_in(host: PluginHost, name: str, scenario_name: str, runs_dir: Path | None, out: TextIO,
                   quiet: bool, workspace: Path) -> DemoRow:
    scenario = scenario_named(scenario_name)
    seed_workspace(scenario, workspace)
    before = _snapshot(workspace)
    seen = _Seen()
    renderer = None if quiet else Renderer.for_stream(out, verbose=False, environ=os.environ)
    if not quiet:
        out.write(f"\n== {name} ==\n")
        out.flush()
    spec = AgentRunSpec(prompt=DEMO_PROMPT, cwd=workspace, idle_timeout=60)
    started = time.monotonic()

    def early(status: str, error: str) -> DemoRow:
        return DemoRow(provider=name, status=status, workspace=workspace, cli_version=seen.cli_version,
                       tools=tuple(seen.tools), error=error)

    try:
        with offline_spec(spec, name, scenario, host=host) as offline, anyio.fail_after(_DEADLINE):
            async with open_run(offline, name, host=host, runs_dir=runs_dir) as live:
                async for event in live:
                    seen.note(event)
                    if renderer is not None:
                        renderer.feed(event)
    except HarnessError as exc:
        if not quiet:
            out.write(f"[unavailable] {exc.message}\n")
        return early("unavailable", f"{exc.code}: {exc.message}")
    except TimeoutError:
        return early("failed", f"no result within {_DEADLINE:g} s")
    finally:
        if renderer is not None:
            renderer.close()
    result = live.result
    assert result is not None
    after = _snapshot(workspace)
    return DemoRow(
        provider=name,
        status=result.status.value,
        workspace=workspace,
        cli_version=seen.cli_version,
        tools=tuple(seen.tools),
        duration_s=round(time.monotonic() - started, 2),
        input_tokens=result.usage.input_tokens,
        output_tokens=result.usage.output_tokens,
        run_id=result.run_id,
        changed_files=tuple(sorted(k for k in after if before.get(k) != after[k])),
        error=f"{result.error.code}: {result.error.message}" if result.error else None,
    )


async def play_all(host: PluginHost, providers: list[str], scenario_name: str, runs_dir: Path | None,
                   out: TextIO, quiet: bool, *, keep: bool = False) -> list[DemoRow]:
    """Play the scenario through each provider in turn (one at a time: the machine may be small); each
    temporary workspace is removed after its run unless `keep`."""
    scenario_named(scenario_name)  # fail fast on a bad name
    return [await play_one(host, name, scenario_name, runs_dir, out, quiet, keep=keep)
            for name in _order(host, providers)]


_SUMMARY = (Column("provider", title=True), Column("cli"), Column("status", title=True),
            Column("tools", "wrap", least=12), Column("changed", "wrap", least=12), Column("time"),
            Column("tokens in/out"), Column("run id"))


def format_summary(rows: list[DemoRow], width: int | None = None) -> str:
    """The side-by-side table printed at the end of the demo, fitted to `width` (the terminal's; None: as wide as
    it is): the tools and changed files wrapped in their columns, or when that is too narrow one block per
    provider; the run ids are never cut."""
    if not rows:
        return f"No provider can run offline here. Install one: {INSTALL_HINT}"
    lines = ["", "== summary ==", *fit_table(_SUMMARY, [_summary_cells(r) for r in rows], width)]
    notes = [f"{r.provider}: {r.error}" for r in rows if r.error]
    notes += [f"{r.provider}: workspace kept at {r.workspace}" for r in rows if r.workspace is not None]
    notes.append(f"Inspect a run with `{_harness_command()} show RUN_ID`.")
    lines += [line for note in notes for line in fit_text(note, width)]
    return "\n".join(lines)


def _summary_cells(r: DemoRow) -> list[str]:
    return [
        r.provider, r.cli_version or "-", r.status, _tools_cell(r.tools), ", ".join(r.changed_files) or "-",
        f"{r.duration_s:.2f} s" if r.duration_s is not None else "-",
        f"{r.input_tokens}/{r.output_tokens}" if r.input_tokens is not None else "-", r.run_id or "-",
    ]


def _tools_cell(tools: tuple[str, ...]) -> str:
    """Each tool action's kind, in order; its status only when it did not complete (`shell:failed`)."""
    return " ".join(t.removesuffix(":completed") for t in tools) or "-"


def _harness_command() -> str:
    """How the user can type `harness` again: its name when it is on PATH, else the path it was started by."""

    started = sys.argv[0] if sys.argv and os.path.basename(sys.argv[0]) == "harness" else None
    if started is None or shutil.which("harness") is not None:
        return "harness"
    return os.path.relpath(started) if not os.path.relpath(started).startswith("..") else started
