"""The `harness` command line (click): `harness_core.cli:main` is the console script; `python -m harness_core` (or
`python -m harness_core.cli`) the same command. The only place logging is configured (`stderr_log`).

Layer: CLI, the outermost. Knows the public run API, the plugin host and the run store; no concrete provider.
"""

# The map, top first (the floors: docs/import-rules.md, `CLI_FLOORS` in tests/architecture/test_core_floors.py).
# Each command group's `commands.py` holds its click definitions (click and the standard library at the top, so
# `harness --help` stays fast) and each command imports its body when it runs. No group imports another. Of the core,
# the CLI imports public modules and only the documented-internal `_run.signals`, `_logging` (`CLI_INTERNAL`).
#   run/ chat/ runs/ providers/ config/ batch/ trace/ view/   the command groups (run; chat; runs, show, attach,
#                      cancel, approve, undo, replay, export; providers, doctor, schema, scenarios, demo;
#                      config; batch, report; trace; view)
#   foreground/        a run or session driven in this terminal: live view, terminal approvals, --offline, trust
#   flags/             the options several commands share and their checks (spec, tools, scenario, -o, --runs-dir)
#   complete/          harness completion and the shell-completion callbacks
#   records/ settings/ recorded runs read back (details, reports, undo lines); the settings files and their layering
#   exits.py output.py event_loop.py   how a command ends; notices and --json text; the event loop
#   stderr_log.py render/              the one logging configuration; the live rendering (public: cli.render.Renderer)

from __future__ import annotations

import os
import signal

import click

from harness_core import __version__
from harness_core.agentcli.cache_switch import use_disk_cache
from harness_core.cli.batch import commands as batch_commands
from harness_core.cli.chat import commands as chat_commands
from harness_core.cli.complete import completion
from harness_core.cli.config import commands as config_commands
from harness_core.cli.exits import InterruptibleGroup
from harness_core.cli.flags.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.providers import commands as providers_commands
from harness_core.cli.run import commands as run_commands
from harness_core.cli.runs import commands as runs_commands
from harness_core.cli.trace import commands as trace_commands
from harness_core.cli.view import commands as view_commands

__all__ = ["OptionSyntaxError", "cli", "main", "parse_option_pairs"]


@click.group(cls=InterruptibleGroup,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, "--version", prog_name="harness")
def cli() -> None:
    """Run coding-agent CLIs behind one typed event stream.

    Start with `harness providers` to see what is installed, then `harness run "fix the failing test"`.
    """


for _command in (run_commands.run, chat_commands.chat, batch_commands.batch, batch_commands.report,
                 providers_commands.demo,
                 providers_commands.providers, providers_commands.scenarios, providers_commands.doctor,
                 runs_commands.runs, runs_commands.show, runs_commands.attach, runs_commands.cancel,
                 runs_commands.approve, runs_commands.undo, config_commands.config, providers_commands.schema,
                 runs_commands.replay, runs_commands.export, trace_commands.trace, view_commands.view,
                 completion):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (`harness`)."""
    use_disk_cache()  # each command is a short-lived process: keep CLI versions for the next one
    if os.environ.get("_HARNESS_COMPLETE"):  # a TAB in the shell: Ctrl-C while it loads ends it, no traceback
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    cli.main(args=argv, prog_name="harness")
