"""`harness view`: a local web viewer for Harness runs, sessions and batches (live, with approvals).

The façade: `ViewerSettings` (what to serve), `create_app` (the ASGI app), `serve` (on 127.0.0.1, with a
token), `write_bundle` (a static copy that opens from disk). Reads Harness only through its public API.
"""

from __future__ import annotations

from harness_view.app import create_app
from harness_view.bundle import write_bundle
from harness_view.server import serve
from harness_view.settings import ViewerSettings

__all__ = ["ViewerSettings", "create_app", "serve", "write_bundle"]
