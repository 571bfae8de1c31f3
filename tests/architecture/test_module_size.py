"""Modules are small and say what they are: none of the core, a provider, an executor or the viewer is over 800
lines (over 500 is printed as a review flag), and each has a docstring, of at most 5 lines outside the viewer
(whose own check is with the façades). Reads the source tree with `ast`; imports no Harness module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.architecture.graph import CORE, EXECUTORS, OBSERVERS, PACKAGES, VIEWER, _modules, _rel

MAX_LINES = 800
REVIEW_LINES = 500


@pytest.mark.parametrize("root", [CORE, *PACKAGES, *EXECUTORS, *OBSERVERS, VIEWER], ids=lambda p: _rel(p))
def test_modules_are_small_and_say_what_they_are(root: Path) -> None:
    sizes = {p: len(p.read_text().splitlines()) for p in _modules(root)}
    flagged = [f"{_rel(p)} ({n} lines)" for p, n in sizes.items() if REVIEW_LINES < n <= MAX_LINES]
    if flagged:  # a signal, not a rule: one concept may need the room
        print(f"modules over {REVIEW_LINES} lines (fine if they hold one concept): {', '.join(flagged)}")
    big = [f"{_rel(p)} ({n} lines)" for p, n in sizes.items() if n > MAX_LINES]
    assert not big, f"modules over {MAX_LINES} lines (a second concept moved in: split by concept): {', '.join(big)}"
    silent = [
        _rel(p) for p in _modules(root) if p.stat().st_size and ast.get_docstring(ast.parse(p.read_text())) is None
    ]
    assert not silent, f"modules without a docstring saying their layer: {', '.join(silent)}"


def test_module_docstrings_fit_in_five_lines() -> None:
    """The job and the "knows nothing of" line in at most 5 lines; the rest belongs in docs/."""
    long = sorted(_rel(p) for root in [CORE, *PACKAGES, *EXECUTORS, *OBSERVERS] for p in _modules(root)
                  if len((ast.get_docstring(ast.parse(p.read_text())) or "").splitlines()) > 5)
    assert not long, f"module docstrings over 5 lines (move the rest to docs/): {long}"
