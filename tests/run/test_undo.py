"""`harness undo` (and `harness_core.plan_undo` / `apply_undo`): a run's files put back as they were before it — an
edit reverted, a file it created removed, one it deleted recreated, a rename moved back — only while each still
holds what the run left; otherwise every file in the way is named and nothing is written. The scripted provider
plays the `tools` scenario through the real CLI code; one-off providers delete, rename and write binary files."""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import anyio
import pytest

import harness_core.testing.scripted as scripted
from harness_core import AgentRunSpec, UndoRefusedError, apply_undo, open_run, plan_undo
from harness_core.capabilities import Capability, ProviderInfo
from harness_core.events import (
    FileChange,
    HarnessResult,
    HarnessToolDetails,
    RunStatus,
    ToolKind,
    ToolResult,
    ToolStatus,
    ToolUse,
)
from harness_core.hookspecs import hookimpl
from harness_core.plugins import PluginHost, reset_host
from harness_core.provider import ProviderOptions, RunContext
from harness_core.store import list_runs
from tests.cli.test_cli import invoke, make_host

_DEADLINE = 20.0
Body = Callable[[AgentRunSpec, RunContext], Awaitable[None]]


@pytest.fixture(autouse=True)
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginHost]:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)  # the scripted provider applies its file steps in the run's cwd
    found = make_host()
    reset_host(found)
    monkeypatch.setenv("HARNESS_PROVIDER", "scripted")
    monkeypatch.setenv("HARNESS_RUNS_DIR", str(tmp_path / "runs"))
    yield found
    reset_host(None)


def _tools_run(work: Path) -> str:
    (work / "notes.txt").write_text("alpha\n")
    assert invoke("run", "x", "-o", "scenario=tools").exit_code == 0
    assert (work / "notes.txt").read_text() == "beta\n" and (work / "new.txt").read_text() == "fresh\n"
    return list_runs(Path(os.environ["HARNESS_RUNS_DIR"]))[0].run_id


def test_undo_reverts_an_edit_and_removes_a_new_file(tmp_path: Path) -> None:
    work = tmp_path / "work"
    run_id = _tools_run(work)
    os.chmod(work / "notes.txt", 0o600)
    dry = invoke("undo", "--dry-run")
    assert dry.exit_code == 0 and "would put back" in dry.stdout and (work / "new.txt").exists(), "-n writes nothing"
    done = invoke("undo", "last")
    assert done.exit_code == 0, done.output
    assert done.stdout.splitlines() == [f"run {run_id}: put back in {work}", "  notes.txt: restored",
                                        "  new.txt: removed (the run created it)"]
    assert (work / "notes.txt").read_text() == "alpha\n" and not (work / "new.txt").exists()
    assert (work / "notes.txt").stat().st_mode & 0o777 == 0o600, "its mode is kept"
    again = invoke("undo", run_id[:17])
    assert again.exit_code == 0 and "already as before it: notes.txt, new.txt" in again.stdout


def test_a_file_changed_since_the_run_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    work = tmp_path / "work"
    run_id = _tools_run(work)
    (work / "notes.txt").write_text("beta\nmine\n")  # edited by someone after the run
    refused = invoke("undo")
    assert refused.exit_code == 1
    assert (f"cannot undo run {run_id}: notes.txt: changed since the run (it no longer holds what the run left). "
            "Nothing was changed") in refused.stderr
    assert (work / "new.txt").read_text() == "fresh\n", "all or nothing: the file that could go back did not"
    assert (work / "notes.txt").read_text() == "beta\nmine\n"


def test_undo_of_a_run_that_changed_nothing_or_has_not_ended(tmp_path: Path, runs_dir: Path) -> None:
    assert invoke("run", "x", "-o", "scenario=say").exit_code == 0
    nothing = invoke("undo")
    assert nothing.exit_code == 1 and "changed no file that an edit tool announced" in nothing.stderr
    log = runs_dir / "20261201T130000-ffff0000.jsonl"  # a run whose Harness died: its log has no `done`
    log.write_text(next(iter(runs_dir.glob("*.jsonl"))).read_text().splitlines()[0] + "\n")
    with pytest.raises(UndoRefusedError, match="has not ended"):
        plan_undo(log)
    missing = invoke("undo", "20990101")
    assert missing.exit_code == 2 and "no run '20990101'" in missing.stderr


# --- what the scripted scenarios cannot do: delete, rename, binary, secrets -----------------------------------

def _host(body: Body) -> PluginHost:
    class OneOff(scripted.ScriptedProvider):
        info: ClassVar[ProviderInfo] = ProviderInfo(name="one-off", version="1", capabilities=frozenset(Capability))

        async def run(self, spec: AgentRunSpec, options: ProviderOptions, ctx: RunContext) -> Any:
            await body(spec, ctx)
            return HarnessResult(status=RunStatus.SUCCESS)

    class Plugin:
        @hookimpl
        def harness_register_providers(self, register: Any) -> None:
            register(OneOff)

    return PluginHost.create(entry_points=False, plugins=[("one-off", Plugin())])


async def _tool(ctx: RunContext, tool_id: str, change: FileChange, act: Callable[[], None]) -> None:
    """A tool that announces `change`, makes it, and reports it done (as an auto-approved edit tool does)."""
    display = HarnessToolDetails(kind=ToolKind.EDIT, title="Editing file", path=change.path, changes=(change,))
    await ctx.emit(ToolUse(tool_id=tool_id, name="edit", display=display))
    act()
    done = display.model_copy(update={"status": ToolStatus.COMPLETED})
    await ctx.emit(ToolResult(tool_id=tool_id, name="edit", display=done))


def _play(body: Body, work: Path, runs_dir: Path, **spec: Any) -> Path:
    async def main() -> Path:
        with anyio.fail_after(_DEADLINE):
            async with open_run(AgentRunSpec(prompt="x", cwd=work, **spec), "one-off", host=_host(body),
                                runs_dir=runs_dir) as live:
                await live.wait()
        assert live.log_path is not None
        return live.log_path

    return anyio.run(main)


def test_a_deleted_file_comes_back_and_a_renamed_one_moves_back(tmp_path: Path, runs_dir: Path) -> None:
    work = tmp_path / "work"
    (work / "old.txt").write_text("kept words\nno newline at the end")
    (work / "a.txt").write_text("moving\n")
    os.chmod(work / "a.txt", 0o640)

    async def body(spec: AgentRunSpec, ctx: RunContext) -> None:
        await _tool(ctx, "d", FileChange(path="old.txt", kind="delete"), (work / "old.txt").unlink)
        await _tool(ctx, "r", FileChange(path="a.txt", kind="rename", move_path="b.txt"),
                    lambda: (work / "a.txt").rename(work / "b.txt"))

    log = _play(body, work, runs_dir)
    plan = plan_undo(log)
    assert not plan.problems, plan.problems
    assert [(f.path, f.action) for f in apply_undo(plan)] == [("old.txt", "recreate"), ("a.txt", "move back")]
    assert (work / "old.txt").read_text() == "kept words\nno newline at the end"
    assert (work / "a.txt").read_text() == "moving\n" and not (work / "b.txt").exists()
    assert (work / "a.txt").stat().st_mode & 0o777 == 0o640, "the file moved back, not a copy"


def test_binary_and_large_files_are_refused_naming_why(tmp_path: Path, runs_dir: Path) -> None:
    """Their content before the run is not in the log (bounded: a NUL-bearing or >1 MiB file is compared by digest
    or size, not kept): undo names them and writes nothing, not even the text file it could put back."""
    work = tmp_path / "work"
    (work / "img.bin").write_bytes(b"\0\1\2")
    (work / "big.txt").write_text("x" * (2 << 20))
    (work / "t.txt").write_text("one\n")

    async def body(spec: AgentRunSpec, ctx: RunContext) -> None:
        await _tool(ctx, "b", FileChange(path="img.bin"), lambda: (work / "img.bin").write_bytes(b"\0\1\3"))
        await _tool(ctx, "g", FileChange(path="big.txt"), lambda: (work / "big.txt").write_text("y" * (2 << 20)))
        await _tool(ctx, "t", FileChange(path="t.txt"), lambda: (work / "t.txt").write_text("two\n"))

    plan = plan_undo(_play(body, work, runs_dir))
    assert plan.problems == (
        "img.bin: its content before the run is not in the log (binary file: not diffed)",
        "big.txt: its content before the run is not in the log (larger than 1024 KiB: not diffed)",
    )
    with pytest.raises(UndoRefusedError, match="Nothing was changed"):
        apply_undo(plan)
    assert (work / "t.txt").read_text() == "two\n"


def test_a_secret_masked_in_the_logs_diff_is_never_written_back(tmp_path: Path, runs_dir: Path) -> None:
    """The log's diff has `***` where the file held a secret of the run: the content it rebuilds does not match the
    digest of what was there, so undo refuses rather than write `***` into the file."""
    work = tmp_path / "work"
    secret = "s3cr3t-value-of-the-run"
    (work / ".env").write_text(f"TOKEN={secret}\n")

    async def body(spec: AgentRunSpec, ctx: RunContext) -> None:
        await _tool(ctx, "e", FileChange(path=".env"), lambda: (work / ".env").write_text("TOKEN=rotated\n"))

    log = _play(body, work, runs_dir, env={"MY_TOKEN": secret})
    assert secret not in log.read_text()
    plan = plan_undo(log)
    assert plan.problems == (".env: its recorded diff does not rebuild the content before the run exactly (the log "
                             "masks a secret in it, or a line ending a diff cannot carry)",)
    assert (work / ".env").read_text() == "TOKEN=rotated\n"


def test_a_log_from_before_the_digests_is_refused_saying_so(tmp_path: Path, runs_dir: Path) -> None:
    run_id = _tools_run(tmp_path / "work")
    log = runs_dir / f"{run_id}.jsonl"
    log.write_text(re.sub(r',"(before|after)_sha256":"[0-9a-f]+"', "", log.read_text()))  # as logged until now
    plan = plan_undo(log)
    assert plan.problems == tuple(f"{name}: its log was written before Harness recorded what undo needs (the files' "
                                  "digests)" for name in ("notes.txt", "new.txt"))
