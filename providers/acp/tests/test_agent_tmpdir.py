"""Each ACP agent Harness starts gets its own temporary directory (`TMPDIR`): 0700, made for its run or live session
and removed when it ends, with what the agent left there (Gemini CLI's `gemini-client-error-*.json`)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from harness_core import AgentRunSpec, RunStatus, open_session, run
from harness_core.files.scratch import sweep_scratch
from harness_core.plugins import PluginHost
from harness_core.provider import Scratch
from harness_core.testing.real_tools import play_offline, tools_bin

import harness_acp.provider
from harness_acp.profiles import PROFILES
from harness_acp.provider import TMPDIR_PREFIX, AcpProvider
from harness_acp.testing import write_fake_agent

pytestmark = pytest.mark.anyio


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Harness's own temporary directory for the test (where scratch directories are made); no `TMPDIR` of ours."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.delenv("TMPDIR", raising=False)
    return root


def _recording_agent(tmp_path: Path) -> tuple[Path, Path]:
    """A fake agent whose launcher notes its `TMPDIR` and that directory's mode, then leaves a report there (the
    generic provider's probe starts it once without: not noted)."""
    record = tmp_path / "record"
    agent = write_fake_agent(tmp_path / "bin", scenario="say")
    note = (f'if [ -n "$TMPDIR" ]; then printf "%s %s\\n" "$TMPDIR" "$(stat -c %a "$TMPDIR")" >> {record}\n'
            'echo conversation > "$TMPDIR/gemini-client-error-Turn.run-x.json"; fi\nexec ')
    agent.write_text(agent.read_text().replace("exec ", note, 1))
    return agent, record


def _contents(directory: Path) -> list[Path]:
    return list(directory.iterdir())


def _noted(record: Path) -> list[tuple[Path, str]]:
    """Each start's (TMPDIR, its mode)."""
    return [(Path(path), mode) for path, mode in (line.split() for line in record.read_text().splitlines())]


async def test_a_run_gives_the_agent_a_private_tmpdir_removed_after(tmp_path: Path, temp: Path,
                                                                    host: PluginHost) -> None:
    agent, record = _recording_agent(tmp_path)
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, provider_options={"command": str(agent)})
    result = await run(spec, "acp", host=host, run_log=False)
    assert result.status is RunStatus.SUCCESS, result.error
    [(path, mode)] = _noted(record)
    assert path.parent == temp and path.name.startswith(TMPDIR_PREFIX) and mode == "700"
    assert _contents(temp) == [], "the directory, its report and its lock file are removed after the run"


async def test_a_live_session_keeps_its_tmpdir_until_it_closes(tmp_path: Path, temp: Path, host: PluginHost) -> None:
    agent, record = _recording_agent(tmp_path)
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, provider_options={"command": str(agent)})
    async with open_session(spec, "acp", host=host, run_log=False) as session:
        first = await session.run("hello")
        [(path, mode)] = _noted(record)
        assert (path / "gemini-client-error-Turn.run-x.json").exists() and mode == "700"
        second = await session.run("again")
    assert [first.status, second.status] == [RunStatus.SUCCESS] * 2
    assert len(_noted(record)) == 1, "one agent process, one directory, for the whole session"
    assert _contents(temp) == []


def test_the_tmpdir_a_killed_harness_left_is_swept(temp: Path) -> None:
    """What `harness runs prune` removes: the directory of a process that died holding it."""
    made = ("import os, sys, tempfile; tempfile.tempdir = sys.argv[1]; from harness_core.provider import Scratch; "
            "from harness_acp.provider import TMPDIR_PREFIX; Scratch(TMPDIR_PREFIX); os._exit(9)")
    subprocess.run([sys.executable, "-c", made, str(temp)], check=False, timeout=60)
    assert [left.path.name.startswith(TMPDIR_PREFIX) for left in sweep_scratch(temp)] == [True]
    assert _contents(temp) == []


def test_a_tmpdir_the_caller_gives_wins(host: PluginHost, tmp_path: Path) -> None:
    """The spec's `TMPDIR` (or `-o public_env`'s) is the caller's choice: kept; Harness's own is not passed on."""
    provider = host.get(PROFILES["gemini"].name).cls()
    assert isinstance(provider, AcpProvider)
    options = provider.parse_options({})
    private = tmp_path / "private"
    spec = AgentRunSpec(prompt="hi", cwd=tmp_path, trust_project=True)
    assert provider.child_env(options, spec, private)["TMPDIR"] == str(private)
    given = spec.model_copy(update={"env": {"TMPDIR": "/srv/mine"}})
    assert provider.child_env(options, given, private)["TMPDIR"] == "/srv/mine"
    public = provider.parse_options({"public_env": {"TMPDIR": "/srv/theirs"}})
    assert provider.child_env(public, spec, private)["TMPDIR"] == "/srv/theirs"


@pytest.mark.real_cli
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_gemini_writes_its_failed_request_report_there(tmp_path: Path, temp: Path, host: PluginHost,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The real Gemini CLI 0.61.0 honours `TMPDIR` for `gemini-client-error-*.json` (Node's `os.tmpdir()`): a
    request that fails (`tools_mcp` without the tool) leaves its report in the agent's directory, then nothing."""
    left: list[str] = []

    class Watched(Scratch):
        def release(self, *, keep: bool = False) -> None:
            if self.path.is_dir():
                left.extend(p.name for p in _contents(self.path))
            super().release(keep=keep)

    monkeypatch.setattr(harness_acp.provider, "Scratch", Watched)
    spec = AgentRunSpec(prompt="go", cwd=tmp_path, provider_options={"gemini_bin": tools_bin("gemini")})
    result, _ = await play_offline(spec, "gemini", "tools_mcp", host)
    assert result.status is RunStatus.FAILED
    assert any(name.startswith("gemini-client-error-") for name in left), left
    assert _contents(temp) == []
