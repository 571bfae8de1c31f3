"""A run's MCP servers, tool filters and attachments on Claude Code's command line, env and first message; the
user's MCP servers follow the approval policy, Harness's own is given."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from harness_core import AgentRunSpec, ApprovalPolicy, Attachment, InvalidSpecError, McpServer, SandboxMode, SessionSpec

from harness_claude.argv import build_argv, build_env
from harness_claude.mcpfile import mcp_config_file
from harness_claude.options import ClaudeOptions
from harness_claude.permissions import auto_answer
from harness_claude.session import ClaudeSession
from harness_claude.toolconfig import content_blocks, tool_config


def _spec(tmp_path: Path, **fields: object) -> AgentRunSpec:
    return AgentRunSpec(prompt="go", cwd=tmp_path, **fields)  # type: ignore[arg-type]


def _flag(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def _config(spec: AgentRunSpec) -> dict[str, Any]:
    text = tool_config(spec).mcp_config
    assert text is not None
    return dict(json.loads(text)["mcpServers"])


_FILE = "/private/mcp.json"


def test_servers_go_in_a_config_file_with_their_secrets_never_in_argv_or_env(tmp_path: Path) -> None:
    """Claude Code's Bash inherits its environment: a server's `env`/`headers` value there (as a `${VAR}` the config
    refers to) was readable by every command the agent ran. The values are in the `--mcp-config` file only."""
    servers = (McpServer(name="db", command="db-mcp", args=("--ro",), env={"DB_TOKEN": "tok-123456789"}),
               McpServer(name="api", url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer sk-abcdef12"}),
               McpServer(name="old", transport="sse", url="http://127.0.0.1:9/sse"))
    spec = _spec(tmp_path, mcp_servers=servers)
    argv = build_argv("claude", spec, ClaudeOptions(), is_root=False, mcp_config_file=_FILE)
    env = build_env(spec, ClaudeOptions(), is_root=False, base={})
    assert _flag(argv, "--mcp-config") == _FILE
    config = _config(spec)
    assert config["db"] == {"type": "stdio", "command": "db-mcp", "args": ["--ro"],
                            "env": {"DB_TOKEN": "tok-123456789"}}
    assert config["api"]["type"] == "http" and config["old"]["type"] == "sse"
    assert config["api"]["headers"] == {"Authorization": "Bearer sk-abcdef12"}
    for secret in ("tok-123456789", "sk-abcdef12"):
        assert secret not in " ".join(argv) and not any(secret in value for value in env.values())
    assert not any(name.startswith("HARNESS_MCP_") for name in env)
    assert "--strict-mcp-config" in argv
    assert {"mcp__db", "mcp__api", "mcp__old"} <= set(_flag(argv, "--allowedTools").split(","))


def test_servers_without_their_config_file_are_a_mistake_not_a_run_without_them(tmp_path: Path) -> None:
    spec = _spec(tmp_path, mcp_servers=(McpServer(name="db", command="db-mcp"),))
    with pytest.raises(ValueError, match="mcp_config_file"):
        build_argv("claude", spec, ClaudeOptions(), is_root=False)


def test_the_config_file_is_private_and_gone_when_the_block_ends() -> None:
    with mcp_config_file('{"mcpServers":{}}') as path:
        assert path is not None
        file = Path(path)
        assert file.read_text() == '{"mcpServers":{}}'
        assert stat.S_IMODE(file.stat().st_mode) == 0o600 and stat.S_IMODE(file.parent.stat().st_mode) == 0o700
    assert not file.exists() and not file.parent.exists()
    with mcp_config_file(None) as nothing:
        assert nothing is None


def test_a_server_with_a_cwd_is_started_there_through_a_shell(tmp_path: Path) -> None:
    spec = _spec(tmp_path, mcp_servers=(McpServer(name="s", command="srv", args=("a b",), cwd=tmp_path),))
    server = _config(spec)["s"]
    assert server["command"] == "/bin/sh" and server["args"][3:] == [str(tmp_path), "srv", "a b"]


def test_keep_user_servers_drops_strict(tmp_path: Path) -> None:
    argv = build_argv("claude", _spec(tmp_path), ClaudeOptions(keep_user_mcp_servers=True), is_root=False)
    assert "--strict-mcp-config" not in argv and "--mcp-config" not in argv


def test_filters_become_tools_and_disallowed_tools(tmp_path: Path) -> None:
    servers = (McpServer(name="a", command="a"), McpServer(name="b", command="b"))
    spec = _spec(tmp_path, mcp_servers=servers, allowed_tools=frozenset({"read", "edit", "mcp:a"}),
                 disallowed_tools=frozenset({"web", "mcp:a.drop"}))
    argv = build_argv("claude", spec, ClaudeOptions(), is_root=False, mcp_config_file=_FILE)
    tools = _flag(argv, "--tools").split(",")
    assert {"Read", "Edit"} <= set(tools) and "Bash" not in tools and "Write" not in tools
    denied = _flag(argv, "--disallowedTools").split(",")
    assert {"WebFetch", "WebSearch", "mcp__a__drop"} <= set(denied)
    assert list(_config(spec)) == ["a"]  # b is not allowed


def test_an_allow_list_narrows_read_only_never_widens_it(tmp_path: Path) -> None:
    spec = _spec(tmp_path, sandbox=SandboxMode.READ_ONLY, allowed_tools=frozenset({"shell", "read"}))
    tools = _flag(build_argv("claude", spec, ClaudeOptions(), is_root=False), "--tools").split(",")
    assert "Read" in tools and "Bash" not in tools


def test_disallowing_mcp_or_a_server_drops_it(tmp_path: Path) -> None:
    servers = (McpServer(name="a", command="a"), McpServer(name="b", command="b"))
    assert list(_config(_spec(tmp_path, mcp_servers=servers, disallowed_tools=frozenset({"mcp:a"})))) == ["b"]
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


def _allowed(argv: list[str]) -> set[str]:
    return set(_flag(argv, "--allowedTools").split(",")) if "--allowedTools" in argv else set()


@pytest.mark.parametrize("approval", [ApprovalPolicy.ON_REQUEST, ApprovalPolicy.UNTRUSTED])
def test_a_users_server_follows_the_approval_policy_and_harnesss_own_is_given(tmp_path: Path,
                                                                              approval: ApprovalPolicy) -> None:
    """Under a policy that asks, the user's server's tools are asked about (not in `--allowedTools`: Claude Code
    asks through the prompt tool), as the ACP agents ask; Harness's own `harness` server stays allowed (its tools
    ask through Harness themselves). Under `never` both are allowed, or `--permission-prompts none` denies them."""
    servers = (McpServer(name="db", command="db-mcp"), McpServer.harness_own(command="bridge"))
    asking = build_argv("claude", _spec(tmp_path, mcp_servers=servers, approval=approval), ClaudeOptions(),
                        is_root=False, mcp_config_file=_FILE)
    assert "mcp__harness" in _allowed(asking) and "mcp__db" not in _allowed(asking)
    assert _flag(asking, "--permission-prompt-tool") == "stdio"
    never = build_argv("claude", _spec(tmp_path, mcp_servers=servers, approval=ApprovalPolicy.NEVER), ClaudeOptions(),
                       is_root=False, mcp_config_file=_FILE)
    assert {"mcp__harness", "mcp__db"} <= _allowed(never)


def test_a_live_session_asks_about_a_users_server_and_a_never_turn_allows_it(tmp_path: Path) -> None:
    """A live process lives across turns of different policies: it asks about the user's server, and a turn
    that asks nobody allows that server's tools (`auto_answer`), as the one-shot `--allowedTools` would."""
    servers = (McpServer(name="db", command="db-mcp"), McpServer.harness_own(command="bridge"))
    spec = SessionSpec(cwd=tmp_path, mcp_servers=servers, approval=ApprovalPolicy.NEVER)
    argv = build_argv("claude", spec, ClaudeOptions(), is_root=False, live=True, mcp_config_file=_FILE)
    assert "mcp__harness" in _allowed(argv) and "mcp__db" not in _allowed(argv)
    ctx = SimpleNamespace(log=None)
    session = ClaudeSession(spec, ClaudeOptions(), ctx, None, is_root=False)  # type: ignore[arg-type]
    never = session._plan(SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.NEVER)
    assert auto_answer(never, "mcp__db__query") and auto_answer(never, "mcp__harness__add")
    assert not auto_answer(never, "mcp__other__query") and not auto_answer(never, "mcp__dbx__query")
    assert session._plan(SandboxMode.WORKSPACE_WRITE, ApprovalPolicy.ON_REQUEST).asks
