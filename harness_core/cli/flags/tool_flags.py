"""The tool flags run, chat and batch share (`--mcp-server`, `-i/--image`, `--attach`, `--strict-attachments`,
`--allowed-tools`, `--disallowed-tools`, `--tools`); `tool_checks` checks their values.

Layer: CLI start-up (click only). Knows the spec's field names; nothing of any provider.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

__all__ = ["TOOLS_OPTION", "tool_flag_options"]

F = TypeVar("F", bound=Callable[..., Any])
TOOLS_OPTION = click.option(
    "--tools", "tool_refs", multiple=True, metavar="PATH.py|MODULE[:FUNCTION]",
    help="Python functions the agent may call (every `@tool` in a file or module, or one module:function), served "
         "to it as the MCP server `harness`; they run in this process. Repeatable. Runs the module's code.")
"""`--tools PATH.py|MODULE[:FUNCTION]` of `run`, `chat` and `batch` (loaded by `tool_checks.load_cli_tools`)."""
_FLAGS = ("mcp_servers", "images", "attach", "strict_attachments", "allowed_tools", "disallowed_tools")


def _servers(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[dict[str, Any]] | None:
    from harness_core.cli.flags import tool_checks

    found = []
    for value in values:
        try:
            found.append(tool_checks.parse_mcp_server(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    names = [f["name"] for f in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise click.BadParameter(f"server name given twice: {', '.join(twice)}; give each server its own name")
    return found or None


def _names(ctx: click.Context, param: click.Parameter, value: str | None) -> frozenset[str] | None:
    from harness_core.cli.flags import tool_checks

    if value is None:
        return None
    try:
        return tool_checks.parse_tool_names(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _images(ctx: click.Context, param: click.Parameter, values: tuple[Path, ...]) -> tuple[Path, ...]:
    from harness_core.cli.flags import tool_checks

    for path in values:
        if not tool_checks.guess_mime_type(path.name).startswith("image/"):
            raise click.BadParameter(f"{str(path)!r} is not an image by its name; attach other files with --attach")
    return values


def _attached(ctx: click.Context, param: click.Parameter, values: tuple[Path, ...]) -> list[dict[str, Any]]:
    from harness_core.cli.flags import tool_checks

    return [{"path": path, "mime_type": tool_checks.attach_mime_type(path)} for path in values]


_FILE = click.Path(exists=True, dir_okay=False, readable=True, path_type=Path)
_OPTIONS = (
    click.option("--mcp-server", "mcp_servers", multiple=True, metavar="NAME=COMMAND|URL", callback=_servers,
                 help="Give the agent an MCP server (repeatable): NAME=COMMAND ARGS… starts it (stdio), NAME=URL "
                      "reaches it (streamable HTTP), NAME=sse+URL over SSE."),
    click.option("-i", "--image", "images", multiple=True, type=_FILE, metavar="FILE", callback=_images,
                 help="Send an image with the prompt (repeatable); an agent that cannot take images gets its path."),
    click.option("--attach", "attach", multiple=True, type=_FILE, metavar="FILE", callback=_attached,
                 help="Send a file with the prompt (repeatable); an agent that cannot take it gets its path. Its type "
                      "comes from its name, else text/plain for UTF-8 text, else application/octet-stream."),
    click.option("--strict-attachments", is_flag=True, default=None,
                 help="Refuse the run when an attachment cannot be sent natively (instead of naming its path)."),
    click.option("--allowed-tools", metavar="A,B", callback=_names,
                 help="Only these tools (shell, read, edit, write, search, web, agent, mcp, mcp:SERVER, "
                      "mcp:SERVER.TOOL), where the agent's CLI can filter them."),
    click.option("--disallowed-tools", metavar="A,B", callback=_names,
                 help="Not these tools: filtered by the agent's CLI, else denied by Harness through approvals, "
                      "else the run is refused."),
)


def tool_flag_options(func: F) -> F:
    """Add the tool flags to a click command under `spec_flag_options`: what is given goes into its `spec_fields`
    (`mcp_servers`, `attachments`, `strict_attachments`, `allowed_tools`, `disallowed_tools`)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name) for name in _FLAGS}
        fields: dict[str, Any] = dict(kwargs.pop("spec_fields", {}))
        attachments = [*({"path": path} for path in given.pop("images")), *given.pop("attach")]
        if attachments:
            fields["attachments"] = attachments
        fields.update({k: v for k, v in given.items() if v is not None})
        return func(*args, spec_fields=fields, **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper  # type: ignore[return-value]
