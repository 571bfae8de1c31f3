"""Options of the codex-exec provider (`-o KEY=VALUE`).

Layer: provider configuration. Exactly the options both Codex providers take (`codex_bin`, `config`,
`enable`, `disable`, `codex_home`, from `harness_codex_common.CodexCliOptions`); `codex exec` has none of
its own. Knows nothing of the command line (`argv`), processes or events.
"""

from __future__ import annotations

from harness_codex_common import CodexCliOptions

__all__ = ["CodexExecOptions"]


class CodexExecOptions(CodexCliOptions):
    """Options of the codex-exec provider (`-o KEY=VALUE`): exactly the shared Codex options."""
