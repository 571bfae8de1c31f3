"""The runs list: a row per run log of the runs directory, never a link or a FIFO (status, provider, model, age,
duration, tokens, cost, prompt), chosen by filters (status, provider, session, batch, words of the prompt), and
the choices for them.

Reads run summaries through `harness_core.store`; knows nothing of HTTP or HTML.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from harness_core.store import RunSummary, list_runs

__all__ = ["LIMIT", "Filters", "RunRow", "Snapshot", "rows", "runs_signature", "turn_number"]


@dataclass(frozen=True)
class Filters:
    """What the list shows: empty fields choose everything. `q` is words the prompt must all hold (in any order);
    `batch` is a set of run ids (a batch's runs)."""

    status: str = ""
    provider: str = ""
    session: str = ""
    q: str = ""
    batch: frozenset[str] | None = None

    def keep(self, run: RunSummary) -> bool:
        provider = run.started.provider if run.started is not None else ""
        return ((not self.status or run.status == self.status)
                and (not self.provider or provider == self.provider)
                and (not self.session or in_session(run, self.session))
                and (self.batch is None or run.run_id in self.batch)
                and (not self.q or _has_words(prompt_of(run), self.q)))


def turn_number(turn: int | None) -> int | None:
    """A turn's index in its session (from 0, as the log has it) counted from 1, as the CLI says it (`[turn 2]`,
    `turn 2 of session …`) and as every page shows it; None outside a session."""
    return turn + 1 if turn is not None else None


@dataclass(frozen=True)
class RunRow:
    """One line of the runs list."""

    run_id: str
    status: str
    provider: str
    model: str | None
    started: float | None
    duration_ms: int | None
    input_tokens: int | None
    output_tokens: int | None
    cost_usd: float | None
    prompt: str
    session: str | None
    turn: int | None
    """Its index among its session's turns, from 0 (as the log has it)."""

    @property
    def turn_number(self) -> int | None:
        return turn_number(self.turn)

    @classmethod
    def of(cls, run: RunSummary) -> RunRow:
        result = run.done.result if run.done is not None else None
        usage = result.usage if result is not None else None
        return cls(run.run_id, run.status, run.started.provider if run.started is not None else "", run.model,
                   run.started.ts if run.started is not None else None,
                   result.duration_ms if result is not None else None,
                   usage.input_tokens if usage is not None else None,
                   usage.output_tokens if usage is not None else None,
                   usage.cost_usd if usage is not None else None,
                   prompt_of(run), run.session, run.turn)


@dataclass(frozen=True)
class Snapshot:
    """The list as shown, and the values its filters can take."""

    rows: list[RunRow]
    matched: int
    """Runs the filters keep (`rows` holds the newest of them, up to the limit)."""
    total: int
    statuses: list[str]
    providers: list[str]
    sessions: list[str]
    agent_sessions: dict[str, str] = field(default_factory=dict)
    """A Harness session → the agent's own session id (the one `harness chat` prints), when its log has it."""


def prompt_of(run: RunSummary) -> str:
    prompt = run.started.spec.get("prompt") if run.started is not None else None
    return prompt if isinstance(prompt, str) else ""


def _has_words(prompt: str, q: str) -> bool:
    """Whether `prompt` holds every word of `q`, in any order and any case (each as a part of the prompt's text),
    however each spells its accents (NFC: a prompt pasted decomposed matches a composed query)."""
    text = unicodedata.normalize("NFC", prompt).casefold()
    return all(word in text for word in unicodedata.normalize("NFC", q).casefold().split())


def in_session(run: RunSummary, session: str) -> bool:
    """Whether `run` is a turn of the Harness session `session`, or played the agent's session `session`."""
    return session in (run.session, run.provider_session)


LIMIT = 200
"""Rows a list shows unless asked for all (a page of thousands of runs is slow to build and to read)."""


def rows(runs_dir: Path, filters: Filters, *, runs: Iterable[RunSummary] | None = None,
         limit: int | None = LIMIT) -> Snapshot:
    """The runs of `runs_dir` (newest first) that `filters` keep, at most `limit` (None: all)."""
    every = list(runs) if runs is not None else [r for r in list_runs(runs_dir) if _regular(r.path)]
    matched = [run for run in every if filters.keep(run)]
    kept = [RunRow.of(run) for run in (matched if limit is None else matched[:limit])]
    providers = sorted({run.started.provider for run in every if run.started is not None})
    sessions = sorted({run.session for run in every if run.session is not None})
    agents = {run.session: run.provider_session for run in reversed(every)
              if run.session is not None and run.provider_session}
    return Snapshot(kept, len(matched), len(every), sorted({run.status for run in every}), providers, sessions,
                    agents)


def _regular(path: Path) -> bool:
    """A regular file, not a link (a FIFO named like a log would block whoever opens it)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def runs_signature(runs_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """A cheap fingerprint of the run logs (name, size, mtime): it changes when a run starts, writes or ends."""
    found: list[tuple[str, int, int]] = []
    try:
        with os.scandir(runs_dir) as entries:
            for entry in entries:
                if entry.name.endswith(".jsonl") and not entry.name.endswith(".wire.jsonl"):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    if not stat.S_ISREG(st.st_mode):  # a link, a FIFO is never a run's log: not listed, not read
                        continue
                    found.append((entry.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return ()
    return tuple(sorted(found))
