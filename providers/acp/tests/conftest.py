"""Fixtures of the ACP providers' tests: a plugin host with only harness-acp, fake agents on disk that check
every message against the ACP schema, and the anyio backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from harness_core.plugins import PluginHost

import harness_acp
from harness_acp.testing import VALIDATE_ENV, write_fake_agent


@pytest.fixture(autouse=True)
def _validate_the_wire(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every fake agent started by a test checks each message it receives and sends against the ACP schema
    (a violation ends it with status 3, and the test fails on the run's error)."""
    monkeypatch.setenv(VALIDATE_ENV, "1")
    yield


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host() -> PluginHost:
    return PluginHost.create(entry_points=False, plugins=[("acp", harness_acp)], env={})


@pytest.fixture
def fake_agent(tmp_path: Path) -> Path:
    return write_fake_agent(tmp_path / "bin", name="fake-acp-agent")
