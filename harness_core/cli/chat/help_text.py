"""`harness chat`'s `/help`: the `/` commands, the keys, and what Ctrl-C does.

Layer: CLI, loaded when `harness chat` runs; text only.
"""

from __future__ import annotations

__all__ = ["HELP"]

HELP = """\
/model NAME       the next turns use model NAME (/model alone: the current one; /model default: the session's)
/approval POLICY  the next turns ask before acting: never, on-request or untrusted (/approval alone: the current)
/undo             put back the files the last turn changed (as `harness undo`; the agent is not told)
/help             this list
/exit             leave (so do /quit, Ctrl-D, and Ctrl-C twice in a row at the prompt)
//TEXT            send /TEXT as a prompt
A line ending in \\ goes on at the next (so does Alt-Enter); a paste of many lines is one prompt, sent by Enter.
Ctrl-C during a turn interrupts it (the chat goes on); press it again to stop the turn at once (the chat goes \
on in a new agent process, resuming the conversation). Ctrl-C with text typed at the prompt clears the line.
(A provider whose live process keeps its model or approval refuses /model or /approval: use --model, --approval.)"""
"""`/help`: the commands, and what Ctrl-C does."""
