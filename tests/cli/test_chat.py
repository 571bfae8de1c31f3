"""`harness chat`: one session, a turn per prompt (off a terminal: one per line of stdin), `/` commands between
turns, the exit status of the last turn, a summary that says how to continue; on a real pty, Ctrl-C interrupts the
turn and the chat goes on (at the prompt only a second one in a row leaves). The in-process scripted provider plays
every turn (it has live sessions)."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import pytest

import harness_core.testing.scripted as scripted
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.cli.chat.keys import Keys, Signalled
from harness_core.events import Done, HarnessEvent, HarnessResult, RunStarted, RunStatus
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import OfflineSetup, ProviderSession, RunContext, SessionContext
from harness_core.scripted.backends import MessagesBackend
from harness_core.scripted.scenarios import Scenario
from harness_core.spec import AgentRunSpec, SessionSpec
from harness_core.store import list_runs, read_events
from tests.cli.test_cli import WRAPPER, invoke, make_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

_DEADLINE = 60.0
_LEAVE_HINT = b"(press Ctrl-C again, or Ctrl-D, to leave)"
_CARRY_ON = b"continuing the conversation in a new one (session "


class ModelFixedProvider(scripted.ScriptedProvider):
    """Live sessions that keep their model for the whole session (cannot change it per turn)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="model-fixed", version="1.0", capabilities=frozenset(Capability),
                                                session_overrides=frozenset({"approval", "sandbox"}))


class NoSessionProvider(scripted.ScriptedProvider):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="one-shot", version="1.0",
                                                capabilities=frozenset({Capability.STREAMING}))


class OfflineScriptedProvider(scripted.ScriptedProvider):
    """The scripted provider with an offline setup, remembering the backends it made."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="offline-scripted", version="1.0",
                                                capabilities=frozenset(Capability))
    backends: ClassVar[list[MessagesBackend]] = []

    def offline_setup(self, scenario: Scenario, workspace: Path, state_dir: Path) -> OfflineSetup:
        backend = MessagesBackend(scenario, cwd=workspace)
        type(self).backends.append(backend)
        return OfflineSetup(backend=backend, provider_options={"scenario": scenario.name})


class BreakingProvider(scripted.ScriptedProvider):
    """Live sessions whose process can no longer be trusted after each turn (`ProviderSession.broken`)."""

    info: ClassVar[ProviderInfo] = ProviderInfo(name="breaking", version="1.0", capabilities=frozenset(Capability))
    opened: ClassVar[list[str | None]] = []

    @asynccontextmanager
    async def open_session(self, spec: SessionSpec, options: scripted.ScriptedOptions,
                           ctx: SessionContext) -> AsyncIterator[ProviderSession]:
        type(self).opened.append(spec.resume_session)
        async with super().open_session(spec, options, ctx) as inner:
            yield _Breaking(inner)


class _Breaking(ProviderSession):
    def __init__(self, inner: ProviderSession) -> None:
        self._inner = inner

    async def turn(self, spec: AgentRunSpec, ctx: RunContext) -> HarnessResult:
        result = await self._inner.turn(spec, ctx)
        self.broken = "it lost track of the turn"
        return result

    async def steer(self, text: str, ctx: RunContext) -> bool:
        return await self._inner.steer(text, ctx)


class _Plugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        for cls in (ModelFixedProvider, NoSessionProvider, OfflineScriptedProvider, BreakingProvider):
            register(cls)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    monkeypatch.chdir(tmp_path)
    found = make_host(("chat-test", _Plugin()))
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    OfflineScriptedProvider.backends = []
    BreakingProvider.opened = []
    yield found
    reset_host(None)


def turns(runs_dir: Path) -> list[list[HarnessEvent]]:
    """Each run's events, oldest run first."""
    return [list(read_events(s.path)) for s in reversed(list_runs(runs_dir))]


def started(events: list[HarnessEvent]) -> RunStarted:
    first = events[0]
    assert isinstance(first, RunStarted)
    return first


def result_of(events: list[HarnessEvent]) -> Done:
    last = events[-1]
    assert isinstance(last, Done)
    return last


# --- off a terminal: one prompt per line ----------------------------------------------------------------

def test_three_lines_are_three_turns_of_one_session(runs_dir: Path) -> None:
    out = invoke("chat", "-o", "cost_usd=0.01", input="first\n\n   \nsecond\nthird\n")
    assert out.exit_code == 0, out.output
    played = turns(runs_dir)
    assert [started(t).spec["prompt"] for t in played] == ["first", "second", "third"]  # blank lines skipped
    session_turns = [started(t).session_turn for t in played]
    assert [t.index for t in session_turns if t] == [0, 1, 2]
    assert len({t.session for t in session_turns if t}) == 1 and all(t and t.live for t in session_turns)
    agent_sessions = {result_of(t).result.session_id for t in played}
    assert len(agent_sessions) == 1  # one conversation: every turn continues the first turn's agent session
    assert out.stdout.count("Hello from the scripted model.") == 3
    assert out.stdout.count("✓ success in ") == 3 and "$0.0100" in out.stdout
    summary = out.stderr.strip().splitlines()[-1]
    agent = agent_sessions.pop()
    assert "chat over · 3 turns · 300 tokens in / 60 out · $0.0300" in summary
    assert f"harness chat -p scripted --resume {agent}" in summary
    assert f"harness run -p scripted --resume {agent}" in summary
    assert f"harness runs --session {session_turns[0].session}" in summary  # type: ignore[union-attr]


def test_model_override_applies_to_the_next_turns_and_default_gives_the_sessions_back(runs_dir: Path) -> None:
    lines = "one\n/model\n/model m2\ntwo\n/model default\nthree\n"
    out = invoke("chat", "-m", "base", input=lines)
    assert out.exit_code == 0, out.output
    assert [started(t).spec["model"] for t in turns(runs_dir)] == ["base", "m2", "base"]
    assert "model: base\n" in out.stderr and "model: m2 from the next turn" in out.stderr


def test_approval_override_and_bad_policy(runs_dir: Path) -> None:
    out = invoke("chat", input="/approval sometimes\n/approval untrusted\none\n/approval\n")
    assert out.exit_code == 0, out.output
    assert "/approval sometimes: not a policy; use one of never, on-request, untrusted" in out.stderr
    assert [started(t).spec["approval"] for t in turns(runs_dir)] == ["untrusted"]
    assert "approval: untrusted\n" in out.stderr


def test_exit_leaves_before_the_remaining_lines(runs_dir: Path) -> None:
    out = invoke("chat", input="one\n/exit\ntwo\n")
    assert out.exit_code == 0, out.output
    assert [started(t).spec["prompt"] for t in turns(runs_dir)] == ["one"]
    assert "chat over · 1 turn ·" in out.stderr


def test_help_unknown_commands_and_a_double_slash_prompt(runs_dir: Path) -> None:
    out = invoke("chat", input="/help\n/tmp/x is broken\n//tmp/x is broken\n")
    assert out.exit_code == 0, out.output
    assert "/model NAME" in out.stderr and "/exit" in out.stderr
    assert "unknown command /tmp/x; /help lists the commands (start the line with // to send it" in out.stderr
    assert [started(t).spec["prompt"] for t in turns(runs_dir)] == ["/tmp/x is broken"]


def test_json_prints_every_turns_events_as_their_logs(runs_dir: Path) -> None:
    out = invoke("chat", "--json", input="one\ntwo\n")
    assert out.exit_code == 0, out.output
    logs = "".join(s.path.read_text() for s in reversed(list_runs(runs_dir)))
    assert out.stdout == logs and len(logs.splitlines()) > 4
    assert [json.loads(line)["type"] for line in out.stdout.splitlines()].count("done") == 2


def test_exit_status_is_the_last_turns(runs_dir: Path) -> None:
    failing = invoke("chat", "-o", "scenario=fail_401", input="one\ntwo\n")
    assert failing.exit_code == 1
    assert failing.stdout.count("[error] auth_failed: ") == 2
    assert invoke("chat", input="").exit_code == 0  # no turn at all


def test_the_session_budget_stops_the_chat_and_says_which_limit(runs_dir: Path) -> None:
    """20 output tokens a turn, 30 for the session: the second turn goes over (failed, budget_exceeded), the third
    is refused before it starts and the chat ends, exit 1."""
    out = invoke("chat", "--max-output-tokens", "30", input="one\ntwo\nthree\n")
    assert out.exit_code == 1, out.output
    played = turns(runs_dir)
    assert [result_of(t).result.status for t in played] == [RunStatus.SUCCESS, RunStatus.FAILED]
    assert result_of(played[1]).result.error.code == "budget_exceeded"  # type: ignore[union-attr]
    assert "budget_exceeded (max_output_tokens 30)" in out.stdout.splitlines()[-1]
    assert "budget (max_output_tokens = 30 output tokens" in out.stderr and "chat over · 2 turns" in out.stderr
    agent = result_of(played[0]).result.session_id
    advice = f"continue it with a higher budget: `harness chat -p scripted --resume {agent} --max-output-tokens N`"
    assert "the chat went over its budget (max_output_tokens = 30 output tokens, used 40)" in out.stdout
    assert advice in out.stdout and advice in out.stderr  # the turn that went over, the prompt refused after it
    assert "resume_session" not in out.output  # the command line, not the Python API


def test_an_offline_chat_says_its_budget_cannot_be_raised(runs_dir: Path) -> None:
    out = invoke("chat", "--offline", "-p", "offline-scripted", "--max-output-tokens", "30", input="one\ntwo\n")
    assert out.exit_code == 1, out.output
    assert "The budget cannot be raised for this conversation: an offline chat's agent state is temporary" in out.stdout
    assert "--resume" not in out.output and "resume_session" not in out.output


def test_a_turn_that_closes_the_session_does_not_end_the_chat(runs_dir: Path) -> None:
    """After each turn the `breaking` session's process cannot be trusted: the chat goes on in a new session that
    resumes the agent's conversation, saying so, and the budget still covers the whole chat (50 output tokens, 20 a
    turn: the third turn goes over, in the third session)."""
    out = invoke("chat", "-p", "breaking", "--max-output-tokens", "50", input="one\ntwo\nthree\nfour\n")
    assert out.exit_code == 1, out.output
    played = turns(runs_dir)
    agent = result_of(played[0]).result.session_id
    assert BreakingProvider.opened == [None, agent, agent]  # each new session resumes the conversation
    assert [started(t).spec["prompt"] for t in played] == ["one", "two", "three"]
    assert len({started(t).session_turn.session for t in played}) == 3  # type: ignore[union-attr]
    assert [started(t).spec["max_output_tokens"] for t in played] == [50, 30, 10]  # what is left of the chat's
    assert out.stderr.count(f"continuing the conversation in a new one (session {agent})") == 2
    assert "the session cannot go on: it lost track of the turn (and the chat's budget is used up)" in out.stderr
    assert "the chat went over its budget (max_output_tokens = 50 output tokens, used 60)" in out.stdout
    summary = out.stderr.strip().splitlines()[-1]
    assert "chat over · 3 turns · 300 tokens in / 60 out" in summary
    assert all(f"harness runs --session {started(t).session_turn.session}" in summary  # type: ignore[union-attr]
               for t in played)


def test_an_override_the_provider_cannot_make_per_turn_is_refused_at_the_command(runs_dir: Path) -> None:
    """`model-fixed` keeps its model for the whole live session (it can change approval): `/model m2` is refused
    when typed, saying how to get m2, and no prompt is lost; `/model base` (the session's own) is no override."""
    lines = "/model m2\none\n/model m2\ntwo\n/model base\n/approval untrusted\nthree\n"
    out = invoke("chat", "-p", "model-fixed", "-m", "base", input=lines)
    assert out.exit_code == 0, out.output
    played = turns(runs_dir)
    assert [(started(t).spec["prompt"], started(t).spec["model"], started(t).spec["approval"]) for t in played] == [
        ("one", "base", "never"), ("two", "base", "never"), ("three", "base", "untrusted")]
    agent = result_of(played[0]).result.session_id
    refusal = "model-fixed keeps its model for the whole session: start the chat with `--model m2"
    assert f"{refusal}` (this chat goes on with base)" in out.stderr  # before any turn: nothing to resume yet
    assert f"{refusal} --resume {agent}` to go on with this conversation (this chat goes on with base)" in out.stderr
    assert "model: base from the next turn" in out.stderr and "approval: untrusted from the next turn" in out.stderr
    assert "not sent" not in out.stderr and "error" not in out.stderr


def test_resume_continues_the_given_agent_session(runs_dir: Path) -> None:
    out = invoke("chat", "--resume", "earlier-session", input="one\n")
    assert out.exit_code == 0, out.output
    (played,) = turns(runs_dir)
    assert started(played).spec["resume_session"] == "earlier-session"
    assert result_of(played).result.session_id == "earlier-session"


def test_a_provider_without_sessions_is_refused_before_anything_starts(runs_dir: Path) -> None:
    out = invoke("chat", "-p", "one-shot", input="one\n")
    assert out.exit_code == 2
    assert "provider 'one-shot' does not support 'session'" in out.stderr and "scripted" in out.stderr
    assert not list_runs(runs_dir)


def test_offline_replays_the_scenario_on_every_turn_in_one_temporary_workspace(runs_dir: Path, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    out = invoke("chat", "--offline", "-p", "offline-scripted", input="one\ntwo\nthree\n")
    assert out.exit_code == 0, out.output
    (backend,) = OfflineScriptedProvider.backends
    assert backend.replay_each_prompt  # every turn of the conversation gets the scenario's answer
    played = turns(runs_dir)
    assert len(played) == 3 and len({started(t).spec["cwd"] for t in played}) == 1
    assert all(started(t).spec["provider_options"]["scenario"] == "say" for t in played)
    assert "offline workspace" in out.stderr and not list(temp.iterdir())  # the workspace is gone
    summary = out.stderr.strip().splitlines()[-1]
    assert "the offline agent state is gone: an offline chat cannot be continued" in summary
    assert "--resume" not in summary  # it would go to the real API, and find no such session
    assert f"harness runs --session {started(played[0]).session_turn.session}" in summary  # type: ignore[union-attr]


# --- signals: raised only while the chat waits, and never lost -------------------------------------------

def test_a_signal_kept_outside_a_wait_is_raised_at_the_next_wait() -> None:
    keys = Keys()
    with keys.installed():
        signal.raise_signal(signal.SIGTERM)  # the chat is busy (a command): kept
        with pytest.raises(Signalled), keys.waiting():
            pass


def _blocked(thread_id: int) -> bool:
    with open(f"/proc/self/task/{thread_id}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] == "S"


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc to see the main thread block")
def test_a_ctrl_c_that_did_not_interrupt_the_blocked_wait_is_raised_within_a_tick() -> None:
    """The signal lands before the main thread's wait blocked in C (here: it is delivered to another thread, so the
    wait is not interrupted): CPython would run the handler only when the wait ends (at the next key, for
    readline); the chat's SIGALRM tick interrupts the wait, so Ctrl-C is raised at once."""
    keys = Keys()
    lock = threading.Lock()
    lock.acquire()
    main = threading.get_native_id()

    def press_from_another_thread() -> None:
        deadline = time.monotonic() + _DEADLINE
        while not _blocked(main) and time.monotonic() < deadline:
            time.sleep(0.01)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)  # the C handler runs here, not in the main thread

    helper = threading.Thread(target=press_from_another_thread)
    begun = time.monotonic()
    with keys.installed(), pytest.raises(KeyboardInterrupt), keys.waiting():
        helper.start()
        lock.acquire(timeout=30)
    helper.join(_DEADLINE)
    assert time.monotonic() - begun < 10  # not the 30 s the wait had left


_READER = """
import readline, sys
from harness_core.cli.chat.keys import Keys, read_line
keys, pressed = Keys(), 0
with keys.installed():
    while True:
        try:
            with keys.waiting():
                read_line("p> ")
        except KeyboardInterrupt:
            pressed += 1
            print("ctrl-c", pressed, flush=True)
        except EOFError:
            break
print("left after", pressed, flush=True)
"""


def test_a_ctrl_c_landing_with_the_tick_pending_comes_out_of_the_prompt_as_ctrl_c(tmp_path: Path) -> None:
    """CPython 3.10 (gh-134644): a handler raising inside readline while the tick's handler is pending made
    `input()` raise SystemError (the chat died with a traceback at the prompt). Both signals at once, many times."""
    controller, terminal = pty.openpty()
    reader = subprocess.Popen([sys.executable, "-c", _READER], stdin=terminal, stdout=terminal, stderr=terminal,
                              cwd=Path(__file__).parents[2])
    os.close(terminal)
    seen = b""

    def read_until(marker: bytes) -> None:
        nonlocal seen
        deadline = time.monotonic() + _DEADLINE
        while marker not in seen and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.05)[0]:
                try:
                    seen += os.read(controller, 4096)
                except OSError:  # the reader exited and its last output was read
                    return
            elif reader.poll() is not None:  # exited, and nothing more to read
                return

    try:
        read_until(b"p> ")
        for press in range(1, 41):
            os.kill(reader.pid, signal.SIGALRM)
            os.kill(reader.pid, signal.SIGINT)
            read_until(f"ctrl-c {press}\r\n".encode())
        read_until(b"ctrl-c 40\r\np> ")  # ^D typed before readline has the terminal again would be swallowed
        os.write(controller, b"\x04")
        read_until(b"left after 40\r\n")  # the whole line: the reader may exit right after it
        assert reader.wait(_DEADLINE) == 0, seen.decode(errors="replace")
    finally:
        if reader.poll() is None:
            reader.kill()
            reader.wait()
        os.close(controller)
    assert b"SystemError" not in seen and b"left after 40" in seen, seen.decode(errors="replace")


# --- on a terminal ----------------------------------------------------------------------------------------

_TERMINAL_ENV = {"TERM": "xterm", "LC_ALL": "C.UTF-8"}
"""The terminal the tests count prompts on, whatever the caller's. With TERM unset or dumb, or a single-byte locale
(LC_ALL=C), readline moves the cursor by printing the line again, prompt included (after a paste: one `you> ` more
than the chat asked for), so a test counting prompts types its next keys before the chat reads them: the terminal's
line mode takes them (Alt-Enter's ESC then Enter reads as ESC C-j, readline's vi mode) and the test fails or hangs."""


class _Terminal:
    """`harness chat` on a pty that is its controlling terminal (so ^C is SIGINT from the line discipline)."""

    def __init__(self, tmp_path: Path, runs_dir: Path, *args: str, columns: int | None = None) -> None:
        script = tmp_path / "harness_scripted.py"
        script.write_text(WRAPPER)
        env = {**os.environ, "HARNESS_PROVIDER": "scripted", "HARNESS_RUNS_DIR": str(runs_dir), "NO_COLOR": "1",
               **_TERMINAL_ENV}
        env.pop("COLUMNS", None)
        self.controller, terminal = pty.openpty()
        if columns is not None:
            fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))

        def controlling_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.child = subprocess.Popen([sys.executable, str(script), "chat", *args], env=env, stdin=terminal,
                                      stdout=terminal, stderr=terminal, preexec_fn=controlling_terminal)
        os.close(terminal)
        self.seen = b""

    def wait_for(self, text: bytes, count: int = 1) -> None:
        deadline = time.monotonic() + _DEADLINE
        while self.seen.count(text) < count:
            assert time.monotonic() < deadline and self.child.poll() is None, self.seen.decode(errors="replace")
            ready, _, _ = select.select([self.controller], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.controller, 4096)
                except OSError:  # the child closed the terminal
                    break

    def type(self, text: bytes) -> None:
        os.write(self.controller, text)

    def finish(self) -> int:
        deadline = time.monotonic() + _DEADLINE
        while self.child.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.controller], [], [], 0.5)
            if ready:
                try:
                    self.seen += os.read(self.controller, 4096)
                except OSError:
                    break
        return self.child.wait(timeout=_DEADLINE)

    def close(self) -> None:
        os.close(self.controller)
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait(timeout=_DEADLINE)


@pytest.fixture
def terminal(tmp_path: Path, runs_dir: Path) -> Iterator[Any]:
    opened: list[_Terminal] = []

    def start(*args: str, columns: int | None = None) -> _Terminal:
        opened.append(_Terminal(tmp_path, runs_dir, *args, columns=columns))
        return opened[-1]

    yield start
    for term in opened:
        term.close()


def test_at_80_columns_the_chats_own_lines_fit_and_a_command_is_never_split(terminal: Any) -> None:
    """The header, /help and the closing line break between words to fit the terminal; a command to copy
    (`harness runs --session ID`, `harness chat ... --resume ID`) stays whole on one line."""
    chat = terminal(columns=80)
    chat.wait_for(b"you> ")
    chat.type(b"hi\n")
    chat.wait_for(b"you> ", 2)
    chat.type(b"/help\n")
    chat.wait_for(b"/exit")
    chat.wait_for(b"you> ", 3)
    chat.type(b"\x04")
    assert chat.finish() == 0, chat.seen.decode(errors="replace")
    screen = [re.sub(r"\x1b\[[0-9;?]*[ -/]*[@-~]", "", line.split("\r")[-1])
              for line in chat.seen.decode().split("\r\n")]
    assert all(len(line) <= 80 for line in screen), "\n".join(screen)
    text = "\n".join(screen)
    assert "/help for commands" in text and "/approval POLICY" in text and "chat over" in text, text
    assert re.search(r"`harness runs --session \S+`", text), text
    assert re.search(r"`harness chat -p scripted --resume \S+`", text), text


def test_ctrl_c_interrupts_the_turn_and_the_chat_goes_on(terminal: Any, runs_dir: Path) -> None:
    chat = terminal("-o", "scenario=slow_text")
    chat.wait_for(b"you> ")
    chat.type(b"first\n")
    chat.wait_for(b"a slow")  # streaming
    chat.type(b"\x03")
    chat.wait_for(b"interrupted in ")
    chat.wait_for(b"you> ", 2)  # the chat goes on: a new prompt
    chat.type(b"\x03")  # a second press, meant for the turn that already ended: it does not end the chat
    chat.wait_for(_LEAVE_HINT)
    chat.wait_for(b"you> ", 3)  # (a ^C sent before readline waits for input would reach Python only at a key)
    chat.type(b"/model\n")
    chat.wait_for(b"model: the provider's default")
    chat.wait_for(b"you> ", 4)
    chat.type(b"\x03")
    chat.wait_for(b"you> ", 5)
    chat.type(b"\x03")  # a second Ctrl-C in a row at the prompt leaves
    status = chat.finish()
    assert status == 130, chat.seen.decode(errors="replace")  # the last turn was interrupted
    assert b"interrupting" in chat.seen and b"chat over \xc2\xb7 1 turn" in chat.seen
    assert chat.seen.count(_LEAVE_HINT) == 2
    (played,) = turns(runs_dir)
    assert result_of(played).result.status is RunStatus.INTERRUPTED


def test_ctrl_c_at_the_prompt_leaves_only_when_pressed_twice_in_a_row(terminal: Any, runs_dir: Path) -> None:
    chat = terminal()
    chat.wait_for(b"you> ")
    chat.type(b"\x03")
    chat.wait_for(_LEAVE_HINT)
    chat.wait_for(b"you> ", 2)
    chat.type(b"/help\n")  # a line in between: the next Ctrl-C is a first one again
    chat.wait_for(b"/model NAME")
    chat.wait_for(b"you> ", 3)
    chat.type(b"\x03")
    chat.wait_for(_LEAVE_HINT, 2)
    chat.wait_for(b"you> ", 4)
    chat.type(b"\x03")
    assert chat.finish() == 0, chat.seen.decode(errors="replace")  # no turn played: nothing failed
    assert b"chat over \xc2\xb7 0 turns" in chat.seen and not list_runs(runs_dir)


def test_a_second_ctrl_c_stops_the_turn_at_once(terminal: Any, runs_dir: Path) -> None:
    chat = terminal("-o", "scenario=slow_text", "-o", "ignore_interrupt=true")
    chat.wait_for(b"you> ")
    chat.type(b"first\n")
    chat.wait_for(b"a slow")
    chat.type(b"\x03")
    chat.wait_for(b"interrupting")
    begun = time.monotonic()
    chat.type(b"\x03")
    chat.wait_for(b"interrupted in ")
    assert time.monotonic() - begun < 4  # well before the 5 s interrupt grace
    chat.wait_for(b"you> ", 2)  # the session closed (its turn was stopped hard), the chat did not
    assert _CARRY_ON in chat.seen
    chat.type(b"second\n")
    chat.wait_for(b"a slow", 2)
    chat.type(b"\x03")
    chat.wait_for(b"interrupting", 2)
    chat.type(b"\x03")  # the new session's turn is stopped hard too: the chat goes on in a third
    chat.wait_for(_CARRY_ON, 2)
    chat.wait_for(b"you> ", 3)
    chat.type(b"\x04")  # Ctrl-D leaves
    assert chat.finish() == 130, chat.seen.decode(errors="replace")
    played = turns(runs_dir)
    assert [result_of(t).result.status for t in played] == [RunStatus.INTERRUPTED] * 2
    agent = result_of(played[0]).result.session_id
    assert started(played[1]).spec["resume_session"] == agent  # the new session resumes the conversation
    assert len({started(t).session_turn.session for t in played}) == 2  # type: ignore[union-attr]
    assert b"chat over \xc2\xb7 2 turns" in chat.seen


def test_the_terminal_closing_interrupts_the_turn_and_ends_the_chat(terminal: Any, runs_dir: Path) -> None:
    chat = terminal("-o", "scenario=slow_text")
    chat.wait_for(b"you> ")
    chat.type(b"first\nsecond\n")
    chat.wait_for(b"a slow")
    chat.child.send_signal(signal.SIGHUP)
    assert chat.finish() == 130
    (played,) = turns(runs_dir)  # the second line was never played
    assert result_of(played).result.status is RunStatus.INTERRUPTED


def test_a_question_cancelled_by_ctrl_c_leaves_the_terminal_to_the_prompt(terminal: Any, runs_dir: Path) -> None:
    """Ctrl-C at an approval question interrupts the turn; the abandoned question stops reading the terminal, so
    the next prompt gets every key (here `/help`, then an answered question in the next turn), Ctrl-D leaves, and
    the terminal is back in its line mode with echo."""
    chat = terminal("-o", "scenario=tools", "--approval", "untrusted")
    chat.wait_for(b"you> ")
    chat.type(b"go\n")
    chat.wait_for(b"allow? [y]es / [n]o (Enter) / [a]bort: ")
    chat.type(b"\x03")
    chat.wait_for(b"interrupted in ")
    chat.wait_for(b"you> ", 2)
    chat.type(b"/help\n")  # stolen by a leftover reader before the fix: the chat hung for good
    chat.wait_for(b"/model NAME")
    chat.wait_for(b"you> ", 3)
    chat.type(b"again\n")
    chat.wait_for(b"allow? [y]es / [n]o (Enter) / [a]bort: ", 2)
    chat.type(b"y\n")  # the next question is read as before
    chat.wait_for(b"approved", 1)
    chat.wait_for(b"allow? [y]es / [n]o (Enter) / [a]bort: ", 3)
    chat.type(b"a\n")
    chat.wait_for(b"you> ", 4)
    chat.type(b"\x04")
    assert chat.finish() == 130, chat.seen.decode(errors="replace")  # the last turn was aborted
    assert b"(question withdrawn)" in chat.seen
    first, second = turns(runs_dir)
    assert result_of(first).result.status is RunStatus.INTERRUPTED
    assert [e.decision.value for e in second if e.type == "approval_resolved"] == ["approve", "abort"]
    lflag = termios.tcgetattr(chat.controller)[3]
    assert lflag & termios.ICANON and lflag & termios.ECHO  # not left in readline's -icanon -echo


def test_ctrl_c_with_text_typed_clears_the_line_and_does_not_count(terminal: Any, runs_dir: Path) -> None:
    chat = terminal()
    chat.wait_for(b"you> ")
    chat.type(b"abc")
    chat.wait_for(b"abc")
    chat.type(b"\x03")  # clears the line: no hint, nothing sent
    chat.wait_for(b"you> ", 2)
    chat.type(b"\x03")  # an empty line: the first press
    chat.wait_for(_LEAVE_HINT)
    chat.wait_for(b"you> ", 3)
    chat.type(b"xyz")
    chat.wait_for(b"xyz")
    chat.type(b"\x03")  # typing reset the count: this press clears the line and does not leave
    chat.wait_for(b"you> ", 4)
    chat.type(b"\x03")
    chat.wait_for(_LEAVE_HINT, 2)
    chat.wait_for(b"you> ", 5)
    chat.type(b"\x03")
    assert chat.finish() == 0, chat.seen.decode(errors="replace")
    assert chat.seen.count(_LEAVE_HINT) == 2 and not list_runs(runs_dir)


def test_a_pasted_prompt_of_many_lines_is_one_turn(terminal: Any, runs_dir: Path) -> None:
    """A paste (the terminal brackets it, as every modern terminal does) is one prompt, its newlines kept, sent by
    Enter: one turn, not one paid turn per line. So is a line continued with a backslash (as agents' own prompts
    do) or with Alt-Enter; Ctrl-C on a continuation line drops the whole prompt."""
    chat = terminal()
    chat.wait_for(b"you> ")
    chat.type(b"\x1b[200~fix the bug\nin parse()\n\x1b[201~")  # pasted, ending in its newline: not sent yet
    chat.type(b"\r")
    chat.wait_for(b"success in ")
    chat.wait_for(b"you> ", 2)
    chat.type(b"first part \\\r")
    chat.wait_for(b"...> ")
    chat.type(b"second part\r")
    chat.wait_for(b"success in ", 2)
    chat.wait_for(b"you> ", 3)
    chat.type(b"one\x1b\rtwo\r")  # Alt-Enter inserts a newline
    chat.wait_for(b"success in ", 3)
    chat.wait_for(b"you> ", 4)
    chat.type(b"dropped \\\r")
    chat.wait_for(b"...> ", 2)
    chat.type(b"\x03")  # drops the prompt typed so far; not a press towards leaving
    chat.wait_for(b"you> ", 5)
    chat.type(b"\x04")
    assert chat.finish() == 0, chat.seen.decode(errors="replace")
    assert _LEAVE_HINT not in chat.seen
    prompts = [started(t).spec["prompt"] for t in turns(runs_dir)]
    assert prompts == ["fix the bug\nin parse()", "first part \nsecond part", "one\ntwo"]


def test_off_a_terminal_a_backslash_continues_the_prompt(runs_dir: Path) -> None:
    out = invoke("chat", input="one \\\ntwo\nthree\n")
    assert out.exit_code == 0, out.output
    assert [started(t).spec["prompt"] for t in turns(runs_dir)] == ["one \ntwo", "three"]


def test_undo_puts_back_what_the_last_turn_changed(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    out = invoke("chat", "-o", "scenario=tools", input="edit it\n/undo\n/undo\n")
    assert out.exit_code == 0, out.output
    assert (tmp_path / "notes.txt").read_text() == "alpha\n" and not (tmp_path / "new.txt").exists()
    said = out.stderr
    assert "  notes.txt: restored" in said and "  new.txt: removed (the run created it)" in said
    assert "(the agent is not told: say so in your next prompt if it should know)" in said
    assert "already as before it: notes.txt, new.txt" in said  # the second /undo: nothing left to put back
    first = invoke("chat", input="/undo\n")
    assert "/undo: no turn yet, nothing to undo" in first.stderr
