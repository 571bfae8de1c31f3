"""The real pinned Claude Code takes a run's MCP servers, filters and attachments, as a user gives them on the
command line (`harness run --offline`, against the scripted Messages backend): the npm `server-everything` `echo`
tool answers through `--mcp-server` (Claude Code defers MCP tools: the scripted model loads it with ToolSearch first,
as a real model does), an image and a text file given with `-i`/`--attach` arrive exactly, a file Claude takes no
block for goes in the prompt by its path (refused before spawn when strict), an allow-list naming one MCP tool is
refused before anything is spawned, and a server's secret reaches it and not the agent's shell.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from claude_helpers import CLAUDE, needs_real_claude
from harness_core import AgentRunSpec, RunStatus
from harness_core.plugins import PluginHost
from harness_core.scripted.inline import scenario_from_json
from harness_core.testing.real_tools import RED_PNG, env_probe, harness_run, json_events, play_offline

pytestmark = [*needs_real_claude]

_EVERYTHING = Path(CLAUDE).parent / "mcp-server-everything"


def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return harness_run(tmp_path, "claude", *args, bin_dir=Path(CLAUDE).parent)


@pytest.mark.skipif(not os.access(_EVERYTHING, os.X_OK), reason="scripts/install-clis.sh installs server-everything")
def test_the_everything_servers_echo_answers_through_mcp_server(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", f"everything={_EVERYTHING} stdio", "--scenario", "tools_echo", "go")
    assert out.returncode == 0, out.stderr[-3000:]
    events = json_events(out)
    done = events[-1]
    assert done["type"] == "done"
    assert done["result"]["final_text"] == "The server said Echo: harness-echo.", done  # type: ignore[index]
    results = [e for e in events if e["type"] == "tool_result" and e["display"]["kind"] == "mcp"]  # type: ignore[index]
    assert [(r["display"]["kind"], r["display"]["title"], r["display"]["command"]) for r in results] == [  # type: ignore[index]
        ("mcp", "echo", "echo(message='harness-echo')")]


def test_an_mcp_server_that_does_not_start_is_a_warning_notice(tmp_path: Path) -> None:
    """Claude Code starts without the server and says so only in its init line's `mcp_servers`: Harness shows it."""
    missing = tmp_path / "no-such-mcp-server"
    out = _harness(tmp_path, "--mcp-server", f"everything={missing}", "--scenario", "tools_echo", "go")
    notices = [e for e in json_events(out) if e["type"] == "notice" and e["code"] == "mcp_server_failed"]
    assert len(notices) == 1, (out.returncode, out.stdout[-3000:], out.stderr[-2000:])
    assert notices[0]["level"] == "warning" and notices[0]["details"] == {"server": "everything", "status": "failed"}
    assert "MCP server 'everything' did not start" in str(notices[0]["message"])


def test_an_image_and_a_text_file_arrive_exactly(tmp_path: Path) -> None:
    (tmp_path / "red.png").write_bytes(RED_PNG)
    (tmp_path / "notes.md").write_text("# notes\nhello\n")
    out = _harness(tmp_path, "-i", "red.png", "--attach", "notes.md", "--scenario", "attachments", "what is this")
    assert out.returncode == 0, out.stderr[-3000:]
    final = json_events(out)[-1]["result"]["final_text"]  # type: ignore[index]
    assert final == f"image/png {len(RED_PNG)} bytes\ntext/plain 14 bytes"


def test_a_file_claude_takes_no_block_for_is_degraded_or_refused_when_strict(tmp_path: Path) -> None:
    """A zip (no image, PDF or text block for it) and an SVG (not an image type the API takes) go in the prompt by
    their paths, each with a notice, and the run succeeds; with `--strict-attachments` nothing starts."""
    (tmp_path / "a.zip").write_bytes(b"PK\x03\x04not really")
    (tmp_path / "x.svg").write_text("<svg/>")
    args = ("--attach", "a.zip", "-i", "x.svg", "--scenario", "attachments", "what is this")
    out = _harness(tmp_path, *args)
    assert out.returncode == 0, out.stderr[-3000:]
    events = json_events(out)
    notices = [e for e in events if e["type"] == "notice" and e["code"] == "attachment_degraded"]
    assert [n["details"]["mime_type"] for n in notices] == ["image/svg+xml", "application/zip"]  # type: ignore[index]
    assert events[-1]["result"]["final_text"] == "no attachments"  # type: ignore[index]
    strict = _harness(tmp_path, "--strict-attachments", *args)
    assert strict.returncode == 2 and "--strict-attachments is on" in strict.stderr, strict.stderr[-2000:]
    assert "Nothing was started" in strict.stderr and not json_events(strict)


def test_an_allow_list_of_one_mcp_tool_is_refused_before_spawn(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", "everything=mcp-server-everything stdio", "--allowed-tools",
                   "mcp:everything.echo", "--scenario", "tools_echo", "go")
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert "allow the server (mcp:everything)" in out.stderr and "Nothing was started" in out.stderr
    assert not json_events(out) and not (tmp_path / "runs").exists()


def test_an_allow_list_of_one_python_tool_is_taken_and_served_by_harness(tmp_path: Path) -> None:
    """Claude Code allows MCP tools by server, yet `--allowed-tools mcp:harness.add` is taken for the Python tools:
    Claude is given the whole `harness` server and Harness serves it `add` alone (not `count_lines`)."""
    examples = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
    out = _harness(tmp_path, "--tools", str(examples), "--allowed-tools", "read,mcp:harness.add",
                   "--scenario", "tools_mcp", "go")
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    final = json_events(out)[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.startswith("The tool said ") and final.rstrip(".").endswith("5"), final


def test_a_python_tool_from_tools_is_called_and_its_result_reaches_the_model(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
    out = _harness(tmp_path, "--tools", str(examples), "--scenario", "tools_mcp", "go")
    assert out.returncode == 0, out.stderr[-3000:]
    events = json_events(out)
    final = events[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.startswith("The tool said ") and final.rstrip(".").endswith("5"), final
    results = [e for e in events if e["type"] == "tool_result" and e["display"]["kind"] == "mcp"]  # type: ignore[index]
    assert [(r["display"]["title"], r["display"]["command"], r["display"]["status"]) for r in results] == [  # type: ignore[index]
        ("add", "add(a=2, b=3)", "completed")]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_servers_secret_reaches_it_from_a_private_file_never_the_agents_shell(
        tmp_path: Path, host: PluginHost, anyio_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server's `env` value reaches the server (`env_probe`) through the `--mcp-config` file, and the agent's
    Bash, which inherits Claude Code's environment, finds it nowhere there; the file's directory is gone after
    the run."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    server = env_probe(tmp_path, {"PROBE_TOKEN": "tok-for-the-server-only"}, "PROBE_TOKEN")
    scenario = scenario_from_json({"steps": [{"run": "env > agent-env.txt"},
                                             {"mcp": {"server": "envprobe", "tool": "seen"}},
                                             {"say": "{tool_result}"}]})
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = AgentRunSpec(prompt="go", cwd=ws, mcp_servers=[server], provider_options={"claude_bin": CLAUDE})
    result, _events = await play_offline(spec, "claude", scenario, host)  # type: ignore[arg-type]
    assert result.status is RunStatus.SUCCESS, result.error
    assert "tok-for-the-server-only" in result.final_text, result.final_text
    agent_env = (ws / "agent-env.txt").read_text()
    assert "PATH=" in agent_env and "tok-for-the-server-only" not in agent_env
    assert not list(scratch.glob("harness-claude-mcp-*")), list(scratch.iterdir())
