"""The shape the codebase holds (docs/architecture.md and docs/import-rules.md), checked on the source tree: a
module per rule, the import graph and the floors engine they share in `graph.py`. Stdlib `ast` over the files,
no Harness import and no conftest: `tox -e lint` runs `pytest tests/architecture --noconftest` with nothing
installed."""
