"""`harness` failing the right way: `--idle-timeout` values, `harness show` of a log with bad lines, and the
next step a `process_exited` error names. Through click's runner with the scripted provider (fixtures of
`tests.cli.test_cli`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness_core.cli.run.invocation as run_body
from harness_core.cli.foreground.live import RunRequest
from harness_core.errors import PROCESS_EXITED_NEXT_STEP, ProcessExitedError
from tests.cli.test_cli import invoke, only_log, scripted_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
__all__ = ["scripted_host"]  # the autouse fixture, shared with tests.cli.test_cli


# --- --idle-timeout ------------------------------------------------------------------------------------

@pytest.fixture
def requests(monkeypatch: pytest.MonkeyPatch) -> list[RunRequest]:
    """The `RunRequest`s `harness run` hands to the run driver (which then does not run)."""
    seen: list[RunRequest] = []

    async def capture(request: RunRequest, out: Any) -> int:
        seen.append(request)
        return 0

    monkeypatch.setattr(run_body, "execute", capture)
    return seen


@pytest.mark.parametrize("value", ["inf", "Infinity", "INF"])
def test_idle_timeout_inf_means_no_idle_timeout(value: str, requests: list[RunRequest]) -> None:
    result = invoke("run", "x", "--idle-timeout", value)
    assert result.exit_code == 0, result.output
    assert requests[0].spec.idle_timeout is None


def test_idle_timeout_seconds_reach_the_spec(requests: list[RunRequest]) -> None:
    assert invoke("run", "x", "--idle-timeout", "2.5").exit_code == 0
    assert requests[0].spec.idle_timeout == 2.5


@pytest.mark.parametrize("value", ["0", "-1", "nan", "-inf"])
def test_idle_timeout_zero_negative_or_nan_is_a_usage_error_saying_what_is_valid(value: str) -> None:
    result = invoke("run", "x", "--idle-timeout", value)
    assert result.exit_code == 2
    assert "give more than 0 seconds and at most 604800 seconds (or `inf` for no idle timeout)" in " ".join(
        result.stderr.split())


def test_idle_timeout_not_a_number_says_what_to_pass() -> None:
    result = invoke("run", "x", "--idle-timeout", "soon")
    said = " ".join(result.stderr.split())
    assert result.exit_code == 2
    assert "pass e.g. 300 (more than 0 seconds and at most 604800 seconds (or `inf` for no idle timeout))" in said


def test_help_says_inf_and_the_default() -> None:
    text = " ".join(invoke("run", "--help").stdout.split())
    assert "Default: no idle timeout; `inf` says so explicitly." in text


# --- harness show of a damaged log ------------------------------------------------------------------------

def _damaged_run(tmp_path: Path, scenario: str = "tools") -> Path:
    """A finished run whose log has a corrupt line and a line from a newer Harness in the middle."""
    assert invoke("run", "do it", "-o", f"scenario={scenario}").exit_code in (0, 1)
    log = only_log(tmp_path / "runs")
    lines = log.read_bytes().splitlines(keepends=True)
    lines.insert(3, b'{"run_id":"r","seq":99,"type":"tool_res\xff\n')
    lines.insert(5, b'{"run_id":"r","seq":98,"ts":1.0,"type":"hologram","x":1}\n')
    log.write_bytes(b"".join(lines))
    return log


def test_show_of_a_log_with_bad_lines_shows_the_rest_and_names_them(tmp_path: Path) -> None:
    log = _damaged_run(tmp_path)
    result = invoke("show", log.stem)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "status    success" in out and out.rstrip().endswith("All four tools ran.")
    assert "✓ Editing file notes.txt (1 ms)" in out
    assert "skipped   line 4 is not JSON (a corrupt or cut line): '{\"run_id\":\"r\",\"seq\":99," in out
    assert "skipped   line 6 is not an event type this Harness knows (written by a newer Harness?)" in out
    # `harness runs` says the same status
    assert json.loads(invoke("runs", "--json").stdout)[0]["status"] == "success"


def test_show_json_lists_the_bad_lines(tmp_path: Path) -> None:
    log = _damaged_run(tmp_path)
    details = json.loads(invoke("show", log.stem, "--json").stdout)
    assert details["status"] == "success" and details["final_text"] == "All four tools ran."
    assert [b["line"] for b in details["bad_lines"]] == [4, 6]
    assert details["bad_lines"][1]["head"].startswith('{"run_id":"r","seq":98,') and "newer" in (
        details["bad_lines"][1]["problem"])


def test_show_of_a_log_with_nothing_readable_exits_1_naming_the_first_bad_line(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o700)
    (runs / "20260101T000000-deadbeef.jsonl").write_bytes(b"\x00\x01garbage\nmore garbage\n")
    result = invoke("show", "20260101T000000-deadbeef")
    assert result.exit_code == 1
    assert "nothing in " in result.stderr and "2 bad line(s); line 1 is not JSON" in result.stderr
    assert "harness runs" in result.stderr


# --- process_exited names the next step --------------------------------------------------------------

def test_process_exited_names_the_next_step_before_the_stderr_tail() -> None:
    err = ProcessExitedError("agent: exited before finishing the turn (exit 1)", exit_code=1, stderr_tail="boom")
    first, *rest = err.message.splitlines()
    assert first.endswith(PROCESS_EXITED_NEXT_STEP) and "its last stderr lines are below" in first
    assert "--record-wire" in first and "-vv" in first and "`harness doctor`" in first
    assert rest == ["--- last stderr lines ---", "boom"]
    quiet = ProcessExitedError("x: exited (exit 1)", exit_code=1)
    assert quiet.message == f"x: exited (exit 1); {PROCESS_EXITED_NEXT_STEP}"


# --- Ctrl-C while the command line is parsed ------------------------------------------------------------

def test_ctrl_c_while_the_options_are_parsed_exits_130_not_clicks_aborted(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--scenario NAME` loads the scenarios in its callback (pydantic: a second or more): Ctrl-C there is the same
    `interrupted` and 130 as in the command's body (trial 27, problem 4: click printed `Aborted!`, status 1)."""
    import harness_core.cli.flags.scenarios as scenarios

    def interrupted(*_args: Any) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(scenarios, "checked_scenario", interrupted)
    result = invoke("run", "--offline", "--scenario", "say")
    assert result.exit_code == 130, result.output
    assert "harness: error: interrupted" in result.output and "Aborted!" not in result.output
