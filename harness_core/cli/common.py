"""What every `harness` subcommand shares: the common options, an error as one ``harness: error: <message>`` line
and its exit status, logging for the command's duration, JSON output.

Layer: CLI start-up: click and the standard library only at the top (`harness --help` stays fast); knows the
library's errors only by the modules already loaded.
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import click

from harness_core.cli.render.layout import fit_parts, output_width

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "CHECK_RUNS_DIR_OPTION",
    "ENV_BACKEND",
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "JSON_OPTION",
    "RUNS_DIR_OPTION",
    "RUN_RUNS_DIR_OPTION",
    "dumps",
    "fail",
    "harness_command",
    "say",
    "spec_problems",
]

# = harness_core.errors.EXIT_FAILED / EXIT_USAGE / EXIT_INTERRUPTED: not imported here, that would pull in pydantic
# at start-up (tests/cli/test_logging.py checks they agree).
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
ENV_BACKEND = "HARNESS_ASYNC_BACKEND"
"""`asyncio` (the default) or `trio`: the event loop a command runs on."""

P = ParamSpec("P")
R = TypeVar("R")

_RUNS_DIR_HELP = ("Where run logs live (default: $HARNESS_RUNS_DIR, else `runs_dir` in .harness.toml or the user's "
                  "config.toml, else $XDG_STATE_HOME/harness/runs).")


def _configured_runs_dir(ctx: click.Context, param: click.Parameter, value: Path | None, *,
                         tolerant: bool = False) -> Path | None:
    """`--runs-dir` as given, else the parent command's (`harness runs --runs-dir D prune`), else the configured
    one (`$HARNESS_RUNS_DIR` > project > user), else None: the run store's default. A configuration that does
    not load stops the command, unless `tolerant` (the command reports it itself) or completing (nothing may
    print then): None."""
    if value is not None or param.name is None:
        return value
    parent = ctx.parent.params if ctx.parent is not None else {}
    if parent.get(param.name) is not None:
        return Path(parent[param.name])
    from harness_core.cli.config.loader import ConfigError, load_config

    quiet = tolerant or ctx.resilient_parsing
    try:
        configured = load_config(warn=(lambda _: None) if quiet else None)
    except ConfigError as exc:
        if quiet:
            return None
        fail(exc.message, exc.exit_status)
    found = configured.get("runs_dir")
    return found if isinstance(found, Path) else None


RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, callback=_configured_runs_dir,
    help=_RUNS_DIR_HELP,
)
"""`--runs-dir` of the commands that read runs (`runs`, `show`, `attach`, `cancel`, `approve`, `doctor`): the
configuration found from the current directory fills it in."""
CHECK_RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=_RUNS_DIR_HELP,
    callback=functools.partial(_configured_runs_dir, tolerant=True),
)
"""`--runs-dir` of `harness doctor`, which reports a configuration that does not load as one of its problems."""
RUN_RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None, help=_RUNS_DIR_HELP,
)
"""`--runs-dir` of `harness run` and `harness chat`, which apply the configuration found from their `--cwd`."""
JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def fail(message: str, status: int) -> NoReturn:
    """Print ``harness: error: MESSAGE`` to stderr and exit with `status`."""
    click.echo(f"harness: error: {message}", err=True)
    sys.exit(status)


def say(*parts: str) -> None:
    """One ``harness: `` notice on stderr, made of `parts`: on a terminal broken between them to fit its width
    (the lines after the first indented under the text), one line otherwise."""
    for line in fit_parts(["harness: " + parts[0], *parts[1:]], output_width(sys.stderr), indent=" " * 9):
        click.echo(line, err=True)


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


def _said(exc: BaseException) -> tuple[str, int] | None:
    """A `HarnessError` or an invalid spec as its one line and exit status, else None. Their classes are looked up
    where they are loaded (an instance means its module is), not imported: start-up stays light."""
    errors = sys.modules.get("harness_core.errors")
    if errors is not None and isinstance(exc, errors.HarnessError):
        return exc.message, exc.exit_status  # a HarnessError
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


def dumps(data: Any) -> str:
    """The `--json` output of the information commands: indented, non-JSON values as their `str`."""
    return json.dumps(data, indent=2, default=str)
