"""Shared fixtures for the codex-exec tests: transcripts, the fake codex, a plugin host with only us."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness_codex_exec
from harness_core.plugins import PluginHost
from harness_core.testing.fake_codex_exec import write_fake_codex

TRANSCRIPTS = Path(__file__).parent / "transcripts"


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
