"""What the real-CLI tool tests of every provider share: the pinned tools' bin, a small valid PNG, `harness run
--offline` as a user runs it (and its JSON events), an offline run played in-process, a server telling its env.

Layer: testing (imported by the providers' `*tools_real.py` tests only). Knows the CLI's `run --json` output and the
runner API; knows no provider: each test names its own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness_core import AgentRunSpec, HarnessEvent, HarnessResult, McpServer, open_run
from harness_core.offline import offline_spec
from harness_core.plugins import PluginHost

__all__ = ["RED_PNG", "env_probe", "harness_run", "json_events", "play_offline", "tools_bin"]


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")


RED_PNG = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", (8).to_bytes(4, "big") * 2 + bytes([8, 2, 0, 0, 0])) \
    + _png_chunk(b"IDAT", zlib.compress(b"".join(b"\x00" + b"\xff\x00\x00" * 8 for _ in range(8)))) \
    + _png_chunk(b"IEND", b"")
"""An 8x8 red PNG, valid to its checksums (an agent may decode an image and drop one it cannot read)."""


def tools_bin(name: str) -> str:
    """`$HARNESS_TOOLS_DIR/bin/NAME` (the pinned CLIs and the MCP test server), or skip the test."""
    tools = os.environ.get("HARNESS_TOOLS_DIR")
    path = str(Path(tools) / "bin" / name) if tools else ""
    if not os.access(path, os.X_OK):
        pytest.skip(f"{name} is not installed (scripts/install-clis.sh; HARNESS_TOOLS_DIR); with "
                    "HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure")
    return path


def harness_run(cwd: Path, provider: str, *args: str, bin_dir: str | Path) -> subprocess.CompletedProcess[str]:
    """`harness run --offline -p PROVIDER --json ARGS...` in `cwd`, as a user runs it: its runs and config under
    `cwd`, `bin_dir` (the pinned CLIs) first on PATH; 240 s at most."""
    env = dict(os.environ, HARNESS_RUNS_DIR=str(cwd / "runs"), XDG_CONFIG_HOME=str(cwd / "xdg"),
               PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    argv = [sys.executable, "-m", "harness_core", "run", "--offline", "-p", provider, "--json", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def json_events(out: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    """The events `harness run --json` printed, one JSON object a line."""
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


async def play_offline(spec: AgentRunSpec, provider: str, scenario: str, host: PluginHost,
                       **kwargs: Any) -> tuple[HarnessResult, list[HarnessEvent]]:
    """Play `scenario` on `provider` offline (`offline_spec`), without a run log: its result and every event;
    `kwargs` go to `open_run` (`tools=`, `approver=`). 240 s at most."""
    events: list[HarnessEvent] = []
    with offline_spec(spec, provider, scenario, host=host) as played, anyio.fail_after(240):
        async with open_run(played, provider, host=host, run_log=False, **kwargs) as live:
            async for event in live:
                events.append(event)
            result = await live.wait()
    return result, events


_ENV_PROBE = r"""
import json, os, sys
seen = "|".join(os.environ.get(name, "") for name in sys.argv[1:])
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), {}
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "envprobe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "seen", "description": "The variables this server was started with.",
                             "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": seen}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


def env_probe(directory: Path, env: dict[str, str], *names: str) -> McpServer:
    """A stdio MCP server `envprobe` (a Python script written to `directory`, started by absolute path) given `env`,
    whose one tool `seen` answers the values of the variables `names` it runs with, joined by `|`."""
    script = directory / "envprobe.py"
    script.write_text(_ENV_PROBE)
    return McpServer(name="envprobe", command=sys.executable, args=(str(script), *names), env=env)
