"""Scripted model API servers on 127.0.0.1 that play a `Scenario`, so the real CLIs run whole turns offline.

Layer: testing. Stdlib only; knows the model APIs' wire formats (OpenAI Responses for Codex, Anthropic
Messages for Claude Code) and the scenario vocabulary, nothing of Harness providers or events. Importing this
package starts nothing: a backend serves only between `start()` and `stop()` (or inside `with`).
"""

from __future__ import annotations

from harness_core.offline.backends.http import FINISHED_TEXT, Exchange, ScriptedBackend
from harness_core.offline.backends.messages import MessagesBackend
from harness_core.offline.backends.responses import ResponsesBackend

__all__ = ["FINISHED_TEXT", "Exchange", "MessagesBackend", "ResponsesBackend", "ScriptedBackend"]
