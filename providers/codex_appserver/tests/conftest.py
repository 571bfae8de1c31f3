"""Shared fixtures: isolated CODEX_HOME, fake codex wrappers, the real binary when installed, leak checks."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness_core.plugins import PluginHost

REPO = Path(__file__).resolve().parents[3]
NATIVE = REPO / ".tools/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"


def real_codex() -> Path | None:
    """The pinned real codex (native binary) if installed: $HARNESS_CODEX_BIN, the repo's .tools, or PATH."""
    explicit = os.environ.get("HARNESS_CODEX_BIN")
    if explicit:
        return Path(explicit)
    if NATIVE.exists():
        return NATIVE
    found = shutil.which("codex")
    return Path(found) if found else None


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    return home


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def host() -> PluginHost:
    import harness_codex_appserver

    return PluginHost.create(entry_points=False, plugins=[("codex-appserver", harness_codex_appserver)])


def _children() -> set[int]:
    """Live (non-zombie) descendants of this test process."""
    me = os.getpid()
    out: set[int] = set()
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if fields[0] != "Z":
            parents[int(entry)] = int(fields[1])
    frontier = {me}
    while frontier:
        nxt = {pid for pid, ppid in parents.items() if ppid in frontier and pid not in out}
        out |= nxt
        frontier = nxt
    return out


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    before = _children()
    yield
    left = _children() - before
    assert not left, f"processes left alive after the test: {sorted(left)}"
