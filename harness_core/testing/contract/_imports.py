"""The contract's check of the import rule: a provider imports Harness only through the façades (a port that still
reaches an internal module fails, naming the file, the line and where each name it took is exported).
Layer: testing (mixed into `ProviderContract`). Reads the provider's source (never imports anything of it beyond
what the plugin host loaded); knows the façades (`harness_core._facade`), no concrete provider.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from harness_core._facade import FACADES, public_home
from harness_core.testing.contract._base import ContractBase

__all__ = ["ImportTests", "import_rule_breaks"]

_RUNTIME_FACADES = frozenset(FACADES) - {"harness_core.testing.contract"}


def _test_code(path: Path, root: Path) -> bool:
    """Whether `path` is test code: under a `testing/` or `tests/` directory, or a test module itself."""
    in_tests = any(part in ("testing", "tests") for part in path.relative_to(root).parts[:-1])
    return in_tests or path.name.startswith("test_") or path.name == "conftest.py"


def _allowed(module: str, test_code: bool) -> bool:
    if module in _RUNTIME_FACADES or module.split(".", 1)[0] != "harness_core":
        return True
    if not test_code:
        return False
    parts = module.split(".")
    return parts[:2] == ["harness_core", "testing"] and not any(part.startswith("_") for part in parts)


def import_rule_breaks(root: Path) -> list[str]:
    """Every import of `harness_core` past the façades in the Python files under `root` (a package directory, or
    one module), one line each: `path:line: module` and, for each name taken from it, where it is exported."""
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    base = root.parent.parent if root.is_file() else root.parent  # a lone module: its directory tells test code
    breaks: list[str] = []
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        test_code = _test_code(path, base)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules, names = [node.module], [alias.name for alias in node.names]
            elif isinstance(node, ast.Import):
                modules, names = [alias.name for alias in node.names], []
            else:
                continue
            for module in modules:
                if _allowed(module, test_code):
                    continue
                homes = [f"{name} from {public_home(name, testing=test_code) or 'no façade (internal)'}"
                         for name in names]
                where = f": import {', '.join(homes)}" if homes else ""
                breaks.append(f"{path.relative_to(base)}:{node.lineno}: {module}{where}")
    return breaks


class ImportTests(ContractBase):
    """The import rule (see the module docstring)."""

    def test_imports_harness_only_through_the_facades(self) -> None:
        """Every module of the provider's package imports `harness_core` only through the façades
        (`harness_core`, `.provider`, `.offline`, `.offline.scenarios`, `.offline.backends`; its test code also
        `harness_core.testing` and its public modules): an internal module still imports today, and breaks the
        provider when it moves."""
        cls = self._provider().cls
        top = cls.__module__.split(".", 1)[0]
        if top == "harness_core":
            pytest.skip(f"{self.provider_name} is part of harness_core itself")
        module = sys.modules.get(cls.__module__)
        file = getattr(module, "__file__", None)
        if file is None:
            pytest.skip(f"{self.provider_name}'s module {cls.__module__} has no source file to read")
        package = sys.modules.get(top)
        package_file = getattr(package, "__file__", None)
        # The provider's top-level package when it is installed as one (its `testing/` subpackage included), else
        # the one module that defines it (a provider registered from a test module, say).
        distributed = package_file is not None and Path(package_file).name == "__init__.py" and bool(
            self._provider().distribution)
        root = Path(package_file).parent if distributed and package_file else Path(file)
        breaks = import_rule_breaks(root)
        assert not breaks, (
            f"{self.provider_name} imports Harness past its façades ({', '.join(sorted(_RUNTIME_FACADES))}; test code "
            "also harness_core.testing and its public modules). An internal module imports today and breaks the "
            "provider when it moves: import each name from the façade that exports it (see docs/providers.md, "
            "\"Import rule\"):\n" + "\n".join(breaks))
