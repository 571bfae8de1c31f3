"""What `harness <TAB>` offers beyond click's own: providers, `-o` keys, scenarios, run, session and wire-log ids.

Layer: CLI, loaded when a completion is asked for; knows no concrete provider. Each function is quick; the
start-up side (`cli.complete`) turns any error into nothing offered.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from harness_core.cli.settings.loader import ConfigError, load_config
from harness_core.cli.settings.provider_options import describe_options
from harness_core.plugins import get_host
from harness_core.scripted.scenarios import SCENARIOS
from harness_core.store import resolve_runs_dir

__all__ = [
    "LOG_LIMIT",
    "complete_option_key",
    "complete_provider",
    "complete_run_id",
    "complete_scenario",
    "complete_session_id",
    "complete_wire_file",
]

LOG_LIMIT = 200
"""How many of the newest run logs a completion reads (their names for run ids; their first lines for help text
and session ids), so completing stays quick in a runs dir of thousands."""
_HEAD_BYTES = 1 << 16


def _param(ctx: click.Context, name: str) -> Any:
    """A parameter already on the command line (the command's, else its group's), or None."""
    here: click.Context | None = ctx
    while here is not None:
        if here.params.get(name) is not None:
            return here.params[name]
        here = here.parent
    return None


def _first_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= 70 else line[:69] + "…"


# --- providers and their options ---------------------------------------------------------------------------

def complete_provider(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Installed provider names and their aliases, each with its description."""
    host = get_host()
    found = [CompletionItem(name, help=_first_line(host.providers[name].cls.info.description) or None)
             for name in host.names()]
    found += [CompletionItem(alias, help=f"= {target}") for alias, target in sorted(host.aliases.items())
              if target is not None and alias not in host.providers]
    return [item for item in found if item.value.startswith(incomplete)]


def _configured(ctx: click.Context, key: str) -> Any:
    """Setting `key` of the configuration that applies to the command line's `--cwd` (else the current
    directory), quietly: None when it is not set or the configuration does not load."""
    cwd = _param(ctx, "cwd")
    try:
        return load_config(Path(cwd) if cwd is not None else None, warn=lambda _: None).get(key)
    except ConfigError:
        return None


def _chosen_options(ctx: click.Context) -> Any:
    provider = _param(ctx, "provider") or _configured(ctx, "provider")
    return get_host().get(provider if isinstance(provider, str) else None).cls.Options


def complete_option_key(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`-o KEY=`: the options of `--provider` when it is already given, else of the configured (else the default)
    provider. After the `=`, the values of a yes/no or one-of option."""
    options = describe_options(_chosen_options(ctx))
    key, sep, value = incomplete.partition("=")
    if sep:
        option = next((o for o in options if o.name == key), None)
        if option is None:
            return []
        if option.type.startswith("bool"):
            choices = ["true", "false"]
        elif option.type.startswith("one of: "):
            choices = option.type.removeprefix("one of: ").split(" or ")[0].split(", ")
        else:
            return []
        return [CompletionItem(f"{key}={c}") for c in choices if c.startswith(value)]
    found = []
    for option in options:
        name = option.name.removesuffix("KEY") if option.name.endswith(".KEY") else option.name + "="
        if name.startswith(incomplete):
            found.append(CompletionItem(name, help=_first_line(option.description) or option.type))
    return found


# --- scenarios ---------------------------------------------------------------------------------------------

def complete_scenario(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Offline scenario names, each with what it does; `help` lists them."""
    found = [CompletionItem(s.name, help=_first_line(s.description) or None) for s in SCENARIOS.values()]
    found.append(CompletionItem("help", help="list the scenarios and exit"))
    return [item for item in found if item.value.startswith(incomplete)]


# --- runs, sessions, wire logs -----------------------------------------------------------------------------

def _runs_dir(ctx: click.Context) -> Path:
    return resolve_runs_dir(_param(ctx, "runs_dir") or _configured(ctx, "runs_dir"))


def _newest_logs(runs_dir: Path) -> list[Path]:
    """The newest `LOG_LIMIT` run logs (`*.jsonl`, not wire logs), newest first by modification time."""
    found: list[tuple[float, str, Path]] = []
    with os.scandir(runs_dir) as entries:
        for entry in entries:
            if entry.name.endswith(".jsonl") and not entry.name.endswith(".wire.jsonl") and entry.is_file():
                found.append((entry.stat().st_mtime, entry.name, Path(entry.path)))
    found.sort(reverse=True)
    return [path for _, _, path in found[:LOG_LIMIT]]


def _head_events(path: Path) -> Iterator[dict[str, Any]]:
    """The whole JSON lines of a log's first 64 KiB (where `run_started` and `session_started` are)."""
    with path.open("rb") as fh:
        head = fh.read(_HEAD_BYTES)
    for raw in head.split(b"\n")[:-1]:
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if isinstance(event, dict):
            yield event


def _run_help(path: Path) -> str | None:
    for event in _head_events(path):
        if event.get("type") == "run_started":
            spec = event.get("spec")
            prompt = spec.get("prompt", "") if isinstance(spec, dict) else ""
            return _first_line(f"{event.get('provider', '?')}: {prompt}")
    return None


def complete_run_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`last`, then the run ids of the runs dir (`--runs-dir` when given, else the configured one), newest first,
    with provider and prompt."""
    found = [CompletionItem("last", help="the newest run")] if "last".startswith(incomplete) else []
    for path in _newest_logs(_runs_dir(ctx)):
        run_id = path.name.removesuffix(".jsonl")
        if run_id.startswith(incomplete):
            found.append(CompletionItem(run_id, help=_run_help(path)))
    return found


def complete_session_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Agent session ids (what `--resume` takes) of the newest runs, newest first; for `harness runs --session`
    also Harness session ids (of `harness chat`)."""
    harness_sessions = param.name == "session"
    seen: dict[str, str] = {}
    for path in _newest_logs(_runs_dir(ctx)):
        provider = "?"
        for event in _head_events(path):
            kind = event.get("type")
            if kind == "run_started":
                provider = str(event.get("provider", "?"))
                turn = event.get("session_turn")
                if harness_sessions and isinstance(turn, dict) and isinstance(turn.get("session"), str):
                    seen.setdefault(turn["session"], "Harness session (harness chat)")
            elif kind == "session_started" and isinstance(event.get("session_id"), str):
                seen.setdefault(event["session_id"], f"{provider} session, run {path.name.removesuffix('.jsonl')}")
                break
    return [CompletionItem(sid, help=text) for sid, text in seen.items() if sid.startswith(incomplete)]


def complete_wire_file(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """What `harness replay` takes: `last` and the ids of the newest runs that have a wire log, newest first, or
    their paths; else (none, or no runs dir) the shell's own file names."""
    found = [CompletionItem("last", help="the newest run")] if incomplete and "last".startswith(incomplete) else []
    try:
        logs = _newest_logs(_runs_dir(ctx))
    except OSError:
        logs = []
    for path in logs:
        run_id = path.name.removesuffix(".jsonl")
        wire = path.with_name(f"{run_id}.wire.jsonl")
        if not wire.is_file():
            continue
        if run_id.startswith(incomplete):
            found.append(CompletionItem(run_id, help=_run_help(path)))
        elif str(wire).startswith(incomplete):
            found.append(CompletionItem(str(wire), help=_run_help(path)))
    return found or [CompletionItem(incomplete, type="file")]
