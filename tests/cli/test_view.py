"""`harness view` in the core: the viewer is its own distribution (harness-view), so the command says how to install
it when it is missing, and refuses flags that do not go together before anything starts."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness_core.cli import cli
from harness_core.cli.view.commands import INSTALL_HINT


def test_without_the_viewer_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "harness_view", None)  # as if harness-view were not installed
    result = CliRunner().invoke(cli, ["view"])
    assert result.exit_code == 2
    assert result.output.strip() == f"harness: error: {INSTALL_HINT}"
    assert "pip install -e web" in INSTALL_HINT and "scripts/setup.sh" in INSTALL_HINT


def test_run_ids_go_with_bundle(tmp_path: Path) -> None:
    pytest.importorskip("harness_view", reason="harness-view is not installed (tox -e view has it)")
    result = CliRunner().invoke(cli, ["view", "--runs-dir", str(tmp_path / "runs"), "some-run"])
    assert result.exit_code == 2 and "RUN_IDS choose what --bundle copies" in result.output


def test_view_is_listed_in_the_help() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert re.search(r"^  view\s+Look at runs", result.output, re.M), result.output  # its own line, not "review"
