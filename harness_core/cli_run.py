"""`harness run` behind the click layer: option parsing, driving a live run, approvals, Ctrl-C, exit status.

Layer: CLI (imported only when `harness run` executes, so `harness --help` stays fast). Knows the public
runner API (`open_run`, `LiveRun`), the event models and the renderer; knows nothing of any concrete provider.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel

from harness_core.errors import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, exit_status_for_code
from harness_core.events import (
    ApprovalDecision,
    ApprovalRequested,
    Done,
    HarnessEvent,
    HarnessResult,
    RunStatus,
)
from harness_core.render import Renderer, tool_label
from harness_core.runner import Approver, LiveRun, open_run
from harness_core.spec import AgentRunSpec
from harness_core.store import read_events

__all__ = ["RunRequest", "execute", "exit_status_for", "parse_option_pairs"]

_HARD_STOP_FALLBACK = 20.0
_TICK_LIVE = 0.1
_TICK_PLAIN = 0.25


class OptionSyntaxError(ValueError):
    """A `-o KEY=VALUE` argument that does not parse; the message says the expected form."""


def parse_option_pairs(pairs: Iterable[str]) -> dict[str, Any]:
    """`-o` arguments to `provider_options`: dotted keys nest, a repeated key makes a list, values stay str.

    >>> parse_option_pairs(["config.effort=high", "enable=a", "enable=b"])
    {'config': {'effort': 'high'}, 'enable': ['a', 'b']}

    Raises:
        OptionSyntaxError: no `=`, an empty key part, or a key used both as a value and as a table.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        parts = key.strip().split(".")
        if not sep or not all(part.strip() for part in parts):
            raise OptionSyntaxError(
                f"-o {pair!r}: expected KEY=VALUE (dotted keys nest: -o config.model_reasoning_effort=high)"
            )
        table = options
        for depth, part in enumerate(parts[:-1]):
            child = table.setdefault(part, {})
            if not isinstance(child, dict):
                raise OptionSyntaxError(
                    f"-o {pair!r}: {'.'.join(parts[:depth + 1])} already has a value, so it cannot hold keys"
                )
            table = child
        leaf = parts[-1]
        if leaf not in table:
            table[leaf] = value
        elif isinstance(table[leaf], dict):
            raise OptionSyntaxError(f"-o {pair!r}: {key} already holds keys (e.g. -o {key}.NAME=VALUE)")
        elif isinstance(table[leaf], list):
            table[leaf].append(value)
        else:
            table[leaf] = [table[leaf], value]
    return options


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


def exit_status_for(result: HarnessResult | None) -> int:
    """0 success, 130 interrupted; a failure's status follows its error code (3 for an unavailable CLI)."""
    if result is None or result.status is RunStatus.INTERRUPTED:
        return EXIT_INTERRUPTED
    if result.status is RunStatus.SUCCESS:
        return EXIT_OK
    return exit_status_for_code(result.error.code) if result.error is not None else EXIT_FAILED


async def execute(request: RunRequest, out: TextIO) -> int:
    """Run `request` in the foreground, rendering (or printing JSON lines) to `out`; returns the exit status.

    Raises (before anything is spawned): the `HarnessError` of `open_run`'s pre-flight checks.
    """
    renderer = None if request.json else Renderer.for_stream(out, verbose=request.verbose > 0,
                                                              environ=request.environ)
    json_out = _JsonLines(out)
    handle = json_out.print if renderer is None else renderer.feed
    approver = _terminal_approver(renderer) if request.interactive else None
    live: LiveRun | None = None
    started = open_run(request.spec, request.provider, approver=approver, runs_dir=request.runs_dir,
                       record_wire=request.record_wire)
    with anyio.CancelScope() as hard_stop:
        async with started as live, anyio.create_task_group() as tg:
            tg.start_soon(_watch_signals, live, renderer, hard_stop)
            if renderer is not None:
                tg.start_soon(_tick, renderer)
            await _consume(live, handle)
            tg.cancel_scope.cancel()
    result = live.result if live is not None else None
    if renderer is None and hard_stop.cancelled_caught and live is not None:
        json_out.print_log_tail(live)
    if renderer is not None:
        if result is not None and renderer.result is None:
            renderer.feed(Done(result=result))  # the consumer was cancelled before `done` reached it
        renderer.close()
    return EXIT_INTERRUPTED if hard_stop.cancelled_caught else exit_status_for(result)


async def _consume(live: LiveRun, handle: Callable[[HarnessEvent], None]) -> None:
    async for event in live:
        handle(event)


class _JsonLines:
    """`--json` output: each event as its run-log line; remembers the last `seq` printed."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.last_seq = -1

    def print(self, event: HarnessEvent) -> None:
        self.out.write(event.model_dump_json() + "\n")
        self.out.flush()
        self.last_seq = event.seq

    def print_log_tail(self, live: LiveRun) -> None:
        """After a hard stop the consumer missed the last events (at least `done`): copy them from the log,
        so the output still equals the log."""
        if live.log_path is None:
            return
        for event in read_events(live.log_path):
            if event.seq > self.last_seq:
                self.print(event)


async def _tick(renderer: Renderer) -> None:
    period = _TICK_LIVE if renderer.live else _TICK_PLAIN
    while True:
        renderer.tick()
        await anyio.sleep(period)


async def _watch_signals(live: LiveRun, renderer: Renderer | None, hard_stop: anyio.CancelScope) -> None:
    """First SIGINT/SIGTERM: interrupt the turn cleanly. Second: cancel the run at once."""
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        count = 0
        async for _ in signals:
            count += 1
            if count == 1:
                live.interrupt()
                _say(renderer, "interrupting… (press Ctrl-C again to stop at once)")
            else:
                _say(renderer, "stopping now")
                live.stop()  # the stream still ends with its `done`; the scope below is only a last resort
                with anyio.move_on_after(_HARD_STOP_FALLBACK):
                    await live.finished.wait()
                if not live.finished.is_set():
                    hard_stop.cancel()
                return


def _say(renderer: Renderer | None, text: str) -> None:
    if renderer is not None:
        renderer.note(text)
    else:
        print(f"harness: {text}", file=sys.stderr, flush=True)


# --- interactive approvals ------------------------------------------------------------------------------

_ANSWERS = {
    "y": ApprovalDecision.APPROVE, "yes": ApprovalDecision.APPROVE,
    "n": ApprovalDecision.DENY, "no": ApprovalDecision.DENY, "": ApprovalDecision.DENY,
    "a": ApprovalDecision.ABORT, "abort": ApprovalDecision.ABORT,
}


def _terminal_approver(renderer: Renderer | None) -> Approver:
    """Ask on the terminal, one request at a time: [y]es approves, [n]o (or Enter) denies, [a]bort stops."""
    lock = anyio.Lock()

    async def approve(request: ApprovalRequested) -> ApprovalDecision:
        async with lock:
            if renderer is not None:
                renderer.hold()
            try:
                return await _ask(request)
            finally:
                if renderer is not None:
                    renderer.release()

    return approve


async def _ask(request: ApprovalRequested) -> ApprovalDecision:
    reason = f" ({request.reason})" if request.reason else ""
    question = f"[approval] {tool_label(request.display)}{reason} — allow? [y]es / [n]o / [a]bort: "
    while True:
        sys.stderr.write(question)
        sys.stderr.flush()
        line = await _read_terminal_line()
        if line is None:
            sys.stderr.write("\n")
            return ApprovalDecision.DENY
        decision = _ANSWERS.get(line.strip().lower())
        if decision is not None:
            return decision
        sys.stderr.write("please answer y, n or a\n")


async def _read_terminal_line() -> str | None:
    """One line from stdin without blocking the event loop; None at end of input.

    A daemon thread rather than `anyio.to_thread`: if the run is cancelled while the human is still thinking,
    the abandoned read must not keep the process alive at exit.
    """
    token = anyio.lowlevel.current_token()
    answered = anyio.Event()
    box: list[str] = []

    def read() -> None:
        try:
            box.append(sys.stdin.readline())
        except (OSError, ValueError):
            box.append("")
        with contextlib.suppress(RuntimeError):  # the event loop is gone: nobody is waiting any more
            anyio.from_thread.run_sync(answered.set, token=token)

    threading.Thread(target=read, name="harness-approval-prompt", daemon=True).start()
    await answered.wait()
    return box[0] or None
