"""The `harness` command is the only place logging is configured, and only while a command runs; its start-up
imports nothing heavy; the constants it keeps to stay light agree with the library's."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

import harness_core.errors as errors
import harness_core.offline as offline
import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, HarnessResult, ProviderInfo, hookimpl, parse_event
from harness_core._logging import ROOT_LOGGER, get_logger
from harness_core._run.replay import run as _replay
from harness_core.cli import exits as _exits
from harness_core.cli.flags import scenario_flag as _scenario_flag
from harness_core.cli.run import commands as _run_commands
from harness_core.cli.runs import approve as _approve, commands as _runs_commands
from harness_core.jobs import launcher as _launcher
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import RunContext
from tests.cli.test_cli import invoke, make_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

_log = get_logger("harness.chatty")


class ChattyProvider(scripted.ScriptedProvider):
    """The scripted provider, logging one record per level before it plays."""

    info: ClassVar[ProviderInfo] = scripted.ScriptedProvider.info.model_copy(update={"name": "chatty"})

    async def run(self, spec: AgentRunSpec, options: scripted.ScriptedOptions, ctx: RunContext) -> HarnessResult:
        _log.debug("chatty_detail", step=1)
        _log.info("chatty_note")
        _log.warning("chatty_careful", n=2)
        return await super().run(spec, options, ctx)


class _ChattyPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(ChattyProvider)


@pytest.fixture(autouse=True)
def chatty_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)
    host = make_host(("chatty", _ChattyPlugin()))
    reset_host(host)
    monkeypatch.setenv("HARNESS_PROVIDER", "chatty")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield host
    reset_host(None)


def test_warnings_reach_stderr_by_default_and_debug_only_with_vv() -> None:
    plain = invoke("run", "x")
    assert plain.exit_code == 0
    logged = [line for line in plain.stderr.splitlines() if "chatty_" in line]  # beside the view
    assert logged == ["WARNING harness.chatty: chatty_careful n=2"]
    assert "chatty_" not in plain.stdout
    verbose = invoke("run", "x", "-v").stderr.splitlines()
    assert [line for line in verbose if "chatty_" in line] == logged  # -v is for the rendering only
    debug = invoke("run", "x", "-vv", "--json")
    assert debug.exit_code == 0
    assert "DEBUG harness.chatty: chatty_detail step=1\n" in debug.stderr
    assert "INFO harness.chatty: chatty_note\n" in debug.stderr
    assert [parse_event(line).seq for line in debug.stdout.splitlines()] == list(range(7))  # only events


def test_the_command_leaves_logging_as_it_found_it() -> None:
    harness_logger, root = logging.getLogger(ROOT_LOGGER), logging.getLogger()
    before = (list(harness_logger.handlers), harness_logger.level, list(root.handlers), root.level)
    for args in (["run", "x", "-vv"], ["run", "--provider", "nope", "x"], ["providers"], ["schema"]):
        invoke(*args)
        assert (list(harness_logger.handlers), harness_logger.level, list(root.handlers), root.level) == before


def test_nothing_configures_structlog_even_in_the_cli(tmp_path: Path) -> None:
    script = textwrap.dedent("""
        import sys
        import structlog
        import harness_core.testing.scripted as scripted
        from harness_core.plugins import PluginHost, reset_host
        from harness_core.cli import main
        reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted)]))
        for args in (["run", "x", "-vv"], ["providers"], ["doctor"], ["runs"]):
            try:
                main(args)
            except SystemExit:
                pass
        print("CONFIGURED", structlog.is_configured(), file=sys.stderr)
    """)
    env = {"HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(tmp_path / "runs"), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "CONFIGURED False"


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["--version"]])
def test_start_up_imports_nothing_heavy(args: list[str]) -> None:
    heavy = ("pydantic", "anyio", "structlog", "pluggy", "harness_core._run", "harness_core.plugins",
             "harness_core.offline", "harness_core.store", "harness_core.events")
    probe = textwrap.dedent(f"""
        import sys
        from harness_core.cli import main
        try:
            main({args!r})
        except SystemExit:
            pass
        print("HEAVY=" + ",".join(m for m in {heavy!r} if m in sys.modules))
    """)
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.splitlines()[-1] == "HEAVY="


def test_the_constants_kept_for_a_light_start_up_agree_with_the_library() -> None:
    assert _exits.EXIT_USAGE == errors.EXIT_USAGE and _exits.EXIT_FAILED == errors.EXIT_FAILED
    assert _exits.EXIT_INTERRUPTED == errors.EXIT_INTERRUPTED
    assert _scenario_flag.DEFAULT_SCENARIO == offline.DEFAULT_SCENARIO
    assert _run_commands.WORKER_FLAG == _launcher.WORKER_FLAG
    assert _runs_commands._DEFAULT_DEADLINE == _replay.DEFAULT_DEADLINE
    assert sorted(_runs_commands._DECISIONS) == sorted(_approve._DECISIONS)
