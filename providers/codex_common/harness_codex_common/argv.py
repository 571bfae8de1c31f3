"""A codex command line as a log shows it.

Layer: provider support shared by the Codex providers, pure. Knows that `-c KEY=VALUE` carries config whose
value may be a secret (a header, a key, a system prompt); knows nothing of which subcommand the argv runs
(`app-server`, `exec`) or where its prompt is: a provider drops what it must before calling this.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness_core.provider import REDACTED, redact_argv

__all__ = ["redacted_argv"]


def redacted_argv(argv: Sequence[str], known: tuple[str, ...] = ()) -> list[str]:
    """`argv` for a log line: each `-c KEY=VALUE` keeps its key but not its value, every other argument
    scrubbed of credential shapes and the `known` secrets (the core's `redact_argv`)."""
    shown = redact_argv(argv, (), known)
    for i in range(1, len(argv)):
        if argv[i - 1] == "-c":
            key, sep, _ = argv[i].partition("=")
            shown[i] = f"{key}={REDACTED}" if sep else REDACTED
    return shown
