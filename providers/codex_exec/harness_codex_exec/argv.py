"""The `codex exec` command line for a spec, and the options that shape it.

Layer: provider (codex-exec), pure. Knows the exec flags of codex 0.169.0 (checked against the real binary)
and `AgentRunSpec`; knows nothing of processes, events or the runner.

Observed facts this module relies on:
- `-C` and `-s` belong to `exec`, not to `exec resume`; given before `resume` they apply to the resumed
  thread too (the resumed turn's permissions follow the new `-s`).
- A system prompt goes in `-c developer_instructions=...` (a developer message ahead of the user turn);
  the `instructions` key is not sent by 0.169.0.
- `--` before the positionals lets a prompt start with `-`; for resume it goes after `resume`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from harness_codex_common.cli import CodexCliOptions, config_args
from harness_core.spec import AgentRunSpec

__all__ = ["CodexExecOptions", "build_argv", "redacted_argv", "toml_string"]


class CodexExecOptions(CodexCliOptions):
    """Options of the codex-exec provider (`-o KEY=VALUE`): exactly the shared Codex options."""


def toml_string(text: str) -> str:
    """`text` as a TOML basic string. JSON escapes are TOML escapes as long as non-ASCII stays literal
    (TOML rejects the surrogate pairs `ensure_ascii` would write)."""
    return json.dumps(text, ensure_ascii=False)


def build_argv(
    codex: str, spec: AgentRunSpec, options: CodexExecOptions, *, extra_config: Mapping[str, str] = {}
) -> list[str]:
    """`codex exec --json ... PROMPT` (or `... resume -- ID PROMPT`) for one run; stdin must be closed."""
    argv = [codex, "exec", "--json", "--skip-git-repo-check", "-C", str(spec.cwd), "-s", spec.sandbox.value]
    if spec.model is not None:
        argv += ["-m", spec.model]
    if spec.system_prompt:
        argv += ["-c", f"developer_instructions={toml_string(spec.system_prompt)}"]
    argv += config_args({**extra_config, **options.config})
    for feature in options.enable:
        argv += ["--enable", feature]
    for feature in options.disable:
        argv += ["--disable", feature]
    if spec.resume_session is not None:
        argv += ["resume", "--", spec.resume_session, spec.prompt]
    else:
        argv += ["--", spec.prompt]
    return argv


def redacted_argv(argv: list[str]) -> list[str]:
    """`argv` for a log line: every `-c KEY=VALUE` keeps its key but not its value (values may hold the system
    prompt or secrets), and the prompt (the last argument) is dropped."""
    out: list[str] = []
    for i, arg in enumerate(argv[:-1]):
        if i and argv[i - 1] == "-c":
            key, sep, _ = arg.partition("=")
            out.append(f"{key}=<redacted>" if sep else "<redacted>")
        else:
            out.append(arg)
    return out
