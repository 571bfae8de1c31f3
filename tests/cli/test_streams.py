"""`harness run`'s streams, as agent CLIs' exec modes have them: off a terminal stdout gets the final answer alone
and the live view goes to stderr (with its status line when stderr is a terminal); on a terminal everything is on
stdout as before; `-q` prints only the answer; `--output-last-message FILE` writes it to a file. Also what the
view says: reasoning with -v, "approved by you", an action cut short at its question is "not run", no token count
for a run that never reached the model.

The subprocess tests run `harness run --offline` through a wrapper that registers an offline-capable scripted
provider (no agent CLI) on real pipes and ptys; the rest go through click's runner."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import re
import select
import signal
import stat
import struct
import subprocess
import sys
import termios
import textwrap
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from harness_core.cli.render import Renderer
from harness_core.cli.render.format import final_line
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorInfo,
    HarnessEvent,
    HarnessResult,
    HarnessToolDetails,
    ReasoningDelta,
    RunStatus,
    TextDelta,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
    Usage,
)
from harness_core.store import list_runs, read_events
from tests.cli.test_cli import invoke, only_log, scripted_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
__all__ = ["scripted_host"]  # the autouse fixture, shared with tests.cli.test_cli

_DEADLINE = 60.0
_ANSWER = "The answer is 42."
_PARTIAL = "Half an answer."

WRAPPER = textwrap.dedent(f"""
    from typing import ClassVar

    import harness_core.testing.scripted as scripted
    from harness_core.capabilities import Capability, ProviderInfo
    from harness_core.hookspecs import hookimpl
    from harness_core.scripted.backends import MessagesBackend
    from harness_core.scripted.scenarios import SCENARIOS, RunCommand, Say, Scenario
    from harness_core.plugins import PluginHost, reset_host
    from harness_core.provider import OfflineSetup

    SCENARIOS["slow_say"] = Scenario("slow_say", (Say({_ANSWER!r}, chunks=6, delay=0.25),))
    SCENARIOS["say_then_ask"] = Scenario("say_then_ask", (Say({_PARTIAL!r}, chunks=1), RunCommand("echo asked"),
                                                          Say("Done.")))

    class OfflineScripted(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name="offline-scripted", version="1.0",
                                                    capabilities=frozenset(Capability))

        def offline_setup(self, scenario, workspace, state_dir):
            return OfflineSetup(backend=MessagesBackend(scenario, cwd=workspace),
                                provider_options={{"scenario": scenario.name}})

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register):
            register(OfflineScripted)

    reset_host(PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("offline", Plugin())]))
    from harness_core.cli import main
    main()
""")

_ASKED = b"allow? [y]es / [n]o (Enter) / [a]bort: "


@dataclass
class Played:
    status: int
    stdout: bytes
    stderr: bytes
    terminal: bytes
    """What the pty got (stdin, and stdout or stderr or both, are the pty)."""


@pytest.fixture
def harness(tmp_path: Path, runs_dir: Path) -> Iterator[tuple[list[str], dict[str, str]]]:
    script = tmp_path / "harness_offline.py"
    script.write_text(WRAPPER)
    env = {**os.environ, "HARNESS_PROVIDER": "offline-scripted", "HARNESS_RUNS_DIR": str(runs_dir),
           "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    yield [sys.executable, str(script)], env


def play(harness: tuple[list[str], dict[str, str]], args: Sequence[str], *, stdout_tty: bool, stderr_tty: bool,
         keys: Sequence[tuple[bytes, bytes]] = (), columns: int | None = None) -> Played:
    """Run `harness ARGS` with a pty as its controlling terminal and stdin, and as its stdout and/or stderr (the
    others are pipes); type each key when its trigger has appeared on the pty (once per trigger occurrence).
    `columns`: the pty's window width (else the pty has none set)."""
    cmd, env = harness
    controller, terminal = pty.openpty()
    if columns is not None:
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))

    def controlling_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    child = subprocess.Popen([*cmd, "run", *args], env=env, stdin=terminal,
                             stdout=terminal if stdout_tty else subprocess.PIPE,
                             stderr=terminal if stderr_tty else subprocess.PIPE, preexec_fn=controlling_terminal)
    os.close(terminal)
    got = {"terminal": b"", "stdout": b"", "stderr": b""}
    sources = {controller: "terminal"}
    for name, pipe in (("stdout", child.stdout), ("stderr", child.stderr)):
        if pipe is not None:
            sources[pipe.fileno()] = name
    pending = list(keys)
    sent: dict[bytes, int] = {}  # trigger → keys sent for it (the next waits for its next occurrence)
    deadline = time.monotonic() + _DEADLINE
    try:
        while sources:
            assert time.monotonic() < deadline, got
            while pending and got["terminal"].count(pending[0][0]) > sent.get(pending[0][0], 0):
                trigger, typed = pending.pop(0)
                sent[trigger] = sent.get(trigger, 0) + 1
                os.write(controller, typed)
            ready, _, _ = select.select(list(sources), [], [], 0.2)
            for fd in ready:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:  # the pty: every process holding it is gone
                    chunk = b""
                if chunk:
                    got[sources[fd]] += chunk
                else:
                    del sources[fd]
            if not ready and child.poll() is not None and controller in sources and len(sources) == 1:
                break  # nothing more will come
        status = child.wait(timeout=_DEADLINE)
    finally:
        os.close(controller)
        if child.poll() is None:
            child.kill()
            child.wait(timeout=_DEADLINE)
    return Played(status, got["stdout"], got["stderr"], got["terminal"])


def _lines(text: bytes) -> list[str]:
    return text.decode().replace("\r\n", "\n").splitlines()


# --- which stream gets what ----------------------------------------------------------------------------

def test_off_a_terminal_stdout_gets_the_answer_alone_and_the_view_goes_to_the_stderr_terminal(
        harness: tuple[list[str], dict[str, str]]) -> None:
    played = play(harness, ["--offline", "--scenario", "slow_say"], stdout_tty=False, stderr_tty=True)
    assert played.status == 0, played
    assert played.stdout == f"{_ANSWER}\n".encode()  # `> answer.txt` holds the answer and nothing else
    view = played.terminal.decode()
    assert _ANSWER in view  # streamed on the terminal as ever
    assert "\r\x1b[2K" in view and "waiting for model" in view  # the live status line, erased before each line
    assert "\x1b[32m" in view  # colour: stderr is a terminal
    assert "✓ success in " in view and "harness: offline workspace " in view


def test_on_a_terminal_everything_stays_on_stdout_and_stderr_gets_only_the_clis_own_lines(
        harness: tuple[list[str], dict[str, str]]) -> None:
    played = play(harness, ["--offline", "--scenario", "slow_say"], stdout_tty=True, stderr_tty=False)
    assert played.status == 0, played
    view = played.terminal.decode()
    assert _ANSWER in view and "\r\x1b[2K" in view and "✓ success in " in view
    assert view.count(_ANSWER) == 1  # streamed once, not printed again at the end
    assert all(line.startswith("harness: ") for line in _lines(played.stderr)), played.stderr
    assert b"success" not in played.stderr and _ANSWER.encode() not in played.stderr


def test_both_pipes_get_a_plain_view_on_stderr(harness: tuple[list[str], dict[str, str]], tmp_path: Path) -> None:
    cmd, env = harness
    done = subprocess.run([*cmd, "run", "--offline", "--scenario", "tools"], env=env, capture_output=True,
                          timeout=_DEADLINE, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"All four tools ran.\n"
    err = done.stderr.decode()
    assert "[tool] \u2713 Running command echo harness-ok (exit 0, 1 ms)" in err and "\x1b" not in err
    assert err.splitlines()[-1].startswith("\u2713 success in ")


def test_quiet_prints_the_answer_alone_and_no_view_even_on_a_terminal(
        harness: tuple[list[str], dict[str, str]]) -> None:
    played = play(harness, ["--offline", "--scenario", "slow_say", "-q"], stdout_tty=True, stderr_tty=True)
    assert played.status == 0, played
    assert _lines(played.terminal) == [_ANSWER]  # not even the offline workspace's `harness:` lines
    assert b"\x1b" not in played.terminal  # no status line, no colour


def test_quiet_still_asks_on_the_terminal_and_a_failure_is_one_line_on_stderr(
        harness: tuple[list[str], dict[str, str]]) -> None:
    played = play(harness, ["--offline", "-q", "--approval", "untrusted"], stdout_tty=False, stderr_tty=True,
                  keys=[(_ASKED, b"y\n")] * 4)
    assert played.status == 0, played
    assert played.terminal.count(_ASKED) == 4
    assert b"[tool]" not in played.terminal and b"success" not in played.terminal
    assert played.stdout == b"All four tools ran.\n"
    failed = play(harness, ["--offline", "-q", "--scenario", "fail_401"], stdout_tty=False, stderr_tty=True)
    assert failed.status == 1 and failed.stdout == b""
    (said,) = _lines(failed.terminal)
    assert said.startswith("harness: run failed: auth_failed: the model API refused the credentials"), said


def test_quiet_with_both_pipes_leaves_stderr_empty(harness: tuple[list[str], dict[str, str]]) -> None:
    cmd, env = harness
    done = subprocess.run([*cmd, "run", "--offline", "--scenario", "tools", "-q"], env=env, capture_output=True,
                          timeout=_DEADLINE, stdin=subprocess.DEVNULL)  # the scenario creates notes.txt
    assert (done.returncode, done.stdout, done.stderr) == (0, b"All four tools ran.\n", b"")


@pytest.mark.parametrize("into", ["pipe", "file"])  # `harness run … 2>&1 | cat`, `harness run … > out.txt 2>&1`
def test_stdout_and_stderr_in_one_file_get_the_answer_once(harness: tuple[list[str], dict[str, str]],
                                                          tmp_path: Path, into: str) -> None:
    cmd, env = harness
    args = [*cmd, "run", "--offline", "--scenario", "tools"]
    if into == "pipe":
        done = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=_DEADLINE,
                              stdin=subprocess.DEVNULL)
        output = done.stdout.decode()
    else:
        with (tmp_path / "out.txt").open("wb") as out:
            done = subprocess.run(args, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=_DEADLINE,
                                  stdin=subprocess.DEVNULL)
        output = (tmp_path / "out.txt").read_text()
    assert done.returncode == 0, output
    assert output.count("All four tools ran.") == 1, output  # the view streamed it; no second copy after it
    assert "[tool] \u2713 Running command echo harness-ok" in output and "\x1b" not in output
    assert output.splitlines()[-1].startswith("\u2713 success in ")


def test_the_status_line_fits_the_terminal_it_is_drawn_on(harness: tuple[list[str], dict[str, str]]) -> None:
    """stdout a pipe, the view on a 20-column stderr terminal while $COLUMNS says 100: the view measures its
    own terminal, not stdout's or $COLUMNS."""
    played = play(harness, ["--offline", "--scenario", "slow_say"], stdout_tty=False, stderr_tty=True, columns=20)
    assert played.status == 0, played
    drawn = [piece.split("\x1b[0m")[0] for piece in played.terminal.decode().split("\r\x1b[2K\x1b[36m")[1:]]
    assert drawn and all(len(status) <= 19 for status in drawn), drawn  # one column left for the cursor
    assert any(status.endswith("\u2026") for status in drawn), drawn  # "⠋ 0.1 s · waiting for model", cut


def test_the_width_of_a_stream_without_a_terminal_falls_back_to_columns(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness_core.cli.render.streams import same_file, terminal_width

    monkeypatch.setenv("COLUMNS", "77")
    assert terminal_width(io.StringIO()) == 77
    assert not same_file(io.StringIO(), io.StringIO())


# --- only a success has an answer ---------------------------------------------------------------------------

def _wait_for_text(runs_dir: Path, child: subprocess.Popen[bytes]) -> None:
    """Until the run's log holds a streamed piece of the answer (the run is speaking: Ctrl-C lands mid-answer)."""
    deadline = time.monotonic() + _DEADLINE
    while not any('"text_delta"' in log.read_text() for log in runs_dir.glob("*.jsonl")):
        assert time.monotonic() < deadline and child.poll() is None, "the run never started speaking"
        time.sleep(0.05)


@pytest.mark.parametrize("quiet", [False, True])
def test_an_interrupted_answer_goes_neither_to_stdout_nor_to_the_file(harness: tuple[list[str], dict[str, str]],
                                                                      runs_dir: Path, tmp_path: Path,
                                                                      quiet: bool) -> None:
    cmd, env = harness
    answer = tmp_path / "last.txt"
    answer.write_text("the last good answer\n")
    child = subprocess.Popen([*cmd, "run", "--offline", "--scenario", "slow_text", "--output-last-message",
                              str(answer), *(["-q"] if quiet else [])], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_text(runs_dir, child)
        child.send_signal(signal.SIGINT)
        stdout, stderr = child.communicate(timeout=_DEADLINE)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=_DEADLINE)
    assert child.returncode == 130, stderr
    assert stdout == b"" and answer.read_text() == "the last good answer\n"
    if quiet:
        assert _lines(stderr)[-1] == "harness: run interrupted" and b"a slow" not in stderr, stderr
    else:  # the view showed what was streamed (7 characters a second)
        assert b"\na slow" in stderr and "\u25a0 interrupted in " in stderr.decode(), stderr


def test_an_answer_cut_short_by_abort_is_no_answer(harness: tuple[list[str], dict[str, str]],
                                                   tmp_path: Path) -> None:
    """[a]bort at the question: the provider ends the turn itself, its interrupted result carrying the text said
    before (as a real agent's cut-short turn does). The view showed it; stdout and the file do not get it."""
    answer = tmp_path / "last.txt"
    answer.write_text("the last good answer\n")
    played = play(harness, ["--offline", "--scenario", "say_then_ask", "--approval", "untrusted",
                            "--output-last-message", str(answer)], stdout_tty=False, stderr_tty=True,
                  keys=[(_ASKED, b"a\n")])
    assert played.status == 130, played
    assert _PARTIAL.encode() in played.terminal and b"interrupted in " in played.terminal
    assert played.stdout == b"" and answer.read_text() == "the last good answer\n"


def test_only_a_successful_run_has_an_answer() -> None:
    from harness_core.cli.render.streams import answer_text

    said = {"final_text": "a slow answer a slow", "session_id": "s"}
    assert answer_text(HarnessResult(status=RunStatus.SUCCESS, **said)) == "a slow answer a slow\n"
    assert answer_text(HarnessResult(status=RunStatus.INTERRUPTED, **said)) is None
    failed = HarnessResult(status=RunStatus.FAILED, error=ErrorInfo(code="budget_exceeded", message="over"), **said)
    assert answer_text(failed) is None


@pytest.mark.parametrize("quiet", [False, True])
def test_a_run_over_its_budget_prints_no_answer(runs_dir: Path, tmp_path: Path, quiet: bool) -> None:
    answer = tmp_path / "last.txt"
    answer.write_text("the last good answer\n")
    out = invoke("run", "x", "-o", "cost_usd=0.01", "--max-cost-usd", "0.005", "--output-last-message", str(answer),
                 *(["-q"] if quiet else []))
    assert out.exit_code == 1 and out.stdout == "" and answer.read_text() == "the last good answer\n"
    if quiet:  # the one line, nothing else
        (said,) = out.stderr.splitlines()
        assert said.startswith("harness: run failed: budget_exceeded: the run went over its budget"), said
    else:  # the view still shows what the model wrote
        assert "Hello from the scripted model." in out.stderr and "budget_exceeded" in out.stderr


# --- approvals on a terminal -----------------------------------------------------------------------------

def test_an_answer_typed_on_the_terminal_is_approved_by_you(harness: tuple[list[str], dict[str, str]],
                                                           runs_dir: Path) -> None:
    played = play(harness, ["--offline", "--approval", "untrusted"], stdout_tty=True, stderr_tty=True,
                  keys=[(_ASKED, b"y\n"), (_ASKED, b"n\n"), (_ASKED, b"y\n"), (_ASKED, b"y\n")])
    assert played.status == 0, played
    view = played.terminal.decode()
    assert "Running command echo harness-ok \u2014 approved by you" in view
    assert "Reading file notes.txt \u2014 denied by you" in view and "by callback" not in view
    resolved = [e for e in read_events(only_log(runs_dir)) if isinstance(e, ApprovalResolved)]
    assert [e.reason for e in resolved] == ["answered on the terminal"] * 4
    plain = re.sub(r"\x1b\[[0-9;]*m", "", view.replace("\r\n", "\n"))
    edit = plain.index("[approval] Editing file notes.txt")  # the change is shown first, coloured
    assert plain.rindex("--- a/notes.txt\n+++ b/notes.txt\n@@ @@\n-alpha\n+beta\n", 0, edit) > plain.index(
        "Reading file notes.txt \u2014 denied by you")
    assert "\x1b[32m+beta" in view and "\x1b[31m-alpha" in view
    write = plain.index("[approval] Writing file new.txt")
    assert plain.rindex("+++ b/new.txt\n@@ @@\n+fresh\n", edit, write) > edit


def test_the_question_fits_an_80_column_terminal(harness: tuple[list[str], dict[str, str]]) -> None:
    """A question wider than the terminal: the action on its line(s), the answers whole on the next, not cut by
    the terminal's own wrapping in the middle of a word."""
    cmd, env = harness
    env = {name: value for name, value in env.items() if name != "COLUMNS"}  # the terminal's own width
    played = play((cmd, env), ["--offline", "--approval", "untrusted"], stdout_tty=True, stderr_tty=True,
                  keys=[(_ASKED, b"y\n")] * 4, columns=80)
    assert played.status == 0, played
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", played.terminal.decode()).replace("\r\n", "\n")
    plain = "\n".join(line.split("\r")[-1] for line in plain.split("\n"))  # what is left after a redraw
    asked = [line for line in plain.split("\n") if "[approval]" in line or "allow?" in line]
    assert len([line for line in asked if "allow?" in line]) == 4, plain
    assert all(len(line) <= 80 for line in asked), asked
    assert "[approval] Running command echo harness-ok\n\u2014 allow? [y]es / [n]o (Enter) / [a]bort: y\n" in plain


def test_ctrl_c_at_a_question_shows_the_action_as_not_run(harness: tuple[list[str], dict[str, str]],
                                                          runs_dir: Path) -> None:
    played = play(harness, ["--offline", "--approval", "untrusted"], stdout_tty=False, stderr_tty=True,
                  keys=[(_ASKED, b"\x03")])
    assert played.status == 130, played
    view = re.sub(r"\x1b\[[0-9;]*m", "", played.terminal.decode().replace("\r\n", "\n"))  # colours off
    assert "\u2298 Running command echo harness-ok (not run: interrupted)" in view, view
    assert "\u2717" not in view and "(failed)" not in view
    assert "[a]bort: ^C\ninterrupting\u2026" in view, view  # the note starts on a line of its own
    assert "\n\n(question withdrawn)" not in view  # ... and the withdrawal adds no blank line
    assert played.stdout == b""
    events = list(read_events(only_log(runs_dir)))
    assert isinstance(events[-1], Done) and events[-1].result.status is RunStatus.INTERRUPTED


# --- -v ----------------------------------------------------------------------------------------------------

def test_reasoning_is_shown_with_v_and_never_without(harness: tuple[list[str], dict[str, str]]) -> None:
    cmd, env = harness
    shown = {}
    for flags in ([], ["-v"]):
        done = subprocess.run([*cmd, "run", "--offline", "--scenario", "think", *flags], env=env,
                              capture_output=True, timeout=_DEADLINE, stdin=subprocess.DEVNULL)
        assert done.returncode == 0 and done.stdout == b"Thought it through.\n", done.stderr
        shown[bool(flags)] = done.stderr.decode()
    assert "[thinking] Let me consider the question.\nThought it through.\n" in shown[True]
    assert "consider" not in shown[False] and "[thinking]" not in shown[False]


def _render(events: Sequence[HarnessEvent], *, verbose: bool = False, color: bool = False) -> str:
    out = io.StringIO()
    renderer = Renderer(out, verbose=verbose, color=color)
    for event in events:
        renderer.feed(event)
    renderer.close()
    return out.getvalue()


def test_streamed_reasoning_is_one_prefixed_dim_line_per_line_and_ends_before_the_answer() -> None:
    events: list[HarnessEvent] = [
        ReasoningDelta(text="**Plan**\n\nFirst ", item_id="r1"), ReasoningDelta(text="check.", item_id="r1"),
        ReasoningDelta(text="Next item", item_id="r2"), TextDelta(text="Done."),
    ]
    assert _render(events, verbose=True) == (
        "[thinking] **Plan**\n[thinking] First check.\n[thinking] Next item\nDone.\n")
    assert _render(events) == "Done.\n"
    coloured = _render(events, verbose=True, color=True)
    assert "\x1b[2m[thinking] **Plan**\x1b[0m" in coloured and coloured.endswith("\nDone.\n")


# --- the final line ---------------------------------------------------------------------------------------

def test_a_run_that_never_reached_the_model_has_no_token_or_zero_cost_part() -> None:
    error = ErrorInfo(code="auth_failed", message="no key")
    zero = Usage(cost_usd=0.0)
    result = HarnessResult(status=RunStatus.FAILED, error=error, usage=zero, duration_ms=1000, session_id="s")
    text = _render([ContextUsage(usage=zero), Done(result=result)])  # as an agent may report a refused key
    assert text == "\u2717 failed in 1.0 s \u00b7 auth_failed \u00b7 session s\n"
    used = result.model_copy(update={"usage": Usage(input_tokens=5, output_tokens=1, cost_usd=0.0)})
    assert "5 tokens in / 1 out \u00b7 $0.0000" in final_line(used)  # a real run that cost nothing says so
    priced = result.model_copy(update={"usage": Usage(cost_usd=0.25)})
    assert "$0.2500" in final_line(priced) and "tokens" not in final_line(priced)


def test_the_final_line_shows_the_cost_when_known(runs_dir: Path) -> None:
    result = invoke("run", "x", "-o", "cost_usd=0.0123")
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[-1].startswith("\u2713 success in ")
    assert " \u00b7 100 tokens in / 20 out \u00b7 $0.0123 \u00b7 session " in result.stderr.splitlines()[-1]
    failed = invoke("run", "x", "-o", "scenario=fail_401")
    assert failed.exit_code == 1 and "tokens" not in failed.stderr.splitlines()[-1]


# --- actions that never ran -------------------------------------------------------------------------------

_SHELL = HarnessToolDetails(kind=ToolKind.SHELL, title="Running command", command="rm -rf build")


def _cut_short(*, resolved_first: bool, decided_by: Literal["callback", "runner"] = "runner",
               interrupted: bool = True) -> str:
    failed = _SHELL.model_copy(update={"status": ToolStatus.FAILED})
    asked = ApprovalRequested(request_id="a", tool_id="t", display=_SHELL)
    settled = ApprovalResolved(request_id="a", decision=ApprovalDecision.ABORT, decided_by=decided_by,
                               reason="the run ended before a decision")
    closed = ToolResult(tool_id="t", name="shell", display=failed, is_error=True)
    out = io.StringIO()
    renderer = Renderer(out)
    renderer.feed(ToolUse(tool_id="t", name="shell", display=_SHELL))
    renderer.feed(asked)
    if interrupted:
        renderer.note("interrupting…", interrupt=True)
    ending: list[HarnessEvent] = [settled, closed] if resolved_first else [closed, settled]
    for event in ending:
        renderer.feed(event)
    return out.getvalue()


@pytest.mark.parametrize("resolved_first", [True, False])  # the runner settles first; the agent closes the item first
def test_an_action_cut_short_at_its_question_is_not_run_not_failed(resolved_first: bool) -> None:
    text = _cut_short(resolved_first=resolved_first)
    assert "[tool] \u2298 Running command rm -rf build (not run: interrupted)\n" in text
    assert "\u2717" not in text and "failed" not in text


def test_an_action_aborted_by_you_or_never_decided_says_so() -> None:
    assert _cut_short(resolved_first=True, decided_by="callback", interrupted=False) == (
        "[approval] Running command rm -rf build \u2014 aborted by callback (the run ended before a decision)\n")
    assert _cut_short(resolved_first=False, interrupted=False) == (
        "[tool] \u2298 Running command rm -rf build (not run)\n")


@pytest.mark.parametrize("resolved_first", [True, False])
def test_one_line_per_approval_outcome(resolved_first: bool) -> None:
    """A question the run settled for nobody is its action's `not run` line alone, not also an `[approval]` line."""
    assert _cut_short(resolved_first=resolved_first) == (
        "interrupting…\n[tool] \u2298 Running command rm -rf build (not run: interrupted)\n")


_CALL = HarnessToolDetails(kind=ToolKind.MCP, title="count_lines", command="count_lines(path='/etc/passwd')",
                           raw={"server": "harness", "tool": "count_lines"})


@pytest.mark.parametrize("tool_first", [True, False])
def test_ctrl_c_at_a_python_tools_own_question_is_the_users_interrupt(tool_first: bool) -> None:
    """The `harness` server's question has no tool id (it does not know the agent's): it is linked to the MCP call
    in progress, so Ctrl-C at it reads as at any question: one `not run: interrupted` line, no "aborted by runner",
    no "cut short"."""
    cut = _CALL.model_copy(update={"status": ToolStatus.INTERRUPTED})
    settled = ApprovalResolved(request_id="a", decision=ApprovalDecision.ABORT, decided_by="runner",
                               reason="the run ended before a decision")
    closed = ToolResult(tool_id="t", name="mcp__harness__count_lines", display=cut, is_error=True)
    out = io.StringIO()
    renderer = Renderer(out)
    renderer.feed(ToolUse(tool_id="t", name="mcp__harness__count_lines", display=_CALL))
    renderer.feed(ApprovalRequested(request_id="a", display=_CALL.model_copy(update={"raw": {
        "server": "harness", "tool": "count_lines", "arguments": {"path": "/etc/passwd"}}})))
    renderer.note("interrupting…", interrupt=True)
    for event in ([closed, settled] if tool_first else [settled, closed]):
        renderer.feed(event)
    assert out.getvalue() == "interrupting…\n[tool] \u2298 count_lines(path='/etc/passwd') (not run: interrupted)\n"


def test_a_question_withdrawn_by_an_interrupt_with_no_action_says_so() -> None:
    settled = ApprovalResolved(request_id="a", decision=ApprovalDecision.ABORT, decided_by="runner",
                               reason="the run ended before a decision")
    out = io.StringIO()
    renderer = Renderer(out)
    renderer.feed(ApprovalRequested(request_id="a", display=_CALL))
    renderer.note("interrupting…", interrupt=True)
    renderer.feed(settled)
    assert out.getvalue() == "interrupting…\n[approval] count_lines(path='/etc/passwd') \u2014 withdrawn: interrupted\n"


def test_a_denied_action_whose_start_line_was_printed_gets_its_end() -> None:
    """A slow agent asks after the tool's start line was printed (`… `): denied, the line is closed by
    the action's own end, not left dangling after the approval line."""
    declined = _CALL.model_copy(update={"status": ToolStatus.DECLINED})
    out = io.StringIO()
    now = [0.0]
    renderer = Renderer(out, clock=lambda: now[0])
    renderer.feed(ToolUse(tool_id="t", name="mcp_harness_count_lines", display=_CALL))
    now[0] = 10.0
    renderer.tick()  # a slow tool: its start line
    renderer.feed(ApprovalRequested(request_id="a", tool_id="t", display=_CALL))
    renderer.feed(ApprovalResolved(request_id="a", decision=ApprovalDecision.DENY, reason="answered on the terminal"))
    renderer.feed(ToolResult(tool_id="t", name="mcp_harness_count_lines", display=declined, is_error=True))
    lines = out.getvalue().splitlines()
    assert lines == ["[tool] count_lines(path='/etc/passwd') \u2026",
                     "[approval] count_lines(path='/etc/passwd') \u2014 denied by you",
                     "[tool] \u2298 count_lines(path='/etc/passwd') (declined)"], lines


def test_an_approved_action_that_fails_is_still_a_failure() -> None:
    failed = _SHELL.model_copy(update={"status": ToolStatus.FAILED, "exit_code": 1})
    text = _render([ToolUse(tool_id="t", name="shell", display=_SHELL),
                    ApprovalRequested(request_id="a", tool_id="t", display=_SHELL),
                    ApprovalResolved(request_id="a", decision=ApprovalDecision.APPROVE, reason="answered on the "
                                     "terminal"),
                    ToolResult(tool_id="t", name="shell", display=failed, is_error=True)])
    assert text == ("[approval] Running command rm -rf build \u2014 approved by you\n"
                    "[tool] \u2717 Running command rm -rf build (exit 1)\n")


# --- --output-last-message ----------------------------------------------------------------------------------

def test_output_last_message_writes_the_answer_with_the_view_json_or_q(runs_dir: Path, tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text("old contents, replaced\n")
    result = invoke("run", "x", "--output-last-message", str(answer))
    assert result.exit_code == 0, result.output
    assert answer.read_text() == result.stdout == "Hello from the scripted model.\n"
    as_json = invoke("run", "x", "-o", "scenario=tools", "--json", "--output-last-message", str(answer))
    assert as_json.exit_code == 0 and answer.read_text() == "All four tools ran.\n"
    assert all(line.startswith("{") for line in as_json.stdout.splitlines())  # --json unchanged
    quiet = invoke("run", "x", "-o", "scenario=think", "-q", "--output-last-message", str(answer))
    assert quiet.exit_code == 0 and quiet.stdout == answer.read_text() == "Thought it through.\n"
    assert quiet.stderr == ""  # no view at all


def test_output_last_message_is_not_written_without_an_answer(runs_dir: Path, tmp_path: Path) -> None:
    answer = tmp_path / "answer.txt"
    result = invoke("run", "x", "-o", "scenario=fail_401", "--output-last-message", str(answer))
    assert result.exit_code == 1 and result.stdout == "" and not answer.exists()


def test_output_last_message_in_a_missing_directory_is_a_usage_error_before_the_run(runs_dir: Path,
                                                                                   tmp_path: Path) -> None:
    result = invoke("run", "x", "--output-last-message", str(tmp_path / "nope" / "answer.txt"))
    assert result.exit_code == 2
    assert "does not exist; create it first (mkdir -p " in result.stderr
    assert not runs_dir.exists() or not list_runs(runs_dir)
    directory = invoke("run", "x", "--output-last-message", str(tmp_path))
    assert directory.exit_code == 2 and "is a directory" in directory.stderr


@pytest.mark.parametrize(("args", "says"), [
    (["-q", "--json"], "-q prints only the final answer and --json every event"),
    (["-q", "--background"], "are for a foreground run"),
    (["--output-last-message", "a.txt", "--background"], "are for a foreground run"),
])
def test_flags_that_cannot_go_together_are_usage_errors(args: list[str], says: str, runs_dir: Path) -> None:
    result = invoke("run", "x", *args)
    assert result.exit_code == 2 and says in result.stderr, result.output
    assert not runs_dir.exists()


def test_output_last_message_hides_the_runs_secrets_and_is_private(runs_dir: Path, tmp_path: Path) -> None:
    """The answer a user asked for, in a file or on stdout (not a terminal), follows the run log's policy (the
    model repeats a key: `***`); the file is created 0600."""
    answer = tmp_path / "answer.txt"
    old = os.umask(0o022)
    try:
        result = invoke("run", "x", "-o", "scenario=print_secrets", "--output-last-message", str(answer))
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert answer.read_text() == result.stdout == "The token is ***.\n"
    assert stat.S_IMODE(answer.stat().st_mode) == 0o600
