"""A run in the foreground (`harness run`): drive it live, render it (or print its JSON lines), handle Ctrl-C, write
its answer (`render.streams`) and turn its result into the exit status (chat, attach and replay use the pieces).

Layer: CLI base, loaded when a command runs. Knows the run API of the `harness_core` façade, the event models,
the renderer and the run store; nothing of any concrete provider.
"""

from __future__ import annotations

import codecs
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, TextIO

import anyio

from harness_core import (
    EXIT_INTERRUPTED,
    AgentRunSpec,
    Done,
    HarnessEvent,
    LiveRun,
    Tool,
    open_run,
)
from harness_core._run.signals import interrupt_on_signals
from harness_core.cli.foreground.terminal_approvals import terminal_approver
from harness_core.cli.records.history import run_details
from harness_core.cli.render import Renderer
from harness_core.cli.render.diffview import format_changes
from harness_core.cli.render.layout import fit_parts, output_width
from harness_core.cli.render.streams import answer_text, choose_sinks, deliver_answer, quiet_failure
from harness_core.cli.render.terminal import use_plain
from harness_core.errors import exit_status_for
from harness_core.events import event_json
from harness_core.store import read_events

__all__ = ["JsonLines", "RunRequest", "execute", "exit_status_for", "tick", "watch_signals"]

_TICK_LIVE = 0.1
_TICK_PLAIN = 0.25
_CHUNK = 64 * 1024
"""`--json`: held lines are written once this many bytes wait, even while the run never pauses."""


@dataclass(frozen=True)
class RunRequest:
    """Everything `harness run` was asked, after click parsed it."""

    spec: AgentRunSpec
    provider: str | None = None
    runs_dir: Path | None = None
    record_wire: bool = False
    json: bool = False
    verbose: int = 0
    interactive: bool = False
    environ: Mapping[str, str] = field(default_factory=dict)
    quiet: bool = False
    """`-q`: no live view, the final answer alone on stdout, a failure in one line on stderr."""
    output_last_message: Path | None = None
    """`--output-last-message FILE`: also write the final answer there (only when the run succeeds)."""
    diff: bool = False
    """`--diff`: after the answer, the diff of the files the run changed (as its log recorded it), on stdout."""
    tools: tuple[Tool, ...] = ()
    """`--tools`: the Python tools the agent may call (loaded)."""


async def execute(request: RunRequest, out: TextIO, err: TextIO | None = None) -> int:
    """Run `request` in the foreground; returns the exit status. `out` is stdout: the live view when it is a
    terminal (or the same file as `err`), else the final answer of a successful run alone (the view goes to `err`,
    stderr by default); `-q` and `--json` as `render.streams.choose_sinks` says.

    Raises (before anything is spawned): the `HarnessError` of `open_run`'s pre-flight checks.
    """
    err = sys.stderr if err is None else err
    sinks = choose_sinks(out, err, json=request.json, quiet=request.quiet)
    renderer = None if sinks.view is None else Renderer.for_stream(sinks.view, verbose=request.verbose > 0,
                                                                    environ=request.environ)
    json_out = JsonLines(out)
    handle = renderer.feed if renderer is not None else _ignore
    approver = terminal_approver(renderer) if request.interactive else None
    live: LiveRun | None = None
    started = open_run(request.spec, request.provider, approver=approver, runs_dir=request.runs_dir,
                       record_wire=request.record_wire, tools=request.tools)
    with anyio.CancelScope() as hard_stop:
        async with started as live, anyio.create_task_group() as tg:
            tg.start_soon(watch_signals, live, renderer, hard_stop)
            if renderer is not None:
                tg.start_soon(tick, renderer)
            if request.json:
                await json_out.follow(live)
            else:
                await _consume(live, handle, renderer)
            tg.cancel_scope.cancel()
    result = live.result if live is not None else None
    if request.json and hard_stop.cancelled_caught and live is not None:
        json_out.print_log_tail(live)
    if renderer is not None:
        if result is not None and renderer.result is None:
            renderer.feed(Done(result=result))  # the consumer was cancelled before `done` reached it
        renderer.close()
    answer = answer_text(result, schema=request.spec.output_schema is not None)
    if answer is not None and live is not None:
        answer = live.scrubbed(answer)  # written out (a file, a pipe): the run's secrets hidden, as in its log
    deliver_answer(answer, sinks.answer, request.output_last_message)
    if request.quiet and (failure := quiet_failure(result)) is not None:
        print(f"harness: {failure}", file=err, flush=True)
    if request.record_wire and not request.quiet and live is not None and live.log_path is not None:
        wire = live.log_path.with_name(f"{live.run_id}.wire.jsonl")
        for line in fit_parts([f"harness: wire log {wire}", f"(`harness replay {live.run_id}` plays it back)"],
                              output_width(err), indent=" " * 9):
            print(line, file=err, flush=True)
    if request.diff and live is not None and live.log_path is not None:
        _print_diff(live.log_path, out)
    return EXIT_INTERRUPTED if hard_stop.cancelled_caught else exit_status_for(result)


def _ignore(event: HarnessEvent) -> None:
    """`-q`: no view; the answer is written from the result."""


def _print_diff(log: Path, out: TextIO) -> None:
    """`--diff`: the run's `files_changed` record, every file's diff (coloured on a terminal)."""

    changes = run_details(log.parent, log.name.removesuffix(".jsonl")).changes
    print(format_changes(changes, colour=not use_plain(out)) if changes else "harness: the run changed no file "
          "that an edit tool announced (what a shell command writes is not followed)",
          file=out if changes else sys.stderr, flush=True)


async def _consume(live: LiveRun, handle: Callable[[HarnessEvent], None], renderer: Renderer | None = None) -> None:
    """Feed every event to `handle`. With the view's `renderer`, its streamed text is held and written whenever
    the reader has caught up with the run (`LiveRun.when_caught_up`): one write per batch instead of one per
    delta, and a slow agent's text still shows at once."""
    if renderer is not None:
        renderer.on_held = _nothing  # the caught-up hook does the flushing: nothing else to arrange
        live.when_caught_up(renderer.flush)
    try:
        async for event in live:
            handle(event)
    finally:
        if renderer is not None:
            live.when_caught_up(None)
            renderer.on_held = None
            renderer.flush()


def _nothing() -> None:
    """`Renderer.on_held` while the run's caught-up hook flushes the view."""


class JsonLines:
    """`--json` output: each event as its run-log line; remembers the last `seq` printed.

    `print` writes (and flushes) one event; `follow` prints a whole run in chunks, for throughput: the lines
    of the events that arrived together are written together, flushed whenever the reader has caught up with
    the run (so the events of a slow agent still show at once), every `_CHUNK` bytes and at the end."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last_seq = -1
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._binary = _utf8_buffer(out)

    def print(self, event: HarnessEvent) -> None:
        self.hold(event)
        self.flush()

    def hold(self, event: HarnessEvent, line: bytes | None = None) -> None:
        """Add `event`'s line (`line` when the caller has it already) to the output, written by the next `flush`
        (or at once when `_CHUNK` bytes wait)."""
        if line is None:
            line = event_json(event)
        self._held.append(line)
        self._held_bytes += len(line)
        self.last_seq = event.seq
        if self._held_bytes >= _CHUNK:
            self.flush()

    def flush(self) -> None:
        """Write out the lines held, if any."""
        if not self._held:
            return
        data = b"\n".join(self._held) + b"\n"
        self._held.clear()
        self._held_bytes = 0
        if self._binary is not None:
            self.out.flush()  # whatever went through the text layer first stays first
            self._binary.write(data)
            self._binary.flush()
        else:
            self.out.write(data.decode())
            self.out.flush()

    async def follow(self, live: LiveRun) -> None:
        """Print every event of `live` as it comes (see the class), until its stream ends."""
        hold, take, line_of = self.hold, live.share_log_lines(), live.log_line
        live.when_caught_up(self.flush)
        try:
            async for event in live:
                hold(event, take(event) or line_of(event))  # the log's own line, secrets scrubbed
        finally:
            live.when_caught_up(None)
            self.flush()

    def print_log_tail(self, live: LiveRun) -> None:
        """After a hard stop the consumer missed the last events (at least `done`): copy them from the log,
        so the output still equals the log."""
        if live.log_path is None:
            return
        for event in read_events(live.log_path, on_bad_line=lambda _bad: None):  # the tail is what matters
            if event.seq > self.last_seq:
                self.hold(event)
        self.flush()


def _utf8_buffer(out: TextIO) -> BinaryIO | None:
    """The binary stream under `out` when writing UTF-8 bytes there is the same as writing the text to `out`
    (a UTF-8 text layer that does not translate newlines), else None."""
    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if buffer is None or encoding is None or os.linesep != "\n":
        return None
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return None
    return buffer if utf8 else None


async def tick(renderer: Renderer) -> None:
    """Keep `renderer`'s clock going (status line, slow tools' start lines) until cancelled."""
    period = _TICK_LIVE if renderer.live else _TICK_PLAIN
    while True:
        renderer.tick()
        await anyio.sleep(period)


async def watch_signals(live: LiveRun, renderer: Renderer | None, hard_stop: anyio.CancelScope, *,
                        again: str | None = "press Ctrl-C again to stop at once") -> None:
    """`interrupt_on_signals`, saying so on the terminal (`again`: how to stop at once; None: nobody to tell)."""

    def told(count: int) -> None:
        if count == 1:
            _say(renderer, f"interrupting… ({again})", interrupt=True)
        else:
            _say(renderer, "stopping now")

    await interrupt_on_signals(live, hard_stop, told=None if again is None else told)


def _say(renderer: Renderer | None, text: str, *, interrupt: bool = False) -> None:
    if renderer is not None:
        renderer.note(text, interrupt=interrupt)
    else:
        print(f"harness: {text}", file=sys.stderr, flush=True)
