"""The real pinned codex's npm wrapper resolves to its native binary with the globs both Codex providers use.

Marked `real_cli`; skipped, saying how to install codex, when the wrapper is missing (a failure instead under
HARNESS_REQUIRE_REAL_CLIS=1).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from harness_core.provider import cli_version, locate_cli

from harness_codex_common import INSTALL_HINT, NATIVE_GLOBS

TOOLS = Path(os.environ.get("HARNESS_TOOLS_DIR") or Path(__file__).resolve().parents[3] / ".tools")
WRAPPER = TOOLS / "bin" / "codex"
PINNED_VERSION = "0.169.0"
"""What scripts/install-clis.sh installs."""

pytestmark = [
    pytest.mark.real_cli,
    pytest.mark.skipif(
        not WRAPPER.exists(),
        reason=f"real codex not installed at {WRAPPER} (install it with scripts/install-clis.sh, or set "
        "HARNESS_TOOLS_DIR); with HARNESS_REQUIRE_REAL_CLIS=1 this skip is a failure",
    ),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_real_codex_wrapper_resolves_to_native() -> None:
    path = locate_cli(
        "codex", str(WRAPPER), install_hint=INSTALL_HINT, option_name="codex_bin", native_globs=NATIVE_GLOBS
    )
    assert path.name == "codex" and "vendor" in path.parts and "codex-linux-x64" in str(path)
    assert path.read_bytes()[:4] == b"\x7fELF"
    assert await cli_version(path) == PINNED_VERSION
