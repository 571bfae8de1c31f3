"""Old import paths of modules that moved (issue 25, "floors"): each still imports, for one release, with a
DeprecationWarning naming the new path. docs/providers.md holds the same table for readers.

Layer: façade support (imported by `harness_core/__init__.py`); knows only module names, imports nothing of Harness.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import CodeType, ModuleType

__all__ = ["MOVED", "new_name"]

MOVED: dict[str, str] = {
    "harness_core.offline.scenarios": "harness_core.scripted.scenarios",
    "harness_core.offline.inline": "harness_core.scripted.inline",
    "harness_core.offline.backends": "harness_core.scripted.backends",
    "harness_core.batch.executor": "harness_core.batch",  # the contract is harness_core.executor now
    "harness_core.batch.local": "harness_core.batch",
    "harness_core._store_locks": "harness_core.store.locks",
    "harness_core._store_owner": "harness_core.store.owner",
    "harness_core._store_prune": "harness_core.store.prune",
    "harness_core._store_read": "harness_core.store.read",
    "harness_core._store_writer": "harness_core.store.writer",
    "harness_core._background": "harness_core.jobs.launcher",
    "harness_core._answers": "harness_core.jobs.answers",
    "harness_core._runproc": "harness_core.jobs.driver_facts",
    "harness_core.cli._worker": "harness_core.jobs.worker",
    "harness_core.jobs.process": "harness_core.jobs.driver_facts",
    "harness_core.toolbridge": "harness_core.tools.bridge",  # also `python -m` (an MCP config written before)
}
"""Old module (or package: its submodules move with it) → new module."""
_OLD = tuple(MOVED)  # every import asks `new_name` first: one C call turns the others away


def new_name(old: str) -> str | None:
    """Where module `old` lives now (None: it did not move)."""
    if not old.startswith(_OLD):
        return None
    for before, after in MOVED.items():
        if old == before or old.startswith(before + "."):
            return after + old[len(before):]
    return None


# The loader and the finder are the protocols the import system calls, not subclasses of `importlib.abc`'s: that
# module loads importlib.resources and tempfile (~10-20 ms of CPU) in every process that imports harness_core.
class _Alias:
    def __init__(self, new: str) -> None:
        self.new = new
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.new}; import it from there (the old path goes in the next "
                      "release)", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The new module is already executed; give it back its own spec (the import system set the old one)."""
        module.__spec__ = self.spec

    def get_code(self, fullname: str) -> CodeType:
        """What `python -m OLD` runs (runpy asks the loader for it): the warning, then the new module as
        `__main__`."""
        message = f"{fullname} moved to {self.new}; run `python -m {self.new}` (the old name goes in the next release)"
        return compile(f"import runpy, warnings\nwarnings.warn({message!r}, DeprecationWarning, stacklevel=1)\n"
                       f"runpy.run_module({self.new!r}, run_name='__main__', alter_sys=True)\n", fullname, "exec")


class _MovedFinder:
    def find_spec(self, fullname: str, path: object = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))  # type: ignore[arg-type]  # a Loader by protocol


def install() -> None:
    """Let the old paths import (idempotent)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())
