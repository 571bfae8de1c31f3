"""`harness run` on a real pty: the view streams a slow agent's text as it comes (held text is written once the
reader has caught up, not at the end), and a fast one's whole answer arrives, in order, with the final line.

Runs `harness run --offline` through the scripted wrapper of `tests.cli.test_streams` (no agent CLI)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import scripted_host
from tests.cli.test_streams import _ANSWER, WRAPPER

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
__all__ = ["scripted_host"]  # the autouse fixture, shared with tests.cli.test_cli

_DEADLINE = 60.0
_CONTROL = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\r")


def _on_a_pty(tmp_path: Path, runs_dir: Path, args: list[str]) -> list[tuple[float, bytes]]:
    """What the pty got, as (seconds since start, bytes) per read, read as fast as it comes."""
    script = tmp_path / "harness_offline.py"
    script.write_text(WRAPPER)
    env = {**os.environ, "HARNESS_PROVIDER": "offline-scripted", "HARNESS_RUNS_DIR": str(runs_dir),
           "TERM": "xterm-256color"}
    env.pop("NO_COLOR", None)
    env.pop("PYTHONUNBUFFERED", None)  # a user's terminal: stdout line-buffered, so only the view's flushes count
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    started = time.monotonic()
    child = subprocess.Popen([sys.executable, str(script), "run", *args], env=env, stdin=terminal, stdout=terminal,
                             stderr=terminal, start_new_session=True)
    os.close(terminal)
    reads: list[tuple[float, bytes]] = []
    try:
        while True:
            assert time.monotonic() - started < _DEADLINE, reads
            ready, _, _ = select.select([controller], [], [], 0.2)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # every process holding the pty is gone
                break
            if not chunk:
                break
            reads.append((time.monotonic() - started, chunk))
        assert child.wait(timeout=_DEADLINE) == 0, reads
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
            child.wait(timeout=_DEADLINE)
    return reads


def _text(reads: list[tuple[float, bytes]]) -> str:
    return _CONTROL.sub(b"", b"".join(chunk for _, chunk in reads)).decode()


def test_a_slow_agents_text_reaches_the_terminal_as_it_streams(tmp_path: Path, runs_dir: Path) -> None:
    # slow_say: the answer in 6 chunks, 0.25 s apart: the first chunk must be on screen well before the end
    reads = _on_a_pty(tmp_path, runs_dir, ["--offline", "--scenario", "slow_say"])
    assert _ANSWER in _text(reads)
    first_piece = _ANSWER[:3].encode()
    first = next(t for t, chunk in reads if first_piece in _CONTROL.sub(b"", chunk))
    final = next(t for t, chunk in reads if b"success in" in chunk)
    assert final - first >= 0.75, reads  # 5 pauses of 0.25 s lie between them: the text was not held back
    pieces = [t for t, chunk in reads if any(c.isalpha() for c in _CONTROL.sub(b"", chunk).decode("utf-8", "replace"))
              and t < final]
    assert len(pieces) >= 3, reads  # the answer arrived in several writes, not one at the end


def test_a_fast_answer_arrives_whole_and_in_order(tmp_path: Path, runs_dir: Path) -> None:
    reads = _on_a_pty(tmp_path, runs_dir, ["--offline", "--scenario", "tools"])
    text = _text(reads)
    assert "All four tools ran." in text
    assert text.index("All four tools ran.") < text.index("success in")
