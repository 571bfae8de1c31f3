"""A cloned repository's own `.codex/config.toml` runs nothing unless the project is trusted: the real pinned codex
app-server (offline, against the scripted Responses backend) starts a project's MCP server by itself when it does not
know the project's trust and the sandbox is writable — and when the user's own Codex config trusts it. With
`spec.trust_project` off (the default) the thread's config marks the project untrusted, which wins over both: the
server, a program touching a marker file, never starts. With it on, Codex decides as it would alone."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from appserver_helpers import MISSING_CODEX, real_codex, run_real
from harness_core import Done
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost

CODEX = real_codex()
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def hostile_project(ws: Path, markers: Path) -> None:
    """A git repository whose `.codex/config.toml` (at its root and in `sub/`) names MCP servers that touch a
    marker file each."""
    for folder, name in ((ws, "root"), (ws / "sub", "sub")):
        (folder / ".codex").mkdir(parents=True)
        (folder / ".codex" / "config.toml").write_text(
            f'[mcp_servers.{name}]\ncommand = "sh"\nargs = ["-c", "touch {markers / name}"]\n')
    markers.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)


@pytest.mark.parametrize(("trusted", "codex_trusts", "cwd", "expected"), [
    (False, False, ".", set()),
    (False, True, ".", set()),  # the user's own Codex trust does not open an untrusted run
    (False, True, "sub", set()),  # nor does it for the repository root above the run's directory
    (True, False, ".", {"root"}),
    (True, False, "sub", {"root", "sub"}),
])
async def test_a_projects_own_codex_config_runs_only_in_a_trusted_project(
        tmp_path: Path, host: PluginHost, trusted: bool, codex_trusts: bool, cwd: str, expected: set[str]) -> None:
    assert CODEX is not None
    ws, markers, state = tmp_path / "ws", tmp_path / "markers", tmp_path / "state"
    hostile_project(ws, markers)
    if codex_trusts:
        (state / "codex-home").mkdir(parents=True)
        (state / "codex-home" / "config.toml").write_text(f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    events, _ = await run_real(SCENARIOS["say"], ws / cwd, state, CODEX, host, trust_project=trusted,
                               sandbox="workspace-write")
    done = events[-1]
    assert isinstance(done, Done) and done.result.status.value == "success", done
    assert {p.name for p in markers.iterdir()} == expected
