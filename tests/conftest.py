"""Fixture projects under tests/fixtures/ are inputs to the gate, not part of this suite.

A suite started in the background by a non-interactive shell (`.ci/run &`, nohup) inherits
SIGINT ignored, and so would every gate it starts: the tests that interrupt a gate with ^C
would then interrupt nothing. The suite gives its children ^C back."""

import signal

collect_ignore_glob = ["fixtures/*"]

if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
