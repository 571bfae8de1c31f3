"""One local Ray cluster (127.0.0.1 only) for every test of harness-ray, started once; the pinned agent CLIs on
PATH before it starts, so its workers find them.

Layer: tests of the executor plugin. Knows harness-ray's cluster helper and the batch API.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOOLS = Path(os.environ.get("HARNESS_TOOLS_DIR") or ROOT / ".tools")
CLIS = ("codex", "claude")

os.environ["PATH"] = f"{TOOLS / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"  # before Ray starts: workers inherit


def _missing() -> list[str]:
    return [name for name in CLIS if shutil.which(name) is None]


@pytest.fixture(scope="session", autouse=True)
def real_clis() -> None:
    missing = _missing()
    if missing:
        if os.environ.get("HARNESS_REQUIRE_REAL_CLIS") == "1":
            pytest.fail(f"the pinned CLIs {missing} are not in {TOOLS / 'bin'}: run "
                        f"`bash scripts/install-clis.sh {TOOLS}`")
        pytest.skip(f"the pinned CLIs {missing} are not installed (bash scripts/install-clis.sh .tools)")


@pytest.fixture(scope="session")
def ray_cluster(real_clis: None) -> Iterator[None]:
    """A local cluster for the session: every `RayExecutor` of the tests joins it (Ray initialised already)."""
    from harness_ray.cluster import connect

    cluster = connect(None, local_cpus=2, connect_timeout=10.0)
    try:
        yield
    finally:
        cluster.close()
