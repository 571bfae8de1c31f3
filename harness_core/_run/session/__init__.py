"""Sessions: several turns on one agent, each turn a run (`session`: `open_session`, `Session`), and the context a
live session's provider gets for its long-lived process (`provider_context`).

Imports nothing: importing one part does not import the others.
"""
