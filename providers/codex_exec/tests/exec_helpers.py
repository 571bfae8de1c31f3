"""Helpers shared by the codex-exec tests (a uniquely named module, not `conftest`, so that several test
directories can run in one pytest session): recorded transcripts and finding the real codex."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

TRANSCRIPTS = Path(__file__).parent / "transcripts"
REPO = Path(__file__).resolve().parents[3]
MISSING_CODEX = "real codex not installed: run scripts/install-clis.sh or set HARNESS_CODEX_BIN"


def load_cases(name: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """A transcript file as (header, lines) per case: a line with a `case` key starts a case."""
    cases: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for raw in (TRANSCRIPTS / name).read_text().splitlines():
        if not raw.strip():
            continue
        msg = json.loads(raw)
        if "case" in msg:
            cases.append((msg, []))
        else:
            cases[-1][1].append(msg)
    return cases


def real_codex() -> str | None:
    """The pinned real codex if installed: $HARNESS_CODEX_BIN, `bin/codex` under $HARNESS_TOOLS_DIR (default:
    the repo's .tools; the provider resolves the node wrapper to the native binary), or `codex` on PATH."""
    explicit = os.environ.get("HARNESS_CODEX_BIN")
    if explicit:
        return explicit
    wrapper = Path(os.environ.get("HARNESS_TOOLS_DIR") or REPO / ".tools") / "bin" / "codex"
    return str(wrapper) if wrapper.exists() else shutil.which("codex")
