"""The real pinned codex (codex-exec) takes a run's MCP servers and images as a user gives them on the command line
(`harness run --offline`, against the scripted Responses backend): the npm `server-everything` `echo` tool
answers through `--mcp-server`, an image given with `-i` arrives exactly, a text file is named in the prompt
with a notice (codex takes no files), an SSE server is refused before anything is spawned, and a server's own
`PATH` and key reach it without replacing codex's.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from exec_helpers import MISSING_CODEX, REPO, real_codex

import harness_codex_exec
from harness_core import AgentRunSpec, RunStatus
from harness_core.plugins import PluginHost
from harness_core.scripted.inline import scenario_from_json
from harness_core.testing.real_tools import RED_PNG, env_probe, harness_run, json_events, play_offline

pytestmark = [pytest.mark.real_cli, pytest.mark.skipif(real_codex() is None, reason=MISSING_CODEX)]

_BIN = Path(os.environ.get("HARNESS_TOOLS_DIR") or REPO / ".tools") / "bin"


def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return harness_run(tmp_path, "codex-exec", *args, bin_dir=_BIN)


@pytest.mark.skipif(not (_BIN / "mcp-server-everything").exists(), reason="scripts/install-clis.sh installs it")
def test_the_everything_servers_echo_answers_through_mcp_server(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", "everything=mcp-server-everything stdio", "--scenario", "tools_echo", "go")
    assert out.returncode == 0, out.stderr[-3000:]
    events = json_events(out)
    final = events[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.startswith("The server said ") and "Echo: harness-echo" in final, final  # codex adds its wall time
    results = [e for e in events if e["type"] == "tool_result"]
    assert [(r["display"]["kind"], r["display"]["title"], r["display"]["command"]) for r in results] == [  # type: ignore[index]
        ("mcp", "echo", "echo(message='harness-echo')")]


def test_an_image_arrives_exactly_and_a_file_is_named_in_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "red.png").write_bytes(RED_PNG)
    (tmp_path / "notes.md").write_text("# notes\n")
    out = _harness(tmp_path, "-i", "red.png", "--attach", "notes.md", "--scenario", "attachments", "what is this")
    assert out.returncode == 0, out.stderr[-3000:]
    events = json_events(out)
    assert events[-1]["result"]["final_text"] == f"image/png {len(RED_PNG)} bytes"  # type: ignore[index]
    notices = [e for e in events if e["type"] == "notice" and e.get("code") == "attachment_degraded"]
    assert len(notices) == 1 and "notes.md" in str(notices[0]["message"]), notices


def test_an_sse_server_is_refused_before_spawn(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", "old=sse+http://127.0.0.1:9/sse", "--scenario", "say", "go")
    assert out.returncode == 2, (out.returncode, out.stdout[-2000:], out.stderr[-2000:])
    assert "sse" in (out.stdout + out.stderr).lower()
    assert not any(e.get("type") == "session_started" for e in json_events(out))


def test_a_server_whose_command_does_not_exist_fails_with_codexs_reason_not_a_backtrace(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", f"everything={tmp_path / 'no-such-server'}", "--scenario", "tools_echo",
                   "go")
    errors = [e for e in json_events(out) if e.get("type") == "error"]
    assert len(errors) == 1, (out.returncode, out.stdout[-3000:], out.stderr[-2000:])
    error = errors[0]["error"]
    assert isinstance(error, dict)
    message = str(error["message"])
    assert error["code"] == "invalid_spec" and out.returncode == 2, message
    assert "everything: No such file or directory" in message and "--mcp-server NAME=COMMAND" in message
    assert "backtrace" not in (out.stdout + out.stderr).lower()


def test_a_python_tool_from_tools_is_called_and_its_result_reaches_the_model(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
    out = _harness(tmp_path, "--tools", str(examples), "--scenario", "tools_mcp", "go")
    assert out.returncode == 0, out.stderr[-3000:]
    events = json_events(out)
    final = events[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.startswith("The tool said ") and final.rstrip(".").endswith("5"), final
    results = [e for e in events if e["type"] == "tool_result"]
    assert [(r["display"]["title"], r["display"]["command"], r["display"]["status"]) for r in results] == [  # type: ignore[index]
        ("add", "add(a=2, b=3)", "completed")]


def test_a_variable_codex_forwards_to_a_server_is_not_in_the_agents_commands(tmp_path: Path) -> None:
    """codex-exec forwards a stdio server's `env` from its own environment (`env_vars`): the agent's shell
    commands must not see it (`shell_environment_policy.exclude`). The `harness` bridge's socket variable, a name
    codex's default policy would keep, is empty in the agent's `printenv`."""
    examples = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
    scenario = json.dumps({"steps": [{"run": "printenv HARNESS_TOOLS_SOCKET | wc -c"}, {"say": "{tool_result}"}]})
    out = _harness(tmp_path, "--tools", str(examples), "--scenario", scenario, "go")
    assert out.returncode == 0, out.stderr[-3000:]
    final = json_events(out)[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.rstrip().endswith("Output:\n0"), final


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_servers_own_path_and_key_reach_it_and_leave_codex_and_the_agents_shell_alone(
        tmp_path: Path, anyio_backend: str) -> None:
    """A stdio server whose `env` holds `PATH` and `OPENAI_API_KEY` (`env_probe`, a tiny MCP server started by
    the real codex) sees those values, while the agent's own shell keeps codex's `PATH` (it was emptied when
    codex forwarded the server's variables under their own names and excluded them from the shell)."""
    server = env_probe(tmp_path, {"PATH": "/opt/srv/bin", "OPENAI_API_KEY": "sk-for-the-server-only"},
                       "PATH", "OPENAI_API_KEY")
    scenario = scenario_from_json({"steps": [{"run": "printenv PATH > agent-path.txt"},
                                             {"mcp": {"server": "envprobe", "tool": "seen"}},
                                             {"say": "{tool_result}"}]})
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = AgentRunSpec(prompt="go", cwd=ws, mcp_servers=[server], provider_options={"codex_bin": real_codex()})
    host = PluginHost.create(entry_points=False, plugins=[("codex-exec", harness_codex_exec)])
    result, _events = await play_offline(spec, "codex-exec", scenario, host)  # type: ignore[arg-type]
    assert result.status is RunStatus.SUCCESS, result.error
    assert "/opt/srv/bin|sk-for-the-server-only" in result.final_text, result.final_text
    agent_path = (ws / "agent-path.txt").read_text().strip()
    assert agent_path and "/opt/srv/bin" not in agent_path and "/usr/bin" in agent_path, agent_path
