"""harness-ray installed without Ray itself (an extra: `pip install -e 'executors/ray[ray]'`): `--engine ray`
stops before anything starts, saying how to install Ray. Ray is made unimportable for the test (`sys.modules`).

Layer: tests of the executor plugin (no cluster, no agent CLI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from harness_core.errors import InvalidSpecError

from harness_ray import RayExecutor
from harness_ray.cluster import ray_installed

_WITHOUT_RAY = textwrap.dedent("""
    import sys
    sys.modules["ray"] = None  # as if Ray were not installed: `import ray` fails
    from harness_core.cli import main
    main()
""")


def test_the_executor_says_how_to_install_ray(monkeypatch: pytest.MonkeyPatch) -> None:
    assert ray_installed()
    monkeypatch.setitem(sys.modules, "ray", None)
    assert not ray_installed()
    with pytest.raises(InvalidSpecError, match=r"needs Ray, which is not installed here: `pip install -e "
                                               r"'executors/ray\[ray\]'`"):
        RayExecutor()


def test_harness_batch_engine_ray_without_ray_stops_saying_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "t1", "scenario": "say"}) + "\n")
    env = {**os.environ, "HARNESS_RUNS_DIR": str(tmp_path / "runs")}
    done = subprocess.run([sys.executable, "-c", _WITHOUT_RAY, "batch", "tasks.jsonl", "--offline", "--engine",
                           "ray", "-p", "codex-appserver"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("harness: error: --engine ray needs Ray, which is not installed here: "
                                  "`pip install -e 'executors/ray[ray]'`"), done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "runs").exists() and not (tmp_path / "tasks.results.jsonl").exists()
