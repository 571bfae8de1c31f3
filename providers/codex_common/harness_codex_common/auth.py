"""Whether the Codex CLI has credentials, without calling a model: `codex login status`, then an API key in the env.

Layer: provider support shared by the Codex providers. `login_status` is pure; `check_codex_login` runs the command.
Knows nothing of runs, events or the runner. What `codex login status` prints: providers/codex_common/README.md.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from harness_core import ProtocolError
from harness_core.provider import AuthStatus, CliInfo, cli_output, scrub, truncate

__all__ = ["API_KEY_VARIABLES", "LOGIN_HINT", "check_codex_login", "login_status"]

LOGIN_HINT = (
    "run `codex login` (or `codex login --with-api-key`), or set OPENAI_API_KEY (or use --offline to try Harness "
    "without one)"
)
API_KEY_VARIABLES = ("OPENAI_API_KEY", "CODEX_API_KEY")
"""Environment variables holding an API key Codex uses when it has no stored login."""


def login_status(returncode: int, output: str, environ: Mapping[str, str]) -> AuthStatus:
    """What `codex login status` said (its exit status and output), with `environ` as a fallback.

    Raises:
        ProtocolError: a failing status with output this version of the check cannot read (doctor shows "not
            checked").
    """
    lines = [line.strip() for line in output.splitlines() if line.strip() and not line.startswith("WARNING:")]
    said = lines[0] if lines else ""
    if returncode == 0 and said.lower().startswith("logged in using"):
        return AuthStatus(logged_in=True, detail=said[0].lower() + said[1:])  # "logged in using ChatGPT"
    if returncode == 0 and said.lower().startswith("api key configured"):
        return AuthStatus(logged_in=True, detail="API key stored by `codex login`")
    key = next((name for name in API_KEY_VARIABLES if environ.get(name, "").strip()), None)
    if key is not None:
        return AuthStatus(logged_in=True, detail=f"API key from {key} (no stored login)")
    if returncode != 0 and "not logged in" in said.lower():
        return AuthStatus(logged_in=False, detail="not logged in", next_step=LOGIN_HINT)
    if returncode == 0:
        return AuthStatus(logged_in=True, detail=f"`codex login status` said: {truncate(scrub(said), 200)}")
    raise ProtocolError(f"`codex login status` said something unexpected (exit {returncode}); run it by hand to "
                        "see whether Codex is logged in", line=said or "(nothing)")  # doctor: "not checked (...)"


async def check_codex_login(cli: CliInfo, environ: Mapping[str, str] | None = None) -> AuthStatus:
    """Run `codex login status` (the probed binary, the environment a run would inherit: its CODEX_HOME) and say
    what it found.

    Raises:
        CliNotFoundError, SpawnFailedError: the command could not run or did not finish in time.
    """
    env = dict(os.environ if environ is None else environ)
    returncode, output = await cli_output([cli.path or "codex", "login", "status"], env=env, timeout=10.0)
    return login_status(returncode, output, env)


async def check_codex_auth(cli: CliInfo, codex_home: str | None = None) -> AuthStatus:
    """What both Codex providers' `check_auth` does: `check_codex_login` with the environment a run would have,
    its CODEX_HOME set to the provider's `codex_home` option when there is one."""
    environ = dict(os.environ)
    if codex_home:
        environ["CODEX_HOME"] = codex_home
    return await check_codex_login(cli, environ)

