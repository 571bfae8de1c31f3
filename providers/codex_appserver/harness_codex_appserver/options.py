"""Options of the codex-appserver provider (`-o KEY=VALUE`).

Layer: provider configuration. The options both Codex providers take (`codex_bin`, `config`, `enable`,
`disable`, `codex_home`) come from `harness_codex_common.CodexCliOptions`; the app-server's own are its
thread mode and its timeouts. Knows nothing of the command line (`argv`), JSON-RPC or events.
"""

from __future__ import annotations

from harness_codex_common import CodexCliOptions
from pydantic import Field

__all__ = ["CodexAppServerOptions"]


class CodexAppServerOptions(CodexCliOptions):
    """`-o KEY=VALUE` options of `codex-appserver`: the shared Codex options plus the app-server's own."""

    ephemeral: bool | None = Field(
        default=None,
        description="Start an ephemeral thread (no rollout on disk, cannot be resumed). Default: resumable.",
    )
    startup_timeout: float = Field(default=30.0, gt=0, description="Seconds for initialize + thread start.")
    request_timeout: float = Field(default=60.0, gt=0, description="Seconds for any other request.")
    interrupt_timeout: float = Field(
        default=5.0, gt=0, description="Seconds to wait for `turn/completed` after `turn/interrupt`."
    )
