"""`python -m harness_core.cli`: the `harness` command line.

Layer: CLI entry point; nothing else.
"""

from __future__ import annotations

from harness_core.cli import main

main()
