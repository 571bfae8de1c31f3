"""The façades' answer to a name they do not export: an `ImportError` that says where the name is (the façade that
exports it, a name close to it, or an internal module that is not supported), instead of a bare "cannot import".
Layer: public surface (support of the façades, listed in `FACADES`). Stdlib only; knows the façades by name and
reads other modules only from `sys.modules` or by importing a runtime façade, never `harness_core.testing`.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

__all__ = ["FACADES", "FacadeNameError", "missing_name", "public_home"]

FACADES = (
    "harness_core",
    "harness_core.provider",
    "harness_core.offline",
    "harness_core.scripted.scenarios",
    "harness_core.scripted.backends",
    "harness_core.scripted.command",
    "harness_core.testing.contract",
)
"""The supported import paths (with `harness_core.testing`'s modules, in test code only): every other module of
`harness_core` is internal and may change or move without notice."""
_RUNTIME = FACADES[:-1]
"""The façades this module may import to look a name up (never the testing package outside tests)."""
_DOCS = "docs/providers.md, \"Import rule\""


class FacadeNameError(ImportError):
    """A name a Harness façade does not export, with where it is instead (an `ImportError`, so `from X import Y`
    shows this message; `hasattr` and `getattr(..., default)` on a façade propagate it for such a name)."""


def _exports(module_name: str, *, load: bool) -> tuple[str, ...]:
    module = sys.modules.get(module_name)
    if module is None and load:
        try:
            module = importlib.import_module(module_name)
        except ImportError:  # a façade half-initialised (an import cycle) or broken: no hint from it
            return ()
    names = getattr(module, "__all__", ()) if module is not None else ()
    return tuple(str(name) for name in names)


def _internal_home(name: str) -> str | None:
    """The internal module of `harness_core` that defines `name` at its top level: one already imported (looked up
    in its namespace, without calling any module's `__getattr__`), else one whose source defines it (read, never
    imported: importing to find a name could start anything)."""
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith("harness_core.") or module_name in FACADES:
            continue
        value = vars(module).get(name)
        if value is not None and getattr(value, "__module__", module_name) == module_name:
            return module_name
    root = Path(__file__).parent
    for path in sorted(root.rglob("*.py")):
        module_name = ".".join(("harness_core", *path.relative_to(root).with_suffix("").parts))
        module_name = module_name.removesuffix(".__init__")
        if module_name not in FACADES and name in _top_level_names(path):
            return module_name
    return None


def _top_level_names(path: Path) -> set[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return set()
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _is_submodule(facade: str, name: str) -> bool:
    package = sys.modules.get(facade)
    if package is None or not hasattr(package, "__path__"):
        return False
    try:
        return importlib.util.find_spec(f"{facade}.{name}") is not None
    except (ImportError, ValueError):
        return False


def _joined(names: Iterable[str]) -> str:
    return ", ".join(names)


def missing_name(facade: str, name: str) -> AttributeError | FacadeNameError:
    """What the façade `facade`'s `__getattr__` raises for `name`, which it does not export.

    A plain `AttributeError` for private and dunder names and for a submodule not imported yet (the import system
    asks with `hasattr`); for any other name a `FacadeNameError` saying which façade exports it, which exported
    name is close to it, or which internal module defines it (not supported: it may move without notice)."""
    if name.startswith("_") or _is_submodule(facade, name):
        return AttributeError(f"module {facade!r} has no attribute {name!r}")
    load = not facade.startswith("harness_core.testing")
    exported = {other: _exports(other, load=load or other == facade)
                for other in (FACADES if not load else _RUNTIME)}
    exported.setdefault("harness_core.testing.contract", _exports("harness_core.testing.contract", load=False))
    homes = [other for other, names in exported.items() if other != facade and name in names]
    if homes:
        return FacadeNameError(
            f"{facade} does not export {name!r}: import it from {homes[0]} (`from {homes[0]} import {name}`). Only "
            f"the façades are supported import paths ({_joined(FACADES)}); see {_DOCS}.", name=name)
    everything = {n: other for other, names in exported.items() for n in names}
    close = difflib.get_close_matches(name, list(everything), n=1, cutoff=0.8)
    if close:
        where = "" if everything[close[0]] == facade else f" from {everything[close[0]]}"
        return FacadeNameError(f"{facade} has no name {name!r}; did you mean {close[0]!r}{where}?", name=name)
    home = _internal_home(name)
    if home is not None:
        return FacadeNameError(
            f"{facade} does not export {name!r}: it is defined in {home}, an internal module, which is not a "
            f"supported import path and may change or move without notice. Import only from the façades "
            f"({_joined(FACADES)}; see {_DOCS}); if a provider needs {name!r}, ask for it to be exported.", name=name)
    return FacadeNameError(
        f"{facade} has no name {name!r}. The façades ({_joined(FACADES)}) export every supported name (each "
        f"module's `__all__`; see {_DOCS}).", name=name)


def public_home(name: str, *, testing: bool = False) -> str | None:
    """The façade that exports `name` (the first, in `FACADES` order), or None. `testing`: the caller is test code,
    so `harness_core.testing.contract` may be imported to look."""
    for facade in FACADES if testing else _RUNTIME:
        if name in _exports(facade, load=True):
            return facade
    return None
