"""Foreground rendering of a run (public: any program may render a run with it): `HarnessEvent`s, one at a time,
into text for a human, with colour and a live status line on a terminal, plain text off one (docs/sessions.md).

Layer: CLI rendering. Knows the event models only: nothing of providers, the runner, the click commands or the
run store. Pure apart from writing to the stream it is given; time comes from an injectable clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TextIO, cast

from harness_core import (
    CLI_WARNING,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ContextUsage,
    Done,
    ErrorEvent,
    HarnessEvent,
    HarnessResult,
    Notice,
    ReasoningDelta,
    RunStarted,
    RunStatus,
    SessionStarted,
    TextDelta,
    ToolResult,
    ToolStatus,
    ToolSummary,
    ToolUse,
    Usage,
)
from harness_core.cli.render import terminal as term
from harness_core.cli.render.diffview import changed_line
from harness_core.cli.render.format import (
    final_line,
    format_duration,
    format_tokens,
    schema_answer,
    status_text,
    tool_label,
    tool_line,
)
from harness_core.cli.render.layout import fit_parts
from harness_core.cli.render.streams import terminal_width
from harness_core.cli.render.terminal import use_plain
from harness_core.cli.render.tools import ToolBook, approval_text, label_for, summary_lines

__all__ = ["START_LINE_AFTER", "SUMMARY_LINES", "Renderer", "format_duration", "format_tokens", "tool_label",
           "tool_line", "use_plain"]

START_LINE_AFTER = 1.0
"""Seconds a tool may run before its start line is printed (by `tick`)."""
SUMMARY_LINES = 6
"""Most output lines shown per summary with ``verbose``."""
_THINKING = "[thinking] "


class Renderer:
    """Render one run's events to `out`. Feed events in order with `feed`; call `tick` periodically."""

    def __init__(
        self,
        out: TextIO,
        *,
        color: bool = False,
        live: bool = False,
        verbose: bool = False,
        unicode: bool = True,
        clock: Callable[[], float] = time.monotonic,
        width: Callable[[], int] | None = None,
    ) -> None:
        self.out = out
        self._out = term.Output(out, clock)
        self.color = color
        self.live = live
        self.verbose = verbose
        self._clock = clock
        self._width = width or (lambda: terminal_width(out))  # `out`'s own terminal: the view may be on stderr
        self._marks = term.UNICODE_MARKS if unicode else term.ASCII_MARKS
        self._spinner = term.SPINNER_UNICODE if unicode else term.SPINNER_ASCII
        self._frame = 0
        self._started = clock()
        self._mid_line = False
        self._status_shown = False
        self._held = False
        self._phase = "starting"
        self._cwd: str | None = None
        self._tools = ToolBook()
        self._pending = self._tools.pending
        self._thinking: str | None = None  # the reasoning item being shown (verbose), while its line is open
        self._thought_line_open = False
        self._reasons_shown: set[str] = set()
        self._usage: Usage | None = None
        self._schema = False  # the run has an output schema: its answer is printed at the end, not streamed
        self.prompt_line_ended = False
        """True once a `note` ended the line a question held on screen (its asker needs no newline of its own)."""
        self.result: HarnessResult | None = None

    @classmethod
    def for_stream(
        cls,
        out: TextIO,
        *,
        verbose: bool = False,
        environ: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> Renderer:
        """A renderer suited to `out`: colour and a live status line on a terminal, plain text otherwise."""
        fancy = not use_plain(out, environ)
        return cls(out, color=fancy, live=fancy, verbose=verbose, unicode=term.can_encode(out, "✓⠋·—…⊘■"),
                   clock=clock)

    # --- the event path ----------------------------------------------------------------------------------

    def feed(self, event: HarnessEvent) -> None:
        """Render one event. Streamed text is written at once, or held for the owner to `flush` (`on_held`);
        everything else is written and flushed before `feed` returns."""
        if isinstance(event, TextDelta):
            if self._schema:
                self._phase = "writing the answer"
                return
            if self._thinking is not None:
                self._end_text()
            if self._status_shown:
                self._erase_status()
            text = event.text
            if not text.isprintable():  # (most deltas are: no newline, tab or control character to drop)
                text = text.translate(term.UNSAFE)
            self._mid_line = not text.endswith("\n")
            self._out.text(text)
            self._phase = "writing"
            return
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)
            if not isinstance(event, ReasoningDelta):  # streamed like text: `_reasoning` writes or holds it
                self._out.flush()

    def _run_started(self, event: RunStarted) -> None:
        self._phase = "waiting for model"
        if event.ts > 0 and self._clock is time.monotonic:  # attached later: the clock counts from the run's start
            self._started -= max(0.0, time.time() - event.ts)
        cwd = event.spec.get("cwd")
        self._cwd = cwd if isinstance(cwd, str) else None
        self._schema = event.spec.get("output_schema") is not None
        if self.verbose:
            model = event.spec.get("model") or "default model"
            cli = f" (cli {event.cli_version})" if event.cli_version else ""
            self._line(
                f"[run] {event.run_id} {self._marks['sep']} {event.provider} "
                f"{event.provider_version}{cli} {self._marks['sep']} {model}",
                term.DIM,
            )

    def _session_started(self, event: SessionStarted) -> None:
        if self.verbose:
            resumed = " (resumed)" if event.resumed else ""
            model = f" {self._marks['sep']} model {event.model}" if event.model else ""
            self._line(f"[session] {event.session_id}{resumed}{model}", term.DIM)

    def _reasoning(self, event: ReasoningDelta) -> None:
        self._phase = "thinking"
        if not self.verbose:
            return
        item = event.item_id or ""
        if self._thinking != item:  # a new piece of reasoning starts on a line of its own
            self._end_text()
            self._thinking = item
        self._erase_status()
        for index, piece in enumerate(event.text.translate(term.UNSAFE).split("\n")):
            if index and self._thought_line_open:  # blank lines between paragraphs are dropped
                self._out.write("\n")
                self._thought_line_open = False
            if piece.strip() or (piece and self._thought_line_open):
                start = "" if self._thought_line_open else _THINKING
                self._out.write(f"{term.DIM}{start}{piece}{term.RESET}" if self.color else start + piece)
                self._thought_line_open = True
        self._mid_line = self._thought_line_open
        self._out.streamed()

    def _tool_use(self, event: ToolUse) -> None:
        self._end_text()
        self._tools.started(event.tool_id, event.display, self._clock())
        self._phase = self._tools.phase()

    def _tool_result(self, event: ToolResult) -> None:
        self._flush_pending(except_id=event.tool_id)
        not_run = self._tools.finished(event)
        if not self._tools.shown(event, not_run):  # its approval line said it did not run: one line per outcome
            self._phase = self._tools.phase()
            return
        mark_color = {
            ToolStatus.COMPLETED: term.GREEN,
            ToolStatus.FAILED: term.RED,
            ToolStatus.DECLINED: term.YELLOW,
            ToolStatus.INTERRUPTED: term.YELLOW,
        }.get(event.display.status, "") if not_run is None else term.YELLOW
        text = tool_line(event.display, self._marks, self._cwd, not_run=not_run)
        self._line(f"[tool] {text}", mark_color, tag=True)
        summary = event.display.summary
        cut = event.display.status is ToolStatus.INTERRUPTED  # what the agent said of it is no result
        if self.verbose and summary and event.tool_id not in self._tools.summarized and not_run is None and not cut:
            self._summary(summary)
        self._tools.summarized.discard(event.tool_id)
        self._phase = self._tools.phase()

    def _tool_summary(self, event: ToolSummary) -> None:
        if not self.verbose:
            return
        self._flush_pending()
        if event.tool_id is not None:
            self._tools.summarized.add(event.tool_id)
        if event.kind != "output":
            self._line(f"[{event.kind}]", term.DIM)
        self._summary(event.text)

    def _approval_requested(self, event: ApprovalRequested) -> None:
        self._end_text()
        self._tools.asked(event)
        self._phase = "waiting for approval"

    def _approval_resolved(self, event: ApprovalResolved) -> None:
        display, shown = self._tools.resolved(event)
        if shown:
            what = label_for(display, event.request_id, self._marks, self._cwd)
            colour = term.GREEN if event.decision is ApprovalDecision.APPROVE else term.YELLOW
            self._line(approval_text(event, what, self._marks["dash"], self._reasons_shown, self._tools.interrupted),
                       colour, tag=True)
        self._phase = self._tools.phase()

    def _context_usage(self, event: ContextUsage) -> None:
        if not event.cumulative:
            self._usage = event.usage
        if self.verbose:
            window = ""
            if event.context_window:
                share = 100 * event.usage.total_tokens / event.context_window
                window = f" {self._marks['sep']} {share:.1f}% of {event.context_window:,} context"
            total = " (thread total)" if event.cumulative else ""
            self._line(f"[usage] {format_tokens(event.usage)}{total}{window}", term.DIM)

    def _error(self, event: ErrorEvent) -> None:
        self._flush_pending()
        first, *rest = event.error.message.splitlines() or [""]
        self._line(f"[error] {event.error.code}: {first}", term.RED, tag=True)
        for extra in rest:
            self._line(f"        {extra}", term.RED)

    def _notice(self, event: Notice) -> None:
        if event.code == CLI_WARNING and not self.verbose:
            return  # the agent CLI's own warnings (its configuration, its sandbox) are shown with -v
        self._flush_pending()
        self._line(f"[{event.level}] {event.message}", term.YELLOW if event.level == "warning" else term.DIM,
                   tag=True)

    def _done(self, event: Done) -> None:
        self._flush_pending()
        self.result = event.result
        self._phase = "done"
        if self._schema or event.result.structured_output is not None:
            for line in schema_answer(event.result).splitlines():
                self._line(line)
        if event.result.files_changed:
            self._line(changed_line(event.result.files_changed))
        sep = f" {self._marks['sep']} "
        for line in fit_parts(self.final_line(event.result).split(sep), self._fit_width(), sep):
            self._line(line, _STATUS_COLOR[event.result.status], bold=True)

    @property
    def cwd(self) -> str | None:  # the run's working directory (its `run_started`'s): paths show relative to it
        return self._cwd

    @property
    def on_held(self) -> Callable[[], None] | None:
        """None (default): streamed text is written as it comes. Set: it is held, and `on_held()` called as it starts
        to be; the owner must `flush` once its consumer caught up (`foreground.live`); later text, other lines, `tick`
        do too."""
        return self._out.on_held

    @on_held.setter
    def on_held(self, callback: Callable[[], None] | None) -> None:
        self._out.on_held = callback

    def flush(self) -> None:
        """Write the text held so far (see `on_held`)."""
        self._out.flush()

    # --- pieces ------------------------------------------------------------------------------------------

    def final_line(self, result: HarnessResult) -> str:
        """``✓ success in 3.4 s · 1,234 tokens in / 56 out · $0.0123 · session abc`` (`render.format.final_line`)."""
        return final_line(result, self._marks, self._usage)

    def _fit_width(self) -> int | None:
        """The width a whole line (the final one) must fit: the terminal's; None off a terminal (a file keeps it
        on one line)."""
        isatty = getattr(self.out, "isatty", None)
        return self._width() if isatty is not None and isatty() else None

    def _summary(self, text: str) -> None:
        for line in summary_lines(text, SUMMARY_LINES, self._marks["more"]):
            self._line(line, term.DIM)

    def _flush_pending(self, except_id: str | None = None) -> None:
        """Print the start line of every running tool not shown yet (something else is about to print)."""
        for tool_id, (display, since, shown) in list(self._pending.items()):
            if not shown and tool_id != except_id:
                more = self._marks["more"]
                self._line(f"[tool] {tool_label(display, more, self._cwd)} {more}", tag=True)
                self._pending[tool_id] = (display, since, True)

    def _end_text(self) -> None:
        if self._mid_line:
            self._erase_status()
            self._out.write("\n")
            self._mid_line = False
        self._thinking = None
        self._thought_line_open = False

    def _line(self, text: str, colour: str = "", *, tag: bool = False, bold: bool = False) -> None:
        """Write one whole line: end streamed text first, erase the status line, colour if enabled."""
        text = text.translate(term.UNSAFE)  # before our own colour codes are added
        self._erase_status()
        self._end_text()
        if self.color and (colour or bold):
            start = (term.BOLD if bold else "") + colour
            if tag and text.startswith("["):
                close = text.index("]") + 1
                text = f"{term.DIM}{text[:close]}{term.RESET}{start}{text[close:]}"
            text = f"{start}{text}{term.RESET}"
        self._out.write(text + "\n")

    # --- the live status line ----------------------------------------------------------------------------

    def tick(self) -> None:
        """Periodic work, off the event path: show start lines of slow tools; redraw the status line; write
        the text held (`on_held`)."""
        if self._held:
            return  # a prompt is on screen: print nothing until `release`
        now = self._clock()
        if any(not shown and now - since >= START_LINE_AFTER for _, since, shown in self._pending.values()):
            self._flush_pending()
        if self.live and not self._mid_line and self.result is None:
            self._frame = (self._frame + 1) % len(self._spinner)
            status = status_text(self._spinner[self._frame], now - self._started, self._phase, self._usage,
                                 self._marks, max(10, self._width() - 1))
            self._out.write(f"{term.ERASE_LINE}{term.CYAN}{status}{term.RESET}")
            self._status_shown = True
        self._out.flush()  # and any text held (`on_held`)

    def _erase_status(self) -> None:
        if self._status_shown:
            self._out.write(term.ERASE_LINE)
            self._status_shown = False

    def hold(self) -> None:
        """Erase the status line, end any text line and stop redrawing (e.g. while a prompt is on screen)."""
        self._held = True
        self._erase_status()
        self._end_text()
        self._out.flush()

    def release(self) -> None:
        """Undo `hold`: the next `tick` redraws the status line."""
        self._held = False
        self.prompt_line_ended = False

    def note(self, text: str, *, interrupt: bool = False) -> None:
        """Print one line of the CLI's own (e.g. "interrupting…"), in the same stream as the run; `interrupt`: it
        says an interrupt was asked for (an action cut short at its approval question is then "not run:
        interrupted"). While a question is on screen (`hold`) the line starts on a line of its own."""
        if interrupt:
            self._tools.interrupted = True
        if self._held:
            self._out.write("\n")
            self.prompt_line_ended = True
        self._line(text, term.YELLOW)
        self._out.flush()

    def log_ended(self) -> None:
        """The log ended without `done` and will not go on (its Harness is gone, or could not write it): show what
        it holds to the end, each tool it left running too (``[tool] Running command sleep 30 … (no result: the
        log ends here)``)."""
        self._phase = "done"
        more = self._marks["more"]
        for display, _since, _shown in self._pending.values():
            self._line(f"[tool] {tool_label(display, more, self._cwd)} {more} (no result: the log ends here)",
                       term.YELLOW, tag=True)
        self._pending.clear()
        self._out.flush()

    def close(self) -> None:
        """Leave the terminal clean: no status line, no unterminated text line."""
        self._erase_status()
        self._end_text()
        self._out.flush()


_STATUS_COLOR = {RunStatus.SUCCESS: term.GREEN, RunStatus.FAILED: term.RED, RunStatus.INTERRUPTED: term.YELLOW}

_HANDLERS = cast("dict[type, Callable[[Renderer, object], None]]", {
    RunStarted: Renderer._run_started, SessionStarted: Renderer._session_started, ReasoningDelta: Renderer._reasoning,
    ToolUse: Renderer._tool_use, ToolResult: Renderer._tool_result, ToolSummary: Renderer._tool_summary,
    ApprovalRequested: Renderer._approval_requested, ApprovalResolved: Renderer._approval_resolved,
    ContextUsage: Renderer._context_usage, ErrorEvent: Renderer._error, Notice: Renderer._notice, Done: Renderer._done,
})
