"""The values of the tool flags checked (`--mcp-server`, `--allowed-tools`, `--image`) and `--tools` loaded: the
user's Python tools, by reference. Loading runs the module's code: only for references the user typed, never for
one a project's configuration names.

Layer: CLI, loaded when a flag is checked or a command runs; knows the MCP models and the tools loader.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness_core import Tool
from harness_core.attachment import MAX_ATTACHMENT_BYTES, guess_mime_type
from harness_core.mcp import McpServer, check_server_name, check_tool_name
from harness_core.tools.loader import load_all

__all__ = ["attach_mime_type", "guess_mime_type", "load_cli_tools", "parse_mcp_server", "parse_tool_names"]


def load_cli_tools(refs: tuple[str, ...]) -> tuple[Tool, ...]:
    """The tools `refs` name (none without refs).

    Raises:
        ToolsLoadError: a reference could not be loaded (the message says why and what to do).
        InvalidSpecError: two different tools share a name.
    """
    if not refs:
        return ()
    return load_all(refs)


def parse_mcp_server(value: str) -> dict[str, Any]:
    """`NAME=COMMAND ARGS…` (stdio, split as a shell would), `NAME=URL` (streamable HTTP) or `NAME=sse+URL`, as the
    fields of an `McpServer`.

    Raises:
        ValueError: not `NAME=…`, or a server that does not validate (the message says why).
    """

    name, eq, rest = value.partition("=")
    if not eq or not name or not rest.strip():
        raise ValueError(f"{value!r} is not NAME=COMMAND ARGS…, NAME=URL or NAME=sse+URL "
                         "(e.g. everything=mcp-server-everything, docs=http://127.0.0.1:8000/mcp)")
    rest = rest.strip()
    fields: dict[str, Any]
    if rest.startswith("sse+"):
        fields = {"name": name, "transport": "sse", "url": rest[4:]}
    elif rest.startswith(("http://", "https://")):
        fields = {"name": name, "url": rest}
    else:
        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise ValueError(f"--mcp-server {name}: {exc} in {rest!r}") from None
        fields = {"name": name, "command": argv[0], "args": argv[1:]}
    try:
        check_server_name(McpServer.model_validate(fields))
    except ValidationError as exc:
        raise ValueError("; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())) from None
    return fields


def attach_mime_type(path: Path) -> str:
    """The media type `--attach` gives the file at `path`: guessed from its name, else `text/plain` when it is
    UTF-8 text (a `Makefile`, a `LICENSE`), else `application/octet-stream` (an agent that cannot take it gets its
    path). Reads at most `MAX_ATTACHMENT_BYTES` (a bigger file is refused before spawn anyway)."""
    guessed = guess_mime_type(path.name)
    if guessed:
        return guessed
    try:
        with path.open("rb") as file:
            head = file.read(MAX_ATTACHMENT_BYTES + 1)
        head.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return "application/octet-stream"
    return "text/plain"


def parse_tool_names(value: str) -> frozenset[str]:
    """`A,B` as neutral tool names (each checked: `shell`, `edit`, `mcp:SERVER`, ...).

    Raises:
        ValueError: an unknown name, listing the valid ones.
    """

    return frozenset(check_tool_name(name.strip()) for name in value.split(",") if name.strip())
