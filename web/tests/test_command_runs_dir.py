"""`harness view --runs-dir` naming a directory that is not there: a usage error naming it and what to do, before
anything listens (a typo is not shown as an empty list); the default runs directory not there yet is served."""

from __future__ import annotations

from pathlib import Path

from view_helpers import harness, harness_env, start_viewer, stop_viewer


def test_a_runs_dir_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    done = harness(["view", "--runs-dir", str(missing)], harness_env(tmp_path), cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stderr
    assert f"no runs directory {missing} (--runs-dir)" in done.stderr
    assert "leave --runs-dir out" in done.stderr
    assert not missing.exists() and "token=" not in done.stdout


def test_the_default_runs_dir_not_made_yet_is_served(tmp_path: Path) -> None:
    env = harness_env(tmp_path)
    viewer = start_viewer([], env, tmp_path)
    try:
        assert viewer.proc.poll() is None
    finally:
        assert stop_viewer(viewer) == 0
    assert not (tmp_path / "xdg_state_home" / "harness" / "runs").exists()
