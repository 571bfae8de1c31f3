"""Batch worktrees and patches against real git in a temporary directory: `harness_core.batch.worktrees` and
`harness_core.batch.patches`."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from harness_core.batch.patches import Patches
from harness_core.batch.worktrees import WorktreeError, Worktrees, _run_git, default_root
from harness_core.errors import InvalidSpecError, exit_status_for_code

ID = ["-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false"]


@pytest.fixture(autouse=True)
def _no_git_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *ID, *args], capture_output=True, text=True, timeout=60,
                          check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"git {args}: {done.stderr}"
    return done.stdout.strip()


def commit_all(cwd: Path, message: str) -> str:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
    return git(cwd, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with two commits, a branch `feature` at the first and a tag `v1` at the second."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "a.txt").write_text("one\ntwo\nthree\n")
    (path / "old.txt").write_text("to be renamed\n" * 5)
    (path / "gone.txt").write_text("to be deleted\n")
    (path / ".gitignore").write_text("*.log\n")
    commit_all(path, "first")
    git(path, "branch", "feature")
    (path / "b.txt").write_text("bee\n")
    commit_all(path, "second")
    git(path, "tag", "v1")
    return path


@pytest.fixture
def trees(repo: Path, tmp_path: Path) -> Worktrees:
    return Worktrees.open(repo, tmp_path / "wt")


def registered(repo: Path) -> set[str]:
    out = git(repo, "worktree", "list", "--porcelain")
    return {line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")}


def apply_check(trees: Worktrees, commit: str, patch_file: Path, name: str = "fresh") -> None:
    fresh = trees.create(name, commit)
    done = subprocess.run(["git", "-C", str(fresh), "apply", "--check", str(patch_file)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    trees.remove(fresh)


# --- open / resolve ---------------------------------------------------------------------------------------------

def test_open_uses_the_top_level_and_a_default_root_in_the_cache(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    trees = Worktrees.open(repo / "sub")
    assert trees.repo == repo.resolve()
    assert trees.root == default_root(repo.resolve())
    assert trees.root.parent == (tmp_path / "cache" / "harness" / "worktrees").resolve()
    assert trees.root.name.startswith("repo-") and len(trees.root.name) == len("repo-") + 8
    assert trees.root.is_dir()
    trees.close()
    assert not trees.root.exists()


@pytest.mark.parametrize("kind", ["missing", "plain", "bare", "dotgit"])
def test_open_refuses_what_is_not_a_work_tree(kind: str, repo: Path, tmp_path: Path) -> None:
    target = {"missing": tmp_path / "nope", "plain": tmp_path / "plain", "bare": tmp_path / "bare.git",
              "dotgit": repo / ".git"}[kind]
    if kind == "plain":
        target.mkdir()
        (target / ".git").mkdir()  # not a repository, even with a .git directory
    if kind == "bare":
        git(tmp_path, "init", "-q", "--bare", str(target))
    with pytest.raises(InvalidSpecError) as caught:
        Worktrees.open(target, tmp_path / "wt")
    message = caught.value.message
    assert str(target) in message
    expected = {"missing": "not a directory", "plain": "not in a git repository", "bare": "bare git repository",
                "dotgit": ".git directory"}[kind]
    assert expected in message
    assert ("git clone" in message) or ("give" in message)
    assert caught.value.code == "invalid_spec"


def test_resolve_branches_tags_and_shas(repo: Path, trees: Worktrees) -> None:
    head = git(repo, "rev-parse", "HEAD")
    first = git(repo, "rev-parse", "HEAD~1")
    assert trees.resolve("main") == head
    assert trees.resolve("HEAD") == head
    assert trees.resolve("v1") == head
    assert trees.resolve("feature") == first
    assert trees.resolve(first) == first
    assert trees.resolve(first[:8]) == first
    assert trees.resolve("HEAD~1") == first


@pytest.mark.parametrize("ref", ["nosuchbranch", "-h", "", "v1:a.txt"])
def test_resolve_refuses_what_names_no_commit(ref: str, repo: Path, trees: Worktrees) -> None:
    with pytest.raises(InvalidSpecError) as caught:
        trees.resolve(ref)
    assert repr(ref) in caught.value.message
    assert f"git -C {trees.repo} log --oneline" in caught.value.message


def test_open_prunes_registrations_whose_directory_is_gone(repo: Path, tmp_path: Path) -> None:
    lost = tmp_path / "lost"
    git(repo, "worktree", "add", "-q", "--detach", str(lost), "HEAD")
    subprocess.run(["rm", "-rf", str(lost)], check=True, timeout=60)
    assert str(lost) in registered(repo)
    Worktrees.open(repo, tmp_path / "wt")
    assert str(lost) not in registered(repo)


# --- create ---------------------------------------------------------------------------------------------------------

def test_create_from_eight_threads_gives_independent_worktrees_at_the_commit(repo: Path, trees: Worktrees) -> None:
    commit = trees.resolve("feature")
    ids = [f"task-{n}" for n in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        paths = list(pool.map(lambda task_id: trees.create(task_id, commit), ids))
    assert paths == [trees.root / task_id for task_id in ids]
    for path in paths:
        assert git(path, "rev-parse", "HEAD") == commit
        assert (path / "a.txt").read_text() == "one\ntwo\nthree\n"
        assert not (path / "b.txt").exists()  # b.txt came with the second commit
        assert git(path, "status", "--porcelain") == ""
    assert {str(path) for path in paths} <= registered(repo)
    (paths[0] / "a.txt").write_text("changed in 0\n")
    assert all((path / "a.txt").read_text() == "one\ntwo\nthree\n" for path in paths[1:])
    assert (repo / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD") == "main"  # the repository's own checkout is untouched


def test_create_replaces_the_leftover_of_a_killed_batch(repo: Path, tmp_path: Path) -> None:
    commit = git(repo, "rev-parse", "HEAD")
    first = Worktrees.open(repo, tmp_path / "wt")
    left = first.create("t1", commit)
    (left / "a.txt").write_text("half done\n")
    (left / "junk.txt").write_text("junk\n")
    os.chmod(left / "junk.txt", 0o444)
    # killed here: a new batch opens the same worktrees
    again = Worktrees.open(repo, tmp_path / "wt")
    path = again.create("t1", commit)
    assert path == left
    assert (path / "a.txt").read_text() == "one\ntwo\nthree\n"
    assert not (path / "junk.txt").exists()
    assert again.patch(path, commit) == ""
    # the directory deleted by hand while git still lists it
    subprocess.run(["rm", "-rf", str(path)], check=True, timeout=60)
    assert again.create("t1", commit) == path
    assert git(path, "rev-parse", "HEAD") == commit


def test_create_of_an_unknown_commit_is_a_worktree_error(trees: Worktrees) -> None:
    with pytest.raises(WorktreeError) as caught:
        trees.create("t1", "0" * 40)
    assert caught.value.code == "worktree_failed"
    assert "git exited with status" in caught.value.message
    assert caught.value.details["stderr"]
    assert exit_status_for_code("worktree_failed") == 1
    assert not (trees.root / "t1").exists()
    with pytest.raises(ValueError):
        trees.create("../escape", "HEAD")


def test_a_git_call_over_its_deadline_is_killed_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(WorktreeError, match=r"took longer than 0\.5 s"):
        _run_git(["-c", f"alias.nap=!echo $$ > {pid_file}; exec sleep 30", "nap"], cwd=tmp_path, timeout=0.5)
    assert time.monotonic() - started < 10
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # gone, or a zombie its new parent has not reaped yet
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            break
        if state in ("Z", "X"):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the child of git (pid {pid}) outlived the deadline")


def test_remove_is_idempotent_and_close_keeps_what_is_kept(repo: Path, trees: Worktrees) -> None:
    commit = trees.resolve("HEAD")
    gone, kept = trees.create("gone", commit), trees.create("kept", commit)
    (gone / "new.bin").write_bytes(b"\0\1")
    trees.remove(gone)
    trees.remove(gone)
    assert not gone.exists() and str(gone) not in registered(repo)
    with pytest.raises(ValueError):
        trees.remove(repo)
    trees.close()
    assert kept.is_dir() and trees.root.is_dir()
    trees.remove(kept)
    trees.close()
    assert not trees.root.exists()


# --- snapshot / patch -------------------------------------------------------------------------------------------------

def test_each_patch_holds_only_its_own_change_and_applies(repo: Path, trees: Worktrees, tmp_path: Path) -> None:
    commit = trees.resolve("HEAD")
    a, b = trees.create("a", commit), trees.create("b", commit)
    (a / "a.txt").write_text("one\nTWO\nthree\n")
    (a / "gone.txt").unlink()
    (a / "old.txt").rename(a / "new.txt")
    (a / "debug.log").write_text("ignored\n")
    (b / "added.txt").write_text("brand new\n")
    (b / "pic.bin").write_bytes(bytes(range(256)))
    patch_a, patch_b = trees.patch(a, commit), trees.patch(b, commit)

    assert "-two\n+TWO\n" in patch_a
    assert "deleted file mode" in patch_a and "gone.txt" in patch_a
    assert "rename from old.txt\nrename to new.txt" in patch_a
    assert "debug.log" not in patch_a and "added.txt" not in patch_a
    assert "new file mode" in patch_b and "+brand new" in patch_b
    assert "GIT binary patch" in patch_b
    assert "a.txt" not in patch_b
    full_index = [line.split()[1].split("..") for line in (patch_a + patch_b).splitlines() if line.startswith("index ")]
    assert full_index and all(len(sha) == 40 for shas in full_index for sha in shas)
    for name, text in (("a", patch_a), ("b", patch_b)):
        patch_file = tmp_path / f"{name}.patch"
        patch_file.write_text(text)
        apply_check(trees, commit, patch_file, name=f"fresh-{name}")
    assert git(a, "status", "--porcelain") != ""  # the agent's worktree is left as it was
    assert git(a, "rev-parse", "HEAD") == commit


def test_snapshot_leaves_index_and_head_alone_and_seeded_files_stay_out(trees: Worktrees) -> None:
    commit = trees.resolve("HEAD")
    path = trees.create("seeded", commit)
    (path / "seed.txt").write_text("the harness put this here\n")
    (path / "a.txt").write_text("seeded a\n")
    status = git(path, "status", "--porcelain")
    index = Path(git(path, "rev-parse", "--git-path", "index"))
    index_file = index if index.is_absolute() else path / index
    before = index_file.read_bytes()
    base = trees.snapshot(path)
    assert git(path, "status", "--porcelain") == status
    assert index_file.read_bytes() == before
    assert trees.snapshot(path) == base  # the same files give the same tree
    assert trees.patch(path, base) == ""

    (path / "a.txt").write_text("seeded a\nagent line\n")
    patch = trees.patch(path, base)
    assert "+agent line" in patch
    assert "seed.txt" not in patch and "-one" not in patch


def test_snapshot_refuses_a_worktree_whose_git_file_is_gone(repo: Path) -> None:
    trees = Worktrees.open(repo, repo / "inside")  # worktrees inside the repository: git would find it above
    path = trees.create("t1", trees.resolve("HEAD"))
    (path / ".git").unlink()
    with pytest.raises(WorktreeError, match="no longer a git worktree"):
        trees.snapshot(path)
    trees.remove(path)
    assert not path.exists()


def test_patch_counts_what_the_agent_committed(trees: Worktrees, tmp_path: Path) -> None:
    commit = trees.resolve("HEAD")
    path = trees.create("committer", commit)
    (path / "a.txt").write_text("committed\n")
    commit_all(path, "the agent's commit")
    (path / "c.txt").write_text("after the commit\n")
    patch = trees.patch(path, commit)
    assert "+committed" in patch and "+after the commit" in patch
    patch_file = tmp_path / "committer.patch"
    patch_file.write_text(patch)
    apply_check(trees, commit, patch_file)


def test_patch_keeps_bytes_that_are_not_utf8(trees: Worktrees, tmp_path: Path) -> None:
    commit = trees.resolve("HEAD")
    path = trees.create("latin1", commit)
    (path / "latin.txt").write_bytes("café\n".encode("latin-1"))
    patch = trees.patch(path, commit)
    patches = Patches(tmp_path / "out")
    written = patches.write("latin1", patch, "m")
    assert b"caf\xe9" in written.read_bytes()
    apply_check(trees, commit, written)
    line = json.loads(patches.predictions_path.read_text("ascii"))
    assert line["model_patch"].encode("utf-8", "surrogateescape") == written.read_bytes()


# --- Patches ----------------------------------------------------------------------------------------------------------

def lines_of(patches: Patches) -> list[dict[str, str]]:
    return [json.loads(line) for line in patches.predictions_path.read_text().splitlines()]


def test_patches_write_files_and_predictions(tmp_path: Path) -> None:
    patches = Patches(tmp_path / "out" / "deep")
    assert patches.predictions_path == tmp_path / "out" / "deep" / "predictions.jsonl"
    assert patches.write("t1", "diff --git a/x b/x\n", "harness/model-a") == tmp_path / "out" / "deep" / "t1.patch"
    patches.write("t2", "", "harness/model-a")
    assert (tmp_path / "out" / "deep" / "t1.patch").read_text() == "diff --git a/x b/x\n"
    assert (tmp_path / "out" / "deep" / "t2.patch").read_text() == ""
    assert lines_of(patches) == [
        {"instance_id": "t1", "model_patch": "diff --git a/x b/x\n", "model_name_or_path": "harness/model-a"},
        {"instance_id": "t2", "model_patch": "", "model_name_or_path": "harness/model-a"},
    ]
    patches.write("t1", "second try\n", "harness/model-b")
    assert [line["instance_id"] for line in lines_of(patches)] == ["t2", "t1"]
    assert lines_of(patches)[1]["model_patch"] == "second try\n"
    assert (tmp_path / "out" / "deep" / "t1.patch").read_text() == "second try\n"
    assert sorted(p.name for p in patches.directory.iterdir()) == ["predictions.jsonl", "t1.patch", "t2.patch"]
    assert patches.instance_ids == {"t1", "t2"}
    with pytest.raises(ValueError):
        patches.write("../t3", "", "m")


@pytest.mark.parametrize("damage", [
    lambda good: good + b'{"instance_id": "t3", "model_pat',  # killed mid-line
    lambda good: good + b"not json\n" + b"[1, 2]\n",
    lambda good: good + b'{"instance_id": "t1", "model_patch": "newer", "model_name_or_path": "m"}\n',
])
def test_patches_reopen_drops_partial_lines_and_compacts(damage: Callable[[bytes], bytes], tmp_path: Path) -> None:
    first = Patches(tmp_path)
    first.write("t1", "p1", "m")
    first.write("t2", "p2", "m")
    damaged = damage(first.predictions_path.read_bytes())
    first.predictions_path.write_bytes(damaged)
    again = Patches(tmp_path)
    text = again.predictions_path.read_text()
    assert text.endswith("\n")
    lines = lines_of(again)
    assert all(set(line) == {"instance_id", "model_patch", "model_name_or_path"} for line in lines)
    ids = [line["instance_id"] for line in lines]
    assert sorted(ids) == ["t1", "t2"] and len(ids) == len(set(ids))
    again.write("t3", "p3", "m")
    assert [line["instance_id"] for line in lines_of(again)][-1] == "t3"
    assert len(lines_of(Patches(tmp_path))) == 3


def test_patches_from_many_threads(tmp_path: Path) -> None:
    patches = Patches(tmp_path)
    barrier = threading.Barrier(8)

    def write(n: int) -> None:
        barrier.wait(timeout=30)
        patches.write(f"t{n % 4}", f"patch {n}\n", "m")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(write, range(8)))
    lines = lines_of(patches)
    assert sorted(line["instance_id"] for line in lines) == ["t0", "t1", "t2", "t3"]
    for line in lines:
        assert (tmp_path / f"{line['instance_id']}.patch").read_text() == line["model_patch"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary files left
