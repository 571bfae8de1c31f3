"""A run's MCP servers, tool filters and attachments on Claude Code's command line, env and first message."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from harness_core import AgentRunSpec, Attachment, InvalidSpecError, McpServer, SandboxMode

from harness_claude.argv import build_argv, build_env, redacted_argv
from harness_claude.options import ClaudeOptions
from harness_claude.toolconfig import content_blocks, tool_config


def _spec(tmp_path: Path, **fields: object) -> AgentRunSpec:
    return AgentRunSpec(prompt="go", cwd=tmp_path, **fields)  # type: ignore[arg-type]


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_servers_go_in_mcp_config_with_secrets_only_in_the_env(tmp_path: Path) -> None:
    servers = (McpServer(name="db", command="db-mcp", args=("--ro",), env={"DB_TOKEN": "tok-123456789"}),
               McpServer(name="api", url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer sk-abcdef12"}),
               McpServer(name="old", transport="sse", url="http://127.0.0.1:9/sse"))
    spec = _spec(tmp_path, mcp_servers=servers)
    argv = build_argv("claude", spec, ClaudeOptions(), is_root=False)
    env = build_env(spec, ClaudeOptions(), is_root=False, base={})
    config = json.loads(_flag(argv, "--mcp-config"))["mcpServers"]
    assert config["db"]["type"] == "stdio" and config["db"]["command"] == "db-mcp" and config["db"]["args"] == ["--ro"]
    assert config["api"]["type"] == "http" and config["old"]["type"] == "sse"
    token_ref = config["db"]["env"]["DB_TOKEN"]
    header_ref = config["api"]["headers"]["Authorization"]
    assert env[token_ref[2:-1]] == "tok-123456789" and env[header_ref[2:-1]] == "Bearer sk-abcdef12"
    assert "tok-123456789" not in " ".join(argv) and "sk-abcdef12" not in " ".join(argv)
    assert "--strict-mcp-config" in argv
    assert {"mcp__db", "mcp__api", "mcp__old"} <= set(_flag(argv, "--allowedTools").split(","))
    assert "tok-123456789" not in " ".join(redacted_argv(argv))


def test_a_server_with_a_cwd_is_started_there_through_a_shell(tmp_path: Path) -> None:
    spec = _spec(tmp_path, mcp_servers=(McpServer(name="s", command="srv", args=("a b",), cwd=tmp_path),))
    entry = json.loads(_flag(build_argv("claude", spec, ClaudeOptions(), is_root=False), "--mcp-config"))
    server = entry["mcpServers"]["s"]
    assert server["command"] == "/bin/sh" and server["args"][3:] == [str(tmp_path), "srv", "a b"]


def test_keep_user_servers_drops_strict(tmp_path: Path) -> None:
    argv = build_argv("claude", _spec(tmp_path), ClaudeOptions(keep_user_mcp_servers=True), is_root=False)
    assert "--strict-mcp-config" not in argv and "--mcp-config" not in argv


def test_filters_become_tools_and_disallowed_tools(tmp_path: Path) -> None:
    servers = (McpServer(name="a", command="a"), McpServer(name="b", command="b"))
    spec = _spec(tmp_path, mcp_servers=servers, allowed_tools=frozenset({"read", "edit", "mcp:a"}),
                 disallowed_tools=frozenset({"web", "mcp:a.drop"}))
    argv = build_argv("claude", spec, ClaudeOptions(), is_root=False)
    tools = _flag(argv, "--tools").split(",")
    assert {"Read", "Edit"} <= set(tools) and "Bash" not in tools and "Write" not in tools
    denied = _flag(argv, "--disallowedTools").split(",")
    assert {"WebFetch", "WebSearch", "mcp__a__drop"} <= set(denied)
    assert list(json.loads(_flag(argv, "--mcp-config"))["mcpServers"]) == ["a"]  # b is not allowed


def test_an_allow_list_narrows_read_only_never_widens_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path, sandbox=SandboxMode.READ_ONLY, allowed_tools=frozenset({"shell", "read"}))
    tools = _flag(build_argv("claude", spec, ClaudeOptions(), is_root=False), "--tools").split(",")
    assert "Read" in tools and "Bash" not in tools


def test_disallowing_mcp_or_a_server_drops_it(tmp_path: Path) -> None:
    servers = (McpServer(name="a", command="a"), McpServer(name="b", command="b"))
    one = build_argv("claude", _spec(tmp_path, mcp_servers=servers, disallowed_tools=frozenset({"mcp:a"})),
                     ClaudeOptions(), is_root=False)
    assert list(json.loads(_flag(one, "--mcp-config"))["mcpServers"]) == ["b"]
    none = build_argv("claude", _spec(tmp_path, mcp_servers=servers, disallowed_tools=frozenset({"mcp"})),
                      ClaudeOptions(), is_root=False)
    assert "--mcp-config" not in none and "--strict-mcp-config" in none


def test_an_allow_list_of_one_mcp_tool_is_refused_with_the_way_out(tmp_path: Path) -> None:
    spec = _spec(tmp_path, mcp_servers=(McpServer(name="a", command="a"),), allowed_tools=frozenset({"mcp:a.x"}))
    with pytest.raises(InvalidSpecError, match=r"allow the server \(mcp:a\)"):
        tool_config(spec)


def test_attachments_are_image_and_document_blocks_before_the_text(tmp_path: Path) -> None:
    png = tmp_path / "shot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\nhello\n")
    pdf = Attachment(data=b"%PDF-1.4 x", name="paper.pdf")
    blocks = content_blocks("look", (Attachment(path=png), Attachment(path=notes), pdf))
    assert isinstance(blocks, list)
    assert blocks[0]["type"] == "image" and blocks[0]["source"]["media_type"] == "image/png"
    assert base64.b64decode(blocks[0]["source"]["data"]) == png.read_bytes()
    assert blocks[1] == {"type": "document", "title": "notes.md",
                         "source": {"type": "text", "media_type": "text/plain", "data": "# Notes\nhello\n"}}
    assert blocks[2]["source"]["media_type"] == "application/pdf"
    assert blocks[3] == {"type": "text", "text": "look"}
    assert content_blocks("plain", ()) == "plain"


def test_a_binary_file_claude_cannot_read_is_refused(tmp_path: Path) -> None:
    blob = Attachment(data=b"\xff\xfe\x00binary", name="data.zip")
    with pytest.raises(InvalidSpecError, match="PDF and text files"):
        content_blocks("x", (blob,))
