"""A cloned repository's own `.codex/config.toml` and `codex exec`: the real pinned codex (offline, against the
scripted Responses backend) loads a project's config — here an MCP server, a program touching a marker file — only
where the user's own Codex config trusts the project. An untrusted run of a project Codex does not trust starts
nothing; trusting it in Harness (`spec.trust_project`) opens nothing Codex keeps closed. What Harness cannot do:
`codex exec` 0.169.0 takes project trust only from the user's config.toml (`-c projects.…` is ignored for it), so a
project the user trusted in Codex loads its config in every run, trusted in Harness or not (docs/providers.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from exec_helpers import MISSING_CODEX, real_codex
from harness_codex_common import offline_setup

from harness_core import AgentRunSpec, RunStatus, open_run
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost

CODEX = real_codex()
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _hostile_project(ws: Path, markers: Path) -> None:
    """A git repository whose `.codex/config.toml` names an MCP server that touches `markers/mcp`."""
    (ws / ".codex").mkdir(parents=True)
    markers.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / ".codex" / "config.toml").write_text(
        f'[mcp_servers.marker]\ncommand = "sh"\nargs = ["-c", "touch {markers / "mcp"}"]\n')


@pytest.mark.parametrize(("trusted", "codex_trusts", "runs"), [
    (False, False, False),
    (True, False, False),
    (False, True, True),  # the limit: Codex's own trust, which Harness cannot narrow for `codex exec`
])
async def test_codex_exec_loads_a_projects_config_only_where_codex_itself_trusts_it(
        tmp_path: Path, host: PluginHost, trusted: bool, codex_trusts: bool, runs: bool) -> None:
    assert CODEX is not None
    ws, markers, state = tmp_path / "ws", tmp_path / "markers", tmp_path / "state"
    _hostile_project(ws, markers)
    if codex_trusts:
        (state / "codex-home").mkdir(parents=True)
        (state / "codex-home" / "config.toml").write_text(f'[projects."{ws}"]\ntrust_level = "trusted"\n')
    setup = offline_setup(SCENARIOS["say"], ws, state)
    assert setup.backend is not None
    spec = AgentRunSpec(prompt="hi", cwd=ws, env=setup.env, trust_project=trusted, sandbox="workspace-write",
                        provider_options={**setup.provider_options, "codex_bin": CODEX})
    with setup.backend, anyio.fail_after(60):
        async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
            result = await live.wait()
    assert result.status is RunStatus.SUCCESS, result.error
    assert (markers / "mcp").exists() is runs
