"""`--continue` of `run` and `chat`: the session to resume, found in the runs directory (the newest run played in
this directory that reported an agent session and was not played `--offline`).

Layer: CLI, loaded when a command runs; knows the run store's summaries, nothing of any provider.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import click

from harness_core import AgentRunSpec, SessionSpec
from harness_core.store import RunSummary, list_runs, resolve_runs_dir

__all__ = ["OFFLINE_MARK", "ContinuedSession", "continued_session", "offline_marked", "resolve_continue"]

SpecT = TypeVar("SpecT", AgentRunSpec, SessionSpec)

OFFLINE_MARK = "HARNESS_OFFLINE"  # = harness_core.offline._setup.OFFLINE_ENV (a literal: no import at start-up)
"""The environment variable an offline run's spec carries (its log keeps the name, scrubs the value): the run
played against the scripted backend, and its agent session is gone with the offline state (`--continue` skips
it)."""


@dataclass(frozen=True)
class ContinuedSession:
    """The session `--continue` continues: the agent's session id, its provider and the run that reported it."""

    session_id: str
    provider: str
    run_id: str


def continued_session(runs_dir: Path | None, cwd: Path | None, provider: str | None) -> ContinuedSession:
    """The newest run in the runs directory played in `cwd` (default: the current directory) that reported an
    agent session id — of `provider` when one is given, else of any provider — and was not played `--offline`:
    what `--continue` resumes, with that run's provider.

    Raises:
        click.UsageError: no such run (start one with `harness run`, or pass --resume).
    """
    here = os.path.realpath(cwd if cwd is not None else Path.cwd())
    directory = resolve_runs_dir(runs_dir)
    found = next((s for s in list_runs(directory) if _continues(s, here, provider)), None)
    if found is None or found.started is None or found.provider_session is None:
        kind, flag = (f"{provider!r} ", f" -p {provider}") if provider is not None else ("", "")
        raise click.UsageError(f"--continue: no {kind}run in {directory} played in {here} reported a session to "
                               f"continue; start one with `harness run{flag} PROMPT` (or `harness chat{flag}`), or "
                               "pass --resume SESSION_ID")
    return ContinuedSession(session_id=found.provider_session, provider=found.started.provider, run_id=found.run_id)


def resolve_continue(continue_last: bool, resume_session: str | None, provider: str | None, *, offline: bool,
                     runs_dir: Path | None, cwd: Path | None, what: str) -> tuple[str | None, str | None]:
    """`--continue` for `harness run` / `harness chat` (`what`: "run" or "chat"): the session to resume and its
    provider (said on stderr), or `resume_session` and `provider` as given without `--continue`.

    Raises:
        click.UsageError: with `--resume` or `--offline`, or no earlier session in this directory.
    """
    if not continue_last:
        return resume_session, provider
    if resume_session is not None:
        raise click.UsageError("--continue and --resume both say which session to continue: give one")
    if offline:
        raise click.UsageError(f"--continue is for online {what}s: an offline {what}'s agent state is temporary, "
                               "so its sessions cannot be continued")
    last = continued_session(runs_dir, cwd, provider)
    click.echo(f"harness: continuing session {last.session_id} ({last.provider}, run {last.run_id})", err=True)
    return last.session_id, last.provider


def offline_marked(spec: SpecT) -> SpecT:
    """`spec` with `OFFLINE_MARK` in its environment: what `--offline` plays is marked so in its run log."""
    return spec.model_copy(update={"env": {**spec.env, OFFLINE_MARK: "1"}})


def _continues(summary: RunSummary, here: str, provider: str | None) -> bool:
    """Whether `--continue` (with `--provider provider`, if given) may continue the run `summary` in `here`: not
    a run played `--offline` (its agent session went with the offline state)."""
    started = summary.started
    if started is None or not summary.provider_session or provider not in (None, started.provider):
        return False
    env = started.spec.get("env")
    if isinstance(env, dict) and OFFLINE_MARK in env:
        return False
    cwd = started.spec.get("cwd")
    return isinstance(cwd, str) and os.path.realpath(cwd) == here
