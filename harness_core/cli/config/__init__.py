"""`harness config`: the effective settings shown, and where the settings files are (the files themselves: `settings/`).

Layer: CLI command group; imports no other command group; knows no concrete provider.
"""
