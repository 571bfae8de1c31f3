"""The docs keep up with the code: every hook, error code and provider-façade name is documented, and the
provider guide's code runs (cheap, and it keeps the docs honest)."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import sys
import types
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import harness_core.errors as errors
import harness_core.hookspecs as hookspecs
import harness_core.provider as provider_facade
from harness_core import AgentRunSpec, RunStatus, hookimpl, run_sync
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost
from harness_core.scripted.backends import FunctionCall
from harness_core.scripted.inline import _KINDS as _INLINE_KINDS
from harness_core.scripted.scenarios import ReadFile, RunCommand

DOCS = Path(__file__).resolve().parents[1] / "docs"
GUIDE = DOCS / "providers.md"
FACADES = {
    "harness_core",
    "harness_core.provider",
    "harness_core.offline",
    "harness_core.scripted.scenarios",
    "harness_core.scripted.backends",
    "harness_core.testing.contract",
}


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.DOTALL)


def _block_defining(name: str) -> str:
    found = [block for block in _python_blocks() if re.search(rf"^class {name}\b", block, re.MULTILINE)]
    assert len(found) == 1, f"docs/providers.md must hold one python block defining {name}"
    return found[0]


def _block_containing(text: str) -> str:
    found = [block for block in _python_blocks() if text in block]
    assert len(found) == 1, f"docs/providers.md must hold one python block with {text!r}"
    return found[0]


def _load(name: str, source: str) -> types.ModuleType:
    """`source` as an importable module (pydantic resolves annotations through sys.modules)."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, f"docs/providers.md:{name}", "exec"), module.__dict__)
    return module


@pytest.fixture
def doc_module(request: pytest.FixtureRequest) -> Iterator[types.ModuleType]:
    name, defining = request.param
    module = _load(name, _block_defining(defining))
    yield module
    sys.modules.pop(name, None)


def test_every_hook_is_documented() -> None:
    text = GUIDE.read_text()
    hooks = [name for name, _ in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("harness_")]
    assert hooks, "no hookspecs found"
    missing = [h for h in hooks if f"`{h}(" not in text]
    assert not missing, f"undocumented hooks in docs/providers.md: {missing}"


def test_every_error_code_is_documented() -> None:
    text = (DOCS / "runs.md").read_text()
    codes = {
        cls.code
        for cls in vars(errors).values()
        if isinstance(cls, type) and issubclass(cls, errors.HarnessError) and cls is not errors.HarnessError
    }
    missing = sorted(c for c in codes if f"`{c}`" not in text)
    assert not missing, f"undocumented error codes in docs/runs.md: {missing}"


def test_every_name_of_the_provider_facade_is_documented() -> None:
    text = GUIDE.read_text()
    names = list(provider_facade.__all__)
    assert len(names) > 30, "the façade's __all__ looks empty"
    missing = [name for name in names if f"`{name}`" not in text]
    assert not missing, f"names of harness_core.provider not documented in docs/providers.md: {missing}"


def test_every_run_context_member_is_documented() -> None:
    text = GUIDE.read_text()
    members = [name for name in vars(provider_facade.RunContext) if not name.startswith("_")]
    assert {"emit", "spawn", "record_wire", "interrupt_requested"} <= set(members), members
    missing = [m for m in members if not re.search(rf"`(await )?ctx\.{m}\b", text)]
    assert not missing, f"RunContext members not documented as `ctx.NAME` in docs/providers.md: {missing}"


def test_every_child_process_method_is_documented() -> None:
    text = GUIDE.read_text()
    members = [name for name in vars(provider_facade.ChildProcess) if not name.startswith("_")]
    assert {"send_line", "lines", "wait", "exit_error"} <= set(members), members
    missing = [m for m in members if not re.search(rf"`(await )?child\.{m}\b", text)]
    assert not missing, f"ChildProcess members not documented as `child.NAME` in docs/providers.md: {missing}"


def test_the_guides_code_imports_harness_only_from_the_facades() -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 5
    offending = []
    for block in blocks:
        for node in ast.walk(ast.parse(block)):
            modules = (
                [node.module]
                if isinstance(node, ast.ImportFrom) and node.module
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            offending += [m for m in modules if m.split(".")[0] == "harness_core" and m not in FACADES]
    assert not offending, f"docs/providers.md imports Harness from outside the façades: {offending}"


@pytest.mark.parametrize("doc_module", [("harness_docs_echo", "EchoProvider")], indirect=True)
def test_the_guides_provider_runs(doc_module: types.ModuleType, tmp_path: Path) -> None:
    host = PluginHost.create(entry_points=False, plugins=[("echo", doc_module)])
    assert not host.broken, host.broken
    spec = AgentRunSpec(prompt="hello from the docs", cwd=tmp_path, provider_options={"shout": True})
    events: list[Any] = []
    result = run_sync(spec, "echo", host=host, run_log=False, on_event=events.append)
    assert result.status is RunStatus.SUCCESS, result.error
    assert result.final_text == "HELLO FROM THE DOCS"
    deltas = [e.text for e in events if e.type == "text_delta"]
    assert len(deltas) == 4 and "".join(deltas) == result.final_text


def test_the_guides_tool_display_example_holds() -> None:
    exec(compile(_block_containing("classify_command(\"bash -lc"), "docs/providers.md", "exec"), {})


@pytest.mark.parametrize("doc_module", [("harness_docs_dialect", "MyAgentTools")], indirect=True)
def test_the_guides_tool_dialect_and_offline_setup(doc_module: types.ModuleType, tmp_path: Path) -> None:
    setup = doc_module.offline_setup(SCENARIOS["tools"], tmp_path)
    with setup.backend as backend:
        assert setup.provider_options["base_url"] == f"{backend.url}/v1"
        read = backend.dialect.tool_call(ReadFile("notes.txt"), tmp_path)
        command = backend.dialect.tool_call(RunCommand("ls"), tmp_path)
    assert read == FunctionCall("read_file", {"path": "notes.txt"})
    assert command == FunctionCall("exec_command", {"cmd": "ls", "yield_time_ms": 3_600_000}), \
        "other tools keep the default dialect"


@pytest.mark.parametrize("doc_module", [("harness_docs_cli", "MyAgentProvider")], indirect=True)
def test_the_guides_cli_provider_spawns_and_pumps_as_documented(
    doc_module: types.ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert doc_module.MyAgentProvider.Options is doc_module.MyAgentOptions
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cli = bin_dir / "myagent"
    cli.write_text("#!/bin/sh\nread request\necho '{\"type\": \"hello\"}'\necho not json\nexit 3\n")
    cli.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")

    @hookimpl
    def harness_register_providers(register: Any) -> None:
        register(doc_module.MyAgentProvider)

    plugin = types.ModuleType("harness_docs_cli_plugin")
    plugin.harness_register_providers = harness_register_providers  # type: ignore[attr-defined]
    host = PluginHost.create(entry_points=False, plugins=[("myagent", plugin)])
    events: list[Any] = []
    result = run_sync(AgentRunSpec(prompt="hi", cwd=tmp_path), "myagent", host=host, runs_dir=tmp_path / "runs",
                      record_wire=True, on_event=events.append)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "process_exited" and result.error.details["exit_code"] == 3
    assert [(e.method, e.payload) for e in events if e.type == "provider_raw"] == [("non_json_stdout", "not json")]
    (wire,) = (tmp_path / "runs").glob("*.wire.jsonl")
    sent = [json.loads(line)["line"] for line in wire.read_text().splitlines() if '"out"' in line]
    assert sent == [json.dumps({"prompt": "hi", "system": None})], "ctx.spawn records what was sent"


def _post(url: str, body: dict[str, Any]) -> list[str]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        frames = response.read().decode().split("\n\n")
    return [frame.removeprefix("data: ") for frame in frames if frame]


@pytest.mark.parametrize("doc_module", [("harness_docs_chat", "ChatCompletionsBackend")], indirect=True)
def test_the_guides_backend_for_another_api_plays_scenarios(doc_module: types.ModuleType) -> None:
    backend_cls = doc_module.ChatCompletionsBackend
    with backend_cls(SCENARIOS["say"]) as backend:
        frames = _post(backend.url + backend_cls.turn_path, {"stream": True, "messages": []})
    assert frames[-1] == "[DONE]"
    chunks = [json.loads(f)["choices"][0] for f in frames[:-1]]
    assert "".join(c["delta"].get("content", "") for c in chunks) == SCENARIOS["say"].expected.final_text
    assert chunks[-1]["finish_reason"] == "stop"

    with backend_cls(SCENARIOS["tools"]) as backend:
        frames = _post(backend.url + backend_cls.turn_path, {"stream": True, "messages": []})
    call = json.loads(frames[0])["choices"][0]["delta"]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("shell", {"command": "echo harness-ok"})

    with backend_cls(SCENARIOS["fail_401"]) as backend, pytest.raises(urllib.error.HTTPError) as failed:
        _post(backend.url + backend_cls.turn_path, {"stream": True, "messages": []})
    assert failed.value.code == 401


_TEST_REF = re.compile(r"`((?:[\w./-]+\.py)::(test_\w+)|ProviderContract\.(test_\w+))`")


def test_the_fault_matrix_names_only_tests_that_exist() -> None:
    """docs/reliability.md: every cell names the test that proves it (`path::test_name`, or
    `ProviderContract.test_name` for the contract every provider runs); each such test exists."""
    text = (DOCS / "reliability.md").read_text()
    root = DOCS.parent
    refs = _TEST_REF.findall(text)
    assert len(refs) >= 20, "the fault matrix names the tests that prove each cell"
    missing = []
    for whole, path_test, contract_test in refs:
        if contract_test:
            source = "".join(p.read_text() for p in (root / "harness_core/testing/contract").glob("*.py"))
            name = contract_test
        else:
            path = root / whole.split("::")[0]
            source = path.read_text() if path.exists() else ""
            name = path_test
        if not re.search(rf"def {name}\b", source):
            missing.append(whole)
    assert not missing, f"docs/reliability.md names tests that do not exist: {missing}"


def _anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings (lower case, punctuation dropped, spaces to hyphens)."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_link_between_the_docs_lands_on_a_page_and_heading() -> None:
    """The map (docs/architecture.md) and its topic pages link each other: a moved section must not strand a link."""
    pages = [*sorted(DOCS.glob("*.md")), DOCS.parent / "README.md"]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            landing = (page.parent / path).resolve() if path else page
            if not landing.exists():
                broken.append(f"{page.name}: {target} (no such file)")
            elif anchor and landing.suffix == ".md" and anchor not in _anchors(landing):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, "links that land nowhere:\n" + "\n".join(broken)


def _paragraph(text: str, start: str) -> str:
    """The paragraph of `text` that begins with `start`."""
    return text[text.index(start):].split("\n\n", 1)[0]


def test_the_readmes_inline_step_list_has_every_step_kind() -> None:
    """The README lists every kind an inline scenario takes, each written as it is spelled in JSON."""
    listed = _paragraph((DOCS.parent / "README.md").read_text(), "A scenario written inline is")
    missing = [kind for kind in _INLINE_KINDS if f'{{"{kind}": ' not in listed]
    assert not missing, f"README's inline scenario steps leave out {missing}"


def test_the_readme_says_where_python_tools_run_as_the_tools_guide_does() -> None:
    """A tool runs in the Harness process (docs/python-tools.md; a tool returning its pid returns Harness's)."""
    section = (DOCS.parent / "README.md").read_text().split("### Python functions as tools", 1)[1].split("\n#", 1)[0]
    assert "in the Harness process" in (DOCS / "python-tools.md").read_text()
    assert "in the Harness process" in " ".join(section.split()) and "own process" not in section
