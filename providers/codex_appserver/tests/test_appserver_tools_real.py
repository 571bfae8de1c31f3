"""The real pinned codex (codex-appserver) takes a run's MCP servers and images as a user gives them on the command line
(`harness run --offline`, against the scripted Responses backend): the npm `server-everything` `echo` tool
answers through `--mcp-server`, an image given with `-i` arrives exactly, a text file is named in the prompt
with a notice (codex takes no files), and an SSE server is refused before anything is spawned.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from appserver_helpers import MISSING_CODEX, REPO, real_codex
from harness_core.testing.real_tools import RED_PNG, harness_run, json_events

pytestmark = [pytest.mark.real_cli, pytest.mark.skipif(real_codex() is None, reason=MISSING_CODEX)]

_BIN = Path(os.environ.get("HARNESS_TOOLS_DIR") or REPO / ".tools") / "bin"


def _harness(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return harness_run(tmp_path, "codex-appserver", *args, bin_dir=_BIN)


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
