"""The README's Python session example runs as written: three turns on one live codex app-server, offline.

Acceptance of the live-sessions issue. The block is taken from README.md as it stands (the one that calls
`open_session`), run with its own `chat()` on the real pinned codex (skipped without it), and its printed last
line checked: three turns, one pid.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from appserver_helpers import MISSING_CODEX, real_codex

CODEX = real_codex()
README = Path(__file__).resolve().parents[3] / "README.md"
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _session_example() -> str:
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), re.DOTALL) if "open_session(" in b]
    assert len(blocks) == 1, "README.md must hold one python block using open_session"
    body, run_line = blocks[0].rstrip().rsplit("\n", 1)
    assert run_line.strip() == "anyio.run(chat)", "the example must end by running chat()"
    return body


async def test_the_readme_session_example_plays_three_turns_on_one_process(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert CODEX is not None
    monkeypatch.setenv("PATH", f"{Path(CODEX).parent}:{__import__('os').environ.get('PATH', '')}")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    exec(compile(_session_example(), str(README), "exec"), namespace)
    await namespace["chat"]()  # type: ignore[operator]
    out = capsys.readouterr().out.strip().splitlines()
    status, turns, pid = out[-1].split()[:3]
    assert status == "success" and turns == "3" and pid.isdigit(), out
    assert len(list((tmp_path / "runs").glob("*.jsonl"))) == 3
