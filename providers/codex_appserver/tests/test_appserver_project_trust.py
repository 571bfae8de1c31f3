"""codex-appserver marks an untrusted project untrusted in the thread's config (every directory from the run's cwd
up: Codex trusts each `.codex` folder by its own directory), so the app-server loads none of its `.codex/config.toml`;
a trusted project gets no such config. The real app-server's behaviour is `test_appserver_project_trust_real.py`."""

from __future__ import annotations

from pathlib import Path

from harness_core import AgentRunSpec

from harness_codex_appserver.params import thread_params
from harness_codex_appserver.provider import CodexAppServerProvider


def test_an_untrusted_project_is_untrusted_from_its_cwd_to_the_root(tmp_path: Path) -> None:
    cwd = tmp_path / "repo" / "src"
    params = thread_params(AgentRunSpec(prompt="x", cwd=cwd), ephemeral=None)
    projects = params["config"]["projects"]
    for directory in (cwd, cwd.parent, tmp_path, Path("/")):
        assert projects[str(directory)] == {"trust_level": "untrusted"}


def test_a_trusted_project_sends_no_trust_config(tmp_path: Path) -> None:
    assert "config" not in thread_params(AgentRunSpec(prompt="x", cwd=tmp_path, trust_project=True), ephemeral=None)


def test_the_project_file_it_keeps_out_is_declared() -> None:
    assert CodexAppServerProvider.info.project_config == (".codex/config.toml",)
