"""The spec flags `harness run` and `harness chat` share: `--cwd`, `--sandbox`, `--approval`, `--resume`,
`--continue` (found by `continuation`), `--effort`, `--max-turns`, `--max-cost-usd`, `--max-output-tokens`,
`--output-schema FILE` (read by `output_schema`).

Layer: CLI start-up (click only). Knows the spec's field names; nothing of any provider.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from click.shell_completion import CompletionItem

from harness_core.cli.complete import complete_session_id
from harness_core.cli.flags.numbers import Number

__all__ = ["CWD_OPTION", "SANDBOX_OPTION", "SchemaFile", "approval_option", "resume_options", "spec_flag_options"]

F = TypeVar("F", bound=Callable[..., Any])

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
    func = click.option("--continue", "-c", "continue_last", is_flag=True,
                        help="Continue the last session played in this directory (--cwd, else the current one), "
                             "with its provider (with --provider: the last session of that provider).")(func)
    return click.option("--resume", "resume_session", metavar="SESSION_ID", shell_complete=complete_session_id,
                        help="Continue a provider session.")(func)


_FIELDS = ("effort", "max_turns", "max_cost_usd", "max_output_tokens", "output_schema")


class SchemaFile(click.ParamType):  # type: ignore[type-arg]
    """`--output-schema FILE`: a file holding a JSON Schema, read and checked against its meta-schema."""

    name = "file"

    def shell_complete(self, ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
        """The shell's own file names."""
        return [CompletionItem(incomplete, type="file")]

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> dict[str, Any]:
        from harness_core.cli.flags import output_schema

        if isinstance(value, dict):
            return value
        found = output_schema.read_schema(Path(value))
        if isinstance(found, str):
            self.fail(found, param, ctx)
        return found


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
