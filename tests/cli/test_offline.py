"""`harness run --offline` and `harness demo`: everything is checked before anything is created, temporary
workspaces are removed after the run unless kept, and a user's non-empty directory is never played in without
`--force`. The scripted provider plays the runs (given an offline setup here), so no CLI is needed."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import Result

import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, InvalidSpecError, McpServer, tool
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.cli.foreground.offline import check_scenario_tools
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import OfflineSetup
from harness_core.scripted.backends import MessagesBackend
from harness_core.scripted.scenarios import SCENARIOS, Scenario
from tests.cli.test_cli import invoke, make_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class OfflineScriptedProvider(scripted.ScriptedProvider):
    """The scripted provider with an offline setup: a (served, unused) scripted backend, and the scenario as its
    option, as a CLI-driving provider would point its CLI at the backend."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="offline-scripted", version="1.0",
                                                capabilities=frozenset(Capability))
    setups: ClassVar[list[Path]] = []

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        type(self).setups.append(workspace)
        return OfflineSetup(backend=MessagesBackend(scenario, cwd=workspace),
                            provider_options={"scenario": scenario.name})


class _OfflinePlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(OfflineScriptedProvider)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)
    found = make_host(("offline", _OfflinePlugin()))
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", "offline-scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    OfflineScriptedProvider.setups = []
    yield found
    reset_host(None)


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory `tempfile` uses during the test (offline workspaces, demo folders, CLI state)."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def logs(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "runs").glob("*.jsonl")) if (tmp_path / "runs").is_dir() else []


# --- validate first --------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "said"), [
    (["--provider", "nope"], "no provider named 'nope'"),
    (["-o", "colour=blue"], "invalid options for provider 'offline-scripted'"),
    (["--scenario", "tool"], "no offline scenario named 'tool'"),
    (["--provider", "scripted"], "provider 'scripted' cannot run offline"),
    # trial 27, problem 8: a scenario calling a tool the run does not have spawned, then failed after 10 s
    (["--scenario", "tools_echo"], "calls the MCP tool 'echo' of server 'everything', which this run does not have; "
                                   "give the agent the tool with --mcp-server everything=COMMAND"),
    (["--scenario", "tools_mcp"], "give the agent the tool with --tools with a module that has a @tool named 'add'"),
])
def test_a_bad_provider_option_or_scenario_creates_nothing(tmp_path: Path, temp: Path, args: list[str],
                                                           said: str) -> None:
    result = invoke("run", "--offline", *args)
    assert result.exit_code == 2 and said in result.stderr, result.output
    assert "created" not in result.stderr and "offline workspace" not in result.stderr
    assert list(temp.iterdir()) == [] and logs(tmp_path) == []


def test_a_missing_capability_creates_nothing(tmp_path: Path, temp: Path, host: PluginHost) -> None:
    class NoSession(OfflineScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name="no-session", version="1.0",
                                                    capabilities=frozenset({Capability.STREAMING}))

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(NoSession)

    reset_host(make_host(("offline", _OfflinePlugin()), ("no-session", Plugin())))
    result = invoke("run", "--offline", "--provider", "no-session", "--resume", "s-1")
    assert result.exit_code == 2 and "does not support 'session'" in result.stderr
    assert list(temp.iterdir()) == [] and logs(tmp_path) == []


# --- temporary workspaces --------------------------------------------------------------------------------

def _workspace_line(result: Result) -> str:
    return next(line for line in result.stderr.splitlines() if line.startswith("harness: offline workspace "))


def test_the_temporary_workspace_is_removed_after_the_run_and_the_log_stays(tmp_path: Path, temp: Path) -> None:
    result = invoke("run", "--offline")
    assert result.exit_code == 0, result.output
    assert "removed after the run; --keep-workspace keeps it" in _workspace_line(result)
    assert "harness: created notes.txt in " in result.stderr
    assert OfflineScriptedProvider.setups and not OfflineScriptedProvider.setups[0].exists()
    assert list(temp.iterdir()) == []  # the workspace and the CLI's state dir
    assert len(logs(tmp_path)) == 1


def test_keep_workspace_keeps_it_and_says_where(tmp_path: Path, temp: Path) -> None:
    result = invoke("run", "--offline", "--keep-workspace")
    assert result.exit_code == 0, result.output
    workspace = OfflineScriptedProvider.setups[0]
    assert f"harness: kept the offline workspace {workspace}" in result.stderr
    assert (workspace / "notes.txt").read_text() == "beta\n" and (workspace / "new.txt").exists()
    assert list(temp.iterdir()) == [workspace]


def test_the_workspace_is_removed_when_the_run_fails(tmp_path: Path, temp: Path) -> None:
    result = invoke("run", "--offline", "--scenario", "fail_500")
    assert result.exit_code == 1
    assert list(temp.iterdir()) == []


# --- --cwd -------------------------------------------------------------------------------------------------

def test_a_non_empty_cwd_is_refused_saying_what_to_do(tmp_path: Path, temp: Path) -> None:
    repo = tmp_path / "my-repo"
    repo.mkdir()
    (repo / "main.py").write_text("print('mine')\n")
    result = invoke("run", "--offline", "--cwd", str(repo))
    assert result.exit_code == 2
    said = " ".join(result.stderr.split())
    assert f"{repo} is not empty (main.py)" in said and "creates or changes files there (notes.txt, new.txt)" in said
    assert "Use an empty or new directory" in said and "--force" in said and "leave out --cwd" in said
    assert sorted(p.name for p in repo.iterdir()) == ["main.py"] and logs(tmp_path) == []


def test_force_plays_in_a_non_empty_cwd_and_keeps_it(tmp_path: Path, temp: Path) -> None:
    repo = tmp_path / "my-repo"
    repo.mkdir()
    (repo / "main.py").write_text("print('mine')\n")
    result = invoke("run", "--offline", "--cwd", str(repo), "--force")
    assert result.exit_code == 0, result.output
    assert f"harness: created notes.txt in {repo}" in result.stderr
    assert sorted(p.name for p in repo.iterdir()) == ["main.py", "new.txt", "notes.txt"]


def test_an_empty_cwd_is_played_in_kept_and_says_what_it_created(tmp_path: Path, temp: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    result = invoke("run", "--offline", "--cwd", str(ws))
    assert result.exit_code == 0, result.output
    assert f"harness: created notes.txt in {ws} for scenario 'tools'" in result.stderr
    assert (ws / "notes.txt").read_text() == "beta\n" and list(temp.iterdir()) == []


@pytest.mark.parametrize("args", [["--keep-workspace"], ["--force"], ["--scenario", "say"], ["--scenario", "tools"]])
def test_offline_only_flags_without_offline_are_usage_errors(args: list[str]) -> None:
    result = invoke("run", "x", *args)
    assert result.exit_code == 2 and "only apply with --offline" in result.stderr


class _OfflineWithoutCli(OfflineScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="offline-no-cli", version="1.0", cli_name="no-cli",
                                                capabilities=frozenset(Capability))

    async def probe(self, options: Any) -> Any:
        from harness_core import CliNotFoundError

        raise CliNotFoundError("no-cli not found on PATH; install it with `npm install -g no-cli`")


class _NoCliPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(_OfflineWithoutCli)


def test_a_missing_cli_or_unwritable_runs_dir_creates_nothing(tmp_path: Path, temp: Path) -> None:
    """Checked before the workspace and its files exist: the user's empty directory stays empty."""
    reset_host(make_host(("offline", _OfflinePlugin()), ("no-cli", _NoCliPlugin())))
    ws = tmp_path / "ws"
    ws.mkdir()
    missing = invoke("run", "--offline", "--provider", "offline-no-cli", "--cwd", str(ws))
    assert missing.exit_code == 3 and "npm install -g no-cli" in missing.stderr, missing.output
    blocked = tmp_path / "file"
    blocked.write_text("")
    unwritable = invoke("run", "--offline", "--cwd", str(ws), "--runs-dir", str(blocked / "runs"))
    assert unwritable.exit_code == 2 and "cannot write run logs" in unwritable.stderr, unwritable.output
    for result in (missing, unwritable):
        assert "created" not in result.stderr
    assert list(ws.iterdir()) == [] and list(temp.iterdir()) == [] and OfflineScriptedProvider.setups == []


def test_scenario_writes_lists_seeded_and_written_files() -> None:
    assert SCENARIOS["tools"].writes == ("notes.txt", "new.txt")
    assert SCENARIOS["say"].writes == ()


# --- harness demo ------------------------------------------------------------------------------------------

def test_demo_removes_its_workspaces_unless_kept(tmp_path: Path, temp: Path) -> None:
    result = invoke("demo", "--provider", "offline-scripted", "--json")
    assert result.exit_code == 0, result.output
    row = json.loads(result.stdout)[0]
    assert row["status"] == "success" and row["workspace"] is None and row["changed_files"] == ["new.txt", "notes.txt"]
    assert list(temp.iterdir()) == []
    kept = invoke("demo", "--provider", "offline-scripted", "--keep-workspace")
    assert kept.exit_code == 0, kept.output
    (workspace,) = temp.iterdir()
    assert f"offline-scripted: workspace kept at {workspace}" in kept.stdout


def test_prune_removes_what_a_killed_offline_run_left_and_never_a_kept_workspace(tmp_path: Path, temp: Path) -> None:
    """SIGKILL of `harness run --offline` (no cleanup runs): its temporary workspace and the agent's state stay
    until `harness runs prune`, which lists them (`--dry-run`: only that) and removes them, whatever their age."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.cli.test_streams import WRAPPER

    kept = invoke("run", "--offline", "--keep-workspace")
    assert kept.exit_code == 0, kept.output
    (kept_workspace,) = temp.iterdir()
    script = tmp_path / "harness_offline.py"
    script.write_text(WRAPPER)
    env = {**os.environ, "HARNESS_PROVIDER": "offline-scripted", "HARNESS_RUNS_DIR": str(tmp_path / "runs"),
           "TMPDIR": str(temp)}
    child = subprocess.Popen([sys.executable, str(script), "run", "--offline", "--scenario", "stall", "go"], env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    try:
        while sum(p.is_dir() for p in temp.iterdir()) < 3:  # the kept one, the workspace, the agent's state
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.05)  # polling the directory, under the deadline
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    left = sorted(p for p in temp.iterdir() if p.is_dir() and p != kept_workspace)
    assert [p.name.startswith("harness-offline-") for p in left] == [True, True]

    dry = json.loads(invoke("runs", "prune", "--older-than", "30d", "--dry-run", "--json").stdout)
    assert sorted(Path(found["path"]) for found in dry["leftovers"]) == left and all(p.exists() for p in left)
    text = invoke("runs", "prune", "--older-than", "30d").stdout
    assert "removed 2 temporary directories that killed Harness processes left" in text
    assert all(f"removed  {p}  " in text for p in left)
    assert list(temp.iterdir()) == [kept_workspace] and (kept_workspace / "new.txt").exists()


# --- only the run's own MCP servers ------------------------------------------------------------------------

def test_offline_leaves_out_the_configured_mcp_servers_naming_them(tmp_path: Path, temp: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A server of the user's config.toml is not named for this run: an offline run neither starts it (a stdio
    one talks to whatever it likes) nor is refused over it (a remote one). A notice names each the scenario
    calls a tool of, with its line; a scenario that calls none of them gets no notice."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    config = tmp_path / "xdg" / "harness" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[mcp_servers.github]\ncommand = "/bin/sh"\nenv = { GITHUB_TOKEN = "tok-4242" }\n\n'
                      '[mcp_servers.docs]\nurl = "https://mcp.example.com/mcp"\n')
    result = invoke("run", "--offline", "--scenario", "say", "--mcp-server", "mine=my-server")
    assert result.exit_code == 0, result.output
    assert "leaves out the MCP servers" not in result.stderr, result.stderr
    started = json.loads(logs(tmp_path)[0].read_text().splitlines()[0])
    assert [server["name"] for server in started["spec"]["mcp_servers"]] == ["mine"]
    assert "tok-4242" not in logs(tmp_path)[0].read_text()
    calls = json.dumps({"steps": [{"mcp": {"server": "docs", "tool": "find", "output": "found"}}, {"say": "ok"}]})
    result = invoke("run", "--offline", "--scenario", calls, "go")
    assert f"harness: --offline leaves out the MCP servers of your configuration: docs (user {config}:5); give a " \
           "server to this run with --mcp-server" in result.stderr, result.stderr
    assert "github" not in result.stderr, result.stderr


def test_offline_chat_leaves_out_a_projects_servers_instead_of_refusing_them(tmp_path: Path, temp: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".harness.toml").write_text('[mcp_servers.everything]\ncommand = "./run-me.sh"\n')
    result = invoke("chat", "--offline", "--scenario", "tools_echo", "-C", str(project), "--force", input="hi\n")
    assert "leaves out the MCP servers of your configuration: everything " \
           f"({project / '.harness.toml'}:1)" in result.stderr, result.output
    # the scenario calls the left-out server's tool: refused before anything is made, saying what to give
    assert result.exit_code == 2 and "--mcp-server everything=" in result.stderr, result.output
    assert "may not add MCP servers" not in result.stderr and logs(tmp_path) == [], result.output


def test_a_scenario_whose_tool_is_given_or_only_filtered_out_is_played() -> None:
    """Only a tool the run does not have at all is refused: one its filter leaves out is played, so that the run
    shows the filter at work."""

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    hidden = AgentRunSpec(prompt="x", disallowed_tools=frozenset({"mcp:harness.add"}))
    check_scenario_tools(SCENARIOS["tools_mcp"], hidden, (add,))
    everything = McpServer(name="everything", command="mcp-server-everything")
    check_scenario_tools(SCENARIOS["tools_echo"], AgentRunSpec(prompt="x", mcp_servers=[everything]), ())
    with pytest.raises(InvalidSpecError, match="@tool named 'add'"):
        check_scenario_tools(SCENARIOS["tools_mcp"], AgentRunSpec(prompt="x"), ())
