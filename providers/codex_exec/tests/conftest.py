"""Fixtures of the codex-exec tests: the fake codex, a plugin host with only this provider. Helpers live in
`exec_helpers` (import that, not this)."""

from __future__ import annotations

from pathlib import Path

import pytest

import harness_codex_exec
from harness_codex_exec.testing import write_fake_codex
from harness_core.plugins import PluginHost


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("codex-exec", harness_codex_exec)])


@pytest.fixture
def fake_codex(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    return write_fake_codex(bin_dir)
