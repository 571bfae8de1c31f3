"""Tables and notices fit the terminal: `harness providers`, `harness runs` and the demo summary share one table
renderer that cuts or wraps cells, moves a column under its row and finally gives each row a block, never
cutting an id; on a real 80-, 120- and 200-column pty no line of those commands (nor `harness run`'s offline
notices and final line) is wider than the terminal, and nothing a user needs is lost. Off a terminal and with
`--json` everything stays whole."""

from __future__ import annotations

import fcntl
import json
import os
import re
import select
import struct
import subprocess
import sys
import termios
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_core.cli.providers.play import DemoRow, format_summary
from harness_core.cli.render.layout import Column, fit_parts, fit_table, fit_text
from harness_core.events import Done, HarnessResult, RunStarted, RunStatus, Usage
from harness_core.plugins import reset_host
from harness_core.store import LogWriter
from tests.cli.test_cli import invoke, make_host
from tests.cli.test_streams import WRAPPER as OFFLINE_WRAPPER

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

_DEADLINE = 60.0
_WIDTHS = (80, 120, 200)
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")

# A provider whose CLI is missing (a long reason) beside the scripted one (every capability): a row of ~190
# characters, as the real providers' are.
_PROVIDERS_WRAPPER = textwrap.dedent("""
    import harness_core.testing.scripted as scripted
    from harness_core.plugins import PluginHost, reset_host
    from tests.cli.test_cli import _MissingPlugin
    reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("missing", _MissingPlugin())]))
    from harness_core.cli import main
    main()
""")

_COLUMNS = (Column("ID", title=True), Column("STATUS", title=True), Column("WHAT", "wrap", least=10),
            Column("NOTE", "cut", least=8, under=True))
_ROWS = [["20261201T100000-aaaa1111", "success", "shell read edit write, and a good deal more after that",
          "the prompt, which is long enough to be cut somewhere"],
         ["20261201T110000-bbbb2222", "waiting for approval", "-", "short"]]


@pytest.fixture(autouse=True)
def runs_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    reset_host(make_host())
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield tmp_path / "runs"
    reset_host(None)


# --- the renderer --------------------------------------------------------------------------------------------

def test_a_table_that_fits_is_left_as_it_is() -> None:
    whole = fit_table(_COLUMNS, _ROWS, None)
    assert whole[1].split("  ")[0] == "20261201T100000-aaaa1111" and whole[1].endswith("somewhere")
    assert fit_table(_COLUMNS, _ROWS, max(len(line) for line in whole)) == whole


def test_narrower_cells_are_wrapped_or_cut_and_ids_stay_whole() -> None:
    lines = fit_table(_COLUMNS, _ROWS, 150)
    assert all(len(line) <= 150 for line in lines) and len(lines) > 3  # a wrapped cell continues below
    assert lines[0].split() == ["ID", "STATUS", "WHAT", "NOTE"]
    assert lines[1].startswith("20261201T100000-aaaa1111  success")
    assert lines[1].endswith("…") and "somewhere" not in "".join(lines)  # the note is cut, marked
    assert set(_ROWS[0][2].split()) <= set(" ".join(lines).split())  # the wrapped cell: all of it, below


def test_a_column_moves_under_its_row_then_each_row_becomes_a_block() -> None:
    under = fit_table(_COLUMNS, _ROWS, 60)
    assert under[0].split() == ["ID", "STATUS", "WHAT"]  # NOTE has a line of its own under each row
    assert "  the prompt, which is long enough to be cut" in "\n".join(under)
    assert all(len(line) <= 60 for line in under)
    blocks = fit_table(_COLUMNS, _ROWS, 40)
    assert blocks[:2] == ["20261201T100000-aaaa1111  success", "  what: shell read edit write, and a"]
    second = blocks.index("20261201T110000-bbbb2222")  # its title line too wide: the status under the id
    assert blocks[second + 1] == "  waiting for approval" and "  note: short" in blocks
    assert all(len(line) <= 40 for line in blocks)


@pytest.mark.parametrize("width", range(30, 221, 7))
def test_every_width_is_fitted_and_no_id_is_broken(width: int) -> None:
    for line in fit_table(_COLUMNS, _ROWS, width):
        assert len(line) <= width, line
    text = "\n".join(fit_table(_COLUMNS, _ROWS, width))
    assert "20261201T100000-aaaa1111" in text and "20261201T110000-bbbb2222" in text


def test_lines_break_between_words_or_parts_and_keep_long_words_whole() -> None:
    path = "/tmp/" + "x" * 90
    assert fit_text(f"kept at {path} now", 40) == ["kept at", "  " + path, "  now"]
    assert fit_text("short", 40) == ["short"] and fit_text("x " * 50, None) == ["x " * 50]
    parts = ["✓ success in 1.2 s", "600 tokens in / 100 out", "session 01a24d6c-a215-7a61-a2e2-93b7d3374d6e"]
    assert fit_parts(parts, 80, " · ") == ["✓ success in 1.2 s · 600 tokens in / 100 out",
                                           "  session 01a24d6c-a215-7a61-a2e2-93b7d3374d6e"]
    assert fit_parts(parts, 200, " · ") == [" · ".join(parts)]


# --- the demo summary ------------------------------------------------------------------------------------------

def _demo_rows() -> list[DemoRow]:
    return [DemoRow(provider=name, status="success", workspace=None, cli_version="0.169.0",
                    tools=("shell:completed", "read:completed", "edit:completed", "write:completed"),
                    duration_s=2.53, input_tokens=600, output_tokens=100, run_id=f"20261202T02402{i}-95eedc8{i}",
                    changed_files=("new.txt", "notes.txt"))
            for i, name in enumerate(("scripted-offline", "alpha-agent", "b"))]


@pytest.mark.parametrize("width", _WIDTHS)
def test_the_demo_summary_fits_and_keeps_each_run_id(width: int) -> None:
    lines = format_summary(_demo_rows(), width).splitlines()
    assert all(len(line) <= width for line in lines), lines
    for row in _demo_rows():
        assert row.run_id is not None and any(row.run_id in line for line in lines)
    if width == 80:  # too narrow for the table: a block per provider
        assert "scripted-offline  success" in lines and "  run id: 20261202T024020-95eedc80" in lines


# --- the commands on a real terminal --------------------------------------------------------------------------

def _on_a_pty(argv: list[str], env: dict[str, str], columns: int) -> str:
    """What `argv` printed on a pty `columns` wide (its stdin, stdout and stderr), as the screen shows it: each
    line what is left after its last carriage return, without control sequences."""
    controller, terminal = os.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    child = subprocess.Popen(argv, env=env, stdin=terminal, stdout=terminal, stderr=terminal, start_new_session=True)
    os.close(terminal)
    got = b""
    deadline = time.monotonic() + _DEADLINE
    try:
        while True:
            assert time.monotonic() < deadline, got
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
            got += chunk
        assert child.wait(timeout=_DEADLINE) == 0, got
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
            child.wait(timeout=_DEADLINE)
    return "\n".join(_ESCAPE.sub("", line.split("\r")[-1]) for line in got.decode().split("\r\n"))


@pytest.fixture
def harness(tmp_path: Path, runs_dir: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    env = {**os.environ, "HARNESS_RUNS_DIR": str(runs_dir), "TERM": "xterm"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2]), env.get("PYTHONPATH", "")])  # `tests`
    for name in ("COLUMNS", "NO_COLOR", "HARNESS_PROVIDER"):
        env.pop(name, None)
    yield tmp_path, env


def _log(runs_dir: Path, run_id: str, prompt: str, model: str, status: RunStatus) -> None:
    writer = LogWriter(runs_dir / f"{run_id}.jsonl")
    started = RunStarted(run_id=run_id, seq=0, ts=time.time() - 90, provider="scripted-offline", provider_version="1",
                         spec={"prompt": prompt, "model": model})
    done = Done(run_id=run_id, seq=1, ts=time.time() - 80, result=HarnessResult(
        status=status, duration_ms=4800, usage=Usage(input_tokens=600, output_tokens=100, cost_usd=0.0123)))
    for event in (started, done):
        writer.write_line(event.model_dump_json().encode())
    writer.close()


@pytest.mark.parametrize("columns", _WIDTHS)
def test_providers_fits_the_terminal_and_loses_nothing(harness: tuple[Path, dict[str, str]], columns: int) -> None:
    tmp_path, env = harness
    script = tmp_path / "harness_providers.py"
    script.write_text(_PROVIDERS_WRAPPER)
    screen = _on_a_pty([sys.executable, str(script), "providers"], {**env, "HARNESS_PROVIDER": "scripted"}, columns)
    assert all(len(line) <= columns for line in screen.splitlines()), screen
    words = set(screen.replace(",", " ").split())
    assert {"missing", "scripted", "(default)", "streaming", "structured_output", "live_session"} <= words
    reason = "no: missing-cli not found on PATH; install it with `pip install missing-cli`"
    assert set(reason.replace(",", " ").split()) <= words, screen  # wrapped, never cut


@pytest.mark.parametrize("columns", [80, 120])
def test_one_providers_page_fits_the_terminal(harness: tuple[Path, dict[str, str]], columns: int) -> None:
    """`harness providers NAME`, the page the README sends users to for every `-o` option: broken between
    words at the terminal's width, every word kept."""
    tmp_path, env = harness
    script = tmp_path / "harness_providers.py"
    script.write_text(_PROVIDERS_WRAPPER)
    screen = _on_a_pty([sys.executable, str(script), "providers", "scripted"], {**env, "HARNESS_PROVIDER": "scripted"},
                       columns)
    assert all(len(line) <= columns for line in screen.splitlines()), screen
    piped = invoke("providers", "scripted").output  # off a terminal: the page as it always was
    assert [w for w in screen.split() if w != "(default)"] == [w for w in piped.split() if w != "(default)"], screen


@pytest.mark.parametrize("columns", _WIDTHS)
def test_runs_fits_the_terminal_and_keeps_run_ids_whole(harness: tuple[Path, dict[str, str]], runs_dir: Path,
                                                           columns: int) -> None:
    tmp_path, env = harness
    runs_dir.mkdir()
    ids = [f"20261206T2208{i:02d}-5f3d9f8{i}" for i in range(4)]
    for i, run_id in enumerate(ids):
        _log(runs_dir, run_id, f"run {i}: " + "change alpha to beta in notes.txt, then report " * 3,
             "$runtime|openai|scripted-model(openai)", RunStatus.SUCCESS if i % 2 else RunStatus.FAILED)
    script = tmp_path / "harness_runs.py"
    script.write_text(_PROVIDERS_WRAPPER)
    screen = _on_a_pty([sys.executable, str(script), "runs"], env, columns)
    assert all(len(line) <= columns for line in screen.splitlines()), screen
    for i, run_id in enumerate(ids):
        assert re.search(rf"(^| ){run_id}( |$)", screen, re.M), screen  # whole, to be copied
        assert f"run {i}: change alpha" in screen
    assert screen.count("success") == 2 and screen.count("failed") == 2 and "$0.0123" in screen


@pytest.mark.parametrize("columns", [80])
def test_an_offline_runs_notices_and_final_line_fit_the_terminal(harness: tuple[Path, dict[str, str]],
                                                                   columns: int) -> None:
    tmp_path, env = harness
    script = tmp_path / "harness_offline.py"
    script.write_text(OFFLINE_WRAPPER)
    env["HARNESS_PROVIDER"] = "offline-scripted"
    screen = _on_a_pty([sys.executable, str(script), "run", "--offline", "go"], env, columns)
    lines = screen.splitlines()
    assert all(len(line) <= columns for line in lines), screen
    assert "(removed after the run; --keep-workspace keeps it)" in screen and "for scenario 'tools'" in screen
    final = next(i for i, line in enumerate(lines) if "✓ success in" in line)
    assert re.fullmatch(r"  session \S+", lines[final + 1]), screen  # the session id on a line of its own, whole


# --- off a terminal, and --json -------------------------------------------------------------------------------

def test_off_a_terminal_and_with_json_rows_stay_whole(runs_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cli.test_cli import _MissingPlugin

    reset_host(make_host(("missing", _MissingPlugin())))
    monkeypatch.setenv("COLUMNS", "80")  # not a terminal: $COLUMNS alone does not narrow a pipe
    text = invoke("providers").stdout
    assert any(len(line) > 80 and "no: missing-cli not found on PATH" in line for line in text.splitlines())
    report = json.loads(invoke("providers", "--json").stdout)
    assert report["providers"][0]["reason"].endswith("`pip install missing-cli`")
    runs_dir.mkdir()
    _log(runs_dir, "20261206T220800-5f3d9f80", "a prompt " * 20, "a-model-with-a-long-name-indeed", RunStatus.SUCCESS)
    row = invoke("runs").stdout.splitlines()[1]
    assert row.startswith("20261206T220800-5f3d9f80") and "a-model-with-a-long-name-indeed" in row
    assert json.loads(invoke("runs", "--json").stdout)[0]["run_id"] == "20261206T220800-5f3d9f80"
