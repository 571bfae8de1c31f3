"""The contract's `harness chat` check: a conversation on the command line, offline, on one live process.

Layer: testing (the shipped contract suite). Knows the CLI as a user runs it (a subprocess), the run store's
reader and the provider's declared capabilities; knows no provider. Real mode only: `harness chat --offline` plays
the provider's real CLI against its own embedded scripted backend (`offline_setup`), exactly as a user would.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_core.capabilities import Capability
from harness_core.events import Done, RunStarted, RunStatus, SessionStarted
from harness_core.offline._setup import can_run_offline
from harness_core.store import read_events
from harness_core.testing.contract._base import ContractBase

__all__ = ["ChatTests"]

_CHAT_DEADLINE = 240.0
_PROMPTS = "hello\nand again\none more time\n"


class ChatTests(ContractBase):
    """`harness chat --offline` holds a three-turn conversation on one live process (`live_session`)."""

    def test_harness_chat_offline_holds_a_conversation_on_one_process(self, tmp_path: Path,
                                                                      harness_real: bool) -> None:
        provider = self._provider()
        if not harness_real:
            pytest.skip("harness chat --offline plays the real CLI: run the contract with --harness-real")
        if Capability.LIVE_SESSION not in self.capabilities or not can_run_offline(provider.cls):
            pytest.skip(f"{self.provider_name} has no live sessions it can play offline")
        env = dict(os.environ, HARNESS_RUNS_DIR=str(tmp_path / "runs"), HARNESS_PROVIDER="",
                   XDG_CONFIG_HOME=str(tmp_path / "xdg"))  # never this machine's harness/config.toml
        cli_name, real = provider.cls.info.cli_name, self.real_cli_path()
        if cli_name and real:  # where the contract finds the real CLI, first on PATH for the chat
            env["PATH"] = f"{Path(real).parent}{os.pathsep}{env.get('PATH', '')}"
        elif cli_name and shutil.which(cli_name) is None:
            pytest.fail(f"the real {cli_name} is not installed (real_cli_path() and PATH have none)")
        chat = subprocess.run(
            [sys.executable, "-m", "harness_core", "chat", "--offline", "-p", self.provider_name],
            input=_PROMPTS, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=_CHAT_DEADLINE)
        assert chat.returncode == 0, f"harness chat exited {chat.returncode}:\n{chat.stderr[-3000:]}"
        logs = sorted(p for p in (tmp_path / "runs").glob("*.jsonl") if not p.name.endswith(".wire.jsonl"))
        runs = [list(read_events(log)) for log in logs]
        assert len(runs) == 3, f"three prompts must play three turns, each its own run; got {len(runs)} logs"
        starts = [run[0] for run in runs]
        assert all(isinstance(s, RunStarted) and s.session_turn is not None for s in starts)
        turns = sorted((s.session_turn for s in starts if isinstance(s, RunStarted) and s.session_turn),
                       key=lambda t: t.index)
        assert [t.index for t in turns] == [0, 1, 2] and len({t.session for t in turns}) == 1
        assert all(t.live for t in turns), "a provider with live_session must keep its process across the chat"
        pids = {t.pid for t in turns}
        assert len(pids) == 1 and None not in pids, f"every turn must be played by one process; got pids {pids}"
        for run in runs:
            done = run[-1]
            assert isinstance(done, Done) and done.result.status is RunStatus.SUCCESS, done
        agent_sessions = {e.session_id for run in runs for e in run if isinstance(e, SessionStarted)}
        assert len(agent_sessions) == 1, f"one conversation, one agent session; got {agent_sessions}"
        assert "3 turns" in chat.stderr, chat.stderr[-2000:]
