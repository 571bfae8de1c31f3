"""Where codex keeps a thread's running token total, so a resumed run can report its own usage.

Layer: provider (codex-exec), file reading only. Knows the rollout files of codex 0.169.0
(`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, `event_msg`/`token_count` lines with
`info.total_token_usage`); knows nothing of processes or events. Best effort: any surprise gives None, and
the run then reports thread totals marked `cumulative`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from harness_codex_common import rollout_path
from harness_codex_common.rollout import read_tail

from harness_codex_exec.mapping import parse_usage
from harness_core import Usage

__all__ = ["codex_home", "previous_total"]


def codex_home(option: str | None, env: Mapping[str, str]) -> Path:
    """The CODEX_HOME a run uses: the option, else the run's env, else ours, else `~/.codex`."""
    chosen = option or env.get("CODEX_HOME") or os.environ.get("CODEX_HOME")
    return Path(chosen).expanduser() if chosen else Path.home() / ".codex"


def previous_total(home: Path, thread_id: str) -> Usage | None:
    """The thread's token total before this run, or None if it cannot be read."""
    path = rollout_path(home, thread_id)
    if path is None:
        return None
    tail = read_tail(path)
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
