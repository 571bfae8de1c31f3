"""The `codex exec` command line and the provider options (flags checked against codex 0.169.0)."""

from __future__ import annotations

import pathlib
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_codex_exec.argv import build_argv, build_env, redacted_argv, toml_string
from harness_codex_exec.options import CodexExecOptions
from harness_core import AgentRunSpec, McpServer, SandboxMode
from harness_core.provider import REDACTED


def test_new_thread_argv(tmp_path: Path) -> None:
    spec = AgentRunSpec(
        prompt="-starts with a dash",
        cwd=tmp_path,
        model="gpt-5.5",
        sandbox=SandboxMode.READ_ONLY,
        system_prompt='Say "hi"\nthen stop ✓',
    )
    options = CodexExecOptions(config=["model_reasoning_effort=high"], enable="a,b", disable=["plugins"])
    assert build_argv("codex", spec, options) == [
        "codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "-C",
        str(tmp_path),
        "-s",
        "read-only",
        "-m",
        "gpt-5.5",
        "-c",
        'developer_instructions="Say \\"hi\\"\\nthen stop ✓"',
        "-c",
        "model_reasoning_effort=high",
        "--enable",
        "a",
        "--enable",
        "b",
        "--disable",
        "plugins",
        "--",
        "-",  # the prompt goes on stdin: never in the command line others can read
    ]
    assert "-starts with a dash" not in " ".join(build_argv("codex", spec, options))


def test_resume_argv_keeps_exec_flags_before_resume(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="go on", cwd=tmp_path, resume_session="01a2-thread")
    argv = build_argv("codex", spec, CodexExecOptions())
    assert argv[-5:] == ["workspace-write", "resume", "--", "01a2-thread", "-"]
    assert argv.index("-C") < argv.index("resume")


def test_toml_string_is_toml() -> None:
    import tomllib

    text = 'quote " backslash \\ tab \t emoji 😀 newline \n'
    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text


def test_bad_config_pair_is_rejected() -> None:
    with pytest.raises(ValidationError, match="KEY=VALUE"):
        CodexExecOptions(config=["novalue"])


def _c_values(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, a in enumerate(argv) if a == "-c"]


def test_nested_config_from_the_command_line(tmp_path: Path) -> None:
    """`-o config.tools.web_search=true` (nested by the CLI's option parser) is accepted, as by codex-appserver."""
    raw = {  # what `harness run -o config.tools.web_search=true -o config.model_reasoning_effort=high ...` gives
        "config": {
            "tools": {"web_search": "true"},
            "model_reasoning_effort": "high",
            "sandbox_workspace_write": {"network_access": "false"},
        }
    }
    argv = build_argv("codex", AgentRunSpec(prompt="p", cwd=tmp_path), CodexExecOptions.model_validate(raw))
    assert _c_values(argv) == [
        "tools.web_search=true",
        "model_reasoning_effort=high",
        "sandbox_workspace_write.network_access=false",
    ]


def test_config_values_of_other_types(tmp_path: Path) -> None:
    options = CodexExecOptions.model_validate(
        {"config.model": "gpt-5.5", "config": {"n": 3, "flag": True, "names": ["a", "b"]}}
    )
    argv = build_argv("codex", AgentRunSpec(prompt="p", cwd=tmp_path), options)
    assert sorted(_c_values(argv)) == ["flag=true", "model=gpt-5.5", "n=3", 'names=["a", "b"]']


def test_bad_config_key_is_rejected() -> None:
    with pytest.raises(ValidationError, match="bad config key"):
        CodexExecOptions(config={" model": "x"})


def test_argv_log_redacts_config_values_and_prompt(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="the prompt", cwd=tmp_path, system_prompt="private instructions")
    argv = build_argv("codex", spec, CodexExecOptions(config={"model_providers.x.api_key": "sk-secret"}))
    shown = redacted_argv(argv)
    text = " ".join(shown)
    assert "private instructions" not in text and "sk-secret" not in text and "the prompt" not in text
    assert f"developer_instructions={REDACTED}" in shown and f"model_providers.x.api_key={REDACTED}" in shown
    assert shown[:4] == ["codex", "exec", "--json", "--skip-git-repo-check"]


def test_argv_log_scrubs_known_secrets_and_credential_shapes(tmp_path: Path) -> None:
    ws = tmp_path / "team-token-1234567"
    spec = AgentRunSpec(prompt="p", cwd=ws, model="sk-abcdefghijklmnop")
    shown = redacted_argv(build_argv("codex", spec, CodexExecOptions()), known=("team-token-1234567",))
    text = " ".join(shown)
    assert "sk-abcdefghijklmnop" not in text and "team-token-1234567" not in text
    assert shown[shown.index("-C") + 1] == str(tmp_path / REDACTED)



def test_doctor_checks_codex_login_in_the_runs_codex_home(tmp_path: pathlib.Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`check_auth` (what `harness doctor` calls) runs `codex login status` with the CODEX_HOME a run would use."""
    import anyio

    from harness_codex_exec.provider import CodexExecProvider
    from harness_core.provider import CliInfo

    for name in ("OPENAI_API_KEY", "CODEX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    seen = tmp_path / "seen"
    codex = tmp_path / "codex"
    codex.write_text(f"#!/bin/sh\necho \"$* $CODEX_HOME\" > {seen}\necho 'Not logged in'\nexit 1\n")
    codex.chmod(0o755)
    provider = CodexExecProvider()
    options = provider.parse_options({"codex_home": str(tmp_path / "home")})
    status = anyio.run(provider.check_auth, options, CliInfo(path=str(codex), version="0.169.0"))
    assert seen.read_text().strip() == f"login status {tmp_path / 'home'}"
    assert status is not None and not status.logged_in and "codex login" in (status.next_step or "")


def test_a_servers_path_and_key_leave_codexs_own_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-codexs-own")
    server = McpServer(name="srv", command="srv", env={"PATH": "/opt/srv/bin", "OPENAI_API_KEY": "sk-server-only"})
    spec = AgentRunSpec(prompt="x", cwd=tmp_path, mcp_servers=[server])
    env = build_env(spec, CodexExecOptions())
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin" and env["OPENAI_API_KEY"] == "sk-codexs-own"
    assert {env["HARNESS_MCP_0_ENV_0"], env["HARNESS_MCP_0_ENV_1"]} == {"/opt/srv/bin", "sk-server-only"}
    argv = " ".join(build_argv("codex", spec, CodexExecOptions()))
    assert "sk-server-only" not in argv and "/opt/srv/bin" not in argv
    assert 'shell_environment_policy.exclude=["HARNESS_MCP_0_ENV_0","HARNESS_MCP_0_ENV_1"]' in argv.replace(" ", "")
