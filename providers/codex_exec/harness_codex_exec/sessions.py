"""Where codex keeps a thread's running token total, so a resumed run can report its own usage.

Layer: provider (codex-exec), file reading only (through the run's `read_side_input`, so a replay answers it).
Knows codex 0.169.0's rollout files; knows nothing of processes or events. Best effort: any surprise gives None,
and the run then reports thread totals marked `cumulative` (providers/codex_exec/README.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness_codex_common import rollout_path
from harness_codex_common.rollout import read_tail, turn_records

from harness_codex_exec.mapping import parse_usage
from harness_core import Usage
from harness_core.provider import RunContext

__all__ = ["codex_home", "previous_total", "read_previous_total", "read_turn_records", "total_in"]


def codex_home(option: str | None, env: Mapping[str, str]) -> Path:
    """The CODEX_HOME a run uses: the option, else the run's env, else ours, else `~/.codex`."""
    chosen = option or env.get("CODEX_HOME") or os.environ.get("CODEX_HOME")
    return Path(chosen).expanduser() if chosen else Path.home() / ".codex"


def previous_total(home: Path, thread_id: str) -> Usage | None:
    """The thread's token total before this run, or None if it cannot be read."""
    return total_in(_rollout_tail(home, thread_id))


async def read_previous_total(ctx: RunContext, home: Path, thread_id: str) -> Usage | None:
    """`previous_total`, read through `ctx.read_side_input` (so a wire log records it and a replay has it)."""
    return total_in(await ctx.read_side_input(f"rollout:{thread_id}", lambda: _rollout_tail(home, thread_id)))


async def read_turn_records(ctx: RunContext, home: Path, thread_id: str) -> list[dict[str, Any]]:
    """The rollout records of the thread's latest turn (as `rollout.read_turn` reads them), read through
    `ctx.read_side_input` (so a wire log records them and a replay has them)."""
    return turn_records(await ctx.read_side_input(f"rollout:{thread_id}", lambda: _rollout_tail(home, thread_id)))


def _rollout_tail(home: Path, thread_id: str) -> bytes | None:
    path = rollout_path(home, thread_id)
    return None if path is None else read_tail(path)


def total_in(tail: bytes | None) -> Usage | None:
    """The latest token total in a rollout's tail (None: no file, or unreadable). Pure."""
    if tail is None:
        return None
    total: Usage | None = Usage()  # a thread with no token count yet has used nothing
    for raw in tail.splitlines():
        if b"token_count" not in raw:
            continue
        try:
            payload = json.loads(raw).get("payload") or {}
            info = payload.get("info") or {}
        except (ValueError, AttributeError):
            continue
        if payload.get("type") == "token_count" and isinstance(info.get("total_token_usage"), dict):
            total = parse_usage(info["total_token_usage"])
    return total
