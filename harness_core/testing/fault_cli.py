"""Generic fault wrappers around a real agent CLI, for the contract's fault tests in real mode.

Layer: testing. Knows processes, signals and a file flag; knows no CLI, protocol or provider. Stdlib only. Each
writer puts an executable named like the CLI into a directory and returns its path; what each does:
docs/providers.md (the contract suite, how scenarios are played).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
import sys
from pathlib import Path

__all__ = ["below", "write_crashing_cli", "write_too_old_cli"]

_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?")
_VERSION_DEADLINE = 30.0


def below(minimum: str) -> str | None:
    """A version lower than `minimum` (`"2.1.0"` → `"0.0.0"`), or None when nothing is lower (`"0.0.0"`)."""
    numbers = [int(n) for n in re.findall(r"\d+", minimum)]
    return "0.0.0" if any(numbers) else None


def write_too_old_cli(directory: str | os.PathLike[str], name: str, real: str, version: str) -> Path:
    """Write `name` into `directory`: `--version` reports `version` in the real CLI's own words; anything else
    execs `real`. Runs `real --version` once, now.

    Raises:
        RuntimeError: `real --version` failed or printed no version number.
    """
    try:
        done = subprocess.run([real, "--version"], capture_output=True, text=True, timeout=_VERSION_DEADLINE,
                              stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"`{real} --version` failed: {exc}") from exc
    said = done.stdout.strip() or done.stderr.strip()
    if done.returncode != 0 or not _VERSION.search(said):
        raise RuntimeError(f"`{real} --version` printed no version (exit {done.returncode}): {said[:200]!r}")
    old = _VERSION.sub(version, said, count=1)
    script = "\n".join([
        "#!/bin/sh",
        "# harness contract: a too-old version of the real CLI (harness_core.testing.fault_cli)",
        'for arg in "$@"; do',
        f'  if [ "$arg" = --version ]; then printf "%s\\n" {shlex.quote(old)}; exit 0; fi',
        "done",
        f'exec {shlex.quote(real)} "$@"',
        "",
    ])
    return _write(Path(directory) / name, script)


_CRASHER = '''\
import os, signal, subprocess, sys
REAL, ARMED, AFTER = {real!r}, {armed!r}, {after!r}
child = subprocess.Popen([REAL, *sys.argv[1:]], stdout=subprocess.PIPE, start_new_session=True)
out = sys.stdout.buffer
lines = 0
for line in iter(child.stdout.readline, b""):
    out.write(line)
    out.flush()
    lines += 1
    if (ARMED and os.path.exists(ARMED)) or (AFTER and lines >= AFTER):
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        child.wait()
        os.kill(os.getpid(), signal.SIGKILL)
code = child.wait()
if code < 0:
    os.kill(os.getpid(), -code)
sys.exit(code)
'''


def write_crashing_cli(directory: str | os.PathLike[str], name: str, real: str, armed: str | os.PathLike[str] | None,
                       *, after_lines: int | None = None) -> Path:
    """Write `name` into `directory`: the real CLI, SIGKILLed with its whole process group (and then the wrapper
    itself) at the first stdout line after the file `armed` exists, or after `after_lines` lines of stdout.

    Raises:
        ValueError: neither `armed` nor `after_lines` says when to die.
    """
    if armed is None and not after_lines:
        raise ValueError("say when the CLI dies: an `armed` flag file or `after_lines`")
    body = _CRASHER.format(real=real, armed=str(armed) if armed is not None else "", after=after_lines or 0)
    return _write(Path(directory) / name, f"#!{sys.executable}\n# harness contract: the real CLI, killed mid-turn "
                  f"(harness_core.testing.fault_cli)\n{body}")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path
