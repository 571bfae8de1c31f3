"""`harness run`: its click definition and its body (a spec from the flags, played live, `--offline` or
`--background`); what it shares with other commands is on the CLI base floors (flags/, foreground/).

Layer: CLI command group; imports no other command group; knows no concrete provider.
"""
