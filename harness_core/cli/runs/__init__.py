"""The commands on recorded runs: `runs`, `show`, `attach`, `cancel`, `approve`, `undo`, `replay`.

Layer: CLI command group; reads the run store, imports no other command group; knows no concrete provider.
"""
