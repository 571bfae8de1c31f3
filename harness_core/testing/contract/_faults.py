"""The contract's tests of what goes wrong and of what every provider must honour: a missing, too-old or crashing
CLI, a killed Harness, events emitted after the run returned, secrets in a run's files, the spec fields an agent
must receive.
Layer: testing (private part of `harness_core.testing.contract.ProviderContract`; documented there). Knows the
public runner API, the scenario vocabulary and the process-tree helpers; knows no concrete provider.
"""

from __future__ import annotations

import json
import signal
import stat
from contextlib import ExitStack
from pathlib import Path

import anyio
import pytest

from harness_core.errors import CliNotFoundError, CliVersionUnsupportedError
from harness_core.events import RunStatus
from harness_core.redaction import RunSecrets
from harness_core.scripted.scenarios import LEAK_ENV, LEAK_SHAPED, SCENARIOS
from harness_core.spec import SandboxMode
from harness_core.store import read_events
from harness_core.testing.contract._base import ContractBase, Play, written_files
from harness_core.testing.contract._killed_host import kill_host_during_command
from harness_core.testing.contract._secrets import Secret, assert_no_secrets_in_events, assert_no_secrets_in_files
from harness_core.testing.contract._support import LateEmits
from harness_core.transport.supervisor import available as supervisor_available

__all__ = ["FaultTests"]

_LATE_WINDOW = 0.5
"""Seconds after a run's `done` in which a task the provider left running would show itself by emitting."""
_MODEL = "harness-contract-model"
_SYSTEM = "harness-contract-instructions: answer briefly."


class FaultTests(ContractBase):
    """Faults and the fields every provider must honour (mixed into `ProviderContract`)."""

    @pytest.mark.anyio
    async def test_missing_cli_is_reported(self, tmp_path: Path, play: Play) -> None:
        options = self.missing_cli_options(tmp_path)
        if options is None:
            pytest.skip(f"{self.provider_name} drives no CLI")
        with pytest.raises(CliNotFoundError) as caught:
            await play("say", provider_options=options)
        assert "install" in str(caught.value).lower()

    @pytest.mark.anyio
    async def test_too_old_cli_is_refused(self, play: Play) -> None:
        minimum = self._provider().cls.info.min_cli_version
        if minimum is None:
            pytest.skip(f"{self.provider_name} declares no minimum CLI version")
        with pytest.raises(CliVersionUnsupportedError) as caught:
            await play("say", fault="too_old")
        assert minimum in str(caught.value)

    @pytest.mark.anyio
    async def test_cli_crash_mid_turn_is_reported(self, play: Play) -> None:
        played = await play("tools", fault="crash")
        self.check_invariants(played)
        assert played.result.status is RunStatus.FAILED, (
            f"the CLI was killed mid-turn, yet the run ended {played.result.status.value}: a provider must check "
            "how its CLI exited")
        assert played.result.error is not None and played.result.error.code == "process_exited", played.result.error

    @pytest.mark.parametrize("sig", ["SIGKILL", "SIGHUP"])
    def test_nothing_outlives_a_killed_harness(self, sig: str, tmp_path: Path, harness_real: bool) -> None:
        """Whatever kills the process running Harness (SIGKILL, an OOM kill, the terminal closing), the agent
        and every process it started — also in their own session — are gone within seconds."""
        if not supervisor_available():
            pytest.skip("no process supervisor on this platform (Linux only)")
        with ExitStack() as stack:
            spec = self.served_spec("slow_command", tmp_path, harness_real, stack)
            outcome, survivors = kill_host_during_command(spec, self.provider_name, tmp_path, signal.Signals[sig])
        if outcome != "killed":
            pytest.skip(f"{self.provider_name}: {outcome}")
        assert not survivors, (f"alive after {sig} of the process running Harness, once its process supervisors "
                               f"had finished (and 3 s more): {survivors}")

    @pytest.mark.anyio
    @pytest.mark.parametrize("name", ["say", "tools"])
    async def test_nothing_is_emitted_after_the_run_returns(self, name: str, play: Play) -> None:
        """A task the provider left running (a reader still feeding deltas, an unawaited callback) must not emit
        once `run` returned: the runner refuses such an event and logs it; this test gives such a task
        `_LATE_WINDOW` seconds after `done` to show itself."""
        with LateEmits() as late:
            played = await play(name)
            await anyio.sleep(_LATE_WINDOW)  # an observation window, not a synchronisation: nothing to wait for
        self.check_invariants(played)
        assert not late.refused, (
            f"the provider emitted after its run returned (the runner refused it): {late.refused}. Wait for every "
            "task that emits before returning the result.")

    @pytest.mark.anyio
    async def test_no_secret_reaches_any_file(self, play: Play, monkeypatch: pytest.MonkeyPatch) -> None:
        """A command prints a `spec.env` value, a secret-looking variable of Harness's environment and a credential
        shape, and the model repeats one (scenario `print_secrets`): the consumer sees them, but no file the run
        wrote (run log, wire log) holds any of them, nor any other secret of the run, and each is readable by its
        owner alone (0600, the runs dir 0700)."""
        spec_name, env_name = "HARNESS_PROBE_VALUE", "HARNESS_PROBE_TOKEN"
        monkeypatch.setenv(env_name, LEAK_ENV[env_name])
        played = await play("print_secrets", env={spec_name: LEAK_ENV[spec_name]}, record_wire=True,
                            check_secrets=False)
        logged = list(read_events(played.log_path))  # the log is the stream, scrubbed: same events, in order
        assert [(e.seq, e.type) for e in logged] == [(e.seq, e.type) for e in played.events]
        printed = (Secret(spec_name, LEAK_ENV[spec_name], "spec.env"),
                   Secret(env_name, LEAK_ENV[env_name], "the process environment"),
                   Secret("a credential-shaped string", LEAK_SHAPED, "the command's output"))
        outputs = " ".join(str(r.output) for r in played.of_type("tool_result"))
        if self.reports_command_output:
            assert all(secret.value in outputs for secret in printed), (
                f"the command's output did not reach the consumer, so nothing was tested: {outputs!r}")
        else:  # the model's answer repeats one: that much reaches the consumer
            assert LEAK_SHAPED in played.text, f"the answer did not reach the consumer: {played.text!r}"
        written = written_files(played.log_path.parent)
        assert played.log_path in written
        others = [s for s in played.secrets if s.name not in (spec_name, env_name)]
        assert_no_secrets_in_files(written, [*printed, *others])
        assert_no_secrets_in_events(played.events, others)
        for path in written:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path.name} is readable by others"
        assert stat.S_IMODE(played.log_path.parent.stat().st_mode) == 0o700, "the runs dir is open to others"

    @pytest.mark.anyio
    async def test_a_large_prompt_is_scrubbed_in_time(self, play: Play) -> None:
        """A 100 KB prompt made of what slows a backtracking scrubber (a run of letters, `a://` and `sk-`
        repeated, `a:` without `@`), with a `spec.env` value and a credential shape in it: the run ends within its
        deadline like any other (a quadratic scrubber took minutes over it, the event loop held all along) and
        the log keeps the prompt, both secrets masked."""
        value = LEAK_ENV["HARNESS_PROBE_VALUE"]
        prompt = " ".join(("a" * 40_000, "a://" * 5_000, f"{value} {LEAK_SHAPED}", "sk-" * 6_000, "a:" * 1_000,
                           "Reply briefly."))
        played = await play("say", prompt=prompt, env={"HARNESS_PROBE_VALUE": value}, record_wire=True)
        assert played.result.status is RunStatus.SUCCESS, played.result.error
        logged = next(read_events(played.log_path))
        assert logged.type == "run_started"
        shown = logged.spec["prompt"]
        assert shown.startswith("a" * 40_000) and shown.endswith("Reply briefly."), shown[:80]
        for path in sorted(p for p in played.log_path.parent.rglob("*") if p.is_file()):
            data = path.read_bytes()
            leaked = [secret for secret in (value, LEAK_SHAPED) if secret.encode() in data]
            assert not leaked, f"{path.name} holds secrets {leaked}: every file Harness writes must be scrubbed"

    def test_offline_secrets_leave_harness_paths_alone(self, tmp_path: Path) -> None:
        """The provider's offline setup (a scripted key in `env`, say) is made of secrets the logs scrub wherever
        they appear: none may be part of the temporary paths Harness itself creates, or every workspace path in
        an offline run's log would read `/tmp/***-ws-…`."""
        setup = self._provider().cls().offline_setup(SCENARIOS["say"], tmp_path / "ws", tmp_path / "state")
        if setup is None:
            pytest.skip(f"{self.provider_name} cannot run offline")
        if setup.backend is not None:
            setup.backend.stop()  # it may have bound its port to put its URL in the setup
        secrets = RunSecrets.of_run(setup.env, setup.provider_options, environ={})
        for path in ("/tmp/harness-offline-ws-abcd1234/notes.txt", "/tmp/harness-offline-abcd1234/home",
                     "/tmp/harness-demo-abcd1234/ws"):
            assert secrets.text(path) == path, f"an offline secret of {self.provider_name} is part of {path}"

    @pytest.mark.anyio
    async def test_spec_fields_reach_the_agent(self, play: Play, harness_real: bool) -> None:
        """`model` and `system_prompt` reach the model API (checked where the scripted backend shows the
        requests: real mode, or a provider whose fake mode uses one); a `read-only` sandbox changes nothing in
        the workspace (checked where a real agent or the provider itself does the file steps: real mode, or a
        provider with no CLI — a fake CLI only simulates them)."""
        if harness_real or self._provider().cls.info.cli_name is None:
            played = await play("tools", sandbox=SandboxMode.READ_ONLY)
            self.check_invariants(played)
            notes = (played.workspace / "notes.txt").read_text()
            assert notes == "alpha\n" and not (played.workspace / "new.txt").exists(), (
                "a read-only run changed the workspace: the provider must pass `sandbox` to its agent")
        asked = await play("say", model=_MODEL, system_prompt=_SYSTEM)
        self.check_invariants(asked)
        if asked.requests is None:
            pytest.skip(f"{self.provider_name}: model and system_prompt are checked only where a scripted backend "
                        "sees the model requests (run with --harness-real); the sandbox was checked")
        assert asked.requests, "the run sent no model request to the scripted backend"
        first = asked.requests[0]
        assert first.get("model") == _MODEL, (
            f"the model request names model {first.get('model')!r}, not the spec's {_MODEL!r}")
        assert _SYSTEM in json.dumps(first), "the spec's system_prompt is not in the model request"
