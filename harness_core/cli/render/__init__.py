"""The live terminal rendering of a run's events: `Renderer` (public as `harness_core.cli.render`), its text, marks,
layout, diffs, tool lines and output streams.

Layer: CLI rendering; knows the event models, nothing of commands, providers or the run store. The package loads
at start-up (its layout helpers are light): the renderer's names are imported when first asked for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness_core.cli.render.renderer import (
        START_LINE_AFTER,
        SUMMARY_LINES,
        Renderer,
        format_duration,
        format_tokens,
        tool_label,
        tool_line,
        use_plain,
    )

__all__ = ["START_LINE_AFTER", "SUMMARY_LINES", "Renderer", "format_duration", "format_tokens", "tool_label",
           "tool_line", "use_plain"]


def __getattr__(name: str) -> Any:
    """`harness_core.cli.render.Renderer` (and the rest of `__all__`): the renderer, imported on first use."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from harness_core.cli.render import renderer

    return getattr(renderer, name)


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
