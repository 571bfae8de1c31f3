"""The real pinned Claude Code takes a run's MCP servers, filters and attachments, as a user gives them on the
command line (`harness run --offline`, against the scripted Messages backend): the npm `server-everything` `echo`
tool answers through `--mcp-server` (Claude Code defers MCP tools: the scripted model loads it with ToolSearch first,
as a real model does), an image and a text file given with `-i`/`--attach` arrive exactly, and an
allow-list naming one MCP tool is refused before anything is spawned.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from claude_helpers import CLAUDE, needs_real_claude

pytestmark = [*needs_real_claude]

_EVERYTHING = Path(CLAUDE).parent / "mcp-server-everything"


def _png() -> bytes:
    """An 8x8 red PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 8 for _ in range(8))
    header = (8).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, HARNESS_RUNS_DIR=str(tmp_path / "runs"), XDG_CONFIG_HOME=str(tmp_path / "xdg"),
               PATH=f"{Path(CLAUDE).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    return subprocess.run([sys.executable, "-m", "harness_core", "run", "--offline", "-p", "claude", "--json", *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)


def _events(out: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


@pytest.mark.skipif(not os.access(_EVERYTHING, os.X_OK), reason="scripts/install-clis.sh installs server-everything")
def test_the_everything_servers_echo_answers_through_mcp_server(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", f"everything={_EVERYTHING} stdio", "--scenario", "tools_echo", "go")
    assert out.returncode == 0, out.stderr[-3000:]
    events = _events(out)
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
    notices = [e for e in _events(out) if e["type"] == "notice" and e["code"] == "mcp_server_failed"]
    assert len(notices) == 1, (out.returncode, out.stdout[-3000:], out.stderr[-2000:])
    assert notices[0]["level"] == "warning" and notices[0]["details"] == {"server": "everything", "status": "failed"}
    assert "MCP server 'everything' did not start" in str(notices[0]["message"])


def test_an_image_and_a_text_file_arrive_exactly(tmp_path: Path) -> None:
    (tmp_path / "red.png").write_bytes(_png())
    (tmp_path / "notes.md").write_text("# notes\nhello\n")
    out = _harness(tmp_path, "-i", "red.png", "--attach", "notes.md", "--scenario", "attachments", "what is this")
    assert out.returncode == 0, out.stderr[-3000:]
    final = _events(out)[-1]["result"]["final_text"]  # type: ignore[index]
    assert final == f"image/png {len(_png())} bytes\ntext/plain 14 bytes"


def test_an_allow_list_of_one_mcp_tool_is_refused_before_spawn(tmp_path: Path) -> None:
    out = _harness(tmp_path, "--mcp-server", "everything=mcp-server-everything stdio", "--allowed-tools",
                   "mcp:everything.echo", "--scenario", "tools_echo", "go")
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert "allow the server (mcp:everything)" in out.stdout + out.stderr
    assert not any(e.get("type") == "session_started" for e in _events(out))


def test_an_allow_list_of_one_python_tool_is_taken_and_served_by_harness(tmp_path: Path) -> None:
    """Claude Code allows MCP tools by server, yet `--allowed-tools mcp:harness.add` is taken for the Python tools:
    Claude is given the whole `harness` server and Harness serves it `add` alone (not `count_lines`)."""
    examples = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
    out = _harness(tmp_path, "--tools", str(examples), "--allowed-tools", "read,mcp:harness.add",
                   "--scenario", "tools_mcp", "go")
    assert out.returncode == 0, (out.returncode, out.stderr[-3000:])
    final = _events(out)[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.startswith("The tool said ") and final.rstrip(".").endswith("5"), final


def test_a_python_tool_from_tools_is_called_and_its_result_reaches_the_model(tmp_path: Path) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "tools.py"
    out = _harness(tmp_path, "--tools", str(examples), "--scenario", "tools_mcp", "go")
    assert out.returncode == 0, out.stderr[-3000:]
    events = _events(out)
    final = events[-1]["result"]["final_text"]  # type: ignore[index]
    assert final.startswith("The tool said ") and final.rstrip(".").endswith("5"), final
    results = [e for e in events if e["type"] == "tool_result" and e["display"]["kind"] == "mcp"]  # type: ignore[index]
    assert [(r["display"]["title"], r["display"]["command"], r["display"]["status"]) for r in results] == [  # type: ignore[index]
        ("add", "add(a=2, b=3)", "completed")]
