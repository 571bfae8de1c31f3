"""The `harness` pytest plugin (registered through `pytest11`). Inert in unrelated projects: it only adds
command-line options and a marker; no autouse fixtures.

Layer: testing.
"""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "Harness provider contract suite")
    group.addoption("--harness-provider", default=None, help="Run the contract suite only for this provider.")
    group.addoption(
        "--harness-real",
        action="store_true",
        default=False,
        help="Run contract tests against the real agent CLI with a scripted model backend.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "harness_capability(name): the test needs this provider capability (skipped otherwise)"
    )
