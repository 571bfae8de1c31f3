"""The codex CLI gets a private TMPDIR for its life (codex's bubblewrap sandbox mounts a fresh directory over its
TMPDIR: a workspace under the inherited one would vanish), removed after; a TMPDIR the spec gives wins."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from harness_codex_common.tmpdir import AGENT_TMP_PREFIX, spawn_with_private_tmpdir


def _seen(env: Mapping[str, str]) -> tuple[Mapping[str, str], bool, int]:
    tmp = Path(env["TMPDIR"])
    return dict(env), tmp.is_dir(), stat.S_IMODE(tmp.stat().st_mode) if tmp.exists() else 0


class _Ctx:
    def __init__(self) -> None:
        self.seen: list[tuple[Mapping[str, str], bool, int]] = []

    def spawn(self, argv: Any, *, env: Mapping[str, str], cwd: Any, **options: Any) -> Any:
        @asynccontextmanager
        async def child() -> AsyncIterator[str]:
            self.seen.append(_seen(env))
            yield "child"

        return child()


def test_the_cli_gets_a_private_tmpdir_removed_after(tmp_path: Path) -> None:
    ctx = _Ctx()

    async def main() -> None:
        async with spawn_with_private_tmpdir(ctx, ["codex"], env={**os.environ, "TMPDIR": str(tmp_path)},  # type: ignore[arg-type]
                                             spec_env={}, cwd=tmp_path) as child:
            assert child == "child"

    anyio.run(main)
    [(env, existed, mode)] = ctx.seen
    private = Path(env["TMPDIR"])
    assert private.name.startswith(AGENT_TMP_PREFIX) and existed and mode == 0o700
    assert not private.exists()


def test_a_tmpdir_the_spec_gives_wins(tmp_path: Path) -> None:
    ctx = _Ctx()

    async def main() -> None:
        async with spawn_with_private_tmpdir(ctx, ["codex"], env={"TMPDIR": str(tmp_path)},  # type: ignore[arg-type]
                                             spec_env={"TMPDIR": str(tmp_path)}, cwd=tmp_path):
            pass

    anyio.run(main)
    assert ctx.seen[0][0]["TMPDIR"] == str(tmp_path)
