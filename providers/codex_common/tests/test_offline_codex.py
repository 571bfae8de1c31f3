"""Codex offline without a CLI: the `-c` overrides, flags and environment that point codex at the scripted
Responses backend, the provider options built from them, and the isolated homes of `offline_setup`."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from harness_core.scripted.backends import ResponsesBackend
from harness_core.scripted.scenarios import SCENARIOS

from harness_codex_common import (
    OFFLINE_KEY_ENV,
    CodexCliOptions,
    config_args,
    offline_args,
    offline_config,
    offline_env,
    offline_options,
    offline_setup,
)


def test_offline_config_names_the_loopback_provider_without_retries() -> None:
    with ResponsesBackend(SCENARIOS["say"]) as backend:
        config = offline_config(backend)
        assert list(config) == ["model_provider", "model_providers.mock", "model", "analytics.enabled",
                                "model_catalog_json"]
        assert config["model_provider"] == '"mock"' and config["model"] == '"gpt-5.5"'
        catalogue = json.loads(Path(json.loads(config["model_catalog_json"])).read_text())  # its own, offline
        entry = catalogue["models"][0]
        assert (entry["slug"], entry["supports_search_tool"], entry["tool_mode"]) == ("gpt-5.5", False, "direct")
        assert config["analytics.enabled"] == "false"  # codex exec sends metrics to ab.chatgpt.com otherwise
        provider = config["model_providers.mock"]
        assert f'base_url="http://127.0.0.1:{backend.port}/v1"' in provider
        assert 'wire_api="responses"' in provider
        assert "request_max_retries=0" in provider and "stream_max_retries=0" in provider
        assert f'env_key="{OFFLINE_KEY_ENV}"' in provider
    assert offline_env() == {"HARNESS_MOCK_API_KEY": "scripted-offline-key"}


def test_offline_args_disable_retries_and_plugins_then_override() -> None:
    backend = ResponsesBackend(SCENARIOS["say"])
    try:
        args = offline_args(backend)
        assert args[:4] == ["--disable", "unbounded_connection_retries", "--disable", "plugins"]
        assert args[4:] == [part for key, value in offline_config(backend).items() for part in ("-c", f"{key}={value}")]
    finally:
        backend.stop()


def test_offline_options_render_to_the_same_overrides(tmp_path: Path) -> None:
    """What `harness run --offline` passes (options → the provider's `config_args`) is what `offline_args`
    gives a hand-run codex."""
    backend = ResponsesBackend(SCENARIOS["say"])
    try:
        options = CodexCliOptions.model_validate(offline_options(backend, tmp_path / "home"))
        assert config_args(options.config) == offline_args(backend)[4:]
        assert options.disable == ["unbounded_connection_retries", "plugins"]
        assert options.codex_home == str(tmp_path / "home") and (tmp_path / "home").is_dir()
    finally:
        backend.stop()


def test_offline_setup_isolates_codex_home_and_home(tmp_path: Path) -> None:
    setup = offline_setup(SCENARIOS["say"], tmp_path / "ws", tmp_path / "state")
    backend = setup.backend
    assert isinstance(backend, ResponsesBackend) and backend.cwd == tmp_path / "ws"
    try:
        assert setup.provider_options["codex_home"] == str(tmp_path / "state" / "codex-home")
        assert (tmp_path / "state" / "codex-home").is_dir()
        assert setup.env["HOME"] == str(tmp_path / "state" / "home")
        assert (tmp_path / "state" / "home").is_dir()
        assert setup.env[OFFLINE_KEY_ENV]
        assert setup.provider_options["config"] == offline_config(backend)
    finally:
        backend.stop()


def test_offline_setup_backend_is_bound_before_it_serves(tmp_path: Path) -> None:
    setup = offline_setup(SCENARIOS["say"], tmp_path / "ws", tmp_path / "state")
    assert setup.backend is not None
    url = setup.provider_options["config"]["model_providers.mock"].split('base_url="', 1)[1].split('"', 1)[0]
    with setup.backend:
        req = urllib.request.Request(f"{url}/responses", data=json.dumps({"stream": True}).encode())
        with urllib.request.urlopen(req, timeout=5) as resp:
            assert b"Hello from the scripted model." in resp.read()


@pytest.mark.parametrize("module", ["harness_codex_common", "harness_codex_common.cli"])
def test_importing_it_loads_neither_the_backends_nor_testing(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('harness_core.testing', "
        "'harness_core.scripted.backends')))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
