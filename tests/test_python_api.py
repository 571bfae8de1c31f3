"""The Python API as a caller uses it: specs take what they convert, `run`/`run_sync` take `open_run`'s keyword
arguments, `help()` documents what a run and a session expose, `offline_workspace` plays `--offline`'s scenarios
from Python (and owns its temporary workspace), and the errors speak to a Python caller.

The scripted provider plays the runs (the offline one, as in tests/cli/test_offline.py), so no CLI is needed; the
same API against a real CLI is in a provider test (test_offline_workspace_real.py), and what a type checker
says of it in tests/test_readme_types.py.
"""

from __future__ import annotations

import ast
import inspect
import pydoc
import tempfile
import typing
from pathlib import Path

import anyio
import pytest

import harness_core
from harness_core import (
    AgentRunSpec,
    ApprovalPolicy,
    Capability,
    InvalidSpecError,
    LiveRun,
    ProviderNotFoundError,
    RunStatus,
    SandboxMode,
    Session,
    SessionSpec,
    UnsupportedFeatureError,
    open_run,
    open_session,
    run,
    run_sync,
)
from harness_core.offline import SCENARIOS, offline_workspace
from harness_core.plugins import PluginHost
from harness_core.spec import ApprovalName, SandboxName
from tests.cli.test_cli import make_host
from tests.cli.test_offline import OfflineScriptedProvider, _OfflinePlugin

SPEC_SOURCE = Path(harness_core.__file__).with_name("spec.py")


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PluginHost:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    OfflineScriptedProvider.setups = []
    return make_host(("offline", _OfflinePlugin()))


@pytest.fixture
def temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where `tempfile` makes directories during the test: only this test's offline workspaces are in it."""
    directory = tmp_path / "tmp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


# --- specs take what they convert ------------------------------------------------------------------------


def _checked_init(cls_name: str) -> ast.FunctionDef:
    """The `__init__` that spec.py declares for type checkers in class `cls_name`."""
    tree = ast.parse(SPEC_SOURCE.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls_name)
    guarded = [n for n in cls.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    inits = [f for g in guarded for f in g.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
    assert len(inits) == 1, f"{cls_name} must declare one __init__ under `if TYPE_CHECKING:`"
    return inits[0]


@pytest.mark.parametrize("cls", [AgentRunSpec, SessionSpec])
def test_the_type_checkers_init_names_every_field_with_its_default(cls: type[AgentRunSpec | SessionSpec]) -> None:
    init = _checked_init(cls.__name__)
    assert not init.args.args[1:] and init.args.vararg is None and init.args.kwarg is None, "keyword-only"
    names = [a.arg for a in init.args.kwonlyargs]
    assert sorted(names) == sorted(cls.model_fields), "the same fields"
    optional = {a.arg for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True) if d is not None}
    assert optional == {n for n, f in cls.model_fields.items() if not f.is_required()}
    for arg, default in zip(init.args.kwonlyargs, init.args.kw_defaults, strict=True):
        field = cls.model_fields[arg.arg]
        if isinstance(default, ast.Constant) and default.value is not Ellipsis:  # a written default is the field's
            assert default.value == field.default, arg.arg


def test_the_literal_names_are_the_enum_values() -> None:
    assert set(typing.get_args(SandboxName)) == {m.value for m in SandboxMode}
    assert set(typing.get_args(ApprovalName)) == {m.value for m in ApprovalPolicy}


def test_a_spec_converts_what_its_init_takes_and_reads_as_its_field_types(tmp_path: Path) -> None:
    spec = AgentRunSpec(prompt="hi", cwd="ws", sandbox="read-only", approval="on-request",
                        requires={Capability.SESSION}, env={"A": "b"})
    assert spec.cwd == Path.cwd() / "ws" and spec.cwd.is_absolute()
    assert spec.sandbox is SandboxMode.READ_ONLY and spec.approval is ApprovalPolicy.ON_REQUEST
    assert spec.requires == frozenset({Capability.SESSION})
    session = SessionSpec(cwd=tmp_path)
    assert session.cwd == tmp_path and SessionSpec.of(spec).approval is ApprovalPolicy.ON_REQUEST


# --- run and run_sync take open_run's keyword arguments -------------------------------------------------


@pytest.mark.parametrize("func", [run, run_sync])
def test_run_and_run_sync_take_exactly_open_runs_keyword_arguments(func: typing.Callable[..., object]) -> None:
    wanted = inspect.signature(open_run.__wrapped__).parameters  # type: ignore[attr-defined]
    got = dict(inspect.signature(func).parameters)
    if func is run_sync:
        assert got.pop("backend").default == "asyncio"
    assert list(got) == list(wanted)
    for name, parameter in wanted.items():
        assert (got[name].kind, got[name].default, got[name].annotation) == (
            parameter.kind, parameter.default, parameter.annotation), name


def test_run_sync_passes_its_keyword_arguments_on(host: PluginHost, tmp_path: Path) -> None:
    seen: list[str] = []
    result = run_sync(AgentRunSpec(prompt="hi"), "scripted", host=host, runs_dir=tmp_path / "mine",
                      run_id="my-run-1", on_event=lambda event: seen.append(event.type))
    assert result.status is RunStatus.SUCCESS
    assert (tmp_path / "mine" / "my-run-1.jsonl").is_file() and seen[0] == "run_started" and seen[-1] == "done"
    run_sync(AgentRunSpec(prompt="hi"), "scripted", host=host, run_log=False, run_id="no-log-1")
    assert not (tmp_path / "runs" / "no-log-1.jsonl").exists()


# --- help() documents what a run and a session expose ---------------------------------------------------


@pytest.mark.parametrize(("cls", "names"), [
    (LiveRun, ["run_id", "provider", "log_path", "result", "finished", "stopped_by_runner", "session_turn",
               "interrupt", "stop", "steer", "wait"]),
    (Session, ["session_id", "provider", "live", "turns", "provider_session_id", "usage", "closed", "spec",
               "overridable", "pid", "turn", "run", "aclose"]),
])
def test_help_documents_every_public_attribute(cls: type, names: list[str]) -> None:
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    for name in names:
        member = inspect.getattr_static(cls, name)
        doc = inspect.getdoc(member)
        assert doc, f"{cls.__name__}.{name} has no docstring"
        assert f"{name}\n" in text or f"{name}(" in text, f"help({cls.__name__}) does not list {name}"
        assert doc.splitlines()[0] in text, f"help({cls.__name__}) does not show {name}'s docstring"


@pytest.mark.anyio
async def test_a_runs_documented_attributes_say_what_they_say(host: PluginHost, tmp_path: Path) -> None:
    async with open_run(AgentRunSpec(prompt="hi"), "scripted", host=host, run_id="attrs-1") as live:
        assert (live.run_id, live.provider, live.result) == ("attrs-1", "scripted", None)
        assert live.log_path == tmp_path / "runs" / "attrs-1.jsonl" and not live.finished.is_set()
        result = await live.wait()
    assert live.finished.is_set() and live.result == result and live.session_turn is None
    assert not live.stopped_by_runner
    with pytest.raises(AttributeError):
        live.result = None  # type: ignore[misc]  # read-only: the run sets it


# --- offline from Python --------------------------------------------------------------------------------


def _tools(spec: AgentRunSpec, host: PluginHost) -> harness_core.HarnessResult:
    return run_sync(spec, "offline-scripted", host=host)


def test_a_temporary_workspace_is_seeded_played_in_and_removed(host: PluginHost, temp: Path, tmp_path: Path) -> None:
    ready: list[tuple[Path, list[str]]] = []
    with offline_workspace(AgentRunSpec(prompt="try it"), "offline-scripted", "tools", host=host,
                           on_ready=lambda ws, created: ready.append((ws, created))) as spec:
        workspace = spec.cwd
        assert workspace.parent == temp and ready == [(workspace, sorted(SCENARIOS["tools"].files))]
        result = _tools(spec, host)
        assert (workspace / "notes.txt").read_text() == "beta\n" and (workspace / "new.txt").is_file()
    assert result.status is RunStatus.SUCCESS and result.final_text == "All four tools ran."
    assert not workspace.exists() and list(temp.iterdir()) == []
    assert OfflineScriptedProvider.setups == [workspace]
    assert len(list((tmp_path / "runs").glob("*.jsonl"))) == 1, "the run log stays"


def test_keep_keeps_the_temporary_workspace(host: PluginHost, temp: Path) -> None:
    with offline_workspace(AgentRunSpec(prompt="try it"), "offline-scripted", "say", keep=True, host=host) as spec:
        _tools(spec, host)
    assert spec.cwd.is_dir() and spec.cwd.parent == temp


def test_the_workspace_is_removed_when_the_block_raises(host: PluginHost, temp: Path) -> None:
    with pytest.raises(KeyError), offline_workspace(AgentRunSpec(prompt="x"), "offline-scripted", host=host):
        raise KeyError("the caller's own error")
    assert list(temp.iterdir()) == []


def test_a_spec_made_with_a_new_cwd_plays_there_and_keeps_it(host: PluginHost, temp: Path, tmp_path: Path) -> None:
    given = tmp_path / "new" / "ws"
    with offline_workspace(AgentRunSpec(prompt="x", cwd=given), "offline-scripted", host=host) as spec:
        assert spec.cwd == given
        assert _tools(spec, host).status is RunStatus.SUCCESS
    assert (given / "notes.txt").read_text() == "beta\n" and list(temp.iterdir()) == []


def test_a_non_empty_cwd_is_refused_before_anything_is_created(host: PluginHost, temp: Path,
                                                               tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("my own notes\n")
    with (pytest.raises(InvalidSpecError, match=r"is not empty \(notes.txt\).*force=True") as refused,
          offline_workspace(AgentRunSpec(prompt="x", cwd=mine), "offline-scripted", host=host)):
        pytest.fail("must not be entered")
    assert "--" not in refused.value.message, "no command-line flags for a Python caller"
    assert (mine / "notes.txt").read_text() == "my own notes\n" and OfflineScriptedProvider.setups == []
    with offline_workspace(AgentRunSpec(prompt="x", cwd=mine), "offline-scripted", "say", force=True,
                           host=host) as spec:
        assert _tools(spec, host).final_text == "Hello from the scripted model."
    assert (mine / "notes.txt").read_text() == "my own notes\n"


def test_temporary_overrides_the_specs_cwd(host: PluginHost, temp: Path, tmp_path: Path) -> None:
    with offline_workspace(AgentRunSpec(prompt="x", cwd=tmp_path), "offline-scripted", "say", temporary=True,
                           host=host) as spec:
        assert spec.cwd.parent == temp
    assert list(temp.iterdir()) == []


@pytest.mark.parametrize(("provider", "scenario", "error", "said"), [
    ("offline-scripted", "tool", InvalidSpecError, "no offline scenario named 'tool'"),
    ("scripted", "tools", InvalidSpecError, "provider 'scripted' cannot run offline"),
    ("nope", "tools", ProviderNotFoundError, "no provider named 'nope'"),
])
def test_a_bad_scenario_or_provider_creates_nothing(host: PluginHost, temp: Path, provider: str, scenario: str,
                                                    error: type[Exception], said: str) -> None:
    with pytest.raises(error, match=said), offline_workspace(AgentRunSpec(prompt="x"), provider, scenario,
                                                             host=host):
        pytest.fail("must not be entered")
    assert list(temp.iterdir()) == []


@pytest.mark.anyio
async def test_a_session_plays_every_turn_in_one_temporary_workspace(host: PluginHost, temp: Path) -> None:
    with offline_workspace(SessionSpec(), "offline-scripted", "say", host=host) as spec:
        with anyio.fail_after(30):
            async with open_session(spec, "offline-scripted", host=host) as session:
                first = await session.run("hello")
                second = await session.run("again")
    assert [first.final_text, second.final_text] == ["Hello from the scripted model."] * 2
    assert session.turns == 2 and not spec.cwd.exists() and spec.cwd.parent == temp


# --- errors speak to a Python caller --------------------------------------------------------------------


def _refusal(host: PluginHost, spec: AgentRunSpec, provider: str) -> str:
    with pytest.raises((ProviderNotFoundError, UnsupportedFeatureError)) as raised:
        run_sync(spec, provider, host=host)
    return str(raised.value)


def test_refusals_name_the_python_argument_before_the_flag(host: PluginHost) -> None:
    class NoApprovals(OfflineScriptedProvider):
        info = OfflineScriptedProvider.info.model_copy(update={
            "name": "no-approvals", "capabilities": frozenset(Capability) - {Capability.APPROVALS}})

    class _Plugin:
        @harness_core.hookimpl
        def harness_register_providers(self, register: typing.Any) -> None:
            register(NoApprovals)

    host = make_host(("no-approvals", _Plugin()))
    for message in (_refusal(host, AgentRunSpec(prompt="x"), "nope"),
                    _refusal(host, AgentRunSpec(prompt="x", approval="on-request"), "no-approvals")):
        assert "provider=NAME" in message, message
        assert message.index("provider=NAME") < message.index("--provider NAME"), message


def test_the_empty_prompt_error_does_not_name_a_flag_first() -> None:
    with pytest.raises(ValueError, match="the prompt is empty; give the agent a task"):
        AgentRunSpec(prompt=" ")

