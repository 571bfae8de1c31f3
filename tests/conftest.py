"""Fixtures for the core tests: a plugin host with the in-process scripted provider, a private runs dir."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

import harness_core.testing.scripted as scripted
from harness_core.plugins import PluginHost, reset_host
from tests.version_sensitive import mark_version_sensitive


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C tests send SIGINT to the `harness` processes they start: those must not inherit it ignored, as a
    shell without job control does for a command run with `&` (`tox … &`), or they would never see it."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`version_sensitive` on each test exercising what differs between Python versions (tests/version_sensitive.py)."""
    mark_version_sensitive(items)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def host() -> Iterator[PluginHost]:
    built = PluginHost.create(entry_points=False, plugins=[("scripted", scripted)])
    reset_host(built)
    yield built
    reset_host(None)


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return tmp_path / "runs"


@pytest.fixture(autouse=True)
def _work_in_a_temporary_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Specs default their cwd to the current directory, and the scripted provider really writes the files of
    its scenarios: run every core test in a directory of its own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))  # never this machine's harness/config.toml
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / ".cache"))  # the CLI version cache: never this machine's
    monkeypatch.delenv("COLUMNS", raising=False)  # tables and notices fit $COLUMNS when set: not in text tests
