"""Fixtures of the claude provider's tests: a plugin host with only this provider, a fake `claude` on disk,
the anyio backends, and a check that no child is left running. Helpers live in `claude_helpers`."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_helpers import children_of
from harness_core.plugins import PluginHost

import harness_claude
from harness_claude.testing import write_fake_claude


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("claude", harness_claude)], env={})


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    return write_fake_claude(tmp_path)


@pytest.fixture
def no_leftovers() -> Iterator[None]:
    before = set(children_of(os.getpid()))
    yield
    left = set(children_of(os.getpid())) - before
    assert not left, f"processes left running: {sorted(left)}"
