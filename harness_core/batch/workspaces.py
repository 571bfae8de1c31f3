"""Where each task of a batch plays: its own git worktree (`--worktrees REPO`), a temporary directory (offline,
no worktrees), or its spec's `cwd`; the base a task's patch is taken against; cleaning up afterwards.

Layer: batch (workspaces). Knows the worktree and patch helpers and the offline scenarios' files; knows no
provider or executor. Blocking git work runs in worker threads (`anyio.to_thread`).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from harness_core.batch.tasks import BatchTask
from harness_core.batch.worktrees import Worktrees, default_root
from harness_core.errors import InvalidSpecError
from harness_core.files.scratch import Scratch
from harness_core.offline import seed_workspace
from harness_core.scripted.scenarios import Scenario

__all__ = ["Workspace", "WorktreePlan", "Workspaces"]


@dataclass(frozen=True)
class WorktreePlan:
    """`--worktrees REPO [--ref REF] [--worktrees-dir DIR]`: each task in its own worktree of `repo`."""

    repo: Path
    ref: str = "HEAD"
    root: Path | None = None
    """Where the worktrees are made (default: a directory per repository under the user's cache)."""


@dataclass
class Workspace:
    path: Path
    base: str | None = None
    """With worktrees: the tree the task's patch is taken against (the checkout plus the scenario's files)."""
    owned: bool = False
    """Made for the task (removed afterwards unless kept)."""
    worktree: bool = False


class Workspaces:
    """The batch's workspace policy (one per batch)."""

    def __init__(self, plan: WorktreePlan | None, *, offline: bool, keep: bool) -> None:
        self.plan = plan
        self.offline = offline
        self.keep = keep
        self.worktrees: Worktrees | None = None
        self._commits: dict[str, str] = {}
        self._temp_root: Scratch | None = None

    def open(self, tasks: list[BatchTask], key: str) -> dict[str, str]:
        """Open the repository and resolve every ref the tasks name; returns {task id: problem} for refs that do
        not resolve (raises `InvalidSpecError` when the repository itself is unusable). `key` names the batch:
        by default its worktrees are made in a directory of their own under the repository's
        (`<cache>/harness/worktrees/<repo>-<hash>/<key>/<task id>`), so two batches on one repository never
        touch each other's."""
        if self.plan is None:
            return {}
        root = self.plan.root
        if root is None:
            root = default_root(Worktrees.open(self.plan.repo).repo) / key
        self.worktrees = Worktrees.open(self.plan.repo, root)
        problems: dict[str, str] = {}
        for task in tasks:
            ref = task.ref or self.plan.ref
            if ref in self._commits:
                continue
            try:
                self._commits[ref] = self.worktrees.resolve(ref)
            except Exception as exc:  # noqa: BLE001 - reported per task with its line
                problems[task.id] = str(getattr(exc, "message", exc))
        return problems

    def commit_of(self, task: BatchTask) -> str | None:
        if self.plan is None:
            return None
        return self._commits.get(task.ref or self.plan.ref)

    async def prepare(self, task: BatchTask, scenarios: tuple[Scenario, ...], name: str | None = None) -> Workspace:
        """A fresh workspace for a cell of the task (`name`: the cell's, default the task id), made and seeded with
        the files its offline scenarios expect; the task's own `cwd` when it has one (shared by its cells)."""
        name = name or task.id
        if self.worktrees is not None:
            worktrees = self.worktrees
            commit = self.commit_of(task)
            assert commit is not None
            path = await anyio.to_thread.run_sync(worktrees.create, name, commit)
            _seed(path, scenarios)
            await anyio.to_thread.run_sync(_copy_files, path, task.workspace_files)
            base = await anyio.to_thread.run_sync(worktrees.snapshot, path)
            return Workspace(path, base, owned=True, worktree=True)
        if (self.offline or task.workspace_files is not None) and "cwd" not in task.spec.model_fields_set:
            if self._temp_root is None:
                self._temp_root = Scratch("harness-batch-")  # a killed batch's: swept when it resumes
            path = self._temp_root.path / name
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)
            path.mkdir(parents=True)
            _seed(path, scenarios)
            await anyio.to_thread.run_sync(_copy_files, path, task.workspace_files)
            return Workspace(path, owned=True)
        path = task.spec.cwd
        if not path.is_dir():  # it was there when the batch was checked: never made here (a typo would be)
            raise InvalidSpecError(f"the task's cwd {path} is gone (it existed when the batch started); create it "
                                   "and run the batch again with --rerun-failed")
        if self.offline:
            _seed(path, scenarios)
        return Workspace(path)

    async def reset(self, task: BatchTask, scenarios: tuple[Scenario, ...], workspace: Workspace,
                    name: str | None = None) -> Workspace:
        """The task's workspace as it was before its first attempt (for a retry: what a failed attempt left is
        not the next one's, nor its patch's). A spec's own `cwd` cannot be reset: it is played as it is."""
        if not workspace.owned:
            return workspace
        await self.release_now(workspace)
        return await self.prepare(task, scenarios, name)

    async def patch(self, workspace: Workspace) -> str | None:
        if self.worktrees is None or workspace.base is None:
            return None
        return await anyio.to_thread.run_sync(self.worktrees.patch, workspace.path, workspace.base)

    async def release(self, workspace: Workspace) -> None:
        """Remove a workspace made for the task (unless the batch keeps them)."""
        if not self.keep:
            await self.release_now(workspace)

    async def release_now(self, workspace: Workspace) -> None:
        if not workspace.owned:
            return
        if workspace.worktree and self.worktrees is not None:
            await anyio.to_thread.run_sync(self.worktrees.remove, workspace.path)
        else:
            await anyio.to_thread.run_sync(lambda: shutil.rmtree(workspace.path, ignore_errors=True))

    @property
    def kept_where(self) -> Path | None:
        """Where kept workspaces are (with `keep`), for the closing message."""
        if self.worktrees is not None:
            return self.worktrees.root
        return self._temp_root.path if self._temp_root is not None else None

    def close(self) -> None:
        if self.worktrees is not None and not self.keep:
            self.worktrees.close()
        if self._temp_root is not None:
            self._temp_root.release(keep=self.keep)


def _seed(path: Path, scenarios: tuple[Scenario, ...]) -> None:
    for scenario in scenarios:
        seed_workspace(scenario, path)


def _copy_files(path: Path, files: tuple[tuple[Path, str], ...] | None) -> None:
    """A task's `workspace_files` into its workspace: a directory's contents, or a file, at its relative place."""
    for source, where in files or ():
        target = path / where
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
