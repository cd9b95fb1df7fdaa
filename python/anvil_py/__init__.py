"""anvil's Python workers: the trusted task side and the untrusted candidate side.

The C++ engine starts these as separate processes; see docs/protocol.md.
"""
