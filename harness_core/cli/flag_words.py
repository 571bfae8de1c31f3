"""A library error in the words of the command line: the flags a user typed, not the spec fields and Python
arguments a library caller set (`in_flags`). Refusals name both, Python first; the command line keeps its own.

Layer: CLI start-up (standard library only); knows the spec's field names and the flags that set them.
"""

from __future__ import annotations

import re

__all__ = ["in_flags"]

_FLAGS = {"allowed_tools": "--allowed-tools", "disallowed_tools": "--disallowed-tools",
          "strict_attachments": "--strict-attachments", "mcp_servers": "--mcp-server"}
"""Spec fields a refusal names, as the flags that set them (not a quoted name, a TOML key, a table's name)."""
_FIELD = re.compile(r"(?<![\w:.\-'\"\[])(" + "|".join(_FLAGS) + r")(?![\w'\"]|\.\w)")
_BOTH = re.compile(r"\((?:[^()]|\([^()]*\))*?; on the command line ([^()]*)\)")
"""``(PYTHON; on the command line FLAG)``: the Python argument, then the flag."""
_TOOLS = "(tools=, --tools"


def in_flags(message: str) -> str:
    """`message` (an error raised by the library) as the command line says it: ``(provider=NAME; on the command
    line -p/--provider NAME)`` as ``(-p/--provider NAME)``, the spec fields as their flags (``--strict-attachments
    is on``)."""
    message = _BOTH.sub(r"(\1)", message).replace(_TOOLS, "(--tools")
    return _FIELD.sub(lambda match: _FLAGS[match.group(1)], message)
