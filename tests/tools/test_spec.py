"""The tools interface of a spec: MCP servers, attachments, tool filters; their validation and redaction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness_core import AgentRunSpec, Attachment, Capability, McpServer, ProviderInfo, SessionSpec
from harness_core._run.started import redacted_spec
from harness_core._run.tool_policy import check_attachments, check_tool_filters, native_attachment, tool_policy
from harness_core.attachment import API_IMAGE_TYPES, MAX_ATTACHMENT_BYTES, check_attachment, media_type_matches
from harness_core.errors import InvalidSpecError, UnsupportedFeatureError
from harness_core.mcp import (
    HARNESS_SERVER,
    check_tool_name,
    harness_server_is_ours,
    only_harness_servers,
    server_secrets,
    tool_name_matches,
)
from harness_core.redaction import REDACTED, RunSecrets

# --- MCP servers ------------------------------------------------------------------------------------------


def test_a_server_takes_its_transport_from_its_fields() -> None:
    stdio = McpServer(name="everything", command="mcp-server-everything", args=("stdio",))
    remote = McpServer(name="docs", url="http://127.0.0.1:8123/mcp")
    sse = McpServer(name="old", url="http://127.0.0.1:8123/sse", transport="sse")
    assert (stdio.transport, remote.transport, sse.transport) == ("stdio", "http", "sse")


@pytest.mark.parametrize(("fields", "said"), [
    ({"name": "a", "command": "x", "url": "http://127.0.0.1:1/"}, "both a command and a url"),
    ({"name": "a"}, "needs a `command`"),
    ({"name": "a", "transport": "http", "command": "x"}, "needs a `url`"),
    ({"name": "a", "url": "file:///etc/passwd"}, "not an http(s) URL"),
    ({"name": "a", "url": "http://127.0.0.1:1/", "env": {"K": "v"}}, "are for stdio servers"),
    ({"name": "a", "command": "x", "headers": {"K": "v"}}, "`headers` are for http/sse"),
    ({"name": "has space", "command": "x"}, "letters, digits"),
    ({"name": "a", "command": "x", "bogus": 1}, "Extra inputs are not permitted"),
])
def test_a_server_whose_fields_do_not_fit_is_refused_with_what_to_do(fields: dict[str, object], said: str) -> None:
    with pytest.raises(ValidationError, match=said.replace("(", r"\(").replace(")", r"\)")):
        McpServer.model_validate(fields)


def test_server_names_are_unique_in_a_spec() -> None:
    with pytest.raises(ValidationError, match="unique; given twice: a"):
        AgentRunSpec(prompt="hi", mcp_servers=[McpServer(name="a", command="x"), McpServer(name="a", command="y")])


def test_each_server_needs_the_capability_of_its_transport() -> None:
    spec = AgentRunSpec(prompt="hi", mcp_servers=[McpServer(name="a", command="x"),
                                                  McpServer(name="b", url="http://127.0.0.1:1/", transport="sse")])
    assert {Capability.MCP_STDIO, Capability.MCP_SSE} <= spec.needed_capabilities()
    assert Capability.MCP_HTTP not in spec.needed_capabilities()


def test_a_spec_with_servers_round_trips_through_json() -> None:  # how a background run's worker gets it
    spec = AgentRunSpec(prompt="hi", mcp_servers=[McpServer(name="a", command="x", args=("1",), env={"K": "v"})],
                        attachments=[Attachment(data=b"\x89PNG\r\n\x00\xff", name="dot.png")],
                        allowed_tools={"shell", "mcp:a.echo"}, disallowed_tools={"web"})
    assert AgentRunSpec.model_validate_json(spec.model_dump_json()) == spec
    assert SessionSpec.of(spec).turn("again").mcp_servers == spec.mcp_servers


# --- secrets ----------------------------------------------------------------------------------------------


def test_server_env_and_header_values_are_masked_in_run_started_with_their_names_shown() -> None:
    spec = AgentRunSpec(prompt="hi", mcp_servers=[
        McpServer(name="local", command="srv", env={"SRV_DB": "postgres-password-1", "HOME": "/home/me"}),
        McpServer(name="remote", url="http://127.0.0.1:9/mcp", headers={"X-Api": "header-secret-42"}),
    ])
    shown = redacted_spec(spec)
    assert shown["mcp_servers"][0]["env"] == {"SRV_DB": REDACTED, "HOME": "/home/me"}
    assert shown["mcp_servers"][1]["headers"] == {"X-Api": REDACTED}
    text = json.dumps(shown)
    assert "postgres-password-1" not in text and "header-secret-42" not in text
    assert shown["mcp_servers"][0]["command"] == "srv"


def test_server_secrets_are_scrubbed_from_every_line_the_run_writes() -> None:
    servers = (McpServer(name="local", command="srv", env={"SRV_DB": "postgres-password-1"}),
               McpServer(name="remote", url="http://127.0.0.1:9/mcp", headers={"X-Api": "header-secret-42"}))
    assert server_secrets(servers) == ["postgres-password-1", "header-secret-42"]
    secrets = RunSecrets.of_run({}, environ={}).with_values(server_secrets(servers))
    line = json.dumps({"text": "connect postgres-password-1 with header-secret-42"}).encode()
    assert b"password-1" not in secrets.json_line(line) and b"secret-42" not in secrets.json_line(line)


def test_attachment_bytes_show_as_their_size_in_run_started(tmp_path: Path) -> None:
    image = tmp_path / "shot.png"
    image.write_bytes(b"\x89PNG" + b"\x00" * 96)
    spec = AgentRunSpec(prompt="hi", attachments=[Attachment.of(image), Attachment(data=b"12345", name="n.txt")])
    shown = redacted_spec(spec)["attachments"]
    assert shown[0]["path"] == str(image) and shown[0]["data"] is None
    assert shown[1]["data"] == "<5 bytes>" and shown[1]["mime_type"] == "text/plain"


# --- attachments ------------------------------------------------------------------------------------------


def test_an_attachment_guesses_its_type_and_kind_from_its_name(tmp_path: Path) -> None:
    assert Attachment.of(tmp_path / "a.png").kind == "image"
    assert Attachment.of(tmp_path / "a.png").mime_type == "image/png"
    assert Attachment.of(tmp_path / "notes.pdf").kind == "file"
    assert Attachment.of(tmp_path / "x.md").mime_type == "text/markdown"
    assert Attachment.of(tmp_path / "a.png").path == tmp_path / "a.png"


def test_an_attachment_of_unknown_type_is_refused_unless_its_type_is_given(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"unknown from its name: give its `mime_type`.*`--attach FILE` on the "
                       r"command line takes it as text/plain"):
        Attachment.of(tmp_path / "blob.zzz9")
    assert Attachment.of(tmp_path / "blob.zzz9", mime_type="application/octet-stream").kind == "file"


def test_an_attachment_is_a_path_or_bytes_with_a_name() -> None:
    with pytest.raises(ValidationError, match="give exactly one"):
        Attachment(name="a.png", mime_type="image/png")
    with pytest.raises(ValidationError, match="needs a `name`"):
        Attachment(data=b"x", mime_type="image/png")


def test_an_attachment_that_cannot_be_sent_says_why_before_spawn(tmp_path: Path) -> None:
    assert "does not exist" in (check_attachment(Attachment.of(tmp_path / "gone.png")) or "")
    assert "not a file" in (check_attachment(Attachment.of(tmp_path, mime_type="image/png")) or "")
    big = tmp_path / "big.png"
    with big.open("wb") as f:
        f.truncate(MAX_ATTACHMENT_BYTES + 1)
    assert "over the 20 MiB limit" in (check_attachment(Attachment.of(big)) or "")
    small = tmp_path / "ok.png"
    small.write_bytes(b"\x89PNG")
    assert check_attachment(Attachment.of(small)) is None


def test_strict_attachments_need_the_kinds_input_capability(tmp_path: Path) -> None:
    attachments = [Attachment.of(tmp_path / "a.png"), Attachment.of(tmp_path / "b.pdf")]
    assert Capability.IMAGE_INPUT not in AgentRunSpec(prompt="hi", attachments=attachments).needed_capabilities()
    strict = AgentRunSpec(prompt="hi", attachments=attachments, strict_attachments=True)
    assert {Capability.IMAGE_INPUT, Capability.FILE_INPUT} <= strict.needed_capabilities()


def test_a_provider_takes_natively_only_the_media_types_it_declares(tmp_path: Path) -> None:
    """`ProviderInfo.attachment_types` (exact, `type/*`, `*/*`) with the kind's capability; bytes only with
    `attachment_data`."""
    assert media_type_matches("image/PNG", API_IMAGE_TYPES) and media_type_matches("text/x-python", {"text/*"})
    assert media_type_matches("application/zip", {"*/*"}) and not media_type_matches("image/svg+xml", API_IMAGE_TYPES)
    assert media_type_matches("text/plain; charset=utf-8", {"text/plain"})
    both = frozenset({Capability.IMAGE_INPUT, Capability.FILE_INPUT})
    info = ProviderInfo(name="p", version="1", capabilities=both,
                        attachment_types=API_IMAGE_TYPES | {"application/pdf", "text/*"}, attachment_data=False)
    png, svg, pdf, zipped = (Attachment.of(tmp_path / n) for n in ("a.png", "a.svg", "a.pdf", "a.zip"))
    assert [native_attachment(a, info, both) for a in (png, svg, pdf, zipped)] == [True, False, True, False]
    assert not native_attachment(png, info, frozenset({Capability.FILE_INPUT}))  # the kind's capability still gates
    assert not native_attachment(Attachment(data=b"x", name="a.png"), info, both)  # by path only
    assert native_attachment(zipped, ProviderInfo(name="q", version="1"), both)  # default: any type


def test_a_type_the_provider_does_not_take_is_degraded_or_refused_when_strict(tmp_path: Path) -> None:
    """A file of a type the provider does not declare goes in the prompt with a notice (as a kind it lacks does), or
    is refused before spawn with `strict_attachments`, naming the providers that take it; bytes a provider takes by
    path only are refused before spawn, never sent."""
    files = frozenset({Capability.FILE_INPUT, Capability.IMAGE_INPUT})
    picky = ProviderInfo(name="picky", version="1", capabilities=files, attachment_types=frozenset({"text/*"}),
                         attachment_data=False)
    anything = ProviderInfo(name="anything", version="1", capabilities=files)
    archive, notes = tmp_path / "a.zip", tmp_path / "n.txt"
    archive.write_bytes(b"PK\x03\x04")
    notes.write_text("hi")
    spec = AgentRunSpec(prompt="look", attachments=[Attachment.of(archive), Attachment.of(notes)])
    check_attachments(spec, "picky", picky, files, [picky, anything])
    policy = tool_policy(spec, picky, files)
    assert [a.name for a in policy.played.attachments] == ["n.txt"] and str(archive) in policy.played.prompt
    assert [n.code for n in policy.notices] == ["attachment_degraded"]
    assert "application/zip" in policy.notices[0].message
    strict = spec.model_copy(update={"strict_attachments": True})
    with pytest.raises(UnsupportedFeatureError, match=r"application/zip.*strict_attachments is on") as refused:
        check_attachments(strict, "picky", picky, files, [picky, anything])
    assert refused.value.details["providers_with_it"] == ["anything"]
    data = AgentRunSpec(prompt="look", attachments=[Attachment(data=b"hi", name="n.txt")])
    with pytest.raises(InvalidSpecError, match=r"as bytes.*save it to a file.*take it as bytes: anything"):
        check_attachments(data, "picky", picky, files, [picky, anything])


# --- tool filters -----------------------------------------------------------------------------------------


def test_tool_filters_take_neutral_names_only_and_list_the_valid_ones() -> None:
    spec = AgentRunSpec(prompt="hi", allowed_tools={"read", "mcp:harness", "mcp:everything.echo"},
                        disallowed_tools={"shell"})
    assert spec.allowed_tools == frozenset({"read", "mcp:harness", "mcp:everything.echo"})
    with pytest.raises(ValidationError, match=r"unknown tool name 'Bash': use one of shell, read, edit"):
        AgentRunSpec(prompt="hi", disallowed_tools={"Bash"})
    with pytest.raises(ValueError, match=r"mcp:SERVER\.TOOL"):
        check_tool_name("mcp:")


def test_a_neutral_name_covers_its_kind_server_or_tool() -> None:
    assert tool_name_matches("shell", "shell")
    assert tool_name_matches("mcp", "mcp", "everything", "echo")
    assert tool_name_matches("mcp:everything", "mcp", "everything", "echo")
    assert tool_name_matches("mcp:everything.echo", "mcp", "everything", "echo")
    assert not tool_name_matches("mcp:everything.add", "mcp", "everything", "echo")
    assert not tool_name_matches("mcp:other", "mcp", "everything", "echo")
    assert not tool_name_matches("edit", "write")


def test_a_provider_declares_the_filters_its_cli_takes() -> None:
    info = ProviderInfo(name="p", version="1", tool_filters=frozenset({"shell", "mcp:*"}),
                        capabilities=frozenset({Capability.MCP_STDIO, Capability.IMAGE_INPUT}))
    assert "mcp:*" in info.tool_filters and ProviderInfo(name="q", version="1").tool_filters == frozenset()


def test_an_attachment_that_grew_past_the_limit_after_its_check_is_refused_not_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(b"small")
    attachment = Attachment.of(path)
    assert check_attachment(attachment) is None and attachment.read() == b"small"
    with path.open("r+b") as grown:  # sparse: no disk written
        grown.truncate(MAX_ATTACHMENT_BYTES + 4096)
    with pytest.raises(OSError, match="grew past the 20 MiB limit after it was checked"):
        attachment.read()


def test_an_allow_list_is_refused_on_a_deny_list_cli_and_only_allow_list_takers_are_named() -> None:
    """A CLI that filters natively only in a deny-list (`tool_allow_lists=False`) refuses every
    `allowed_tools` in the check before anything is made, naming the providers whose CLI takes allow-lists — and a
    refusal elsewhere never sends the user to it."""
    allows = ProviderInfo(name="allows", version="1", tool_filters=frozenset({"read", "shell", "mcp:*"}))
    denies = ProviderInfo(name="denies", version="1", tool_filters=frozenset({"read", "shell", "mcp:*"}),
                          tool_allow_lists=False)
    neither = ProviderInfo(name="neither", version="1", capabilities=frozenset({Capability.APPROVALS}),
                           approval_kinds=frozenset({"edit"}))
    everyone = [allows, denies, neither]
    spec = AgentRunSpec(prompt="x", allowed_tools={"read"})
    with pytest.raises(UnsupportedFeatureError, match="denies takes no allow-list") as refused:
        check_tool_filters(spec, "denies", denies, frozenset(), everyone)
    assert refused.value.details["providers_with_it"] == ["allows"]
    with pytest.raises(UnsupportedFeatureError) as elsewhere:
        check_tool_filters(spec, "neither", neither, neither.capabilities, everyone)
    assert elsewhere.value.details["providers_with_it"] == ["allows"]
    with pytest.raises(UnsupportedFeatureError) as edit:  # an approval-enforced kind is no allow-list either
        check_tool_filters(AgentRunSpec(prompt="x", allowed_tools={"edit"}), "allows", allows, frozenset(), everyone)
    assert edit.value.details["providers_with_it"] == []
    deny = AgentRunSpec(prompt="x", disallowed_tools={"shell"})
    assert check_tool_filters(deny, "denies", denies, frozenset(), everyone) == frozenset()  # deny-lists still native
    assert check_tool_filters(AgentRunSpec(prompt="x", allowed_tools={"mcp:ev"}), "allows", allows, frozenset(),
                              everyone) == frozenset()


def test_an_allow_list_by_server_refuses_one_mcp_tool_and_sends_no_one_there() -> None:
    """A CLI whose allow-list names MCP servers only (`tool_allow_mcp_tools=False`) takes `mcp:SERVER` but refuses
    `mcp:SERVER.TOOL` before spawn (the `harness` server's stays: Harness serves only the named tools), and another
    provider's refusal of that name never lists it as one that has it."""
    by_server = ProviderInfo(name="by-server", version="1", tool_filters=frozenset({"read", "mcp", "mcp:*"}),
                             tool_allow_mcp_tools=False)
    by_tool = ProviderInfo(name="by-tool", version="1", tool_filters=frozenset({"read", "mcp", "mcp:*"}))
    neither = ProviderInfo(name="neither", version="1")
    everyone = [by_server, by_tool, neither]
    one_tool = AgentRunSpec(prompt="x", allowed_tools={"read", "mcp:ev.echo"})
    with pytest.raises(UnsupportedFeatureError, match=r"allows MCP tools by server only; allow the server \(mcp:ev\)"
                       ) as refused:
        check_tool_filters(one_tool, "by-server", by_server, frozenset(), everyone)
    assert refused.value.details["providers_with_it"] == ["by-tool"]
    with pytest.raises(UnsupportedFeatureError) as elsewhere:
        check_tool_filters(one_tool, "neither", neither, frozenset(), everyone)
    assert elsewhere.value.details["providers_with_it"] == ["by-tool"]
    for allowed in ({"mcp:ev"}, {"mcp:harness.add"}):
        assert check_tool_filters(AgentRunSpec(prompt="x", allowed_tools=allowed), "by-server", by_server,
                                  frozenset(), everyone) == frozenset()


def test_harness_is_reserved_and_only_the_entry_harness_appends_is_its_own() -> None:
    """A user's server named `harness` is refused wherever a spec is made (with what to do); the entry Harness
    appends is marked (not guessed from its URL or arguments) and stays marked through a session's turns."""
    with pytest.raises(ValidationError, match=r"'harness' is reserved.*rename your server"):
        AgentRunSpec(prompt="x", mcp_servers=[McpServer(name=HARNESS_SERVER, command="python",
                                                        args=("-m", "harness_core.tools.bridge"))])
    lookalike = McpServer(name=HARNESS_SERVER, url="http://127.0.0.1:8000/mcp", headers={"Authorization": "Bearer x"})
    assert not harness_server_is_ours([lookalike])
    ours = McpServer.harness_own(command="python", args=("-m", "harness_core.tools.bridge"))
    assert ours.is_harness_own and harness_server_is_ours([ours]) and "_harness_own" not in ours.model_dump()
    session = SessionSpec().model_copy(update={"mcp_servers": (ours,)})
    assert session.turn("hi").mcp_servers[0].is_harness_own
    assert only_harness_servers([]) and only_harness_servers([ours])
    assert not only_harness_servers([ours, McpServer(name="ev", command="x")])


def test_a_deny_list_of_mcp_is_harnesss_own_when_it_is_the_only_server() -> None:
    """`disallowed_tools mcp` with no server but Harness's own is taken on a provider whose CLI filters no MCP
    tool (Harness's server applies it), and left out of what the CLI gets; with a server of the user's it is the
    CLI's to filter, and refused where it cannot."""
    none = ProviderInfo(name="none", version="1", capabilities=frozenset({Capability.MCP_STDIO}))
    deny = AgentRunSpec(prompt="x", disallowed_tools={"mcp"})
    assert check_tool_filters(deny, "none", none, none.capabilities, [none]) == frozenset()
    served = deny.model_copy(update={"mcp_servers": (McpServer.harness_own(command="python"),)})
    assert tool_policy(served, none, none.capabilities).played.disallowed_tools == frozenset()
    theirs = deny.model_copy(update={"mcp_servers": (McpServer(name="ev", command="x"),)})
    with pytest.raises(UnsupportedFeatureError, match="disallowed_tools 'mcp'"):
        check_tool_filters(theirs, "none", none, none.capabilities, [none])


def test_a_filter_refusal_names_every_name_refused_and_only_providers_that_take_them_all() -> None:
    """Every name a deny-list cannot have honoured is in one refusal, whose providers take the run's filters
    whole (not one name of them); an allow-list on a CLI that takes none is refused as a whole, not by one entry."""
    denies = ProviderInfo(name="denies", version="1", tool_filters=frozenset({"mcp", "mcp:*"}), tool_allow_lists=False)
    asks = ProviderInfo(name="asks", version="1", capabilities=frozenset({Capability.APPROVALS}),
                        approval_kinds=frozenset({"edit", "write"}))
    kinds = ProviderInfo(name="kinds", version="1", tool_filters=frozenset({"shell", "read", "search", "edit", "web",
                                                                             "mcp", "mcp:*"}))
    everyone = [denies, asks, kinds]
    deny = AgentRunSpec(prompt="x", disallowed_tools={"web", "shell", "edit"})
    with pytest.raises(UnsupportedFeatureError) as refused:
        check_tool_filters(deny, "denies", denies, denies.capabilities, everyone)
    said = str(refused.value)
    assert "disallowed_tools 'edit', 'shell', 'web': neither its CLI nor its approvals filter them" in said, said
    assert refused.value.details["providers_with_it"] == ["kinds"]  # asks enforces edit, not shell nor web
    assert "Providers that take the run's filters: kinds (provider=NAME" in said, said
    allow = AgentRunSpec(prompt="x", allowed_tools={"read", "search", "mcp:docs"})
    with pytest.raises(UnsupportedFeatureError) as whole:
        check_tool_filters(allow, "denies", denies, denies.capabilities, everyone)
    said = str(whole.value)
    assert "an allow-list (allowed_tools): denies takes no allow-list, whatever it names" in said, said
    assert "mcp:docs" not in said and whole.value.details["providers_with_it"] == ["kinds"]
    with pytest.raises(UnsupportedFeatureError, match="No installed provider takes the run's filters"):
        check_tool_filters(deny, "asks", asks, asks.capabilities, [denies, asks])
