"""A tool as another process makes it again (`ToolReference`): where its function is, plus the options it was made
with, so a background worker or a batch attempt serves the very tool the caller gave (its name, `requires_approval`,
timeout and description), even one decorated where it is used: `tool(requires_approval=True)(mod.deploy)`.

Knows `Tool` and the loader; nothing of runs, jobs or batches (they carry these in their plans).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from harness_core.errors import InvalidSpecError
from harness_core.tools.loader import ToolsLoadError, resolve, unique_tools
from harness_core.tools.tool import DEFAULT_TIMEOUT, Tool

__all__ = ["ToolReference", "load_references", "references"]


class ToolReference(BaseModel):
    """One tool, by reference: its function's `target` and the `tool(...)` options to apply to it again."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    target: str
    """Where the function is imported from: `package.module:qualname`, or `PATH.py:qualname` for a file's."""
    name: str
    description: str = ""
    requires_approval: bool = False
    timeout: float = DEFAULT_TIMEOUT


def references(tools: Iterable[Tool]) -> tuple[ToolReference, ...]:
    """How another process (a background worker, a batch attempt, a Ray node) makes each of `tools` again
    (`load_references`): checked here, before anything starts.

    Raises:
        InvalidSpecError: a tool whose function another process cannot import to the same function (defined
            inside a function, in `python -c` or a REPL, a lambda, a bound method, or not reachable under its
            name in its module).
    """
    found: list[ToolReference] = []
    for item in unique_tools(tools):
        target = item.reference
        why = _not_importable(item, target)
        if why is not None:
            raise InvalidSpecError(
                f"tool {item.name!r} ({target}) cannot be imported by another process (a background run, a batch "
                f"attempt): {why}; define it at the top level of a module or a .py file (decorate it there, or "
                "pass that module-level function to tool(...))")
        found.append(ToolReference(target=target, name=item.name, description=item.description,
                                   requires_approval=item.requires_approval, timeout=item.timeout))
    return tuple(found)


def load_references(refs: Sequence[ToolReference]) -> tuple[Tool, ...]:
    """The tools `refs` name, made again here with their options (what `references` was given).

    Raises:
        ToolsLoadError: a target that no longer imports, or names something that is not a function.
    """
    made: list[Tool] = []
    for ref in refs:
        found = resolve(ref.target)
        function = found.fn if isinstance(found, Tool) else found
        if not callable(function):
            raise ToolsLoadError(f"tool {ref.name!r}: {ref.target} is a {type(function).__name__} here, not a "
                                 "function; is the same version of its module installed where the run plays?")
        try:
            made.append(Tool.of(function, name=ref.name, description=ref.description or None,
                                requires_approval=ref.requires_approval, timeout=ref.timeout))
        except (TypeError, ValueError) as exc:
            raise ToolsLoadError(f"tool {ref.name!r} ({ref.target}): {exc}") from None
    return unique_tools(made)


def _not_importable(item: Tool, target: str) -> str | None:
    """Why `target` would not give `item`'s function again in another process; None when it would."""
    where, _, qualname = target.rpartition(":")
    if where in ("__main__", "") or "<" in where:
        return "it is defined in an interactive session or `python -c`, which no other process can import"
    if "<" in qualname:
        return "it is a lambda or is defined inside a function"
    module = sys.modules.get(item.fn.__module__)
    if module is None:
        return f"its module {item.fn.__module__!r} is not imported in this process"
    found: object = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if isinstance(found, Tool):
        found = found.fn
    if found is not item.fn:
        return f"its module's {qualname} is another object (a bound method, or the name bound again since)"
    return None
