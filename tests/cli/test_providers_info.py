"""`harness providers NAME`: one provider in full (options with type, default and description), aliases
everywhere a provider name is accepted, and a typo'd name (exit 2, "did you mean")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Literal

import pytest
from click.testing import CliRunner, Result
from pydantic import BaseModel, Field

import harness_core.testing.scripted as scripted
from harness_core import hookimpl
from harness_core.capabilities import ProviderInfo
from harness_core.cli import cli
from harness_core.cli.settings.provider_options import describe_options, type_name
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import Provider, ProviderOptions


class _Inner(BaseModel):
    depth: int = Field(default=2, description="How deep.")


class ToyOptions(ProviderOptions):
    mode: Literal["fast", "slow"] = Field(default="fast", description="How to go.")
    limit: int | None = Field(default=None, description="At most this many.")
    tags: tuple[str, ...] = ()
    """Labels, documented as an attribute docstring."""
    table: dict[str, Any] = Field(default_factory=dict, description="Free-form settings.")
    inner: _Inner = Field(default_factory=_Inner)
    token: str = Field(description="Required, no default.")


class ToyProvider(Provider[ToyOptions]):
    info: ClassVar[ProviderInfo] = ProviderInfo(name="toy-agent", version="2.0", description="A toy for tests.",
                                                aliases=frozenset({"toy", "scripted"}))

    async def run(self, spec: Any, options: ToyOptions, ctx: Any) -> Any:
        raise NotImplementedError


class _ToyPlugin:
    @hookimpl
    def harness_register_providers(self, register: Any) -> None:
        register(ToyProvider)


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    made = PluginHost.create(entry_points=False, plugins=[("scripted", scripted), ("toy", _ToyPlugin())])
    reset_host(made)
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield made
    reset_host(None)


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_an_alias_names_its_provider_but_never_shadows_a_real_name(host: PluginHost) -> None:
    assert host.get("toy").name == "toy-agent"
    assert host.get("scripted").name == "scripted"  # a provider's own name wins over another's alias
    assert host.aliases_of("toy-agent") == ["toy"]
    assert host.resolve("nothing") == "nothing"


def test_an_alias_two_providers_claim_names_neither() -> None:
    class Other(ToyProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name="other", version="1", aliases=frozenset({"toy"}))

    class _OtherPlugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(Other)

    both = PluginHost.create(entry_points=False, plugins=[("toy", _ToyPlugin()), ("other", _OtherPlugin())])
    assert both.resolve("toy") == "toy"
    assert "toy" not in both.aliases_of("toy-agent") and both.aliases_of("other") == []


def test_options_are_described_with_type_default_and_description() -> None:
    found = {o.name: o for o in describe_options(ToyOptions)}
    assert list(found) == ["mode", "limit", "tags", "table.KEY", "inner.depth", "token"]
    assert (found["mode"].type, found["mode"].default, found["mode"].description) == ("one of: fast, slow", "fast",
                                                                                      "How to go.")
    assert found["limit"].type == "int or none" and found["limit"].default is None
    assert found["tags"].type == "list of str" and found["tags"].description.startswith("Labels")
    assert found["table.KEY"].type == "table" and found["table.KEY"].default == {}
    assert found["inner.depth"].default == 2 and found["inner.depth"].description == "How deep."
    assert found["token"].required and found["token"].as_json()["required"] is True
    assert type_name(bool) == "bool"


def test_providers_name_shows_the_provider_and_every_option() -> None:
    result = invoke("providers", "toy")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "toy-agent 2.0 (also: toy)"
    assert "  A toy for tests." in lines
    assert "  mode: one of: fast, slow (default: fast)" in lines
    assert "  inner.depth: int (default: 2)" in lines
    assert "  token: str (default: required)" in lines
    assert "      How to go." in lines


def test_providers_name_json_lists_the_options() -> None:
    result = invoke("providers", "scripted", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["name"] == "scripted" and data["default"] is True and data["available"] is True
    options = {o["name"]: o for o in data["options"]}
    assert options["scenario"] == {"name": "scenario", "type": "str or table", "required": False, "default": "say",
                                   "description": "Name of a scenario in `harness_core.scripted.scenarios.SCENARIOS`, "
                                                  "or one written inline (`harness_core.scripted.inline`)."}
    assert options["cost_usd"]["type"] == "float or none"


def test_a_typo_gets_did_you_mean_and_exit_2() -> None:
    result = CliRunner().invoke(cli, ["providers", "scriptd"])
    assert result.exit_code == 2
    assert "did you mean 'scripted'?" in result.output and "toy-agent" in result.output


def test_the_list_shows_aliases() -> None:
    result = invoke("providers")
    assert result.exit_code == 0, result.output
    assert any(line.startswith("toy-agent (also: toy)") for line in result.output.splitlines())
    data = json.loads(invoke("providers", "--json").output)
    assert {p["name"]: p["aliases"] for p in data["providers"]} == {"scripted": [], "toy-agent": ["toy"]}


def test_run_accepts_an_alias(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    class ScriptedAliased(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(**{**scripted.ScriptedProvider.info.model_dump(),
                                                       "aliases": frozenset({"play"})})

    class _Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(ScriptedAliased)

    reset_host(PluginHost.create(entry_points=False, plugins=[("aliased", _Plugin())]))
    monkeypatch.chdir(tmp_path)
    result = invoke("run", "-p", "play", "hi", "--json")
    assert result.exit_code == 0, result.output
    first = json.loads(result.output.splitlines()[0])
    assert first["type"] == "run_started" and first["provider"] == "scripted"


def test_a_typo_of_an_alias_gets_did_you_mean_and_an_alias_two_claim_names_them() -> None:
    from harness_core.errors import ProviderNotFoundError

    class One(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name="one", version="1", aliases=frozenset({"shared", "uno"}))

    class Two(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name="two", version="1", aliases=frozenset({"shared"}))

    class _Plugin:
        @staticmethod
        @hookimpl
        def harness_register_providers(register: Any) -> None:
            register(One)
            register(Two)

    host = PluginHost.create(plugins=[("both", _Plugin())])
    with pytest.raises(ProviderNotFoundError, match="did you mean 'uno'"):
        host.get("unoo")
    with pytest.raises(ProviderNotFoundError, match=r"'shared' is another name of more than one provider \(one, two\)"):
        host.get("shared")
    assert host.get("uno").name == "one"


def test_the_default_marked_is_the_configured_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_PROVIDER")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    user = tmp_path / "xdg" / "harness" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text('provider = "toy"\n')  # an alias: the provider it names is the default
    result = invoke("providers")
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()}
    assert rows["toy-agent"].startswith("toy-agent (default; also: toy)") and "default" not in rows["scripted"]
    assert result.output.splitlines()[-1] == f"default provider: toy-agent (from user {user}:1)"
    assert json.loads(invoke("providers", "--json").output)["default"] == "toy-agent"
    assert invoke("providers", "toy").output.splitlines()[0] == "toy-agent 2.0 (default; also: toy)"
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")  # the environment wins, as for `harness run`
    assert json.loads(invoke("providers", "--json").output)["default"] == "scripted"


def test_providers_name_says_when_allow_lists_are_refused() -> None:
    """The scripted provider filters `mcp` and `web` in `disallowed_tools` but cannot turn off its shell or edits,
    so `allowed_tools` is refused: `harness providers scripted` says so (text and JSON)."""
    text = " ".join(line.strip() for line in invoke("providers", "scripted").output.splitlines())  # wrapped
    assert "enforced through approvals; agent, search refused; allow-lists refused (docs/tools.md)" in text
    assert json.loads(invoke("providers", "scripted", "--json").output)["tool_allow_lists"] is False


def test_providers_name_says_what_it_does_with_tools_as_docs_tools_md_does() -> None:
    """`harness providers NAME` says which filters are native, enforced and refused (the kinds too), that Python
    tools are served on every provider with their `mcp:harness` filters applied by Harness, and the attachments
    it takes natively (text and JSON)."""
    text = " ".join(line.strip() for line in invoke("providers", "scripted").output.splitlines())  # wrapped
    assert "tool filters: mcp, mcp:*, web native; edit, read, shell, write enforced through approvals; agent, " \
           "search refused; allow-lists refused (docs/tools.md)" in text
    assert "Python tools (--tools): served as the MCP server `harness`, as on every provider; its filters " \
           "(mcp:harness, mcp:harness.TOOL, and mcp when no other server is given) are applied by Harness" in text
    assert "attachments: images and files natively, of any type" in text
    shown = json.loads(invoke("providers", "scripted", "--json").output)
    assert shown["tool_kinds_refused"] == ["agent", "search"] and shown["python_tools"] is True
    assert shown["attachment_kinds"] == ["image", "file"] and shown["attachment_types"] == ["*/*"]
