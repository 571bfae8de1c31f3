"""A prompt longer than Codex takes (1,048,576 characters) is refused before codex starts, saying what to do: it once
ended in `process_exited` with a Rust backtrace (codex exec) or a bare `protocol_error` (app-server). The real
pinned codex, offline."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from exec_helpers import MISSING_CODEX, real_codex
from harness_codex_common import MAX_PROMPT_CHARS, offline_setup

from harness_core import AgentRunSpec, RunStatus, open_run
from harness_core.offline import SCENARIOS
from harness_core.plugins import PluginHost

CODEX = real_codex()
pytestmark = [pytest.mark.real_cli, pytest.mark.anyio, pytest.mark.skipif(CODEX is None, reason=MISSING_CODEX)]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_prompt_over_codexs_limit_is_refused_with_the_next_step(tmp_path: Path, host: PluginHost) -> None:
    assert CODEX is not None
    setup = offline_setup(SCENARIOS["say"], tmp_path / "ws", tmp_path / "state")
    (tmp_path / "ws").mkdir()
    assert setup.backend is not None
    spec = AgentRunSpec(prompt="x" * (MAX_PROMPT_CHARS + 1), cwd=tmp_path / "ws", env=setup.env,
                        provider_options={**setup.provider_options, "codex_bin": str(CODEX)})
    with setup.backend, anyio.fail_after(60):
        async with open_run(spec, "codex-exec", host=host, run_log=False) as live:
            result = await live.wait()
    assert result.status is RunStatus.FAILED and result.error is not None
    said = result.error.message
    assert "the prompt is 1,048,577 characters; Codex takes at most 1,048,576" in said, said
    assert "put the text in a file in the workspace" in said and "backtrace" not in said.lower()
