"""Agent CLIs, found and checked for every provider: `binary` finds one, `version` reads and checks its version,
`cache` remembers what was read (in this process and, for the `harness` CLI, on disk).

Imports nothing: the CLI loads `cache` at start-up, which must stay light.
"""
