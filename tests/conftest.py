"""Fixture projects under tests/fixtures/ are inputs to the gate, not part of this suite."""

collect_ignore_glob = ["fixtures/*"]
