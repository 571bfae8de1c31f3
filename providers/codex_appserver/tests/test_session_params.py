"""`turn/start` params, pure: a one-shot run adds only what `thread/start` could not say; a live session's turn
sends every sticky setting and puts back what an earlier turn changed (app-server overrides stay for later
turns). What the real app-server does with them is in `test_session_real.py`."""

from __future__ import annotations

from pathlib import Path

import pytest
from harness_core import AgentRunSpec, InvalidSpecError, SandboxMode

from harness_codex_appserver.params import Sticky, turn_params
from harness_codex_appserver.testing.shapes import model_entry

SCHEMA = {"type": "object"}
WRITE = {"type": "workspaceWrite", "writableRoots": ["/extra"], "networkAccess": True}


def _sticky(**kw: object) -> Sticky:
    fields: dict[str, object] = {"model": "gpt-5.5", "sandbox_mode": SandboxMode.WORKSPACE_WRITE, "sandbox": WRITE,
                                 "effort": None, "catalogue": {"gpt-5.5": model_entry()}}
    return Sticky(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_one_shot_run_adds_only_effort_and_output_schema(tmp_path: Path) -> None:
    plain, _ = turn_params("t", AgentRunSpec(prompt="hi", cwd=tmp_path, model="m"), _sticky(), live=False)
    assert plain == {"threadId": "t", "input": [{"type": "text", "text": "hi", "text_elements": []}]}
    full, _ = turn_params("t", AgentRunSpec(prompt="hi", cwd=tmp_path, effort="low", output_schema=SCHEMA),
                          _sticky(), live=False)
    assert (full["effort"], full["outputSchema"]) == ("low", SCHEMA) and "model" not in full


def test_a_live_turn_puts_back_the_threads_own_sandbox_object_and_model(tmp_path: Path) -> None:
    sticky = _sticky()
    changed, _ = turn_params("t", AgentRunSpec(prompt="a", cwd=tmp_path, model="other", sandbox="read-only"),
                             sticky, live=True)
    assert (changed["model"], changed["sandboxPolicy"]) == ("other", {"type": "readOnly"})
    back, _ = turn_params("t", AgentRunSpec(prompt="b", cwd=tmp_path), sticky, live=True)
    assert (back["model"], back["sandboxPolicy"]) == ("gpt-5.5", WRITE)  # the object thread/start answered
    assert "effort" not in back and "outputSchema" not in back


def test_the_threads_configured_effort_wins_over_the_models_default(tmp_path: Path) -> None:
    sticky = _sticky(effort="low")
    turn_params("t", AgentRunSpec(prompt="a", cwd=tmp_path, effort="xhigh"), sticky, live=True)
    back, warning = turn_params("t", AgentRunSpec(prompt="b", cwd=tmp_path), sticky, live=True)
    assert back["effort"] == "low" and warning is None


def test_an_effort_that_cannot_be_put_back_is_a_warning(tmp_path: Path) -> None:
    sticky = _sticky(model="uncatalogued")
    turn_params("t", AgentRunSpec(prompt="a", cwd=tmp_path, effort="high"), sticky, live=True)
    back, warning = turn_params("t", AgentRunSpec(prompt="b", cwd=tmp_path), sticky, live=True)
    assert "effort" not in back and warning is not None and "'high'" in warning


def test_effort_is_checked_against_the_catalogue_only_for_catalogued_models(tmp_path: Path) -> None:
    with pytest.raises(InvalidSpecError, match="valid: low, medium, high, xhigh"):
        turn_params("t", AgentRunSpec(prompt="a", cwd=tmp_path, effort="ultra"), _sticky(), live=False)
    free, _ = turn_params("t", AgentRunSpec(prompt="a", cwd=tmp_path, effort="ultra", model="uncatalogued"),
                          _sticky(), live=True)
    assert free["effort"] == "ultra"
