"""Testing support shipped with Harness: scenarios, scripted model backends, fake CLIs, the contract suite.

Layer: testing. Importing this package starts nothing; submodules are imported on demand.
"""
