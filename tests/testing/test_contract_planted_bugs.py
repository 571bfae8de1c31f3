"""The contract suite proves what it claims: each typical provider bug, planted in the scripted provider, fails
the contract test that should catch it; the same tests pass for the scripted provider without a bug.

Each case writes a one-class contract module (the provider registered through the plugin host, as
`tests/planted_providers.py` says) and runs pytest on it in-process, selecting the contract tests that matter.
"""

from __future__ import annotations

import re

import pytest

import tests.planted_providers as planted
from harness_core.scripted.scenarios import SCENARIOS
from harness_core.testing.contract import ProviderContract
from harness_core.testing.contract._watchdog import Watchdog

pytest_plugins = ["pytester"]

_MODULE = '''
from harness_core.testing.contract import ProviderContract
import tests.planted_providers as planted


class TestPlantedContract(ProviderContract):
    provider_name = "planted-{bug}"
    extra_plugins = (("planted", planted),)
'''

_HANG_WITHIN = 3.0
"""The hanging bugs' `hang_within` (the suite's is 20 s), and of their clean twins: what they prove is that the
watchdog, not `run_deadline` (90 s), ends the run and says why; the suite's own bounds are checked below."""
_HANGS = {"swallows-and-hangs", "asks-and-hangs"}
_STALL_IDLE_TIMEOUT = 3.0  # the contract's test_stall_is_caught_by_idle_timeout

_CLI_SETUP = '''
    def setup_run(self, scenario, workspace, state_dir, *, real, fault=None):
        from harness_core.provider import OfflineSetup

        if fault not in (None, "crash"):
            return None
        return OfflineSetup(provider_options={{"scenario": scenario.name, "crash": fault == "crash"}})
'''

# bug → (the contract tests to run, `-k` expression; what the failure report must say)
_CASES: dict[str, tuple[str, str]] = {
    "drops-tool-result": ("test_scenario and tools", r"FAILED .*test_scenario\[asyncio-tools\]"),
    "ignores-interrupt": ("test_interrupt_ends_interrupted and slow_text",
                          "the provider did not end the run after the interrupt; the runner stopped it hard"),
    "emits-after-return": ("test_nothing_is_emitted_after_the_run_returns and say",
                           "the provider emitted after its run returned"),
    "fakes-resume": ("test_resume_of_an_unknown_session_fails",
                     "a provider must not pretend to continue a session its agent does not have"),
    # It fails after `hang_within`, not the `run_deadline` of 90 s, and says which scenario hung and what it did last.
    "swallows-and-hangs": ("test_api_failure_is_classified and asyncio-fail_500",
                           r"the provider never returned \(scenario 'fail_500'\): nothing happened for 3 s: no "
                           r"event, no model request; the last sign of the agent was event #\d+ "),
    # An approval no approver answers: the watchdog waits for it no longer than `hang_within` (it once waited for
    # ever, and the test ran into its 120 s deadline).
    "asks-and-hangs": ("test_scenario and asyncio-say",
                       r"an approval waited 3 s for its decision \(the contract's approver answers at once\)"),
    # The message names every variable the event carries, long or short, and where it came from.
    "leaks-spec-env": ("test_scenario and asyncio-say",
                       r"event #\d+ \(provider_raw\) carries the value of the secrets HARNESS_CONTRACT_SECRET \(from "
                       r"spec.env\) as its value, HARNESS_CONTRACT_API_KEY \(from spec.env, a 3-character value\) as "
                       r"`HARNESS_CONTRACT_API_KEY=…` \(its value right after its name\)"),
    "leaks-process-env": ("test_scenario and asyncio-say",
                          r"carries the value of the secrets HARNESS_CONTRACT_TOKEN \(from the process environment\) "
                          r"as its value, HARNESS_CONTRACT_SHORT_TOKEN \(from the process environment, a 3-character "
                          r"value\)"),
    "leaks-api-key": ("test_scenario and asyncio-say",
                      r"carries the value of the secret HARNESS_CONTRACT_API_KEY \(from spec.env, a 3-character "
                      r"value\) as the secret-looking field `payload.apiKey`"),
    "records-api-key": ("test_no_secret_reaches_any_file and asyncio",
                        r"\.wire\.jsonl holds the value of the secret HARNESS_CONTRACT_API_KEY \(from spec.env, a "
                        r"3-character value\) as the secret-looking field `line.api_key` of line \d+"),
    "leaves-child-running": ("test_scenario and asyncio-say", "processes left alive after the run"),
    "ignores-exit-status": ("test_cli_crash_mid_turn_is_reported",
                            "the CLI was killed mid-turn, yet the run ended success"),
    "half-ported": ("test_imports_harness_only_through_the_facades",
                    r"planted_port.py:11: harness_core.capabilities: import ProviderInfo from harness_core\n"
                    r".*planted_port.py:12: harness_core.events: import TextDelta from harness_core"),
}
_CLI_BUGS = {"ignores-exit-status"}
"""Bugs of a CLI-driving provider: planted in `planted_providers.CliNoBug`, whose clean twin is `cli-none`."""


def _run(pytester: pytest.Pytester, bug: str, selection: str, *, cli: bool = False,
         hang_within: float | None = None) -> pytest.RunResult:
    module = (_MODULE + (f"    hang_within = {hang_within}\n" if hang_within is not None else "")
              + (_CLI_SETUP if cli else ""))
    pytester.makepyfile(test_planted=module.format(bug=bug))
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", "-q", "-k", selection)


@pytest.mark.parametrize("bug", sorted(_CASES))
def test_a_planted_bug_fails_the_contract(bug: str, pytester: pytest.Pytester) -> None:
    selection, says = _CASES[bug]
    try:
        result = _run(pytester, bug, selection, cli=bug in _CLI_BUGS,
                      hang_within=_HANG_WITHIN if bug in _HANGS else None)
    finally:
        for child in planted.LEFT_RUNNING:  # what the planted bug left behind, once the suite has seen it
            child.kill()
            child.wait()
        planted.LEFT_RUNNING.clear()
    outcomes = result.parseoutcomes()
    report = result.stdout.str()
    if bug == "leaves-child-running":  # caught by the teardown: the test body itself passes, its teardown errors
        assert outcomes.get("errors", 0) >= 1, report
    else:
        assert outcomes.get("failed", 0) + outcomes.get("errors", 0) >= 1 and not outcomes.get("passed"), report
    assert re.search(says, report), f"the failure does not say {says!r}:\n{report}"


@pytest.mark.parametrize("bug", sorted(_CASES))
def test_the_same_tests_pass_without_the_bug(bug: str, pytester: pytest.Pytester) -> None:
    """So that a planted bug's failure cannot come from the test itself: the clean provider passes them."""
    selection, _ = _CASES[bug]
    cli = bug in _CLI_BUGS
    result = _run(pytester, "cli-none" if cli else "none", selection, cli=cli,
                  hang_within=_HANG_WITHIN if bug in _HANGS else None)  # the bound its bug ran with
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 1 and not outcomes.get("failed") and not outcomes.get("errors"), (
        result.stdout.str())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_the_suites_bounds_report_a_hang_before_the_runs_deadline(name: str) -> None:
    """The suite's own bounds, which the hanging bugs above lower: with every scenario's longest legitimate pause
    (a stall cut by the contract's idle timeout), the watchdog's silence and the runner's interrupt grace still end
    a hung run before `run_deadline`, so the failure says why it hung rather than that the run took too long."""
    contract = ProviderContract
    dog = Watchdog(SCENARIOS[name], start_within=contract.start_within, hang_within=contract.hang_within,
                   idle_timeout=_STALL_IDLE_TIMEOUT)
    assert dog.quiet_within + contract.interrupt_within < contract.run_deadline
    assert contract.start_within + contract.interrupt_within < contract.run_deadline
