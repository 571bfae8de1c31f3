"""Python functions as tools for any agent: `tool` (the decorator), their loader, and the MCP server `harness`
Harness serves them from (the official `mcp` SDK) with its stdio bridge.

Nothing here knows a provider: the runner turns the tools into one `McpServer` entry of the spec it hands on.
This package's `__init__` imports nothing heavy (the bridge, `python -m harness_core.tools.bridge`, starts fast).
"""
