"""The `version_sensitive` marker follows what a test's own code touches (tests/version_sensitive.py): its body,
the suite's helpers it calls however deep, its fixtures and its class's methods; a comment is not code. Checked
on the collected ids of a planted module (nothing is run), and on the rules' own names in tox.ini's header."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.version_sensitive import EXERCISES, exercises

pytest_plugins = ["pytester"]

_CONFTEST = '''
from tests.version_sensitive import mark_version_sensitive


def pytest_collection_modifyitems(config, items):
    mark_version_sensitive(items, root=config.rootpath)
'''

_MODULE = '''
import os
import subprocess
import sys

import pytest


def _start_a_child():
    return subprocess.Popen([sys.executable, "-c", "pass"])


def _deeper():
    return _start_a_child()


@pytest.fixture
def terminal():
    import pty
    return pty.openpty()


def test_plain_python():
    assert sorted([2, 1]) == [1, 2]  # not SIGINT, not asyncio.run: a comment is no code


def test_signal_in_its_body():
    os.kill(os.getpid(), 0)


def test_a_helper_two_calls_down():
    _deeper().wait()


def test_a_fixture(terminal):
    assert terminal


def test_a_synchronous_cli_command():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


class TestMethods:
    def _interrupt(self):
        return "interrupt"

    def test_through_self(self):
        assert self._interrupt()

    def test_nothing_of_it(self):
        assert self.__class__.__name__ == "TestMethods"
'''


def test_a_test_is_marked_by_what_its_code_touches(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_planted=_MODULE)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--collect-only", "-m",
                                          "version_sensitive")
    marked = {line.split("::", 1)[1] for line in result.outlines if line.startswith("test_planted.py::")}
    assert marked == {"test_signal_in_its_body", "test_a_helper_two_calls_down", "test_a_fixture",
                      "TestMethods::test_through_self"}, result.stdout.str()


def test_what_parts_only_at_3_11_is_left_to_3_10(pytester: pytest.Pytester) -> None:
    """`version_sensitive_312` (what 3.12 and 3.13 run) leaves out a test touching only what parts at 3.11
    (cancellation, tomllib), and keeps one touching that and more."""
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_planted=_MODULE + '''

def test_cancellation_only(scope):
    scope.cancel()


def test_cancellation_and_a_signal(scope):
    scope.cancel()
    os.kill(os.getpid(), 0)


@pytest.mark.version_sensitive
def test_marked_by_hand():
    pass
''')
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--collect-only", "-m",
                                          "version_sensitive_312")
    marked = {line.split("::", 1)[1] for line in result.outlines if line.startswith("test_planted.py::")}
    assert marked == {"test_signal_in_its_body", "test_a_helper_two_calls_down", "test_a_fixture",
                      "test_cancellation_and_a_signal", "test_marked_by_hand"}, result.stdout.str()


@pytest.mark.parametrize(("code", "touches"), [
    ("signal.signal(signal.SIGINT, handler)", ["signals"]),
    ("with ChildProcess(argv) as proc: ...", ["processes"]),
    ("subprocess.run([*cmd, 'runs', '--json'])", []),
    ("subprocess.run([*cmd, 'run', '--background', 'x'])", ["processes"]),
    ("import readline", ["terminal"]),
    ("asyncio.get_running_loop()", ["event loops"]),
    ("scope.cancel()", ["cancellation"]),
    ("typing.get_type_hints(Model)", ["typing"]),
    ("(home / 'config.toml').write_text(text)", ["branches at 3.11"]),
    ("if sys.version_info >= (3, 12): ...", ["version branches"]),
    ("anyio.run(main)", []),
])
def test_each_rule_names_what_it_catches(code: str, touches: list[str]) -> None:
    assert exercises(code) == touches


def test_tox_ini_states_each_rule() -> None:
    header = (Path(__file__).resolve().parents[1] / "tox.ini").read_text().split("[tox]")[0]
    assert "version_sensitive" in header
    assert [name for name in EXERCISES if f"{name} (" not in header] == [], "tox.ini's header states every rule"


def test_py312_and_py313_share_the_312_selection(pytester: pytest.Pytester) -> None:
    """Each `version_sensitive_312` test is in exactly one of `share_312`/`share_313`, and nothing else is."""
    pytester.makeconftest(_CONFTEST)
    pytester.makepyfile(test_planted=_MODULE)

    def selected(marker: str) -> set[str]:
        result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "--collect-only", "-m", marker)
        return {line.split("::", 1)[1] for line in result.outlines if line.startswith("test_planted.py::")}

    whole, first, second = selected("version_sensitive_312"), selected("share_312"), selected("share_313")
    assert whole and first | second == whole and not first & second
