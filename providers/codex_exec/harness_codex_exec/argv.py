"""The `codex exec` command line and environment for a spec, and the command line as a log shows it.

Layer: provider (codex-exec) configuration, pure. Knows the exec flags of codex 0.169.0 (checked against the
real binary), `CODEX_HOME` and `AgentRunSpec`; knows nothing of processes, events or the runner.
The observed flag facts it relies on: providers/codex_exec/README.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence

from harness_codex_common import config_args, mcp_config, redacted_argv as codex_redacted_argv

from harness_codex_exec.options import CodexExecOptions
from harness_codex_exec.sessions import codex_home
from harness_core import AgentRunSpec, InvalidSpecError

__all__ = ["PROMPT_FROM_STDIN", "build_argv", "build_env", "redacted_argv", "toml_string"]

PROMPT_FROM_STDIN = "-"
"""The prompt argument that makes codex read the prompt from stdin."""


def toml_string(text: str) -> str:
    """`text` as a TOML basic string. JSON escapes are TOML escapes as long as non-ASCII stays literal
    (TOML rejects the surrogate pairs `ensure_ascii` would write)."""
    return json.dumps(text, ensure_ascii=False)


def build_argv(
    codex: str, spec: AgentRunSpec, options: CodexExecOptions, *, extra_config: Mapping[str, str] = {},
    output_schema_file: str | None = None,
) -> list[str]:
    """`codex exec --json ... -- -` (or `... resume -- ID -`) for one run: the prompt is written to stdin, which
    is then closed. `output_schema_file` holds `spec.output_schema` (codex reads the schema from a file)."""
    argv = [codex, "exec", "--json", "--skip-git-repo-check", "-C", str(spec.cwd), "-s", spec.sandbox.value]
    if spec.model is not None:
        argv += ["-m", spec.model]
    if spec.system_prompt:
        argv += ["-c", f"developer_instructions={toml_string(spec.system_prompt)}"]
    argv += config_args({**extra_config, **mcp_config(spec, inline=False).config(), **options.config})
    for attachment in spec.attachments:  # images only: the runner names a file in the prompt instead
        if attachment.path is None:
            raise InvalidSpecError(f"codex-exec takes images by path: save {attachment.name} to a file and attach "
                                   "that (or use codex-appserver, which takes bytes)")
        argv += ["-i", str(attachment.path)]
    for feature in options.enable:
        argv += ["--enable", feature]
    for feature in options.disable:
        argv += ["--disable", feature]
    if output_schema_file is not None:
        argv += ["--output-schema", output_schema_file]
    if spec.resume_session is not None:
        argv += ["resume", "--", spec.resume_session, PROMPT_FROM_STDIN]
    else:
        argv += ["--", PROMPT_FROM_STDIN]
    return argv


def build_env(spec: AgentRunSpec, options: CodexExecOptions) -> dict[str, str]:
    """Our environment, the spec's `env` over it, and `CODEX_HOME` when the options name one."""
    env = {**os.environ, **spec.env, **mcp_config(spec, inline=False).env}
    if options.codex_home is not None:
        env["CODEX_HOME"] = str(codex_home(options.codex_home, spec.env))
    return env


def redacted_argv(argv: Sequence[str], known: tuple[str, ...] = ()) -> list[str]:
    """`argv` (from `build_argv`) for a log line, as every codex command line is logged
    (`harness_codex_common.redacted_argv`: `-c` values hidden, secrets scrubbed); the prompt is not in it."""
    return codex_redacted_argv(argv, known)
