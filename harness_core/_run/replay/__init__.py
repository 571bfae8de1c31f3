"""Replay: the wire log (`wirelog`: its format, writer and reader), a recorded child played back
(`recorded_child`), and a recorded run fed through the provider's real `run` (`run`: `open_replay`, `replay`).

Imports nothing: importing one part does not import the others.
"""
