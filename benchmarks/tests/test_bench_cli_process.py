"""benchmarks/cli_process.py still runs: both whole-process contenders count every delta, and its `--json`
rows follow bench.py's row protocol. No timing is asserted (a shared machine makes figures noise)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "cli_process.py"


def _default_provider_installed() -> bool:
    from harness_core.plugins import DEFAULT_PROVIDER, PluginHost

    return DEFAULT_PROVIDER in PluginHost.create().names()  # the benchmark's stand-in plays the default provider


@pytest.mark.skipif(not _default_provider_installed(), reason="the default provider is not installed here")
def test_rows_at_tiny_sizes() -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "--json", "--sizes", "5", "40", "--repeats", "1"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    for r in rows:
        assert set(r) >= {"table", "name", "value", "unit", "reference", "ratio", "target", "ok"}
        assert r["value"] is not None
    targets = [r for r in rows if r["target"] is not None]
    assert [r["target"] for r in targets] == ["<= raw + 0.2 s", 1.5]
    assert all(isinstance(r["ok"], bool) for r in targets)
    assert any(r["name"].startswith("+ plugin host") for r in rows)
