"""Approval answers for runs nobody's terminal is driving: `<run_id>.answers`, and the approver that reads it.

Layer: core runtime (the run store's approval channel). Knows the run store's directory layout, the approval
events and the `Approver` callback type; knows nothing of providers, the CLI or how an answer was typed.
The file's lines and who writes them: docs/jobs-and-batches.md (approvals).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

import anyio

from harness_core.events import ApprovalDecision, ApprovalRequested
from harness_core.store import ANSWERS_SUFFIX, open_run_file

__all__ = ["AnswersFile", "answers_path"]

_POLL = 0.1
_LIMIT = 16 << 20


def answers_path(runs_dir: Path, run_id: str) -> Path:
    """Where the answers to run `run_id`'s approval requests go."""
    return runs_dir / f"{run_id}{ANSWERS_SUFFIX}"


class AnswersFile:
    """The answers file of one run: `answer` appends a decision, `wait_for` waits for one."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def create(self) -> bool:
        """Create the file empty (0600): from then on the run takes its approvals from here. False when it was
        there already (left by an earlier run of the same id)."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            return False
        os.close(fd)
        return True

    def clear(self) -> None:
        """Empty the file (answers left by an earlier run of the same id must not answer this one's requests).

        Raises:
            UnsafeRunsDirError: the file is a link, or another user's, or others may write it.
        """
        with contextlib.suppress(FileNotFoundError):
            fd = open_run_file(self.path, os.O_WRONLY)
            try:
                os.ftruncate(fd, 0)
            finally:
                os.close(fd)

    def answer(self, request_id: str, decision: ApprovalDecision, *, by: str) -> None:
        """Append one answer (created 0600 on first use).

        Raises:
            OSError: the file cannot be written.
            UnsafeRunsDirError: the file is a link, or another user's, or others may write it.
        """
        line = json.dumps({"request_id": request_id, "decision": decision.value, "by": by,
                           "ts": round(time.time(), 3)}) + "\n"
        fd = open_run_file(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            os.write(fd, line.encode())  # one write of a short line: atomic with O_APPEND
        finally:
            os.close(fd)

    def decisions(self) -> dict[str, tuple[ApprovalDecision, str]]:
        """The first answer to each request: request id → (decision, who answered). Unreadable lines are
        skipped (a torn last line is read again once whole).

        Raises:
            UnsafeRunsDirError: the file is a link, or another user's, or others may write it (its answers are
                not taken: the approver that asked denies the request).
        """
        found: dict[str, tuple[ApprovalDecision, str]] = {}
        try:
            fd = open_run_file(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return found
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(_LIMIT)  # answers are short lines: what is past this is not read
        for raw in data.split(b"\n"):
            try:
                record = json.loads(raw)
                request_id, decision = str(record["request_id"]), ApprovalDecision(record["decision"])
            except (ValueError, KeyError, TypeError):
                continue
            found.setdefault(request_id, (decision, str(record.get("by") or "answer")))
        return found

    async def wait_for(self, request: ApprovalRequested, *,
                       poll: float = _POLL) -> tuple[ApprovalDecision, str]:
        """The answer to `request` and who gave it, however long it takes (the run's idle clock is paused
        meanwhile; cancelling the run ends the wait, and the runner settles the request `abort`)."""
        seen = -1
        while True:
            size = _size(self.path)
            if size != seen:
                seen = size
                answer = self.decisions().get(request.request_id)
                if answer is not None:
                    return answer  # (decision, who answered)
            await anyio.sleep(poll)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1
