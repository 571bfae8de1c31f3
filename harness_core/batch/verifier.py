"""A cell's verifier: the task's `verify` command run with /bin/sh in the cell's workspace after its agent, under the
process supervisor and a deadline, its output kept (0600, secrets hidden), its reward read from reward.json/txt.

Layer: batch. Knows the transport's `ChildProcess` (process ownership), the store's file naming and the results
model; knows no provider or engine. The contract (reward files, timeouts, output): docs/jobs-and-batches.md.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio

from harness_core.batch.results import PASS_REWARD, Verification
from harness_core.errors import HarnessError, MessageTooLargeError
from harness_core.files.private import make_private_dirs
from harness_core.files.scratch import Scratch
from harness_core.redaction import RunSecrets
from harness_core.store import VERIFY_LOG_SUFFIX, open_run_file
from harness_core.transport.process import ChildProcess

__all__ = ["DEFAULT_VERIFY_TIMEOUT", "VERIFIER_DIR_ENV", "Verdict", "not_verified", "run_verifier"]

DEFAULT_VERIFY_TIMEOUT = 600.0
"""Seconds a verifier may take when neither the task nor the batch says."""
VERIFIER_DIR_ENV = "HARNESS_VERIFIER_DIR"
"""The variable naming the fresh private directory where a verifier may write reward.txt or reward.json."""
KILL_GRACE = 2.0
"""Seconds from SIGTERM to SIGKILL when a verifier's tree is stopped."""
OUTPUT_LIMIT = 4 << 20
"""Bytes of a verifier's output kept in its file (the first part and the last `_KEPT_END`; the middle is cut)."""
TAIL_CHARS = 2048
"""Characters of the output's end kept in the result line (`Verification.output_tail`)."""
REWARD_FILE_LIMIT = 1 << 20

_KEPT_END = 256 << 10
_LINE_LIMIT = 1 << 20
_OUTPUT_SETTLE = 1.0  # after the verifier exits: for its last output (a leftover holding the pipe is then killed)
# The command's stderr goes where its stdout goes (one stream, in order), then the command itself runs: "$1".
_MERGED = 'exec 2>&1\nexec /bin/sh -c "$1"'


@dataclass(frozen=True)
class Verdict:
    """What a verifier said: the result line's `verification`, `reward`, `rewards` and `verified`."""

    verification: Verification
    reward: float | None
    rewards: dict[str, float] | None = None
    stopped: bool = False
    """The batch was interrupted while it ran: the cell did not finish (a re-run plays it again)."""

    @property
    def verified(self) -> bool:
        return self.reward is not None and self.reward >= PASS_REWARD


def not_verified(reason: str, *, reward: float | None = 0.0) -> Verdict:
    """A cell whose verifier did not run (its agent's run failed or was interrupted): `reason` says why."""
    return Verdict(Verification(ran=False, reason=reason), reward)


async def run_verifier(command: str, workspace: Path, *, seconds: float, env: Mapping[str, str], output: Path,
                       secrets: RunSecrets, stop: anyio.Event | None = None, needs_reward: bool = False) -> Verdict:
    """Run `command` (`/bin/sh -c`) in `workspace` with Harness's environment, `env` and `HARNESS_VERIFIER_DIR`,
    at most `seconds` (then its whole tree is killed: SIGTERM, SIGKILL after `KILL_GRACE`); `stop` being set
    stops it the same way. Its output (stdout and stderr merged, bounded, scrubbed with `secrets`) goes to the
    0600 file `output`. `needs_reward`: only a reward file decides (a Harbor task's test.sh), its exit status
    never does. Never raises for what the verifier does; the verdict says it."""
    began = time.monotonic()
    kept = _Output()
    with Scratch("harness-verifier-") as verifier_dir:
        environ = {**os.environ, **env, VERIFIER_DIR_ENV: str(verifier_dir)}
        try:
            async with ChildProcess(["/bin/sh", "-c", _MERGED, "sh", command], env=environ, cwd=workspace,
                                    stdin=False, max_line_bytes=_LINE_LIMIT, stdin_close_timeout=0,
                                    term_timeout=KILL_GRACE, kill_timeout=KILL_GRACE) as child:
                code, timed_out = await _watch(child, kept, seconds, stop)
            # leaving ChildProcess stopped and reaped whatever of the verifier was left (its group, its escapees)
        except HarnessError as exc:  # it could not be started (no /bin/sh, the workspace is gone)
            reason = f"the verifier could not be started: {exc.message}; --rerun-failed plays the cell again"
            return Verdict(Verification(ran=False, reason=reason), 0.0)
        text = secrets.text(kept.text())
        ran = Verification(ran=True, exit_code=code, duration_ms=int((time.monotonic() - began) * 1000),
                           output_tail=text[-TAIL_CHARS:], output=_write_output(output, text))
        if timed_out:
            reason = (f"timed out after {seconds:g} s (verify_timeout): its processes were killed; make it faster "
                      "or give it more time (a task's own `verify_timeout`, or task.toml's [verifier] timeout_sec, "
                      "wins over --verify-timeout), then run the batch again with --rerun-failed")
            return Verdict(_said(ran, reason), 0.0)
        if code is None:
            reason = "stopped: the batch was interrupted while the verifier ran; a re-run plays the cell again"
            return Verdict(_said(ran, reason), None, stopped=True)
        return _judged(verifier_dir, code, ran, needs_reward=needs_reward)


async def _watch(child: ChildProcess, kept: _Output, seconds: float, stop: anyio.Event | None
                 ) -> tuple[int | None, bool]:
    """Collect the child's output until it exits (its exit status), `seconds` pass (timed out) or `stop` is set
    (None, not timed out)."""
    code: int | None = None
    async with anyio.create_task_group() as readers:
        done = anyio.Event()
        readers.start_soon(_collect, child, kept, done)
        with anyio.move_on_after(seconds) as deadline:
            async with anyio.create_task_group() as watch:
                if stop is not None:
                    watch.start_soon(_cancel_when, stop, watch.cancel_scope)
                code = await child.wait()
                watch.cancel_scope.cancel()
        if code is not None:
            with anyio.move_on_after(_OUTPUT_SETTLE):
                await done.wait()
        readers.cancel_scope.cancel()
    return code, deadline.cancelled_caught and code is None


def _said(ran: Verification, reason: str | None, *, verdict: bool = False) -> Verification:
    update: dict[str, object] = {"verdict": verdict}
    if reason:
        update["reason"] = reason
    return ran.model_copy(update=update)


def _judged(verifier_dir: Path, code: int, ran: Verification, *, needs_reward: bool = False) -> Verdict:
    """The reward, as Harbor reads it: reward.json, else reward.txt; else (unless `needs_reward`) the exit status
    (0: 1.0). No verdict (reward 0, `verdict` False, the reason) when the file cannot be read or does not say which
    number decides."""
    exited = "" if code == 0 else f"the verifier exited with status {code}" if code > 0 else \
        f"the verifier was killed by signal {-code}"
    also = f" ({exited})" if exited else ""
    text_file, json_file = verifier_dir / "reward.txt", verifier_dir / "reward.json"
    rewards: dict[str, float] | None = None
    try:
        if json_file.exists():
            rewards = _reward_json(json_file)
            if "reward" in rewards:
                return Verdict(_said(ran, exited or None, verdict=True), rewards["reward"], rewards)
            if len(rewards) == 1:
                return Verdict(_said(ran, exited or None, verdict=True), next(iter(rewards.values())), rewards)
            raise _Unreadable("reward.json has several numbers and no `reward`: write the one that decides as "
                              "`reward`")
        if text_file.exists():
            return Verdict(_said(ran, exited or None, verdict=True), _reward_txt(text_file))
    except _Unreadable as exc:
        return Verdict(_said(ran, f"no verdict: {exc}{also}"), 0.0, rewards)
    if needs_reward:
        return Verdict(_said(ran, f"no verdict: the verifier wrote neither reward.txt nor reward.json{also}"), 0.0)
    return Verdict(_said(ran, exited or None, verdict=True), 1.0 if code == 0 else 0.0)


class _Unreadable(Exception):
    pass


def _read(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            data = handle.read(REWARD_FILE_LIMIT + 1)
    except OSError as exc:
        raise _Unreadable(f"{path.name} cannot be read ({exc.strerror or exc})") from None
    if len(data) > REWARD_FILE_LIMIT:
        raise _Unreadable(f"{path.name} is over {REWARD_FILE_LIMIT} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _Unreadable(f"{path.name} is not UTF-8 text") from None


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Unreadable(f"{where} is not a number: {json.dumps(value)[:80]}")
    number = float(value)
    if not math.isfinite(number):
        raise _Unreadable(f"{where} is not a finite number: {number}")
    return number


def _reward_txt(path: Path) -> float:
    text = _read(path).strip()
    try:
        number = float(text)
    except ValueError:
        raise _Unreadable(f"reward.txt holds {text[:80]!r}, not a number") from None
    if not math.isfinite(number):
        raise _Unreadable(f"reward.txt holds {text[:80]!r}, not a finite number")
    return number


def _reward_json(path: Path) -> dict[str, float]:
    try:
        data = json.loads(_read(path))
    except ValueError as exc:
        raise _Unreadable(f"reward.json is not JSON ({exc})") from None
    if not isinstance(data, dict) or not data:
        raise _Unreadable('reward.json is not an object of named numbers ({"reward": 1.0} or {"tests": 0.5, ...})')
    return {str(name): _number(value, f"reward.json's {name!r}") for name, value in data.items()}


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


async def _collect(child: ChildProcess, kept: _Output, done: anyio.Event) -> None:
    try:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for line in child.lines():
                kept.add(b"[a line over 1 MiB left out]" if isinstance(line, MessageTooLargeError) else line)
    finally:
        done.set()


class _Output:
    """The verifier's output as it comes: the first `OUTPUT_LIMIT - _KEPT_END` bytes and the last `_KEPT_END`."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.end = bytearray()
        self.cut = 0

    def add(self, line: bytes) -> None:
        line += b"\n"
        room = OUTPUT_LIMIT - _KEPT_END - len(self.head)
        if room > 0:
            self.head += line[:room]
            line = line[room:]
        if line:
            self.end += line
            if len(self.end) > 2 * _KEPT_END:
                self.cut += len(self.end) - _KEPT_END
                del self.end[:-_KEPT_END]

    def text(self) -> str:
        end = bytes(self.end)
        if self.cut or len(end) > _KEPT_END:
            self.cut += max(0, len(end) - _KEPT_END)
            end = end[-_KEPT_END:]
        middle = f"\n[... {self.cut} bytes of output left out ...]\n".encode() if self.cut else b""
        return (bytes(self.head) + middle + end).decode("utf-8", "replace")


def _write_output(path: Path, text: str) -> str | None:
    """The output file (0600, never through a link), or None when it cannot be written (a full disk)."""
    try:
        make_private_dirs(path.parent)
        fd = open_run_file(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            view = memoryview(text.encode("utf-8", "replace"))
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    except (OSError, HarnessError):
        return None
    return str(path)


def output_path(runs_dir: Path, run_id: str) -> Path:
    """Where a cell's verifier output goes: beside its run's log, `<run_id>.verify.log`."""
    return runs_dir / f"{run_id}{VERIFY_LOG_SUFFIX}"
