"""No import cycle in shipped code (the core, the provider, executor and viewer packages), every import counted:
in functions, under TYPE_CHECKING, and a package `__init__`'s register hook importing its provider. Reads the
source tree with `ast` (graph.py); imports no Harness module."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.architecture.graph import CORE, EXECUTORS, OBSERVERS, PACKAGES, ROOT, VIEWER, import_cycles, import_graph

SHIPPED = [CORE, *PACKAGES, *EXECUTORS, *OBSERVERS, VIEWER]


def test_no_import_cycle_in_shipped_code() -> None:
    cycles = import_cycles(import_graph(*SHIPPED))
    assert not cycles, "import cycles (every import counts, in functions and under TYPE_CHECKING too):\n" + "\n".join(
        ", ".join(sorted(c)) for c in cycles)


def test_the_cycle_check_counts_an_import_in_a_register_hook(tmp_path: Path) -> None:
    """A package `__init__` importing its provider in the register hook is an edge, not a re-export: an inner
    module importing the package back (for `__version__`, say) is a cycle."""
    copy = tmp_path / "harness_codex_exec"
    shutil.copytree(ROOT / "providers" / "codex_exec" / "harness_codex_exec", copy,
                    ignore=shutil.ignore_patterns("__pycache__"))
    provider = copy / "provider.py"
    old = provider.read_text()
    provider.write_text(old.replace("from harness_codex_exec._version import", "from harness_codex_exec import"))
    assert provider.read_text() != old
    assert frozenset({"harness_codex_exec", "harness_codex_exec.provider"}) in import_cycles(import_graph(copy))
