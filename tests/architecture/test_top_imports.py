"""Imports are at the top of each module: outside the CLI's commands, only what LAZY_ALLOWED names and a package
`__init__`'s register hook (importing its own provider) may import in a function; shown failing on a made-up
package. Reads the source tree with `ast` (graph.py); imports no Harness module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.architecture.graph import (
    _TOY,
    CORE,
    EXECUTORS,
    OBSERVERS,
    PACKAGES,
    ROOT,
    VIEWER,
    _from_modules,
    _is_test_code,
    _modules,
    _package_of,
    _rel,
)

LAZY_ALLOWED = {
    "jsonschema": "only a spec with an output schema pays for it",
    "ctypes": "only where the platform needs it",
    "_ctypes": "only where the platform needs it",
    "structlog": "~200 ms of CPU (structlog.dev loads rich and pygments, measured): imported by the first log record "
                 "that passes its level, not by every process that logs nothing (harness_core._logging)",
    "ray": "an optional extra of harness-ray: imported where a cluster is used, so the package loads without it",
    "harness_ray.worker": "imports ray",
    "harness_core.tools.server": "the mcp SDK and uvicorn: only a run given Python tools pays for them",
    "harness_core.testing.mcp_client": "the mcp SDK (2 s of CPU building its pydantic models, measured): only a "
                                       "scenario calling a Python tool pays, not every process loading the "
                                       "scripted provider (every test's `harness` subprocess)",
    "harness_core.scripted.backends": "uvicorn, starlette, httpx2 (60-260 ms after the plugin host is up, measured "
                                      "with 8 providers): only an offline run pays for them, not every host",
    "harness_claude.offline": "imports the scripted backends",
    "harness_codex_common.dialect": "imports the scripted backends",
    "harness_mini_agent.offline": "imports the scripted backends",
    "harness_mini_agent.agent": "imports httpx (140-230 ms, measured), which only a mini-agent run needs",
    "harness_mini_agent.client": "imports httpx",
    "opentelemetry.exporter.otlp.proto.grpc.trace_exporter": "grpcio: only OTEL_EXPORTER_OTLP_PROTOCOL=grpc pays for "
                                                              "it",
    "opentelemetry.exporter.otlp.proto.grpc.metric_exporter": "grpcio: only OTEL_EXPORTER_OTLP_PROTOCOL=grpc pays for "
                                                               "it",
}
"""What may be imported in a function outside the CLI (whose commands import their own modules lazily)."""


TOP_IMPORTS = [CORE, *PACKAGES, *EXECUTORS, *OBSERVERS, VIEWER]
"""Where imports are at the top: everywhere but the CLI's commands, LAZY_ALLOWED, and a package `__init__`'s register
hook (`harness_register_*`), which imports its own provider modules so that finding the plugin stays cheap."""


def _register_hook_imports(path: Path) -> set[tuple[int, str]]:
    """The imports of its own package's modules inside a package `__init__`'s `harness_register_*` hooks."""
    if path.name != "__init__.py":
        return set()
    own = path.parent.name + "."
    return {(node.lineno, module) for hook in ast.parse(path.read_text(), str(path)).body
            if isinstance(hook, ast.FunctionDef) and hook.name.startswith("harness_register_")
            for node in ast.walk(hook) if isinstance(node, ast.ImportFrom)
            for module in _from_modules(_package_of(path), node) if module.startswith(own)}


def _lazy_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    top = {id(node) for stmt in tree.body if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
           for node in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in top:
            continue
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.extend((node.lineno, module) for module in _from_modules(_package_of(path), node))
    return found


@pytest.mark.parametrize("root", TOP_IMPORTS, ids=lambda p: _rel(p))
def test_imports_are_at_the_top(root: Path) -> None:
    """MCP's rule: inline imports hide dependencies and obscure circular-import bugs. Only the CLI's commands import
    lazily (so `harness --help` stays fast), a package's register hook its own provider, and what LAZY_ALLOWED
    names."""
    hidden = hidden_imports(root)
    assert not hidden, "imports inside functions (move them to the top of the module):\n" + "\n".join(hidden)


def hidden_imports(root: Path) -> list[str]:
    """The imports in functions under `root` that no rule allows (`path:line: module`)."""
    return [f"{_rel(path) if path.is_relative_to(ROOT) else path.relative_to(root.parent)}:{line}: {module}"
            for path in _modules(root)
            if not path.is_relative_to(CORE / "cli") and not _is_test_code(path)
            for line, module in _lazy_imports(path)
            if not any(module == m or module.startswith(m + ".") for m in LAZY_ALLOWED)
            and (line, module) not in _register_hook_imports(path)]


def test_the_top_imports_check_fails_on_a_lazy_import_in_a_package(tmp_path: Path) -> None:
    """The rule can fail: in a made-up provider package, the register hook may import its provider, no other function
    may import (nor the hook another package)."""
    root = tmp_path / "harness_toy"
    for name, text in _TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    assert hidden_imports(root) == []
    (root / "turn.py").write_text(_TOY["turn.py"] + "\n\ndef _late() -> None:\n    from harness_toy import params\n")
    init = root / "__init__.py"
    init.write_text(init.read_text() + "    from harness_other.provider import Other\n")
    assert hidden_imports(root) == ["harness_toy/__init__.py:6: harness_other.provider",
                                    "harness_toy/turn.py:7: harness_toy"]


def test_the_top_imports_check_counts_a_relative_lazy_import(tmp_path: Path) -> None:
    """`from . import x` and `from .x import y` inside a function are lazy imports too, named as the module they
    load (`pkg.x`)."""
    root = tmp_path / "harness_toy"
    for name, text in _TOY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    turn = root / "turn.py"
    lines = len(_TOY["turn.py"].splitlines())
    turn.write_text(_TOY["turn.py"] + "\n\ndef _late() -> None:\n    from . import params\n"
                    "    from .mapping import x\n")
    assert hidden_imports(root) == [f"harness_toy/turn.py:{lines + 4}: harness_toy.params",
                                    f"harness_toy/turn.py:{lines + 5}: harness_toy.mapping"]
