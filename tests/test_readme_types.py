"""The documentation's Python examples pass `mypy --strict` as a user's own script would, so they cannot drift.

Every ```python block of README.md and docs/*.md (an indented one in a list included) is taken as it stands,
written to a file of its own and checked by mypy, once as a plain user runs it and once with pydantic's mypy
plugin; an error is reported at its line in the document. A block that is only a fragment (a method without its
class, a hypothetical module) says so on the line before it: `<!-- fragment: not type-checked -->`. Alongside, the
typed API refuses what it should: `run(spec, runs_dir=3)` is a type error.

Needs mypy, which the tox `type` env has (this file is among its commands); elsewhere it is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRAGMENT = "<!-- fragment: not type-checked -->"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
_MYPY_DEADLINE = 300.0
CONFIGS = {"plain": "[mypy]\n", "pydantic-plugin": "[mypy]\nplugins = pydantic.mypy\n"}

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed in this environment: the tox `type` env runs this test")


@dataclass(frozen=True)
class Example:
    document: Path
    line: int
    """The document's line of the block's first code line (1-based)."""
    code: str

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def examples(document: Path) -> list[Example]:
    """The document's ```python blocks, dedented, each with the line it starts at; fragments left out."""
    text = document.read_text()
    found = []
    for match in _FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        if before == FRAGMENT:
            continue
        line = text.count("\n", 0, match.start("body")) + 1
        found.append(Example(document, line, textwrap.dedent(match.group("body"))))
    return found


def mypy(files: list[Path], config: str, tmp_path: Path) -> tuple[int, list[str]]:
    """`mypy --strict` over `files` with `config` (not the project's), as a script outside the repo sees Harness."""
    config_file = tmp_path / "mypy.ini"
    config_file.write_text(config)
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--config-file", str(config_file), "--cache-dir",
         str(tmp_path / "cache"), "--no-error-summary", "--show-error-codes", *map(str, files)],
        capture_output=True, text=True, timeout=_MYPY_DEADLINE, cwd=tmp_path,
        env={**os.environ, "MYPYPATH": ""},
    )
    return proc.returncode, [line for line in proc.stdout.splitlines() if ": error:" in line or ": note:" in line]


@pytest.mark.parametrize("config", CONFIGS)
def test_every_python_example_passes_mypy_strict(config: str, tmp_path: Path) -> None:
    found = [example for document in DOCUMENTS for example in examples(document)]
    assert any(e.document.name == "README.md" for e in found), "README.md has ```python blocks to check"
    files = []
    for index, example in enumerate(found):
        path = tmp_path / f"example_{index}.py"
        path.write_text(example.code)
        files.append(path)
    status, lines = mypy(files, CONFIGS[config], tmp_path)
    problems = []
    for line in lines:
        name, number, rest = line.split(":", 2)
        example = found[files.index(tmp_path / Path(name).name)]
        problems.append(f"{example.document.relative_to(ROOT)}:{example.line + int(number) - 1}:{rest}")
    assert status == 0 and not problems, "\n".join(problems) or f"mypy exited {status}"


MISUSE = '''\
from harness_core import AgentRunSpec, run, run_sync

async def main(spec: AgentRunSpec) -> None:
    await run(spec, runs_dir=3)
run_sync(AgentRunSpec(prompt="x"), record_wire="yes")
AgentRunSpec(prompt="x", cwd=3)
AgentRunSpec(prompt="x", approval="on_request")
AgentRunSpec(prompt="x", sandbox="workspace_write")
run_sync(AgentRunSpec(prompt="x"), colour="blue")
'''
"""Each line from the fourth on is one mistake mypy must report."""

USE = '''\
from pathlib import Path

from harness_core import AgentRunSpec, ApprovalPolicy, Capability, SandboxMode, SessionSpec, run_sync
from harness_core.offline import offline_workspace

spec = AgentRunSpec(prompt="x", cwd="my-repo", approval="on-request", sandbox="read-only",
                    requires={Capability.SESSION}, env={"A": "b"})
cwd: Path = spec.cwd
approval: ApprovalPolicy = spec.approval
sandbox: SandboxMode = spec.sandbox
with offline_workspace(SessionSpec(cwd=Path("ws")), "my-agent", "say") as session_spec:
    session_cwd: Path = session_spec.cwd
with offline_workspace(AgentRunSpec(prompt="x"), "my-agent") as offline:
    print(run_sync(offline, "my-agent", runs_dir="runs", record_wire=True, interrupt_grace=2).final_text)
'''


@pytest.mark.parametrize("config", CONFIGS)
def test_the_typed_api_refuses_each_mistake_and_reads_as_its_types(config: str, tmp_path: Path) -> None:
    misuse, use = tmp_path / "misuse.py", tmp_path / "use.py"
    misuse.write_text(MISUSE)
    use.write_text(USE)
    _, lines = mypy([misuse, use], CONFIGS[config], tmp_path)
    errors = [line for line in lines if ": error:" in line]
    assert not [e for e in errors if e.startswith("use.py")], errors
    flagged = {int(e.split(":")[1]) for e in errors if e.startswith("misuse.py")}
    assert flagged == set(range(4, len(MISUSE.splitlines()) + 1)), errors  # the plugin too: our `__init__` wins
