"""Shell completion: the `harness completion` command, and the `shell_complete=` callbacks of the commands' options.

Layer: CLI start-up (click only at the top); each callback imports `candidates` (the plugin host, the run store)
when a completion is asked for, and anything that goes wrong completes nothing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path

import click
from click.shell_completion import CompletionItem, get_completion_class

__all__ = [
    "SHELLS",
    "complete_option_key",
    "complete_provider",
    "complete_run_id",
    "complete_scenario",
    "complete_session_id",
    "complete_wire_file",
    "completion",
    "completion_script",
]

SHELLS = ("bash", "zsh", "fish")
_Completer = Callable[[click.Context, click.Parameter, str], list[CompletionItem]]


def _quiet(func: _Completer) -> _Completer:
    """A completion that raises (a broken plugin, an unreadable runs dir) offers nothing instead."""

    @functools.wraps(func)
    def wrapper(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        try:
            return func(ctx, param, incomplete)
        except Exception:  # noqa: BLE001 - a completion must never print a traceback into the user's shell
            return []

    return wrapper


@_quiet
def complete_provider(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Installed provider names and their aliases, each with its description."""
    from harness_core.cli.complete import candidates

    return candidates.complete_provider(ctx, param, incomplete)


@_quiet
def complete_option_key(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`-o KEY=`: the options of `--provider` (else the configured, else the default provider); after the `=`,
    the values of a yes/no or one-of option."""
    from harness_core.cli.complete import candidates

    return candidates.complete_option_key(ctx, param, incomplete)


@_quiet
def complete_scenario(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Offline scenario names, each with what it does; `help` lists them."""
    from harness_core.cli.complete import candidates

    return candidates.complete_scenario(ctx, param, incomplete)


@_quiet
def complete_run_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """`last`, then the run ids of the runs dir, newest first, with provider and prompt."""
    from harness_core.cli.complete import candidates

    return candidates.complete_run_id(ctx, param, incomplete)


@_quiet
def complete_session_id(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Agent session ids of the newest runs (for `harness runs --session` also Harness session ids)."""
    from harness_core.cli.complete import candidates

    return candidates.complete_session_id(ctx, param, incomplete)


@_quiet
def complete_wire_file(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """What `harness replay` takes: `last` and the ids (or paths) of the newest runs with a wire log, else files."""
    from harness_core.cli.complete import candidates

    return candidates.complete_wire_file(ctx, param, incomplete)


def completion_script(command: click.Command, shell: str, prog_name: str = "harness") -> str:
    """The completion script click writes for `command` (the `harness` group) in `shell` (what
    `_HARNESS_COMPLETE={shell}_source harness` prints).

    Raises:
        click.BadParameter: a shell click cannot complete for.
    """
    cls = get_completion_class(shell)
    if cls is None:
        raise click.BadParameter(f"no completion for {shell!r}; choose one of: {', '.join(SHELLS)}")
    complete_var = "_{}_COMPLETE".format(prog_name.replace("-", "_").upper())
    return cls(command, {}, prog_name, complete_var).source()


@click.command()
@click.argument("shell", required=False, type=click.Choice(SHELLS))
def completion(shell: str | None) -> None:
    """Print the shell completion script for bash, zsh or fish (default: the shell $SHELL names). Install it:

    \b
      bash: echo 'eval "$(harness completion bash)"' >> ~/.bashrc
      zsh:  echo 'eval "$(harness completion zsh)"' >> ~/.zshrc
      fish: harness completion fish > ~/.config/fish/completions/harness.fish

    It completes commands and options, provider names, `-o` option keys, scenario names, run and session ids.
    """
    if shell is None:
        shell = Path(os.environ.get("SHELL", "")).name
        if shell not in SHELLS:
            raise click.UsageError(f"cannot tell your shell from $SHELL ({os.environ.get('SHELL') or 'unset'}); "
                                   f"name it: harness completion {'|'.join(SHELLS)}")
    click.echo(completion_script(click.get_current_context().find_root().command, shell), nl=False)
