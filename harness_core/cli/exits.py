"""How a command ends: a command body's errors (`harness_command`) as one ``harness: error: <message>`` line
and its exit status (`fail`), a closed stdout as SIGPIPE's status, logging to stderr for the command's duration.

Layer: CLI start-up: click and the standard library only at the top (`harness --help` stays fast); knows the
library's errors only by the modules already loaded.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click

from harness_core.cli.flag_words import in_flags

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "InterruptibleGroup", "fail", "harness_command",
           "spec_problems"]


# = harness_core.errors.EXIT_FAILED / EXIT_USAGE / EXIT_INTERRUPTED: not imported here, that would pull in pydantic
# at start-up (tests/cli/test_logging.py checks they agree).
EXIT_FAILED = 1


EXIT_USAGE = 2


EXIT_INTERRUPTED = 130


P = ParamSpec("P")


R = TypeVar("R")


def fail(message: str, status: int) -> NoReturn:
    """Print ``harness: error: MESSAGE`` to stderr and exit with `status`."""
    click.echo(f"harness: error: {message}", err=True)
    sys.exit(status)


def spec_problems(exc: ValidationError) -> str:
    """A spec's validation errors as one readable line: ``invalid run: prompt: the prompt is empty``."""
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "spec"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "invalid run: " + "; ".join(parts)


def harness_command(func: Callable[P, R]) -> Callable[P, R]:
    """The body of a subcommand: `harness.*` warnings go to stderr while it runs; a `HarnessError`, an invalid
    spec or Ctrl-C before a run starts becomes one stderr line and its exit status."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        from harness_core.cli.stderr_log import log_to_stderr

        click.get_current_context().with_resource(log_to_stderr())
        try:
            return func(*args, **kwargs)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)
        except BaseException as exc:
            said = _said(exc)
            if said is not None:
                fail(*said)
            if not _broken_pipe(exc):
                raise
            _quiet_exit()  # `harness … | head`: the reader left; as other commands do, no traceback

    return wrapper


class InterruptibleGroup(click.Group):
    """A click group on which Ctrl-C while the command line is parsed (an option's callback loading a module) ends
    as in a command's body, ``harness: error: interrupted`` and 130, not click's ``Aborted!`` and 1."""

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)  # parses the subcommand's arguments, then runs it
        except KeyboardInterrupt:
            fail("interrupted", EXIT_INTERRUPTED)


def _said(exc: BaseException) -> tuple[str, int] | None:
    """A `HarnessError` (in the flags' words: `in_flags`) or an invalid spec as its one line and exit status, else
    None. Their classes are looked up where they are loaded (an instance means its module is), not imported:
    start-up stays light."""
    errors = sys.modules.get("harness_core.errors")
    if errors is not None and isinstance(exc, errors.HarnessError):
        return (exc.message if exc.names_fields else in_flags(exc.message)), exc.exit_status  # a HarnessError
    pydantic_core = sys.modules.get("pydantic_core")
    if pydantic_core is not None and isinstance(exc, pydantic_core.ValidationError):
        return spec_problems(exc), EXIT_USAGE  # a pydantic ValidationError
    return None


def _broken_pipe(exc: BaseException) -> bool:
    """Whether `exc` is stdout closed by its reader (alone, or every leaf of an exception group)."""
    if isinstance(exc, BrokenPipeError):
        return True
    leaves = getattr(exc, "exceptions", None)
    return isinstance(leaves, tuple) and bool(leaves) and all(_broken_pipe(e) for e in leaves)


def _quiet_exit() -> NoReturn:
    """Leave with SIGPIPE's status (141, as a shell reports a writer killed by it) and nothing more on the
    closed pipe: Python would try to flush stdout again at exit and complain."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    sys.exit(141)
