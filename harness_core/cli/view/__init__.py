"""`harness view`: the web viewer of runs (`harness-view`) served or bundled.

Layer: CLI command group; imports the viewer only when the command runs.
"""
