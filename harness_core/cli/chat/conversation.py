"""`harness chat` in the foreground: one session on a thread of its own, a turn per prompt read, each rendered as
`harness run` renders a run (or as JSON lines); `/` commands between turns; Ctrl-C; the exit status.

Layer: CLI, loaded when `harness chat` runs; knows the session API of the `harness_core` façade, the renderer, the
run driver's helpers and the terminal approver; nothing of any concrete provider (docs/sessions.md).
"""

from __future__ import annotations

import contextlib
import os
import re
import readline
import sys
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal

from harness_core import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    AgentRunSpec,
    ApprovalDecision,
    ApprovalPolicy,
    ApprovalRequested,
    BudgetExceededError,
    ConversationBudget,
    Done,
    HarnessError,
    HarnessResult,
    LiveRun,
    Session,
    SessionClosedError,
    SessionSpec,
    Tool,
    UndoRefusedError,
    UnsupportedFeatureError,
    Usage,
    apply_undo,
    open_session,
    plan_undo,
)
from harness_core.cli.chat.budget_advice import BudgetAdvice
from harness_core.cli.chat.help_text import HELP
from harness_core.cli.chat.keys import Keys, Signalled, line_typed, multiline_editing, read_line
from harness_core.cli.event_loop import ENV_BACKEND
from harness_core.cli.flag_words import in_flags
from harness_core.cli.foreground.live import JsonLines, exit_status_for, tick
from harness_core.cli.foreground.terminal_approvals import abandon_questions, terminal_approver
from harness_core.cli.records.undo_lines import done_lines
from harness_core.cli.render import Renderer, terminal as term
from harness_core.cli.render.format import turns_summary
from harness_core.cli.render.layout import fit_parts, fit_text, output_width

__all__ = ["ChatRequest", "converse"]

PROMPT = "you> "
CONTINUATION = "...> "
"""The prompt of a line that continues the one above (it ended in a backslash)."""
LINE_LIMIT = 64 << 20
"""A turn read from stdin (not a terminal) is a line of at most this many characters."""
_DEFAULT_MODEL = "the provider's default"
_HARD_STOP_FALLBACK = 20.0
_POLICIES = tuple(p.value for p in ApprovalPolicy)


@dataclass(frozen=True)
class ChatRequest:
    """Everything `harness chat` was asked, after click parsed it."""

    spec: AgentRunSpec | SessionSpec
    """The session's settings (an `AgentRunSpec`'s prompt is a placeholder: each turn brings its own)."""
    provider: str | None = None
    runs_dir: Path | None = None
    json: bool = False
    verbose: int = 0
    prompt: bool = False
    """Show `you> ` and read with line editing (stdin is a terminal)."""
    approvals: bool = False
    """Ask approval requests on the terminal (stdin and stderr are terminals)."""
    environ: Mapping[str, str] = field(default_factory=dict)
    offline: bool = False
    """Against the embedded scripted backend: the agent's state is temporary (the chat cannot be continued)."""
    tools: tuple[Tool, ...] = ()
    """`--tools`: the Python tools every turn's agent may call (loaded)."""


def converse(request: ChatRequest, stdin: TextIO, out: TextIO) -> int:
    """Hold the chat `request` asks for, reading prompts from `stdin` and rendering turns to `out`; returns the
    exit status (the last turn's; 130 when a signal ended the chat).

    Raises (before the first prompt): what `open_session` raises (provider, capabilities, the CLI);
    KeyboardInterrupt when a signal stops the session's start.
    """
    if request.prompt:
        with contextlib.suppress(ImportError):
            multiline_editing(readline)
    keys = Keys()
    chat = _Chat(request, stdin, out, keys)
    with keys.installed(), start_blocking_portal(os.environ.get(ENV_BACKEND, "asyncio")) as portal:
        chat.portal = portal
        try:
            with keys.waiting():
                chat.open(request.spec)
        except Signalled:
            raise KeyboardInterrupt from None
        try:
            chat.greet()
            chat.loop()
        finally:
            chat.close()
        chat.farewell()
    return chat.status


class _Chat:
    """The conversation: the main thread's loop (`loop`, `_turn`) and what runs in the portal (`_play`, `_press`)."""

    def __init__(self, request: ChatRequest, stdin: TextIO, out: TextIO, keys: Keys) -> None:
        self.request = request
        self.keys = keys
        self.stdin = stdin
        self.out = out
        self.portal: BlockingPortal
        self.session: Session
        self.status = EXIT_OK
        self.overrides: dict[str, str] = {}
        self._leaving = False
        self.continuing = False
        """A prompt's first line ended in a backslash: the chat reads its next line."""
        self._last_log: Path | None = None  # the last turn's run log (`/undo`)
        self._live: LiveRun | None = None
        self._renderer: Renderer | None = None
        self._approver = terminal_approver(None)
        self._hard_stop: anyio.CancelScope | None = None
        self._opened: contextlib.AbstractContextManager[Session] | None = None
        self._past: list[Session] = []  # the sessions it left behind, oldest first (it went on in a new one)
        self.budget = BudgetAdvice(provider=request.provider or "", offline=request.offline, limits=ConversationBudget(
            max_cost_usd=request.spec.max_cost_usd, max_output_tokens=request.spec.max_output_tokens))

    # --- the main thread -----------------------------------------------------------------------------------

    def open(self, spec: AgentRunSpec | SessionSpec) -> None:
        """Open the chat's (next) session with `spec` (in the portal); raises what `open_session` raises."""
        opened = self.portal.wrap_async_context_manager(open_session(
            spec, self.request.provider, approver=self.approve if self.request.approvals else None,
            runs_dir=self.request.runs_dir, tools=self.request.tools))
        self.session = opened.__enter__()
        self._opened = opened
        past = sum((s.usage for s in self._past), Usage())
        limits = replace(self.budget.limits, past=past)
        self.budget = replace(self.budget, provider=self.session.provider, limits=limits)

    def close(self) -> None:
        """Close the current session (its process shut down in bounded steps); nothing when it is closed."""
        opened, self._opened = self._opened, None
        if opened is not None:
            opened.__exit__(None, None, None)

    def _carry_on(self) -> bool:
        """After the session closed under the chat (a turn stopped hard, its process gone): go on in a new session
        resuming the agent's conversation, saying so; False (the chat ends, saying why) when that cannot be."""
        old = self.session
        agent = old.provider_session_id
        left = self.budget.limits.after(old.usage).left()  # the budget covers the whole chat
        if agent is None or left is None or self._leaving:
            why = (" (the agent never said its session id: nothing to resume)" if agent is None else
                   " (and the chat's budget is used up)" if left is None else "")
            _say(f"the session cannot go on: {old.closed}{why}")
            self._leaving = True
            return False
        self.close()
        self._past.append(old)
        try:
            with self.keys.waiting():
                self.open(self.request.spec.model_copy(update={"resume_session": agent, **left}))
        except (HarnessError, KeyboardInterrupt, Signalled) as exc:
            self._past.pop()
            why = exc.message if isinstance(exc, HarnessError) else "interrupted"
            _say(f"the session cannot go on: {old.closed}; a new agent process resuming {agent} did not start "
                 f"({why})")
            self._leaving = True
            return False
        _say(f"the agent process was stopped ({old.closed}); continuing the conversation in a new one (session "
             f"{agent})")
        return True

    def greet(self) -> None:
        if not self.request.prompt:
            return
        kind = "one live agent process" if self.session.live else "a new agent process per turn"
        _say(f"chat with {self.session.provider} ({kind}) {_SEP} model {self._model()} {_SEP} /help for commands, "
             "Ctrl-D to leave")

    def loop(self) -> None:
        presses = 0  # Ctrl-Cs in a row at the prompt, on an empty line: the second leaves
        while not self._leaving:
            try:
                with self.keys.waiting():
                    line = self._read()
            except (EOFError, KeyboardInterrupt) as exc:
                if self.request.prompt:
                    self.out.write("\n")
                if isinstance(exc, KeyboardInterrupt) and (line_typed() or self.continuing):  # as bash does:
                    presses = 0                                                   # the prompt typed is dropped
                    self.continuing = False
                    continue
                presses += 1
                if isinstance(exc, EOFError) or presses > 1:
                    return
                _say("(press Ctrl-C again, or Ctrl-D, to leave)")
                continue
            except Signalled:
                self.status = EXIT_INTERRUPTED
                return
            presses = 0
            text = line.strip()
            if not text:
                continue
            if text.startswith("/") and not text.startswith("//"):
                self._command(text)
                continue
            self._turn(text[1:] if text.startswith("//") else text)

    def _read(self) -> str:
        """One prompt: a line, or several when each but the last ends in a backslash (the backslashes dropped),
        as agents' own prompts continue a line; a paste (bracketed) or Alt-Enter puts newlines in one line already.
        Ctrl-C on a continuation line drops the whole prompt (`continuing` says so)."""
        pieces = [self._read_line(PROMPT)]
        self.continuing = False
        while pieces[-1].rstrip("\r\n").endswith("\\"):
            pieces[-1] = pieces[-1].rstrip("\r\n")[:-1]
            self.continuing = True
            pieces.append(self._read_line(CONTINUATION))
        self.continuing = False
        return "\n".join(piece.rstrip("\r\n") for piece in pieces)

    def _read_line(self, prompt: str) -> str:
        if self.request.prompt:
            abandon_questions()  # a question its turn left unanswered must not read the keys typed here
            self.out.flush()
            if self.out.isatty():
                return read_line(prompt)
            print(prompt, end="", file=sys.stderr, flush=True)  # the turns go to a file or pipe: not the prompt
            return read_line()
        line = self.stdin.readline(LINE_LIMIT + 1)
        if not line:
            raise EOFError
        if len(line) > LINE_LIMIT and not line.endswith("\n"):
            _say(f"a line of stdin is longer than {LINE_LIMIT >> 20} MiB (is it the right input? a device such as "
                 "/dev/zero never ends); one line is one turn. Leaving")
            self.status = EXIT_USAGE
            raise EOFError
        return line

    def _command(self, text: str) -> None:
        name, _, arg = text.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            self._leaving = True
        elif name == "/help":
            width = output_width(sys.stderr)
            for line in HELP.splitlines():  # a command's text continues under its text, not under the command
                for part in fit_text(line, width, " " * (18 if line.startswith("/") else 0)):
                    print(part, file=sys.stderr)
            sys.stderr.flush()
        elif name == "/undo":
            self._undo()
        elif name == "/model":
            if not arg:
                _say(f"model: {self._model()}")
            elif self._override("model", None if arg == "default" else arg):
                _say(f"model: {self._model()} from the next turn")
        elif name == "/approval":
            if not arg:
                _say(f"approval: {self.overrides.get('approval', self.session.spec.approval.value)}")
            elif arg not in _POLICIES:
                _say(f"/approval {arg}: not a policy; use one of {', '.join(_POLICIES)}")
            elif self._override("approval", arg):
                asked = "" if arg == "never" or self.request.approvals else (
                    " (no terminal to ask on: requests go to the harness_approve plugins, else are denied)")
                _say(f"approval: {arg} from the next turn{asked}")
        else:
            _say(f"unknown command {name}; /help lists the commands (start the line with // to send it as a prompt)")

    def _undo(self) -> None:
        """`/undo`: put the files the last turn changed back as they were before it (as `harness undo` does)."""
        log = self._last_log
        if log is None:
            _say("/undo: no turn yet, nothing to undo")
            return
        try:
            plan = plan_undo(log)
            if plan.problems:
                raise UndoRefusedError(plan.refusal)
            done = apply_undo(plan)
        except HarnessError as exc:
            _say(f"/undo: {exc.message}")
            return
        for line in done_lines(plan, done):
            _say(line)
        if done:
            _say("(the agent is not told: say so in your next prompt if it should know)")

    def _override(self, name: str, value: str | None) -> bool:
        """The next turns' `name` is `value` (None: the session's); False, saying what to do instead, when the
        session cannot change it per turn (its live process keeps it): the chat goes on as it was."""
        setting = getattr(self.session.spec, name)
        current = getattr(setting, "value", setting)  # an enum's value, as typed
        if value is None or value == current:
            self.overrides.pop(name, None)
            return True
        if name not in self.session.overridable:
            agent = None if self.request.offline else self.session.provider_session_id
            resume = f" --resume {agent}` to go on with this conversation" if agent else "`"
            _say(f"{self.session.provider} keeps its {name} for the whole session: start the chat with `--{name} "
                 f"{value}{resume} (this chat goes on with {current or _DEFAULT_MODEL})")
            return False
        self.overrides[name] = value
        return True

    def _model(self) -> str:
        return self.overrides.get("model") or self.session.spec.model or _DEFAULT_MODEL

    def _turn(self, prompt: str) -> None:
        """Play one turn in the portal; Ctrl-C (and SIGTERM/SIGHUP) while it plays go to `_press`."""
        future: Future[tuple[HarnessResult | None, bool]] = self.portal.start_task_soon(self._play, prompt,
                                                                                        dict(self.overrides))
        presses = 0
        while True:
            try:
                with self.keys.waiting():
                    result, hard_stopped = future.result()
                break
            except (KeyboardInterrupt, Signalled) as exc:
                if isinstance(exc, Signalled):
                    self._leaving = True
                presses += 1
                self.portal.start_task_soon(self._press, presses)
            except HarnessError as exc:  # refused before the turn started: nothing was sent
                self._refused(exc)
                return
        self.keys.forget_ctrl_c()
        self.status = EXIT_INTERRUPTED if hard_stopped else exit_status_for(result)
        if self.session.closed is not None:
            self._carry_on()

    def _refused(self, exc: HarnessError) -> None:
        if isinstance(exc, SessionClosedError) and self._carry_on():  # its process went away between two turns
            _say("(the prompt was not sent: send it again)")
            return
        message = in_flags(exc.message)
        if isinstance(exc, BudgetExceededError):
            message = self.budget.info(exc.to_info(), self.session.provider_session_id, before_turn=True).message
        _say(f"error: {message}")
        if isinstance(exc, UnsupportedFeatureError):  # `_override` checked what it could: drop them all
            self.overrides.clear()
            _say("(the prompt was not sent, and /model and /approval are back to the session's: send it again)")
        elif isinstance(exc, (SessionClosedError, BudgetExceededError)):
            self.status = exc.exit_status
            self._leaving = True

    def farewell(self) -> None:
        """The one-line summary: turns, tokens, cost, and how to continue the conversation."""
        session, every = self.session, [*self._past, self.session]
        usage = sum((s.usage for s in every), Usage())
        line = f"chat over {_SEP} {turns_summary(sum(s.turns for s in every), usage, _SEP)}"
        agent = session.provider_session_id
        if self.request.offline:  # its agent state (and the scripted backend) went with the offline setup
            line += f" {_SEP} the offline agent state is gone: an offline chat cannot be continued"
        elif agent:
            flags = f"-p {session.provider} --resume {agent}"
            line += f" {_SEP} session {agent}: continue it with `harness chat {flags}` or `harness run {flags} PROMPT`"
        listed = " and ".join(f"`harness runs --session {s.session_id}`" for s in every if s.turns)
        if listed:
            line += f" {_SEP} its turns: {listed}"
        _say(line)

    # --- the portal's event loop ---------------------------------------------------------------------------

    async def approve(self, request: ApprovalRequested) -> tuple[ApprovalDecision, str]:
        """The session's approver: asks on the terminal, pausing the current turn's live view."""
        return await self._approver(request)

    async def _play(self, prompt: str, overrides: dict[str, Any]) -> tuple[HarnessResult | None, bool]:
        """One turn, rendered (or printed as JSON lines) to `out`: its result, and whether it had to be stopped
        by cancelling it (the last resort after a second Ctrl-C)."""
        request = self.request
        renderer = None if request.json else Renderer.for_stream(self.out, verbose=request.verbose > 0,
                                                                  environ=request.environ)
        json_out = JsonLines(self.out)
        shown = renderer

        def handle(event: Any) -> None:
            if shown is not None:
                shown.feed(self.budget.event(event, self.session.provider_session_id))
        self._renderer = renderer
        self._approver = terminal_approver(renderer)
        live: LiveRun | None = None
        with anyio.CancelScope() as hard_stop:
            self._hard_stop = hard_stop
            async with self.session.turn(prompt, **overrides) as live, anyio.create_task_group() as tg:
                self._live = live
                if renderer is None:
                    await json_out.follow(live)  # the log's lines (secrets scrubbed), a batch per burst
                else:
                    tg.start_soon(tick, renderer)
                    async for event in live:
                        handle(event)
                tg.cancel_scope.cancel()
        self._live = self._hard_stop = None
        if live is not None and live.log_path is not None:
            self._last_log = live.log_path  # what `/undo` undoes
        result = live.result if live is not None else None
        if renderer is None and hard_stop.cancelled_caught and live is not None:
            json_out.print_log_tail(live)
        if renderer is not None:
            if result is not None and renderer.result is None:
                renderer.feed(Done(result=result))
            renderer.close()
        return result, hard_stop.cancelled_caught

    async def _press(self, count: int) -> None:
        """The `count`th Ctrl-C of the turn: interrupt it, then stop it at once (then cancel it, as a last
        resort); later ones are ignored. Nothing when no turn is live (it just ended)."""
        live, hard_stop = self._live, self._hard_stop
        if live is None or hard_stop is None:
            return
        if count == 1:
            live.interrupt()
            self._note("interrupting… (press Ctrl-C again to stop at once)", interrupt=True)
        elif count == 2:
            self._note("stopping now")
            live.stop()
            with anyio.move_on_after(_HARD_STOP_FALLBACK):
                await live.finished.wait()
            if not live.finished.is_set():
                hard_stop.cancel()

    def _note(self, text: str, *, interrupt: bool = False) -> None:
        _say(text) if self._renderer is None else self._renderer.note(text, interrupt=interrupt)


_SEP = "·" if term.can_encode(sys.stderr, "·") else "-"


def _say(text: str) -> None:
    """A line of the chat's own, on stderr (stdout holds the turns: their rendering, or their JSON lines). On a
    terminal broken between words to fit its width, never inside a `command` (it is copied whole)."""
    width, said = output_width(sys.stderr), f"harness: {text}"
    if width is None or len(said) <= width:  # as it is (an /undo line keeps its indent)
        print(said, file=sys.stderr, flush=True)
        return
    for line in fit_parts(_words(said), width, indent=" " * 9):
        print(line.lstrip() if width is not None and len(line) > width else line, file=sys.stderr)  # a long command
    sys.stderr.flush()


def _words(text: str) -> list[str]:
    """`text`'s words, a backquoted command as one, a separator kept at the end of the word before it."""
    words: list[str] = []
    for word in _WORD.findall(text):
        if words and word == _SEP:
            words[-1] += " " + word
        else:
            words.append(word)
    return words


_WORD = re.compile(r"\S*`[^`]*`\S*|\S+")
