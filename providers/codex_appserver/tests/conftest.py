"""Fixtures of the codex-appserver tests: isolated CODEX_HOME and workspace, a host with only this provider,
and a check that no process outlives a test. Helpers live in `appserver_helpers` (import that, not this)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from appserver_helpers import children
from harness_core.plugins import PluginHost


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


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    before = children()
    yield
    left = children() - before
    assert not left, f"processes left alive after the test: {sorted(left)}"
