"""What a run's first event says of it: `run_started_event` and the redacted spec it carries (`redacted_spec`).

Layer: core runtime (pure: a function of the spec and the probed provider). Knows the event models, the provider
registry's entry and redaction; knows nothing of the run's stream, its logs or its cancel scopes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_core._version import __version__
from harness_core.events import RunStarted, SessionTurn
from harness_core.redaction import REDACTED, redact, redact_env
from harness_core.spec import AgentRunSpec

if TYPE_CHECKING:
    from harness_core._run.probe import ProbedProvider
    from harness_core.capabilities import Capability, ProviderInfo

__all__ = ["capabilities_of", "redacted_spec", "run_started_event"]


def capabilities_of(probed: ProbedProvider) -> frozenset[Capability]:
    """What the probed agent can do: what its probe learned (`CliInfo.capabilities`), else what its provider
    declares."""
    learned = probed.cli.capabilities
    return learned if learned is not None else probed.registered.cls.info.capabilities


def run_started_event(spec: AgentRunSpec, probed: ProbedProvider, session_turn: SessionTurn | None) -> RunStarted:
    """The `run_started` event of a run of `spec` on `probed` (the turn of a session, when `session_turn`)."""
    registered = probed.registered
    return RunStarted(
        provider=registered.name,
        provider_version=registered.distribution_version or registered.cls.info.version,
        genai_provider=registered.cls.info.genai_provider,
        cli_version=probed.cli.version,
        capabilities=sorted(capabilities_of(probed), key=lambda c: c.value),
        spec=redacted_spec(spec, registered.cls.info),
        session_turn=session_turn,
    )


def redacted_spec(spec: AgentRunSpec, info: ProviderInfo | None = None) -> dict[str, Any]:
    """The spec as `run_started` shows it: the `env` values but the public ones (`redact_env`, with the provider's
    `public_env`), secret-looking options and the values of the provider's secret-bearing flags redacted, each MCP
    server's `env` values but the public ones and its `headers` values masked, attachment bytes by their size."""
    data = spec.model_dump(mode="json", exclude={"attachments": {"__all__": {"data"}}})
    data["env"] = redact_env(spec.env, info.public_env if info is not None else frozenset())
    data["provider_options"] = redact(data.get("provider_options", {}),
                                      secret_flags=info.secret_flags if info is not None else frozenset())
    data["mcp_servers"] = [
        {**server, "env": redact_env(server["env"]), "headers": {name: REDACTED for name in server["headers"]}}
        for server in data.get("mcp_servers", [])
    ]
    data["attachments"] = [  # the bytes given from Python: their size, not themselves
        {**attachment, "data": f"<{len(given.data)} bytes>" if given.data is not None else None}
        for attachment, given in zip(data.get("attachments", []), spec.attachments, strict=True)
    ]
    if not spec.trace_context:  # shown only when the run continues a trace it was given
        data.pop("trace_context", None)
    data["harness_version"] = __version__
    return data
