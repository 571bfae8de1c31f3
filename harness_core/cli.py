"""The `harness` command line (click). The only place logging is configured (structlog, to stderr).

Layer: CLI. Knows the public runner API, the plugin host and the run store; knows nothing of any concrete
provider. Start-up must stay fast (`harness --help` well under 0.4 s): this module imports only click at the
top; pydantic models, anyio, the runner and plugins are imported inside the commands (`cli_run`, `cli_info`).

Exit statuses (constants in `harness_core.errors`): 0 success; 1 the run failed; 2 usage or spec error;
3 provider unavailable (CLI missing or too old); 130 interrupted. Errors raised before a run starts print one
line, ``harness: error: <message>``, to stderr.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from harness_core import __version__

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["cli", "main"]

_EXIT_USAGE = 2  # = harness_core.errors.EXIT_USAGE (not imported here: it would pull in pydantic)
_EXIT_INTERRUPTED = 130
_ENV_BACKEND = "HARNESS_ASYNC_BACKEND"

F = TypeVar("F", bound=Callable[..., Any])

_RUNS_DIR_OPTION = click.option(
    "--runs-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    help="Where run logs live (default: $HARNESS_RUNS_DIR, else $XDG_STATE_HOME/harness/runs).",
)
_JSON_OPTION = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")


def _fail(message: str, status: int) -> None:
    click.echo(f"harness: error: {message}", err=True)
    sys.exit(status)


def _spec_problems(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "spec"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    return "invalid run: " + "; ".join(parts)


def _handle_errors(func: F) -> F:
    """Turn `HarnessError`, spec errors and Ctrl-C before a run into one stderr line and a status."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from pydantic import ValidationError

        from harness_core.errors import HarnessError

        try:
            return func(*args, **kwargs)
        except HarnessError as exc:
            _fail(exc.message, exc.exit_status)
        except ValidationError as exc:
            _fail(_spec_problems(exc), _EXIT_USAGE)
        except KeyboardInterrupt:
            _fail("interrupted", _EXIT_INTERRUPTED)

    return wrapper  # type: ignore[return-value]


def configure_logging(verbosity: int) -> None:
    """structlog (and stdlib logging) to stderr: WARNING by default, INFO with -v, DEBUG with -vv."""
    import logging

    import structlog

    level = logging.DEBUG if verbosity >= 2 else logging.INFO if verbosity == 1 else logging.WARNING
    logging.basicConfig(level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="%H:%M:%S", utc=False),
            structlog.processors.format_exc_info,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )


def _run_async(func: Callable[..., Any], *args: Any) -> Any:
    import anyio

    return anyio.run(func, *args, backend=os.environ.get(_ENV_BACKEND, "asyncio"))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, "--version", prog_name="harness")
def cli() -> None:
    """Run coding-agent CLIs (Codex, Claude Code, ...) behind one typed event stream.

    Start with `harness providers` to see what is installed, then `harness run "fix the failing test"`.
    """


# --- run ------------------------------------------------------------------------------------------------

@cli.command()
@click.argument("prompt", required=False)
@click.option("--provider", "-p", metavar="NAME", help="Provider to use (default: $HARNESS_PROVIDER or "
              "codex-appserver; see `harness providers`).")
@click.option("--model", "-m", metavar="M", help="Model name (default: the provider's).")
@click.option("--cwd", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Working directory of the agent (default: the current directory).")
@click.option("--system-prompt", metavar="TEXT", help="Extra instructions for the agent.")
@click.option("--sandbox", type=click.Choice(["read-only", "workspace-write", "danger-full-access"]),
              default="workspace-write", show_default=True, help="How much the agent may change.")
@click.option("--approval", type=click.Choice(["never", "on-request", "untrusted"]), default="never",
              show_default=True, help="When the agent must ask before acting (asked on the terminal).")
@click.option("--resume", "resume_session", metavar="SESSION_ID", help="Continue a provider session.")
@click.option("--require", "requires", multiple=True, metavar="CAPABILITY",
              type=click.Choice(["streaming", "session", "interrupt", "approvals"]),
              help="A capability the run cannot do without (repeatable).")
@click.option("-o", "--option", "options", multiple=True, metavar="KEY=VALUE",
              help="Provider option (repeatable; dotted keys nest, a repeated key makes a list).")
@click.option("--idle-timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Fail the run after this long without any event.")
@_RUNS_DIR_OPTION
@click.option("--record-wire", is_flag=True, help="Also log every line to and from the agent CLI.")
@click.option("--offline", is_flag=True,
              help="Run the real agent CLI against the embedded scripted model backend on 127.0.0.1 "
                   "(no credentials, no network); the model plays --scenario instead of reading PROMPT.")
@click.option("--scenario", default="tools", show_default=True, metavar="NAME",
              help="With --offline: what the scripted model does (say, tools, think, fail_500, ...).")
@click.option("--json", "as_json", is_flag=True, help="Print the run's events as JSON lines (as in its log).")
@click.option("-v", "--verbose", count=True, help="-v: show output summaries and usage; -vv: debug logging.")
@_handle_errors
def run(prompt: str | None, provider: str | None, model: str | None, cwd: Path | None,
        system_prompt: str | None, sandbox: str, approval: str, resume_session: str | None,
        requires: tuple[str, ...], options: tuple[str, ...], idle_timeout: float | None,
        runs_dir: Path | None, record_wire: bool, offline: bool, scenario: str, as_json: bool,
        verbose: int) -> None:
    """Run one agent turn on PROMPT (`-` reads it from stdin) and show it live.

    Exit status: 0 success, 1 the run failed, 2 usage error, 3 provider unavailable, 130 interrupted.
    """
    configure_logging(2 if verbose >= 2 else 0)  # -v is for the rendering; -vv adds debug logs
    from harness_core.cli_run import OptionSyntaxError, RunRequest, execute, parse_option_pairs
    from harness_core.spec import AgentRunSpec

    if prompt is None and offline:
        prompt = f"(offline scenario {scenario!r})"
    if prompt is None:
        raise click.UsageError("missing PROMPT: pass the task as an argument, or `-` to read it from stdin")
    if prompt == "-":
        prompt = sys.stdin.read()
    try:
        provider_options = parse_option_pairs(options)
    except OptionSyntaxError as exc:
        raise click.BadParameter(str(exc), param_hint="-o/--option") from None
    fields: dict[str, Any] = {
        "prompt": prompt, "system_prompt": system_prompt, "model": model, "sandbox": sandbox,
        "approval": approval, "resume_session": resume_session, "requires": frozenset(requires),
        "idle_timeout": idle_timeout, "provider_options": provider_options,
    }
    if offline and cwd is None:
        import tempfile

        cwd = Path(tempfile.mkdtemp(prefix="harness-offline-ws-"))
        click.echo(f"harness: offline workspace {cwd}", err=True)
    if cwd is not None:
        fields["cwd"] = cwd
    spec = AgentRunSpec(**fields)
    interactive = approval != "never" and sys.stdin.isatty() and sys.stderr.isatty()
    if not offline:
        request = RunRequest(spec=spec, provider=provider, runs_dir=runs_dir, record_wire=record_wire,
                             json=as_json, verbose=verbose, interactive=interactive, environ=dict(os.environ))
        sys.exit(_run_async(execute, request, sys.stdout))
    from harness_core.offline import offline_spec, scenario_named, seed_workspace
    from harness_core.plugins import get_host

    played = scenario_named(scenario)
    created = seed_workspace(played, spec.cwd)
    if created:
        click.echo(f"harness: created {', '.join(created)} in {spec.cwd} for scenario {scenario!r}", err=True)
    with offline_spec(spec, provider, get_host(), played) as offline_run:
        request = RunRequest(spec=offline_run, provider=provider, runs_dir=runs_dir, record_wire=record_wire,
                             json=as_json, verbose=verbose, interactive=interactive, environ=dict(os.environ))
        status = _run_async(execute, request, sys.stdout)
    sys.exit(status)


@cli.command()
@click.option("--provider", "-p", "providers", multiple=True, metavar="NAME",
              help="Only these providers (repeatable; default: every installed provider that can run offline).")
@click.option("--scenario", default="tools", show_default=True, metavar="NAME", help="What the scripted model does.")
@_RUNS_DIR_OPTION
@_JSON_OPTION
@_handle_errors
def demo(providers: tuple[str, ...], scenario: str, runs_dir: Path | None, as_json: bool) -> None:
    """Play a short task through every installed provider's real CLI, offline, and compare them side by side.

    Each provider runs against the embedded scripted model backend on 127.0.0.1 (no credentials, no network)
    in its own temporary workspace; the runs are logged as usual (`harness show RUN_ID`).
    """
    configure_logging(0)
    from harness_core.demo import format_summary, play_all
    from harness_core.plugins import get_host

    rows = _run_async(play_all, get_host(), list(providers), scenario, runs_dir, sys.stdout, as_json)
    click.echo(_dumps(rows) if as_json else format_summary(rows))
    sys.exit(0 if rows and all(r["status"] == "success" for r in rows) else 1)


# --- information ------------------------------------------------------------------------------------------

@cli.command()
@_JSON_OPTION
@_handle_errors
def providers(as_json: bool) -> None:
    """List installed providers: version, capabilities, whether their CLI is available (and why not)."""
    configure_logging(0)
    from harness_core.cli_info import format_providers, provider_report
    from harness_core.plugins import get_host

    report = _run_async(provider_report, get_host())
    click.echo(_dumps(report) if as_json else format_providers(report))


@cli.command()
@_RUNS_DIR_OPTION
@_JSON_OPTION
@_handle_errors
def doctor(runs_dir: Path | None, as_json: bool) -> None:
    """Check each provider's CLI (path, version, minimum), broken plugins, the runs dir; exit 1 on trouble."""
    configure_logging(0)
    from harness_core.cli_info import doctor_report, format_doctor
    from harness_core.plugins import get_host
    from harness_core.store import resolve_runs_dir

    report = _run_async(doctor_report, get_host(), resolve_runs_dir(runs_dir))
    click.echo(_dumps(report) if as_json else format_doctor(report))
    sys.exit(0 if report["ok"] else 1)


@cli.command()
@_RUNS_DIR_OPTION
@_JSON_OPTION
@_handle_errors
def runs(runs_dir: Path | None, as_json: bool) -> None:
    """List past and running runs, newest first."""
    from harness_core.cli_info import format_runs, runs_report
    from harness_core.store import resolve_runs_dir

    directory = resolve_runs_dir(runs_dir)
    found = runs_report(directory)
    click.echo(_dumps(found) if as_json else format_runs(found, directory))


@cli.command()
@click.argument("run_id")
@_RUNS_DIR_OPTION
@_JSON_OPTION
@_handle_errors
def show(run_id: str, runs_dir: Path | None, as_json: bool) -> None:
    """Show one run: provider, model, status, duration, usage, tool actions, final text, error."""
    from harness_core.cli_info import format_show, run_details
    from harness_core.store import resolve_runs_dir

    details = run_details(resolve_runs_dir(runs_dir), run_id)
    click.echo(_dumps(details) if as_json else format_show(details))


@cli.command()
@click.argument("what", type=click.Choice(["spec", "events", "result"]), default="events")
def schema(what: str) -> None:
    """Print the JSON Schema of a run spec, of one run-log line (events, the default) or of a result."""
    from harness_core.cli_info import schema_for

    click.echo(schema_for(what))


def _dumps(data: Any) -> str:
    import json

    return json.dumps(data, indent=2, default=str)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (`harness`)."""
    cli.main(args=argv, prog_name="harness")


if __name__ == "__main__":
    main()
