"""The `harness` command line (click): `harness_core.cli:main` is the console script, `python -m harness_core`
(or `python -m harness_core.cli`) the same command.

Layer: CLI — the outermost layer, and the only place logging is configured (`_logs`: a stderr handler on the
`harness` logger while a command runs). Knows the public run API, the plugin host, the run store and
`harness_core.offline`; knows no concrete provider (it names only the default one, `plugins.DEFAULT_PROVIDER`).

One module per command group, each importing only click at the top, so `harness --help` stays fast (well under
0.4 s: `benchmarks/startup.py`); pydantic models, anyio, the runner and plugins are imported inside commands:

- `_run` (`harness run`) with `_options` (`-o KEY=VALUE`), `_spec_flags` (the budget, effort and output-schema
  flags; `--continue`), `_live` (driving the run, Ctrl-C, exit status), `_approve` (approvals asked on the
  terminal) and `_offline` (`--offline`: the workspace and scripted backend); `--background` starts
  `harness_core.jobs.worker`;
- `_chat` (`harness chat`) with `_conversation` (one session, a turn per prompt, `/` commands, Ctrl-C);
- `_batch` (`harness batch`: many tasks through `harness_core.batch`) with its progress display in `_batch_view`;
- `_answer` (`approve`: answering a background run's approvals; the questions `attach` asks for them);
- `_info` (`providers`, `doctor`, `schema`) with the typed reports in `_providers`;
- `_runs` (`runs`, `runs prune`, `show`) with the typed reports in `_history`; `_attach` (`attach`: follow a
  run's log live);
  `_cancel` (`cancel`: interrupt a run through the `harness` process that drives it);
- `_configcmd` (`config`: the effective settings and their sources; laying them under `run`'s and `chat`'s
  flags) with the loader in `_config` (the user's config.toml and a project's .harness.toml, checked);
- `_replay` (`replay`: a wire log played back through its provider);
- `_undo` (`undo`: a run's file changes put back; chat's `/undo` says its lines);
- `_demo` (`demo`) with the player in `_play`;
- `_view` (`view`: the web viewer, its own distribution `harness-view`, imported when the command runs);
- `render` (public: the live view of a run's events), with `_format` (text) and `_terminal` (colour, marks).

Exit statuses (constants in `harness_core.errors`): 0 success; 1 the run failed; 2 usage or spec error;
3 provider unavailable (CLI missing or too old); 130 interrupted. Errors raised before a run starts print one
line, ``harness: error: <message>``, to stderr.
"""

from __future__ import annotations

import os
import signal

import click

from harness_core._version import __version__
from harness_core.cli import complete as _complete, view as _view
from harness_core.cli.batch import invocation as _batch
from harness_core.cli.chat import invocation as _chat
from harness_core.cli.config import settings as _config
from harness_core.cli.providers import demo as _demo, info as _info, scenarios as _scenarios
from harness_core.cli.run import invocation as _run
from harness_core.cli.run.option_pairs import OptionSyntaxError, parse_option_pairs
from harness_core.cli.runs import (
    approve as _approve,
    attach as _attach,
    cancel as _cancel,
    listing as _listing,
    replay as _replay,
    undo as _undo,
)

__all__ = ["OptionSyntaxError", "cli", "main", "parse_option_pairs"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, "--version", prog_name="harness")
def cli() -> None:
    """Run coding-agent CLIs behind one typed event stream.

    Start with `harness providers` to see what is installed, then `harness run "fix the failing test"`.
    """


for _command in (_run.run, _chat.chat, _batch.batch, _demo.demo, _info.providers, _scenarios.scenarios, _info.doctor,
                 _listing.runs, _listing.show, _attach.attach, _cancel.cancel, _approve.approve, _undo.undo,
                 _config.config, _info.schema, _replay.replay, _view.view, _complete.completion):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point (`harness`)."""
    from harness_core._probe_cache import use_disk_cache  # light: `--help` imports nothing heavy (startup.py)

    use_disk_cache()  # each command is a short-lived process: keep CLI versions for the next one
    if os.environ.get("_HARNESS_COMPLETE"):  # a TAB in the shell: Ctrl-C while it loads ends it, no traceback
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    cli.main(args=argv, prog_name="harness")
