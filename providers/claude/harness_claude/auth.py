"""Whether Claude Code has credentials, without calling a model: `claude auth status --json` (2.1.328).

Layer: provider (claude). `auth_status` turns the command's exit status and output into an `AuthStatus` (pure,
tested against recorded outputs); `check_claude_auth` runs it. Knows nothing of runs, events or the runner.
What the command prints: providers/claude/README.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from harness_core import ProtocolError
from harness_core.provider import AuthStatus, CliInfo, cli_output

__all__ = ["AUTH_STATUS_ARGS", "LOGIN_HINT", "auth_status", "check_claude_auth"]

AUTH_STATUS_ARGS = ("auth", "status", "--json")
LOGIN_HINT = "run `claude` and /login, or set ANTHROPIC_API_KEY (or use --offline to try Harness without one)"
_METHODS = {"api_key": "API key", "claude.ai": "claude.ai login", "oauth_token": "OAuth token"}


def auth_status(returncode: int, output: str) -> AuthStatus:
    """What `claude auth status --json` said (its exit status and output, which may carry warning lines).

    Raises:
        ProtocolError: output this version of the check cannot read (doctor shows "not checked").
    """
    start, end = output.find("{"), output.rfind("}")
    try:
        said = json.loads(output[start : end + 1]) if 0 <= start < end else None
    except json.JSONDecodeError:
        said = None
    if not isinstance(said, dict) or not isinstance(said.get("loggedIn"), bool):  # doctor: "not checked (...)"
        raise ProtocolError(f"`claude auth status` said something unexpected (exit {returncode}); run it by hand "
                            "to see whether Claude Code is logged in", line=output.strip() or "(nothing)")
    if not said["loggedIn"]:
        return AuthStatus(logged_in=False, detail="not logged in", next_step=LOGIN_HINT)
    method = str(said.get("authMethod") or "unknown")
    detail = _METHODS.get(method, method)
    source = said.get("apiKeySource")
    if isinstance(source, str) and source:
        detail += f" from {source}"
    return AuthStatus(logged_in=True, detail=detail)


async def check_claude_auth(cli: CliInfo, environ: Mapping[str, str] | None = None) -> AuthStatus:
    """Run `claude auth status --json` (the probed binary, the environment a run would inherit) and say what
    it found.

    Raises:
        CliNotFoundError, SpawnFailedError: the command could not run or did not finish in time.
    """
    env = {**(os.environ if environ is None else environ), "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    returncode, output = await cli_output([cli.path or "claude", *AUTH_STATUS_ARGS], env=env, timeout=10.0)
    return auth_status(returncode, output)
