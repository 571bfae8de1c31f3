"""mini-agent's options (`-o KEY=VALUE` on the CLI, `provider_options` in a spec).

Layer: configuration. Knows the environment variable that supplies a default endpoint; must not know HTTP,
processes or events. Validation errors become Harness `invalid_spec` errors listing the valid options.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from harness_core.provider import ProviderOptions
from pydantic import Field, field_validator, model_validator

__all__ = ["BASE_URL_ENV", "MiniAgentOptions", "api_key"]

BASE_URL_ENV = "MINI_AGENT_BASE_URL"


class MiniAgentOptions(ProviderOptions):
    base_url: str = Field(
        default="", description=f"API root, e.g. https://api.openai.com/v1 (or ${BASE_URL_ENV})."
    )
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        min_length=1,
        description="Name of the environment variable holding the API key.",
    )
    model: str = Field(default="gpt-5.5", min_length=1, description="Model, unless the spec names one.")
    max_turns: int = Field(default=50, ge=1, description="Most model requests in one run.")
    reasoning_summary: str = Field(
        default="auto",
        description='Ask for reasoning summaries ("auto", "concise", "detailed"); "none": off.',
    )
    login_shell: bool = Field(
        default=True, description="Run commands with `bash -lc` (reads your profile); false: `bash -c`."
    )
    request_timeout: float = Field(default=300.0, gt=0, description="Seconds to wait for the next bytes.")

    @model_validator(mode="before")
    @classmethod
    def _default_base_url(cls, data: object) -> object:
        if isinstance(data, dict) and not data.get("base_url"):
            env = os.environ.get(BASE_URL_ENV, "").strip()
            if not env:
                raise ValueError(
                    f"base_url is required: pass -o base_url=https://HOST/v1 or set ${BASE_URL_ENV}"
                )
            return {**data, "base_url": env}
        return data

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {value!r}")
        return value


def api_key(options: MiniAgentOptions, spec_env: Mapping[str, str]) -> str | None:
    """The API key: the variable named by `api_key_env`, from the spec's env first, then this process's."""
    value = spec_env.get(options.api_key_env) or os.environ.get(options.api_key_env)
    return value or None
