"""The contract's offline check: `harness run --offline` reaches nothing but its loopback backend, whatever it is given.

Layer: testing (the shipped contract suite). Knows the CLI as a user runs it (a subprocess), `loopback_only` (a
network namespace with only loopback, watched by strace) and the provider's offline setup; knows no provider. Real
mode only: the provider's real CLI against its own scripted backend, exactly as a user runs it offline.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from harness_core.offline._setup import can_run_offline
from harness_core.testing.contract._base import ContractBase
from harness_core.testing.loopback_only import Watched, loopback_only_unavailable, run_loopback_only

__all__ = ["HOSTILE_PROXY", "OfflineTests"]

HOSTILE_PROXY = "http://192.0.2.1:3128"
"""The proxy every variable of the test's environment names (`HTTPS_PROXY`, `http_proxy`, ...): an address of
TEST-NET-1 (RFC 5737, never routed), unreachable in the test's namespace anyway. An agent that sent its calls to the
loopback backend through a proxy from the user's environment would be seen connecting there."""

_DEADLINE = 240.0


class OfflineTests(ContractBase):
    """`harness run --offline` connects only to its backend on 127.0.0.1, with `offline_options` and a proxy in the
    environment."""

    offline_options: ClassVar[tuple[str, ...]] = ()
    """`-o KEY=VALUE` options that `test_offline_run_connects_only_to_its_backend` gives the offline run: ones that
    must be merged into the provider's offline setup, not replace what it set (one key of a table the setup fills,
    an argument added to its arguments). A shallow merge would drop the setup's and send the agent to its default
    model API — which the test sees."""
    offline_environment: ClassVar[dict[str, str]] = {}
    """Variables of the user's environment that would send the agent elsewhere unless its offline setup overrides
    them (another model API's switch), given to the offline run beside a proxy in every proxy variable."""

    offline_hostile_options: ClassVar[tuple[str, ...]] = ()
    """`-o KEY=VALUE` options that would send the agent elsewhere if they were taken offline (an MCP server at a
    TEST-NET URL, ...): `test_offline_run_refuses_or_contains_hostile_options` wants them refused, naming the option,
    or the run to stay on loopback all the same."""
    offline_hostile_project: ClassVar[dict[str, str]] = {}
    """Files (relative path → text) of a project's own agent configuration that would send the agent elsewhere (a
    base URL or an MCP server at TEST-NET): `test_offline_run_in_a_trusted_project_loads_none_of_its_config` puts
    them in a project the user trusts and runs offline there (`--cwd`): an offline run never trusts its project."""

    @pytest.mark.real_cli
    def test_offline_run_connects_only_to_its_backend(self, tmp_path: Path, harness_real: bool) -> None:
        """The whole `harness run --offline` — Harness, its backend, the agent and every process it starts — runs in
        a network namespace with only loopback, under strace (`harness_core.testing.loopback_only`): the namespace
        makes sure nothing leaves even on a broken tree, the trace fails the test if anything merely tried (a
        connection beyond 127.0.0.1, or a DNS lookup). Checked at the syscall level because the agents are Node and
        native programs that Python-level interception cannot see; their resolved config alone would miss a call
        they make outside it (a proxy, telemetry, a plugin list)."""
        watched, _ = self._offline_run(tmp_path, harness_real, self.offline_options)
        assert watched.returncode == 0, f"exit {watched.returncode}:\n{watched.stderr[-3000:]}"
        done = json.loads(watched.stdout.strip().splitlines()[-1])
        assert done["type"] == "done" and done["result"]["status"] == "success", done

    def test_offline_run_refuses_or_contains_hostile_options(self, tmp_path: Path, harness_real: bool) -> None:
        """`offline_hostile_options` given to `harness run --offline`: refused before anything starts ("is not
        taken"), or the run stays on loopback; either way no attempt beyond it. (Not `real_cli`: a provider that
        names no hostile options skips it wherever it runs; the real CLI is required where it plays.)"""
        if not self.offline_hostile_options:
            pytest.skip("the provider names no offline_hostile_options")
        watched, shown = self._offline_run(tmp_path, harness_real, self.offline_hostile_options)
        if watched.returncode != 0:
            assert "is not taken" in watched.stderr, (
                f"`{shown}` failed without saying which option is not taken offline:\n{watched.stderr[-3000:]}")

    @pytest.mark.real_cli
    def test_offline_run_in_a_trusted_project_loads_none_of_its_config(self, tmp_path: Path,
                                                                      harness_real: bool) -> None:
        """A project the user trusts (`trusted_projects`) holding `offline_hostile_project`, run offline there with
        `--cwd`: the agent loads none of the project's own configuration, so nothing goes beyond loopback."""
        if not self.offline_hostile_project:
            pytest.skip("the provider names no offline_hostile_project")
        project = tmp_path / "project"
        for rel, text in self.offline_hostile_project.items():
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(text)
        (project / ".git").mkdir()  # the project's root, as `git init` marks it
        config = tmp_path / "xdg" / "harness" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(f"trusted_projects = [{json.dumps(str(project))}]\n")
        watched, _ = self._offline_run(tmp_path, harness_real, self.offline_options,
                                           ("--cwd", str(project), "--force"))
        assert watched.returncode == 0, f"exit {watched.returncode}:\n{watched.stderr[-3000:]}"

    def _offline_run(self, tmp_path: Path, harness_real: bool, given: tuple[str, ...],
                     flags: tuple[str, ...] = ()) -> tuple[Watched, str]:
        """`harness run --offline` with `given` options and `flags` in a loopback-only namespace, a hostile proxy in
        the environment; fails the test on any attempt beyond loopback. Returns the run and the command shown."""
        provider = self._provider()
        if not harness_real:
            pytest.skip("the offline network check plays the real CLI: run the contract with --harness-real")
        if not can_run_offline(provider.cls):
            pytest.skip(f"{self.provider_name} cannot run offline")
        why = loopback_only_unavailable()
        if why is not None and os.environ.get("HARNESS_REQUIRE_REAL_CLIS"):
            pytest.fail(f"{why}; the -real envs require this check (scripts/system-packages.sh installs them)")
        if why is not None:
            pytest.skip(why)
        env = dict(os.environ, HARNESS_RUNS_DIR=str(tmp_path / "runs"), HARNESS_PROVIDER="",
                   XDG_CONFIG_HOME=str(tmp_path / "xdg"))  # never this machine's harness/config.toml
        for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
            env[name] = HOSTILE_PROXY
        for name in ("NO_PROXY", "no_proxy"):
            env.pop(name, None)
        env.update(self.offline_environment)
        cli_name, real = provider.cls.info.cli_name, self.real_cli_path()
        if cli_name and real:
            env["PATH"] = f"{Path(real).parent}{os.pathsep}{env.get('PATH', '')}"
        elif cli_name and shutil.which(cli_name) is None:
            pytest.fail(f"the real {cli_name} is not installed (real_cli_path() and PATH have none)")
        options = [part for option in given for part in ("-o", option)]
        argv = [sys.executable, "-m", "harness_core", "run", "--offline", "-p", self.provider_name, "--json",
                *flags, *options, "contract: offline, loopback only"]
        shown = f"harness run --offline -p {self.provider_name} {' '.join([*flags, *options])}"
        watched = run_loopback_only(argv, env=env, cwd=tmp_path, timeout=_DEADLINE)
        tried = "\n".join(f"  {attempt}: {attempt.line[:300]}" for attempt in watched.attempts[:10])
        assert not watched.attempts, (
            f"`{shown}` tried to reach beyond loopback ({len(watched.attempts)} attempts; the namespace stopped "
            f"them):\n{tried}\nstderr:\n{watched.stderr[-2000:]}")
        return watched, shown
