"""Testing support shipped with Harness: the provider contract suite, its pytest plugin, the scripted provider.

Layer: testing. Only tests (ours, a provider's, a user's) import this package; nothing that runs outside tests
does. Scenarios and scripted model backends are a product feature and live in `harness_core.offline`; each fake
agent CLI lives in the distribution of the CLI it imitates. Importing this package starts nothing; submodules
are imported on demand.
"""
