"""`harness run`: its flags, driving a run live, `--offline`, `--background`, approvals asked on the terminal.

Layer: CLI command group; knows no concrete provider.
"""
