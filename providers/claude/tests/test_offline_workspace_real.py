"""`harness_core.offline.offline_workspace` from Python with the real pinned Claude Code: what `harness run
--offline` plays (the `tools` scenario against the scripted Messages backend, in a temporary workspace holding the
scenario's files), removed afterwards, its run logged.

Marked `real_cli`; skipped, saying how to install the CLI, when it is missing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from claude_helpers import CLAUDE, needs_real_claude
from harness_core import AgentRunSpec, RunStatus, run_sync
from harness_core.offline import SCENARIOS, offline_workspace
from harness_core.plugins import PluginHost

pytestmark = [*needs_real_claude, pytest.mark.usefixtures("no_leftovers")]


def test_the_tools_scenario_plays_in_a_temporary_workspace_that_is_removed(
    host: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # only this test's workspace and agent state are in it
    spec = AgentRunSpec(prompt="run the tools", provider_options={"claude_bin": CLAUDE})
    created: list[str] = []
    with offline_workspace(spec, "claude", "tools", host=host, on_ready=lambda ws, files: created.extend(files)) \
            as offline:
        workspace = offline.cwd
        assert workspace.parent == temp and created == sorted(SCENARIOS["tools"].files)
        result = run_sync(offline, "claude", host=host, runs_dir=tmp_path / "runs", interrupt_grace=2)
        notes = (workspace / "notes.txt").read_text()
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.final_text == SCENARIOS["tools"].expected.final_text
    assert notes == "beta\n", "the agent's edit landed in the workspace"
    assert list(temp.iterdir()) == [], "the workspace and the agent's offline state are gone"
    assert len(list((tmp_path / "runs").glob("*.jsonl"))) == 1
