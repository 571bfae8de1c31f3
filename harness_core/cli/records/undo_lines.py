"""What an undo did (or would do), a line per file: `harness undo` and chat's `/undo` say it the same way.

Layer: CLI, pure text of the undo plan; knows nothing of the run store, providers or the terminal.
"""

from __future__ import annotations

from harness_core import FileUndo, UndoPlan

__all__ = ["done_lines"]


_SAID = {"restore": "restored", "remove": "removed (the run created it)", "recreate": "recreated (the run deleted it)",
         "move back": "moved back"}


def done_lines(plan: UndoPlan, done: tuple[FileUndo, ...] | list[FileUndo], *, would: bool = False) -> list[str]:
    """What an undo did (or, `would`, would do), a line per file, then those already as before."""
    if not done and not plan.already:
        return [f"run {plan.run_id}: nothing to put back"]
    head = f"run {plan.run_id}: " + ("would put back" if would else "put back") + f" in {plan.cwd}"
    lines = [head] if done else []
    lines += [f"  {undo.path}: {_SAID[undo.action]}" + (f" from {undo.also}" if undo.also else "") for undo in done]
    if plan.already:
        what = ", ".join(plan.already)
        lines.append(f"run {plan.run_id}: already as before it: {what}" if not done else f"  already as before: {what}")
    return lines
