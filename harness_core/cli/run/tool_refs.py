"""`--tools PATH.py|package.module|module:function` (run, chat, batch): the user's Python tools, by reference.

Layer: CLI, imported at start-up (click only); the loader is imported when a command loads the tools. Loading runs
the module's code: only ever for references the user typed, never for one a project's configuration names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from harness_core import Tool

__all__ = ["TOOLS_OPTION", "load_cli_tools"]

TOOLS_OPTION = click.option(
    "--tools", "tool_refs", multiple=True, metavar="PATH.py|MODULE[:FUNCTION]",
    help="Python functions the agent may call (every `@tool` in a file or module, or one module:function), served "
         "to it as the MCP server `harness`; they run in this process. Repeatable. Runs the module's code.")


def load_cli_tools(refs: tuple[str, ...]) -> tuple[Tool, ...]:
    """The tools `refs` name (none without refs).

    Raises:
        ToolsLoadError: a reference could not be loaded (the message says why and what to do).
        InvalidSpecError: two different tools share a name.
    """
    if not refs:
        return ()
    from harness_core.tools.loader import load_all

    return load_all(refs)
