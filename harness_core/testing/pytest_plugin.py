"""The `harness` pytest plugin (registered through `pytest11`). Inert in unrelated projects: it adds command-line
options and markers, and no autouse fixtures.
Layer: testing. One behaviour beyond options: with `HARNESS_REQUIRE_REAL_CLIS=1` a skipped `real_cli` test fails.
The options, the markers and the trio rule: docs/providers.md (the contract suite).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Generator
from typing import Any

import pytest

REQUIRE_REAL_ENV = "HARNESS_REQUIRE_REAL_CLIS"
REAL_UNDER_TRIO = frozenset({"test_scenario"})
"""The contract tests that also play under trio with `--harness-real`. The fake CLI plays every contract test
under both backends; the real CLI does not depend on the host's event loop, so repeating its whole run under
trio retests the fake's ground at a real CLI's cost. The end-to-end scenarios stay, for trio on a real CLI."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("harness", "Harness provider contract suite")
    group.addoption("--harness-provider", default=None,
                    help="Run the contract suite only for this provider (others are skipped).")
    group.addoption(
        "--harness-real",
        action="store_true",
        default=False,
        help="Run contract tests against the real agent CLI with a scripted model backend.",
    )
    group.addoption(
        "--harness-real-trio",
        action="store_true",
        default=False,
        help="With --harness-real, play every contract test under trio too (default: only the scenarios).",
    )


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(REQUIRE_REAL_ENV) == "1":
        config.pluginmanager.register(_RequireRealClis(), "harness-require-real-clis")
    config.addinivalue_line(
        "markers", "real_cli: needs a real pinned agent CLI (scripts/install-clis.sh installs them)"
    )
    config.addinivalue_line(
        "markers", "harness_capability(name): the test needs this provider capability (skipped otherwise)"
    )
    config.addinivalue_line(
        "markers", "harness_contract: a test of the shipped provider contract suite (added automatically)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    contract_module = sys.modules.get("harness_core.testing.contract")
    if contract_module is None:  # no test imported the contract suite: nothing to mark (stay inert)
        return
    contract = contract_module.ProviderContract
    only = config.getoption("--harness-provider", default=None)
    trio_everywhere = not config.getoption("--harness-real", default=False) or config.getoption(
        "--harness-real-trio", default=False)
    kept: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is None or not issubclass(cls, contract):
            kept.append(item)
            continue
        item.add_marker(pytest.mark.harness_contract)
        if only and getattr(cls, "provider_name", None) != only:
            item.add_marker(pytest.mark.skip(reason=f"--harness-provider={only}"))
        if trio_everywhere or _backend(item) != "trio" or getattr(item, "originalname", None) in REAL_UNDER_TRIO:
            kept.append(item)
        else:
            dropped.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def _backend(item: pytest.Item) -> object:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("anyio_backend") if callspec is not None else None


class _RequireRealClis:
    """Registered only when HARNESS_REQUIRE_REAL_CLIS=1: a skipped `real_cli` test is reported as failed."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Generator[None, Any, None]:
        outcome = yield
        report = outcome.get_result()
        if report.skipped and item.get_closest_marker("real_cli") is not None and not hasattr(report, "wasxfail"):
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            report.outcome = "failed"
            report.longrepr = f"{REQUIRE_REAL_ENV}=1 but this real-CLI test was skipped: {reason}"
