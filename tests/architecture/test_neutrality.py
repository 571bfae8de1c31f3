"""The core names no agent: nothing under harness_core/, nor the core's own tests (these checks aside: they name the
agents' packages as data), names Codex, Claude, Qwen or the Gemini CLI, but the default provider's name and model
names in canned responses; agent code and tests live with their provider. Reads the source tree as text; imports
no Harness module."""

from __future__ import annotations

import re

from tests.architecture.graph import CORE, ROOT, _modules, _rel

_AGENT = re.compile(r"codex|claude|qwen|gemini[-_ ]?cli", re.IGNORECASE)
_MODEL_NAMES = re.compile(r"claude-(?:sonnet|opus|haiku)-[\w.-]+", re.IGNORECASE)
_DEFAULT_LINE = re.compile(r'^DEFAULT_PROVIDER = "codex-appserver"$')


def test_the_core_names_no_agent() -> None:
    offending = [
        f"{_rel(path)}:{n}: {line.strip()}"
        for path in _modules(CORE)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _AGENT.search(_MODEL_NAMES.sub("", line)) and not _DEFAULT_LINE.match(line)
    ]
    assert not offending, "agent-specific code or text in harness_core (move it to its provider):\n" + "\n".join(
        offending
    )


def test_core_tests_name_no_agent() -> None:
    """The core's own tests use the scripted provider and generic fakes; agent tests live with the agent."""
    offending = [
        f"{_rel(path)}:{n}: {line.strip()}"
        for path in _modules(ROOT / "tests")
        if not path.is_relative_to(ROOT / "tests" / "architecture")
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _AGENT.search(_MODEL_NAMES.sub("", line)) and "DEFAULT_PROVIDER" not in line
    ]
    assert not offending, "agent-specific core tests (move them to the provider's tests):\n" + "\n".join(offending)
