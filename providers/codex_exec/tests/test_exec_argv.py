"""The `codex exec` command line and the provider options (flags checked against codex 0.169.0)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_codex_exec.argv import CodexExecOptions, build_argv, toml_string
from harness_core.spec import AgentRunSpec, SandboxMode


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
        "-starts with a dash",
    ]


def test_resume_argv_keeps_exec_flags_before_resume(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="go on", cwd=tmp_path, resume_session="01a2-thread")
    argv = build_argv("codex", spec, CodexExecOptions())
    assert argv[-5:] == ["workspace-write", "resume", "--", "01a2-thread", "go on"]
    assert argv.index("-C") < argv.index("resume")


def test_toml_string_is_toml() -> None:
    import tomllib

    text = 'quote " backslash \\ tab \t emoji 😀 newline \n'
    assert tomllib.loads(f"k = {toml_string(text)}")["k"] == text


def test_bad_config_pair_is_rejected() -> None:
    with pytest.raises(ValidationError, match="KEY=VALUE"):
        CodexExecOptions(config=["novalue"])
