"""Which event loops the contract suite plays its tests under: asyncio and trio on the fake CLI; with
`--harness-real`, asyncio, and trio only for `REAL_UNDER_TRIO` (all of them again with `--harness-real-trio`).
Checked on the collected test ids of a one-class contract module (nothing is played)."""

from __future__ import annotations

import re

import pytest

from harness_core.testing.pytest_plugin import REAL_UNDER_TRIO

pytest_plugins = ["pytester"]

_MODULE = '''
from harness_core.testing.contract import ProviderContract
import tests.planted_providers as planted


class TestPlantedContract(ProviderContract):
    provider_name = "planted-none"
    extra_plugins = (("planted", planted),)
'''


def _collected(pytester: pytest.Pytester, *options: str) -> dict[str, set[str]]:
    """Test name → the backends it is collected under."""
    pytester.makepyfile(test_planted=_MODULE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--collect-only", *options)
    backends: dict[str, set[str]] = {}
    for line in result.outlines:
        found = re.match(r"test_planted\.py::TestPlantedContract::(\w+)\[(asyncio|trio)\b", line)
        if found:
            backends.setdefault(found[1], set()).add(found[2])
    assert backends, result.stdout.str()
    return backends


def test_the_fake_cli_plays_every_contract_test_under_both_backends(pytester: pytest.Pytester) -> None:
    assert set(REAL_UNDER_TRIO) < set(_collected(pytester))
    assert all(found == {"asyncio", "trio"} for found in _collected(pytester).values())


def test_the_real_cli_plays_trio_only_for_the_end_to_end_scenarios(pytester: pytest.Pytester) -> None:
    backends = _collected(pytester, "--harness-real")
    assert all("asyncio" in found for found in backends.values())
    assert {name for name, found in backends.items() if "trio" in found} == set(REAL_UNDER_TRIO)


def test_harness_real_trio_plays_every_real_test_under_trio_too(pytester: pytest.Pytester) -> None:
    backends = _collected(pytester, "--harness-real", "--harness-real-trio")
    assert all(found == {"asyncio", "trio"} for found in backends.values())
