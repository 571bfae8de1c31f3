"""Agent CLIs, found and checked for every provider: `binary` finds one, `version` reads and checks its version,
`cache` remembers what was read (in this process and, for the `harness` CLI, on disk: `cache_switch` turns it on).

Imports nothing: the CLI loads `cache_switch` at start-up, which must stay light.
"""
