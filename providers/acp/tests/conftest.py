"""Fixtures of the ACP providers' tests: a plugin host with only harness-acp, fake agents on disk that check
every message against the ACP schema, and the anyio backends."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_helpers import NamedAgentContract
from harness_core.plugins import PluginHost

import harness_acp
from harness_acp.testing import VALIDATE_ENV, write_fake_agent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the fake agent, the named providers' contracts play under asyncio only: under trio they would replay the
    same fake through the same harness_acp code the generic `acp` contract plays under both backends (a named
    provider adds only its profile: options, offline setup, session modes). `--harness-real` keeps the plugin's
    choice (its end-to-end scenarios under trio too)."""
    if config.getoption("--harness-real", default=False):
        return
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        cls = getattr(item, "cls", None)
        named = cls is not None and issubclass(cls, NamedAgentContract)
        params = getattr(item, "callspec", None)
        on_trio = params is not None and params.params.get("anyio_backend") == "trio"
        (dropped if named and on_trio else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


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
