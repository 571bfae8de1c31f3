"""The params of `thread/start`, `thread/resume` and `turn/start` for a spec, and what a thread keeps between turns.

Layer: provider mapping, pure. Knows the app-server's request params and the `model/list` catalogue (codex-cli
0.169.0, from `codex app-server generate-json-schema`); knows nothing of processes, JSON-RPC or events.
The params and why overrides are sticky (`Sticky`): providers/codex_appserver/README.md.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_codex_common import mcp_config, prompt_too_long
from harness_core import AgentRunSpec, Attachment, InvalidSpecError, SandboxMode, SessionSpec

__all__ = ["Sticky", "effort_problem", "image_input", "thread_params", "turn_params", "untrusted_projects"]

_SANDBOX_POLICY: dict[SandboxMode, dict[str, Any]] = {
    SandboxMode.READ_ONLY: {"type": "readOnly"},
    SandboxMode.WORKSPACE_WRITE: {"type": "workspaceWrite"},
    SandboxMode.DANGER_FULL_ACCESS: {"type": "dangerFullAccess"},
}


def thread_params(spec: AgentRunSpec | SessionSpec, *, ephemeral: bool | None) -> dict[str, Any]:
    """`thread/start` params (add `threadId` and `excludeTurns` for `thread/resume`). Never an empty model. A spec
    that does not trust its project gets `config` marking the project untrusted (`untrusted_projects`)."""
    params: dict[str, Any] = {
        "cwd": str(spec.cwd),
        "approvalPolicy": spec.approval.value,
        "sandbox": spec.sandbox.value,
    }
    config: dict[str, Any] = mcp_config(spec, inline=True).config()
    if not spec.trust_project:
        config["projects"] = untrusted_projects(spec.cwd)
    if config:
        params["config"] = config
    if spec.model is not None:
        params["model"] = spec.model
    if spec.system_prompt:
        params["developerInstructions"] = spec.system_prompt
    if spec.resume_session is None and ephemeral is not None:
        params["ephemeral"] = ephemeral
    return params


def image_input(attachment: Attachment) -> dict[str, Any]:
    """A `turn/start` input item for an image: `localImage` by its path, or an `image` data URL for bytes (the
    runner sends codex images only: a file is named in the prompt instead)."""
    if attachment.path is not None:
        return {"type": "localImage", "path": str(attachment.path)}
    data = base64.b64encode(attachment.data or b"").decode()
    return {"type": "image", "url": f"data:{attachment.mime_type};base64,{data}"}


def untrusted_projects(cwd: Path) -> dict[str, dict[str, str]]:
    """The `projects` table that keeps codex app-server 0.169.0 from loading a project's `.codex/config.toml`: it
    loads one whose trust it does not know (with a writable sandbox), and trusts each `.codex` folder by its own
    directory (cwd, or one above it up to the repository root), the user's config.toml saying `trusted` included; a
    thread's `config` marking every directory from `cwd` up as `untrusted` wins over both (checked with the real CLI:
    `tests/test_appserver_project_trust_real.py`)."""
    here = Path(cwd)
    directories = dict.fromkeys(str(d) for d in (here, *here.parents, here.resolve(), *here.resolve().parents))
    return {directory: {"trust_level": "untrusted"} for directory in directories}


@dataclass
class Sticky:
    """What a thread's settings are: as `thread/start` answered (`model`, `sandbox` object, `effort`, for the
    session's `sandbox_mode`), and the effort the latest `turn/start` left behind (`effort_now`)."""

    model: str | None = None
    sandbox_mode: SandboxMode | None = None
    sandbox: dict[str, Any] | None = None
    effort: str | None = None
    effort_now: str | None = None
    catalogue: dict[str, dict[str, Any]] | None = None
    """`model/list` entries by model id, once asked (see `needs_catalogue`)."""

    @classmethod
    def of(cls, response: dict[str, Any], mode: SandboxMode) -> Sticky:
        sandbox = response.get("sandbox")
        effort = response.get("reasoningEffort")
        model = response.get("model")
        return cls(model=model if isinstance(model, str) and model else None, sandbox_mode=mode,
                   sandbox=sandbox if isinstance(sandbox, dict) else None,
                   effort=effort if isinstance(effort, str) and effort else None, effort_now=None)

    def model_for(self, spec: AgentRunSpec) -> str | None:
        return spec.model or self.model

    def needs_catalogue(self, spec: AgentRunSpec) -> bool:
        """Whether `turn_params` needs the model catalogue: to check the turn's effort, or to find the default
        effort to put back after an earlier turn's."""
        return self.catalogue is None and (spec.effort is not None or self.restores(spec))

    def restores(self, spec: AgentRunSpec) -> bool:
        """Whether this turn must put back the thread's effort (an earlier turn left another)."""
        return spec.effort is None and self.effort_now is not None and self.effort_now != self.effort

    def default_effort(self, model: str | None) -> str | None:
        entry = (self.catalogue or {}).get(model or "")
        value = entry.get("defaultReasoningEffort") if entry else None
        return value if isinstance(value, str) else None


def effort_problem(catalogue: dict[str, dict[str, Any]], model: str | None, effort: str) -> InvalidSpecError | None:
    """The error for an effort the model's catalogue entry does not list (None when it does, or when the model is
    not in the catalogue: Codex passes any effort on to such a model's API)."""
    entry = catalogue.get(model or "")
    if not entry:
        return None
    valid = [str(e.get("reasoningEffort")) for e in entry.get("supportedReasoningEfforts") or [] if isinstance(e, dict)]
    if not valid or effort in valid:
        return None
    return InvalidSpecError(f"codex model {model!r} has no reasoning effort {effort!r}; valid: {', '.join(valid)} "
                            "(set --effort to one of them, or leave it unset for the model's default)",
                            provider="codex-appserver", effort=effort, valid=valid)


def turn_params(thread_id: str, spec: AgentRunSpec, sticky: Sticky, *, live: bool) -> tuple[dict[str, Any], str | None]:
    """`turn/start` params for `spec`'s prompt, and a warning when an earlier turn's effort cannot be put back.

    Not `live`: a one-shot run, whose `thread/start` already set model, approval and sandbox (only `effort` and
    `outputSchema` are added). `live`: a turn of a live session, which sends every sticky setting (see the module
    docstring). `sticky.effort_now` is updated to what the thread keeps after this turn.

    Raises:
        InvalidSpecError: the effort is not one the model's catalogue entry lists, or the prompt is longer than
            Codex takes.
    """
    if (too_long := prompt_too_long(spec.prompt)) is not None:  # a live session's turn too
        raise too_long
    params: dict[str, Any] = {
        "threadId": thread_id,
        "input": [*map(image_input, spec.attachments), {"type": "text", "text": spec.prompt, "text_elements": []}],
    }
    warning: str | None = None
    model = sticky.model_for(spec)
    if spec.effort is not None:
        problem = effort_problem(sticky.catalogue or {}, model, spec.effort)
        if problem is not None:
            raise problem
        params["effort"] = spec.effort
    if live:
        if model is not None:
            params["model"] = model
        params["approvalPolicy"] = spec.approval.value
        same = spec.sandbox is sticky.sandbox_mode and sticky.sandbox is not None
        params["sandboxPolicy"] = dict(sticky.sandbox) if same and sticky.sandbox else _SANDBOX_POLICY[spec.sandbox]
        if sticky.restores(spec):
            back = sticky.effort or sticky.default_effort(model)
            if back is not None:
                params["effort"] = back
            else:
                warning = (f"an earlier turn set reasoning effort {sticky.effort_now!r} and codex's catalogue has no "
                           f"default effort for model {model!r}: this turn keeps {sticky.effort_now!r}")
    sticky.effort_now = params.get("effort", sticky.effort_now)
    if spec.output_schema is not None:
        params["outputSchema"] = spec.output_schema
    return params, warning
