"""The tool flags of `harness run`, `chat` and `batch` (`--mcp-server`, `-i/--image`, `--attach`, `--allowed-tools`,
`--disallowed-tools`), and `--offline --scenario` written inline: through click's runner with the scripted provider
(fixtures of `tests.cli.test_cli`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness_core.cli.flag_words import in_flags
from harness_core.cli.flags.tool_checks import parse_mcp_server
from tests.cli.test_cli import invoke, only_log, scripted_host

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
__all__ = ["scripted_host"]  # the autouse fixture, shared with tests.cli.test_cli

ECHO = json.dumps({"steps": [{"mcp": {"server": "ev", "tool": "echo", "output": "Echo: hi"}},
                             {"say": "it said {tool_result}"}]})


def test_mcp_server_takes_a_command_a_url_or_an_sse_url() -> None:
    assert parse_mcp_server("ev=mcp-server-everything stdio --flag 'a b'") == {
        "name": "ev", "command": "mcp-server-everything", "args": ["stdio", "--flag", "a b"]}
    assert parse_mcp_server("docs=http://127.0.0.1:8000/mcp") == {"name": "docs", "url": "http://127.0.0.1:8000/mcp"}
    assert parse_mcp_server("old=sse+http://127.0.0.1:8000/sse") == {
        "name": "old", "transport": "sse", "url": "http://127.0.0.1:8000/sse"}
    with pytest.raises(ValueError, match="is not NAME=COMMAND"):
        parse_mcp_server("just-a-name")
    with pytest.raises(ValueError, match="letters, digits"):
        parse_mcp_server("bad name=cmd")
    with pytest.raises(ValueError, match=r"'harness' is reserved for Harness's own Python tools.*rename your server"):
        parse_mcp_server("harness=mcp-server-everything")


def test_run_gives_the_agent_the_server(runs_dir: Path) -> None:
    result = invoke("run", "go", "-o", f"scenario={ECHO}", "--mcp-server", "ev=mcp-server-everything stdio")
    assert result.exit_code == 0, result.output
    assert "it said Echo: hi" in result.stdout
    started = json.loads(only_log(runs_dir).read_text().splitlines()[0])
    assert started["spec"]["mcp_servers"][0]["command"] == "mcp-server-everything"


def test_run_refuses_a_bad_server_or_tool_name_as_a_usage_error() -> None:
    result = invoke("run", "go", "--mcp-server", "ev=mcp-server-everything", "--mcp-server", "ev=other")
    assert result.exit_code == 2 and "server name given twice: ev" in result.output
    result = invoke("run", "go", "--disallowed-tools", "shell,Bash")
    assert result.exit_code == 2 and "unknown tool name 'Bash'" in result.output


def test_image_and_attach_reach_the_agent(runs_dir: Path, tmp_path: Path) -> None:
    image, notes = tmp_path / "dot.png", tmp_path / "notes.txt"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 92)
    notes.write_text("hello\n")
    report = json.dumps({"steps": [{"report_attachments": True}]})
    result = invoke("run", "look", "-o", f"scenario={report}", "-i", str(image), "--attach", str(notes))
    assert result.exit_code == 0, result.output
    assert "image/png 100 bytes\ntext/plain 6 bytes" in result.stdout
    result = invoke("run", "look", "-i", str(notes))
    assert result.exit_code == 2 and "is not an image by its name; attach other files with --attach" in result.output


def test_attach_takes_a_file_of_any_name_as_text_or_bytes(runs_dir: Path, tmp_path: Path) -> None:
    """`--attach` of a name with no known type: UTF-8 text is `text/plain`, anything else
    `application/octet-stream` (an agent that cannot take it gets its path), never a refusal the CLI cannot fix."""
    makefile, blob = tmp_path / "Makefile", tmp_path / "data.parquet"
    makefile.write_text("all:\n\ttrue\n")
    blob.write_bytes(b"PAR1\xff\xfe\x00")
    report = json.dumps({"steps": [{"report_attachments": True}]})
    result = invoke("run", "look", "-o", f"scenario={report}", "--attach", str(makefile), "--attach", str(blob))
    assert result.exit_code == 0, result.output
    assert "text/plain 11 bytes\napplication/octet-stream 7 bytes" in result.stdout


def test_disallowed_tools_reach_the_run(runs_dir: Path) -> None:
    result = invoke("run", "go", "-o", "scenario=tools", "--disallowed-tools", "shell,edit", "--json")
    assert result.exit_code == 0, result.output
    resolved = [json.loads(line) for line in result.stdout.splitlines() if '"approval_resolved"' in line]
    assert [r["decision"] for r in resolved] == ["deny", "approve", "deny", "approve"]


def test_batch_flags_apply_to_every_task_under_its_own_line(tmp_path: Path) -> None:
    scenario = json.loads(ECHO)
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "a", "prompt": "x", "provider_options": {"scenario": scenario}}) + "\n"
                     + json.dumps({"id": "b", "prompt": "x", "provider_options": {"scenario": scenario},
                                   "disallowed_tools": ["mcp:ev"]}) + "\n")
    result = invoke("batch", str(tasks), "--mcp-server", "ev=mcp-server-everything", "--disallowed-tools", "web")
    assert result.exit_code == 0, result.output
    finals = {r["id"]: r["final_text"] for r in map(json.loads, (tmp_path / "tasks.results.jsonl").read_text()
                                                   .splitlines())}
    assert finals == {"a": "it said Echo: hi", "b": "it said tool mcp__ev__echo is not allowed"}


def test_offline_scenario_refuses_a_bad_inline_scenario_before_anything_starts(tmp_path: Path) -> None:
    result = invoke("run", "--offline", "--scenario", '{"steps": [{"mcp": {"tool": "x"}}]}')
    assert result.exit_code == 2 and "name the `server` and the `tool`" in result.output
    bad = tmp_path / "s.json"
    bad.write_text("[1, 2]")
    result = invoke("run", "--offline", "--scenario", str(bad))
    assert result.exit_code == 2 and "does not hold a JSON object" in result.output


# --- configuration files ---------------------------------------------------------------------------------------


@pytest.fixture
def xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "harness").mkdir(parents=True)
    return tmp_path / "xdg" / "harness" / "config.toml"


def _project(tmp_path: Path, text: str) -> Path:
    project = tmp_path / "home" / "proj"
    project.mkdir(parents=True)
    (project / ".harness.toml").write_text(text)
    return project


def test_a_configured_server_is_given_to_every_run_and_its_env_is_masked(xdg: Path, runs_dir: Path) -> None:
    xdg.write_text('[mcp_servers.ev]\ncommand = "mcp-server-everything"\nargs = ["stdio"]\n'
                   'env = { EV_DB = "configured-secret-42" }\n')
    result = invoke("run", "go", "-o", f"scenario={ECHO}")
    assert result.exit_code == 0, result.output
    assert "it said Echo: hi" in result.stdout
    log = only_log(runs_dir).read_text()
    assert "configured-secret-42" not in log
    server = json.loads(log.splitlines()[0])["spec"]["mcp_servers"][0]
    assert (server["command"], server["args"], server["env"]) == ("mcp-server-everything", ["stdio"], {"EV_DB": "***"})


def test_a_configured_server_that_is_not_one_is_refused_with_its_line(xdg: Path) -> None:
    xdg.write_text('model = "m"\n[mcp_servers.ev]\ncommand = "x"\nurl = "http://127.0.0.1:1/"\n')
    result = invoke("run", "go")
    assert result.exit_code == 2 and "config.toml:2: MCP server 'ev' has both a command and a url" in result.output


def test_an_untrusted_projects_servers_are_refused_unless_the_command_line_names_its_own(
        xdg: Path, tmp_path: Path, runs_dir: Path) -> None:
    project = _project(tmp_path, '[mcp_servers.ev]\ncommand = "./run-me.sh"\n')
    result = invoke("run", "go", "-C", str(project), "-o", f"scenario={ECHO}")
    assert result.exit_code == 2, result.output
    assert "may not add MCP servers" in result.output and "trusted_projects" in result.output
    assert "mcp_servers.ev" in result.output, result.output  # a file's key, not the flag: said as the file has it
    result = invoke("run", "go", "-C", str(project), "-o", f"scenario={ECHO}", "--mcp-server", "ev=mine")
    assert result.exit_code == 0, result.output
    assert json.loads(only_log(runs_dir).read_text().splitlines()[0])["spec"]["mcp_servers"][0]["command"] == "mine"


def test_a_trusted_projects_servers_are_given(xdg: Path, tmp_path: Path, runs_dir: Path) -> None:
    project = _project(tmp_path, '[mcp_servers.ev]\ncommand = "./run-me.sh"\ncwd = "tools"\n')
    xdg.write_text(f'trusted_projects = ["{project}"]\n')
    result = invoke("run", "go", "-C", str(project), "-o", f"scenario={ECHO}")
    assert result.exit_code == 0, result.output
    server = json.loads(only_log(runs_dir).read_text().splitlines()[0])["spec"]["mcp_servers"][0]
    assert server["command"] == "./run-me.sh" and server["cwd"] == str((project / "tools").resolve())


def test_a_module_name_the_harness_command_cannot_import_says_what_works(tmp_path: Path) -> None:
    """`harness run --tools mytools` beside mytools.py: the `harness` command does not import from the current
    directory, so the error gives what does work, and the advice (`PYTHONPATH=.`) really works."""
    (tmp_path / "mytools.py").write_text("from harness_core import tool\n\n\n@tool\ndef add(a: int, b: int) -> int:\n"
                                         "    \"\"\"Add.\"\"\"\n    return a + b\n")
    harness = Path(sys.executable).with_name("harness")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HARNESS_PROVIDER="scripted", HARNESS_RUNS_DIR=str(tmp_path / "runs"), XDG_CONFIG_HOME=str(tmp_path))
    argv = [str(harness), "run", "--tools", "mytools", "-o",
            'scenario={"steps":[{"mcp":{"server":"harness","tool":"add","args":{"a":2,"b":3}}},'
            '{"say":"got {tool_result}"}]}', "go"]
    failed = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert failed.returncode == 2, failed.stderr
    assert "no module named 'mytools'" in failed.stderr and "PYTHONPATH=." in failed.stderr
    assert "--tools mytools.py" in failed.stderr and "run from the directory" not in failed.stderr
    done = subprocess.run(argv, cwd=tmp_path, env={**env, "PYTHONPATH": "."}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "got 5" in done.stdout, done.stderr


GUARDED = json.dumps({"steps": [{"mcp": {"server": "harness", "tool": "guarded", "args": {"what": "x"}}},
                                {"say": "it said {tool_result}"}]})


@pytest.mark.parametrize("approval", ["never", "untrusted"])
def test_a_denied_tool_call_never_recommends_approval_never(tmp_path: Path, approval: str) -> None:
    """A `requires_approval` tool asks under every policy: `--approval never` would not spare the question."""
    module = tmp_path / "guarded_tools.py"
    module.write_text("from harness_core import tool\n\n\n@tool(requires_approval=True)\n"
                      "def guarded(what: str) -> str:\n    \"\"\"Needs a yes.\"\"\"\n    return what\n")
    result = invoke("run", "go", "-o", f"scenario={GUARDED}", "--tools", str(module), "--approval", approval)
    assert result.exit_code == 0, result.output
    assert "[approval] guarded(what='x') — denied by default (no one could answer" in result.stderr
    assert "--approval never" not in result.stderr


def test_a_refusal_on_the_command_line_names_the_flags_not_the_spec_fields() -> None:
    """A refusal the library words for Python (`allowed_tools`, `provider=NAME`) names what the user typed on the
    command line: `--allowed-tools`, `--disallowed-tools`, `-p/--provider NAME`."""
    result = invoke("run", "go", "--allowed-tools", "read,search,mcp:docs", "--disallowed-tools", "agent,search")
    said = result.stderr
    assert result.exit_code == 2, result.output
    assert "does not support --disallowed-tools 'agent', 'search' and an allow-list (--allowed-tools)" in said, said
    assert "name what to forbid in --disallowed-tools instead" in said and "mcp:docs" not in said, said
    assert "allowed_tools" not in said and "provider=NAME" not in said, said
    assert in_flags("(provider=NAME; on the command line -p/--provider NAME)") == "(-p/--provider NAME)"
    assert in_flags("as its path, and strict_attachments is on. Use disallowed_tools.") == \
        "as its path, and --strict-attachments is on. Use --disallowed-tools."
    kept = "a file 'allowed_tools.txt', server mcp:mcp_servers.x, table [mcp_servers.ev], key mcp_servers.ev"
    assert in_flags(kept) == kept
