"""The spec flags `harness run` and `harness chat` share — `--effort`, `--max-turns`, `--max-cost-usd`,
`--max-output-tokens`, `--output-schema FILE` — and `--continue`: finding the last session played in a directory.

Layer: CLI, imported at start-up: click and the standard library at the top; the run store and `jsonschema` are
imported only when a flag needs them. Knows the spec's field names and the run store's summaries; nothing of any
provider (whether one can honour a flag is the runner's check, as for every spec field).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from click.shell_completion import CompletionItem

from harness_core.cli.numbers import Number

if TYPE_CHECKING:
    from harness_core import AgentRunSpec, SessionSpec
    from harness_core.store import RunSummary

__all__ = ["OFFLINE_MARK", "ContinuedSession", "SchemaFile", "continued_session", "offline_marked", "resolve_continue",
           "spec_flag_options"]

F = TypeVar("F", bound=Callable[..., Any])
SpecT = TypeVar("SpecT", "AgentRunSpec", "SessionSpec")

CWD_OPTION = click.option(
    "--cwd", "-C", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
    help="Working directory of the agent (default: the current directory); .harness.toml is looked for from here up.")
SANDBOX_OPTION = click.option(
    "--sandbox", "-s", type=click.Choice(["read-only", "workspace-write", "danger-full-access"]),
    default="workspace-write",
    help="How much the agent may change (default: the configured `sandbox`, else workspace-write).")


def approval_option(more: str = "") -> Callable[[F], F]:
    """`--approval/-a` of `run` and `chat` (`more`: what the command adds to its help)."""
    return click.option("--approval", "-a", type=click.Choice(["never", "on-request", "untrusted"]), default="never",
                        help="When the agent must ask before acting, asked on the terminal (default: the configured "
                             f"`approval`, else never{more}).")


def resume_options(func: F) -> F:
    """`--resume SESSION_ID` and `--continue/-c` of `run` and `chat` (resolved by `resolve_continue`)."""
    from harness_core.cli.complete import complete_session_id

    func = click.option("--continue", "-c", "continue_last", is_flag=True,
                        help="Continue the last session played in this directory (--cwd, else the current one), "
                             "with its provider (with --provider: the last session of that provider).")(func)
    return click.option("--resume", "resume_session", metavar="SESSION_ID", shell_complete=complete_session_id,
                        help="Continue a provider session.")(func)


OFFLINE_MARK = "HARNESS_OFFLINE"  # = harness_core.offline._setup.OFFLINE_ENV (a literal: no import at start-up)
"""The environment variable an offline run's spec carries (its log keeps the name, scrubs the value): the run
played against the scripted backend, and its agent session is gone with the offline state (`--continue` skips
it)."""

_FIELDS = ("effort", "max_turns", "max_cost_usd", "max_output_tokens", "output_schema")


SCHEMA_LIMIT = 16 << 20
"""`--output-schema` reads at most this many bytes (a schema is kilobytes; /dev/zero never ends)."""


class SchemaFile(click.ParamType):  # type: ignore[type-arg]
    """`--output-schema FILE`: a file holding a JSON Schema, read and checked against its meta-schema."""

    name = "file"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The shell's own file names."""
        return [CompletionItem(incomplete, type="file")]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> dict[str, Any]:
        if isinstance(value, dict):
            return value
        from harness_core._inputfile import InputFileError, parse_json, read_input

        path = Path(value)
        try:
            text = read_input(path, what="the output schema", limit=SCHEMA_LIMIT).decode("utf-8")
            schema = parse_json(text, what=repr(str(path)))
        except UnicodeDecodeError as exc:
            self.fail(f"{str(path)!r} is not UTF-8 text ({exc.reason}); the file must hold one JSON Schema object",
                      param, ctx)
        except InputFileError as exc:
            self.fail(f"{exc.message}; the file must hold one JSON Schema object", param, ctx)
        if not isinstance(schema, dict):
            self.fail(f"{str(path)!r} holds a JSON {type(schema).__name__}, not a JSON Schema object "
                      '(e.g. {"type": "object", "properties": {...}})', param, ctx)
        from harness_core.spec import schema_problem

        problem = schema_problem(schema)
        if problem is not None:
            self.fail(f"{str(path)!r} is not a valid JSON Schema: {problem}", param, ctx)
        return schema


_OPTIONS = (
    click.option("--effort", metavar="LEVEL", default=None,
                 help="Reasoning effort, as the provider's model names it (e.g. low, medium, high)."),
    click.option("--max-turns", type=Number(low=1, high=1_000_000), metavar="N", default=None,
                 help="At most N agent steps (providers with the max_turns capability)."),
    click.option("--max-cost-usd", type=Number(real=True, low=0, low_open=True, high=1_000_000, unit="USD"),
                 metavar="USD", default=None,
                 help="Stop (failed, budget_exceeded) once it cost more than USD (providers that report cost); "
                      "in a chat, over all its turns."),
    click.option("--max-output-tokens", type=Number(low=1, high=100_000_000), metavar="N", default=None,
                 help="Stop (failed, budget_exceeded) once the model wrote more than N tokens; in a chat, over "
                      "all its turns."),
    click.option("--output-schema", type=SchemaFile(), metavar="FILE", default=None,
                 help="A JSON Schema file the final answer must be valid against; the parsed value is printed "
                      "as the answer (with --json: the `done` event's result.structured_output)."),
)


def spec_flag_options(func: F) -> F:
    """Add the shared spec flags to a click command; the command receives them as one `spec_fields` dict holding
    only the flags given (ready for `AgentRunSpec(**fields)`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _FIELDS}
        return func(*args, spec_fields={k: v for k, v in given.items() if v is not None}, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]


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
    from harness_core.store import list_runs, resolve_runs_dir

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
