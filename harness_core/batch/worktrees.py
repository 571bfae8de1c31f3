"""One `git worktree` per batch task, and the task's change as a patch.

Layer: core, batch operation (below the `harness batch` command, above plain `git`). Knows git's command line
and nothing else: not agents, providers, runs or specs. Blocking (callers run it in worker threads); its threads,
deadlines and the patches' bytes: docs/jobs-and-batches.md (worktrees).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness_core.errors import HarnessError, InvalidSpecError, truncate
from harness_core.files.private import make_private_dirs

__all__ = ["GIT_TIMEOUT", "SLOW_GIT_TIMEOUT", "WorktreeError", "Worktrees", "default_root"]

GIT_TIMEOUT = 60.0
"""Seconds any quick git call (rev-parse, prune, diff, write-tree) may take."""
SLOW_GIT_TIMEOUT = 600.0
"""Seconds the calls whose time grows with the size of the tree (worktree add/remove, add -A) may take."""

_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,254}")  # a task id, or a cell's name (`id+provider+a2`)
_REAP_TIMEOUT = 5.0
# Variables that would point git at another repository or index than the one we name with -C.
_REPO_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
                   "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX")


class WorktreeError(HarnessError):
    """git failed while a batch made, read or removed a task's worktree (the message quotes git's stderr)."""

    code = "worktree_failed"


class _GitFailed(Exception):
    """A git command exited non-zero (internal: turned into `WorktreeError` or `InvalidSpecError`)."""

    def __init__(self, argv: Sequence[str], returncode: int, stderr: str) -> None:
        super().__init__(f"git exited with status {returncode}")
        self.argv = list(argv)
        self.returncode = returncode
        self.stderr = stderr


def _git_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _REPO_VARIABLES}
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for a password nobody will type
    env.update(extra or {})
    return env


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _run_git(args: Sequence[str], *, cwd: Path, timeout: float = GIT_TIMEOUT,
             env: Mapping[str, str] | None = None) -> bytes:
    """`git -C cwd ARGS`: its stdout. Raises `_GitFailed` for a non-zero exit, `WorktreeError` when git is missing
    or over its deadline."""
    argv = ["git", "-C", str(cwd), *args]
    shown = " ".join(["git", *args])
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=_git_env(env), start_new_session=True)
    except FileNotFoundError as exc:
        raise WorktreeError("`git` is not installed or not on PATH; install git (batch worktrees need it) and "
                            "run again") from exc
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise WorktreeError(f"`{truncate(shown, 200)}` in {cwd} took longer than {timeout:g} s and was killed; "
                            "check that the repository is not on a stalled file system and that no other git "
                            "process holds its locks, then run again", command=shown) from exc
    finally:
        if proc.returncode is None:  # the deadline passed or the caller was interrupted: stop git and its children
            _kill_group(proc)
            try:
                proc.communicate(timeout=_REAP_TIMEOUT)
            except subprocess.TimeoutExpired:  # a grandchild left its own session with our pipes open
                proc.wait()
    if proc.returncode != 0:
        raise _GitFailed(argv, proc.returncode, err.decode("utf-8", "replace").strip())
    return out


def _failed(what: str, failure: _GitFailed, next_step: str, **details: Any) -> WorktreeError:
    said = truncate(failure.stderr) or "no message"
    return WorktreeError(f"{what} failed (git exited with status {failure.returncode}: {said}); {next_step}",
                         command=" ".join(failure.argv[3:]), stderr=truncate(failure.stderr), **details)


def default_root(repo_top: Path) -> Path:
    """Where a repository's batch worktrees go unless told: `$XDG_CACHE_HOME` (or `~/.cache`)
    `/harness/worktrees/<repo dir name>-<8 hex of sha256 of the repository's path>`."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    digest = hashlib.sha256(str(repo_top).encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return Path(cache) / "harness" / "worktrees" / f"{repo_top.name}-{digest}"


def _make_writable_and_retry(func: Callable[..., Any], path: str, *_: Any) -> None:
    """rmtree's error handler: agents leave read-only files and directories (module caches, build outputs)."""
    parent = os.path.dirname(path)
    for target in (parent, path):
        with contextlib.suppress(OSError):
            os.chmod(target, os.stat(target, follow_symlinks=False).st_mode | stat.S_IWUSR | stat.S_IXUSR)
    func(path)


def _rmtree(path: Path) -> None:
    if not path.exists() and not path.is_symlink():
        return
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_make_writable_and_retry)
    else:
        shutil.rmtree(path, onerror=_make_writable_and_retry)


class Worktrees:
    """The worktrees of one repository's batch: each task gets a detached worktree at `root/<task id>`."""

    def __init__(self, repo: Path, root: Path) -> None:
        """Use `Worktrees.open`, which checks the repository."""
        self.repo = repo
        self.root = root
        self._lock = threading.Lock()

    @classmethod
    def open(cls, repo: Path, root: Path | None = None) -> Worktrees:
        """The worktrees of the git work tree `repo` (any directory in it; its top level is used), under `root`
        (default: `default_root`). Forgets registrations whose directory is gone (a killed batch)."""
        given = Path(repo).expanduser()
        if not given.is_dir():
            raise InvalidSpecError(f"the repository for worktrees (--worktrees) {str(given)!r} is not a directory; "
                                   "give the path of a git clone with a work tree", repo=str(given))
        try:
            flags = _run_git(["rev-parse", "--is-bare-repository", "--is-inside-work-tree"], cwd=given)
        except _GitFailed as exc:
            raise InvalidSpecError(
                f"{str(given)!r} (--worktrees) is not in a git repository ({truncate(exc.stderr, 300)}); give the "
                "path of a clone (`git clone URL DIR`), or make one there (`git init`, `git add -A`, `git commit`)",
                repo=str(given)) from exc
        bare, inside = [*flags.decode("utf-8", "replace").split(), "", ""][:2]
        if bare == "true":
            raise InvalidSpecError(
                f"{str(given)!r} (--worktrees) is a bare git repository: it has no work tree to branch off; clone "
                f"it (`git clone {given} DIR`) and give DIR", repo=str(given))
        if inside != "true":
            raise InvalidSpecError(
                f"{str(given)!r} (--worktrees) is inside a repository's .git directory, not its work tree; give "
                "the directory that holds the checked-out files", repo=str(given))
        try:
            top_out = _run_git(["rev-parse", "--show-toplevel"], cwd=given)
        except _GitFailed as exc:
            raise _failed(f"finding the top level of {given}", exc, "check the repository with `git status`") from exc
        top = Path(os.fsdecode(top_out.rstrip(b"\n"))).resolve()
        where = (Path(root).expanduser() if root is not None else default_root(top)).resolve()
        try:
            make_private_dirs(where)  # 0700: the agents' work is nobody else's to read
        except OSError as exc:
            raise InvalidSpecError(f"cannot make the worktrees directory {str(where)!r} ({exc}); pick a writable "
                                   "one (--worktrees-dir DIR)", root=str(where)) from exc
        worktrees = cls(top, where)
        with worktrees._lock:
            worktrees._prune()
        return worktrees

    def resolve(self, ref: str) -> str:
        """The commit sha `ref` (a branch, tag, sha, `HEAD~2`, ...) names in the repository."""
        hint = (f"give a branch, tag or commit of that repository (--ref REF; `git -C {self.repo} log --oneline` "
                f"lists its commits, `git -C {self.repo} branch -a` its branches)")
        if not ref or ref.startswith("-") or "\n" in ref or "\0" in ref:
            raise InvalidSpecError(f"{ref!r} is not a git ref; {hint}", ref=ref, repo=str(self.repo))
        try:
            out = _run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=self.repo)
        except _GitFailed as exc:
            raise InvalidSpecError(f"{ref!r} names no commit in {self.repo}; {hint}", ref=ref,
                                   repo=str(self.repo)) from exc
        return out.decode("ascii").strip()

    def path_of(self, task_id: str) -> Path:
        """Where the worktree of `task_id` is (or would be)."""
        if not _TASK_ID.fullmatch(task_id):
            raise ValueError(f"task id {task_id!r} is not a safe file name")
        return self.root / task_id

    def create(self, task_id: str, commit: str) -> Path:
        """A fresh detached worktree at `root/<task_id>` checked out at `commit`. A leftover at that path (from a
        killed batch) is removed first."""
        path = self.path_of(task_id)
        with self._lock:
            if path.exists() or path.is_symlink():
                self._discard(path)
            try:
                # --force: also when git still lists the path as a worktree whose directory is missing
                _run_git(["worktree", "add", "--detach", "--force", str(path), commit], cwd=self.repo,
                         timeout=SLOW_GIT_TIMEOUT)
            except _GitFailed as exc:
                _rmtree_quietly(path)
                raise _failed(f"making the worktree of task {task_id!r} at {path}", exc,
                              f"check that {commit} is a commit of {self.repo} and that {self.root} is writable",
                              task_id=task_id, path=str(path)) from exc
        return path

    def snapshot(self, path: Path) -> str:
        """The tree sha of everything in the worktree at `path` now: tracked and untracked files, as `.gitignore`
        leaves them. The worktree's own index and HEAD are not touched (a temporary index is used)."""
        self._check_is_worktree(path)
        with tempfile.TemporaryDirectory(prefix="harness-index-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            try:
                _run_git(["read-tree", "HEAD"], cwd=path, env=env)
                _run_git(["add", "-A", "--", "."], cwd=path, env=env, timeout=SLOW_GIT_TIMEOUT)
                out = _run_git(["write-tree"], cwd=path, env=env)
            except _GitFailed as exc:
                raise _failed(f"recording the files of the worktree {path}", exc,
                              "check the worktree with `git status` there (a file git cannot read, a broken "
                              "nested repository)", path=str(path)) from exc
        return out.decode("ascii").strip()

    def patch(self, path: Path, base: str) -> str:
        """The change in the worktree at `path` relative to `base` (a tree or commit sha), as
        `git diff --binary --full-index` shows it: new, deleted, renamed and binary files included, and commits
        the agent made counted as change. Empty when nothing changed."""
        tree = self.snapshot(path)
        try:
            out = _run_git(["diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv",
                            "--no-relative", "--src-prefix=a/", "--dst-prefix=b/", base, tree, "--"], cwd=path)
        except _GitFailed as exc:
            raise _failed(f"diffing the worktree {path} against {base}", exc,
                          "check that the base is a commit or tree of the repository", path=str(path)) from exc
        return out.decode("utf-8", "surrogateescape")

    def remove(self, path: Path) -> None:
        """Remove the worktree at `path` (a path under `root`) and git's record of it; nothing if it is gone."""
        resolved = Path(path).absolute()
        if resolved.parent != self.root:
            raise ValueError(f"{path} is not a worktree of this batch (under {self.root})")
        with self._lock:
            self._discard(resolved)

    def close(self) -> None:
        """Forget removed worktrees and remove `root` if nothing is left in it."""
        with self._lock:
            self._prune()
        with contextlib.suppress(OSError):  # not empty (kept worktrees) or already gone
            self.root.rmdir()

    def _check_is_worktree(self, path: Path) -> None:
        """Refuse a directory that is no longer a worktree of its own: one whose `.git` file the agent deleted
        would otherwise be read as part of whatever repository lies above it."""
        try:
            top = _run_git(["rev-parse", "--show-toplevel"], cwd=path)
        except _GitFailed as exc:
            raise _failed(f"reading the worktree {path}", exc, "the worktree's `.git` file may be gone (did the agent "
                          "delete it?); run the task again", path=str(path)) from exc
        if Path(os.fsdecode(top.rstrip(b"\n"))).resolve() != Path(path).resolve():
            raise WorktreeError(f"{path} is no longer a git worktree of its own (git finds the repository at "
                                f"{os.fsdecode(top.strip())}): its `.git` file is gone (did the agent delete it?); "
                                "run the task again", path=str(path))

    def _discard(self, path: Path) -> None:
        """With the lock held: `git worktree remove --force`, delete what is left, prune."""
        if path.is_dir() and not path.is_symlink():
            # twice --force: also a locked worktree, and one with changes. It fails for a directory that is not
            # (or no longer) a registered worktree, or with files git could not delete: rmtree below does the rest
            with contextlib.suppress(_GitFailed):
                _run_git(["worktree", "remove", "--force", "--force", str(path)], cwd=self.repo,
                         timeout=SLOW_GIT_TIMEOUT)
        try:
            _rmtree(path)
        except OSError as exc:
            raise WorktreeError(f"cannot delete the worktree {path} ({exc}); delete it by hand (`rm -rf {path}`) "
                                f"and run `git -C {self.repo} worktree prune`", path=str(path)) from exc
        self._prune()

    def _prune(self) -> None:
        try:
            _run_git(["worktree", "prune"], cwd=self.repo)
        except _GitFailed as exc:
            raise _failed(f"`git worktree prune` in {self.repo}", exc,
                          "check the repository with `git worktree list`") from exc


def _rmtree_quietly(path: Path) -> None:
    with contextlib.suppress(OSError):
        _rmtree(path)
