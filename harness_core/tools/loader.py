"""Loading tools by reference: `PATH.py`, `package.module` (every `@tool` in it) or `module:function`.

Loading runs the module's code: it is only ever done for a reference the user named (`--tools`, `tools=`, a job
the user started), never for one found in a cloned repository's configuration. Knows `Tool`; nothing of runs.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import traceback
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

from harness_core.errors import InvalidSpecError
from harness_core.tools.tool import Tool

__all__ = ["ToolsLoadError", "load_all", "load_tools", "resolve", "tools_of", "unique_tools"]


class ToolsLoadError(InvalidSpecError):
    """A `--tools` reference that could not be loaded: the file is missing, importing it raised, or it has no
    `@tool` function. The message says which and what to do."""


def load_tools(reference: str) -> list[Tool]:
    """The tools `reference` names: every `Tool` in a file (`tools.py`) or module (`package.module`), or one
    (`module:function`, `PATH.py:function`; a plain function there is made a tool).

    Raises:
        ToolsLoadError: the file or module does not exist, importing it raised (its traceback's last line is
            shown), or it holds no tool (or not the one named).
    """
    where, attribute = _split(reference)
    if attribute:
        found = resolve(reference)
        if isinstance(found, Tool):
            return [found]
        if callable(found):
            try:
                return [Tool.of(found)]
            except (TypeError, ValueError) as exc:
                raise ToolsLoadError(f"--tools {reference!r}: {exc}") from None
        raise ToolsLoadError(f"--tools {reference!r}: {attribute!r} is a {type(found).__name__}, not a function")
    module = _import(where, reference)
    tools = tools_of(module)
    if not tools:
        raise ToolsLoadError(f"--tools {reference!r}: {where} defines no tool; decorate functions with "
                             "`@tool` (from harness_core import tool), or name one with module:function")
    return tools


def resolve(reference: str) -> object:
    """What `module:attribute` (or `PATH.py:attribute`, dotted for a class's attribute) names, imported.

    Raises:
        ToolsLoadError: as `load_tools`, or `reference` names no attribute.
    """
    where, attribute = _split(reference)
    if not attribute:
        raise ToolsLoadError(f"--tools {reference!r}: name one function (module:function)")
    module = _import(where, reference)
    found: object = module
    for part in attribute.split("."):
        found = getattr(found, part, None)
    if found is None:
        raise ToolsLoadError(f"--tools {reference!r}: {where} has no {attribute!r}; the tools it has: "
                             f"{', '.join(t.name for t in tools_of(module)) or 'none'}")
    return found


def tools_of(module: ModuleType) -> list[Tool]:
    """Every `Tool` defined at the top level of `module`, in definition order."""
    return [value for value in vars(module).values() if isinstance(value, Tool)]


def unique_tools(tools: Iterable[Tool]) -> tuple[Tool, ...]:
    """`tools` without repeats (the same tool given twice counts once).

    Raises:
        InvalidSpecError: two different tools with one name (the agent could not tell them apart).
    """
    seen: dict[str, Tool] = {}
    for item in tools:
        if not isinstance(item, Tool):
            raise InvalidSpecError(f"tools= takes functions decorated with @tool, not {item!r}")
        known = seen.get(item.name)
        if known is not None and known.fn is not item.fn:
            raise InvalidSpecError(f"two tools are named {item.name!r} ({known.reference} and {item.reference}); "
                                   "rename one with @tool(name=...)")
        seen[item.name] = item
    return tuple(seen.values())


def load_all(references: Sequence[str]) -> tuple[Tool, ...]:
    """The tools of every reference, without repeats (raises as `load_tools` and `unique_tools`)."""
    return unique_tools(t for reference in references for t in load_tools(reference))


def _split(reference: str) -> tuple[str, str]:
    """`reference` as (file or module, attribute or "").

    Raises:
        ToolsLoadError: it names no file or module.
    """
    where, _, attribute = reference.strip().rpartition(":") if _has_attribute(reference) else (reference, "", "")
    if not where.strip():
        raise ToolsLoadError(f"--tools {reference!r}: name a Python file (tools.py), a module (package.module) "
                             "or one function (module:function)")
    return where.strip(), attribute


def _has_attribute(reference: str) -> bool:
    """Whether `reference` ends in `:function` (not a Windows drive's colon)."""
    head, sep, tail = reference.rpartition(":")
    return bool(sep) and bool(tail) and "/" not in tail and "\\" not in tail and len(head) > 1


def _import(where: str, reference: str) -> ModuleType:
    is_path = where.endswith(".py") or "/" in where or where.startswith(".")
    try:
        if is_path:
            return _import_file(Path(where).expanduser(), reference)
        try:
            return importlib.import_module(where)
        except ModuleNotFoundError as exc:
            if exc.name is not None and where.startswith(exc.name):
                raise ToolsLoadError(f"--tools {reference!r}: no module named {where!r}; give its file path "
                                     f"(--tools {where.replace('.', '/')}.py), or make it importable from this "
                                     "Python: pip install it, or put its directory on PYTHONPATH (`PYTHONPATH=. "
                                     "harness ...`: the harness command does not import from the current "
                                     "directory)") from None
            raise
    except (ToolsLoadError, KeyboardInterrupt):  # Ctrl-C during a slow import is the user stopping, not a bug
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's module may raise anything, SystemExit included
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        raise ToolsLoadError(f"--tools {reference!r}: importing {where} raised {last}; fix the module (run "
                             f"`python {where if is_path else '-c ' + repr('import ' + where)}` to see the whole "
                             "traceback)") from None


def _import_file(path: Path, reference: str) -> ModuleType:
    path = path.resolve()
    if not path.is_file():
        raise ToolsLoadError(f"--tools {reference!r}: no such file {path}; give the path of a Python file that "
                             "defines @tool functions")
    name = "harness_tools_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ToolsLoadError(f"--tools {reference!r}: {path} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    module.__harness_source__ = str(path)  # type: ignore[attr-defined]  # where a worker imports it from again
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module
