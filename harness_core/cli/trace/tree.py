"""The body of `harness trace`: read a run's log, build its span tree (`harness_core.spans`) and print it.

Layer: CLI command body. Knows the run store, the span records and the CLI's output helpers; no OpenTelemetry.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from harness_core.cli.exits import EXIT_FAILED, fail
from harness_core.cli.output import dumps
from harness_core.spans import Span, run_spans
from harness_core.store import find_run, locked, log_path, read_events, resolve_runs_dir

__all__ = ["format_tree", "trace"]

_SHOWN = ("gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
          "gen_ai.usage.cache_read.input_tokens", "harness.usage.cost_usd", "gen_ai.conversation.id",
          "harness.session.id", "harness.tool.path", "harness.tool.command", "process.exit.code",
          "harness.approval.decision", "harness.approval.decided_by", "error.type")
_SHORT = {"gen_ai.request.model": "model", "gen_ai.usage.input_tokens": "in", "gen_ai.usage.output_tokens": "out",
          "gen_ai.usage.cache_read.input_tokens": "cached", "harness.usage.cost_usd": "cost",
          "gen_ai.conversation.id": "conversation", "harness.session.id": "session", "harness.tool.path": "path",
          "harness.tool.command": "command", "process.exit.code": "exit", "harness.approval.decision": "decision",
          "harness.approval.decided_by": "by", "error.type": "error"}
_COMMAND_CHARS = 60


def trace(*, run_id: str, runs_dir: Path | None, as_json: bool) -> None:
    directory = resolve_runs_dir(runs_dir)
    found = find_run(directory, run_id)
    path = log_path(directory, found)
    live = locked(path)  # a writer still holds the log: the run plays now; else it ends at its last event
    root = run_spans(read_events(path), end=time.time() if live else None, running=live)
    if root is None:
        fail(f"run {found} has no `run_started` in its log: no span to show (`harness show {found}` says what the "
             "log holds)", EXIT_FAILED)
    if as_json:
        click.echo(dumps(_json(root)))
        return
    for line in format_tree(root):
        click.echo(line)


def format_tree(root: Span) -> list[str]:
    """The tree as text lines: each span's name, its start after the run's (`+1.20s`), its duration, its status
    and main attributes, under its parent."""
    lines: list[str] = []

    def visit(span: Span, lead: str, child_lead: str) -> None:
        lines.append(f"{lead}{_describe(span, root.start)}")
        for index, child in enumerate(span.children):
            last = index == len(span.children) - 1
            visit(child, child_lead + ("└─ " if last else "├─ "), child_lead + ("   " if last else "│  "))

    visit(root, "", "")
    return lines


def _describe(span: Span, origin: float) -> str:
    duration = span.duration
    took = f"{duration:.2f}s" if duration is not None else "open"
    status = span.attributes.get("harness.status") or span.attributes.get("harness.tool.status") or ""
    parts = [span.name, f"+{span.start - origin:.2f}s", took]
    if status:
        parts.append(str(status))
    for key in _SHOWN:
        value = span.attributes.get(key)
        if value is None or (key == "error.type" and value == status):
            continue
        text = str(value)
        if key == "harness.tool.command" and len(text) > _COMMAND_CHARS:
            text = text[:_COMMAND_CHARS - 1] + "…"
        parts.append(f"{_SHORT[key]}={text}")
    return "  ".join(parts)


def _json(span: Span) -> dict[str, Any]:
    data = asdict(span)
    data["duration"] = span.duration
    data["children"] = [_json(child) for child in span.children]
    return data
