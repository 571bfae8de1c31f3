"""scripts/setup.sh's first step (scripts/venv.sh): a .venv left without pip by an interrupted first setup is made
again, and setup says so; a whole one is kept as it is."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "venv.sh"
_DEADLINE = 300


def _venv_step(cwd: Path) -> subprocess.CompletedProcess[str]:
    python = Path(sys.base_prefix) / "bin"  # the interpreter the venvs are made with, first on PATH as python3
    return subprocess.run(["bash", "-c", f'set -euo pipefail; PATH="{python}:$PATH"; source "{_SCRIPT}"'], cwd=cwd,
                          capture_output=True, text=True, timeout=_DEADLINE)


def _has_pip(venv: Path) -> bool:
    found = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"], capture_output=True,
                           timeout=_DEADLINE)
    return found.returncode == 0


def test_a_venv_without_pip_is_made_again_and_setup_says_so(tmp_path: Path) -> None:
    if shutil.which("python3", path=str(Path(sys.base_prefix) / "bin")) is None:
        raise AssertionError(f"no python3 in {sys.base_prefix}/bin")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / ".venv")], check=True,
                   timeout=_DEADLINE)
    assert not _has_pip(tmp_path / ".venv")  # as Ctrl-C during `python3 -m venv` leaves it

    done = _venv_step(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "setup: .venv has no pip (an earlier setup was interrupted?): removing it and making it again" in done.stdout
    assert _has_pip(tmp_path / ".venv")

    (tmp_path / ".venv" / "kept").write_text("")
    again = _venv_step(tmp_path)  # a whole .venv: kept, nothing said about it
    assert again.returncode == 0 and again.stdout == "", again.stdout + again.stderr
    assert (tmp_path / ".venv" / "kept").exists()
